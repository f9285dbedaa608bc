"""Multi-value attributes (Manticore's MVA): `multi` (unsigned 32-bit) and
`multi64` (signed 64-bit) columns, through the real server.

Every query runs over rows in a sealed segment (some updated or replaced
after the flush) and rows still in RAM, and is checked against the same
rows evaluated in Python with Manticore's rules: a set is stored sorted
without repeats; `tags = 3` / `tags IN (...)` hold when an item does, their
negations when none does; ANY()/ALL() test each item with the operator as
written (an empty set passes neither); GROUP BY / FACET of a multi-value put
a row in one group per item."""

import json
import random
import re

import pymysql
import pytest

from helpers import LoupeServer, expect_error, rows

N_ROWS = 160


def _model(seed=11):
    rnd = random.Random(seed)
    docs = {}
    for i in range(1, N_ROWS + 1):
        r = rnd.random()
        tags = None if r < 0.08 else [] if r < 0.18 else [rnd.randrange(0, 12) for _ in range(rnd.randint(1, 5))]
        big = None if rnd.random() < 0.1 else [rnd.choice([-(2 ** 63), -7, 0, 5, 2 ** 40, 2 ** 63 - 1])
                                               for _ in range(rnd.randint(0, 3))]
        docs[i] = {"word": rnd.choice(["alpha", "beta", "gamma"]), "tags": tags, "big": big,
                   "n": rnd.randint(0, 3)}
    return docs, rnd


def _lit(v):
    return "NULL" if v is None else "(" + ", ".join(str(x) for x in v) + ")"


def _load(cur, t, docs, rnd):
    cur.execute(f"CREATE TABLE {t} (title TEXT, tags MULTI, big MULTI64, n INT)")

    def insert(ids, verb="INSERT"):
        cur.execute(f"{verb} INTO {t} (id, title, tags, big, n) VALUES " +
                    ", ".join(f"({i}, '{docs[i]['word']} doc', {_lit(docs[i]['tags'])}, "
                              f"{_lit(docs[i]['big'])}, {docs[i]['n']})" for i in ids))

    insert(range(1, 101))
    cur.execute(f"FLUSH TABLE {t}")
    insert(range(101, N_ROWS + 1))
    # sealed and RAM rows changed after the fact: UPDATE and REPLACE
    for i in rnd.sample(range(1, N_ROWS + 1), 25):
        docs[i]["tags"] = [rnd.randrange(0, 12) for _ in range(rnd.randint(0, 3))]
        cur.execute(f"UPDATE {t} SET tags = {_lit(docs[i]['tags'])} WHERE id = {i}")
    for i in rnd.sample(range(1, N_ROWS + 1), 10):
        docs[i]["big"] = [rnd.randrange(-3, 3)]
        insert([i], "REPLACE")


def _set(v):
    return None if v is None else sorted(set(v))


def _shown(v):
    return None if v is None else ",".join(str(x) for x in _set(v))


OPS = {"=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
       "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _conditions():
    """(SQL condition, Python predicate over a doc's tags set) pairs; a
    predicate returns None for SQL's NULL (no match)."""
    out = []

    def q(fn):  # NULL set -> NULL
        return lambda s: None if s is None else fn(s)

    for k in (0, 3, 11, 12):
        out.append((f"tags = {k}", q(lambda s, k=k: k in s)))
        out.append((f"tags != {k}", q(lambda s, k=k: k not in s)))
        out.append((f"{k} = tags", q(lambda s, k=k: k in s)))
        for op, f in OPS.items():
            out.append((f"ANY(tags) {op} {k}", q(lambda s, f=f, k=k: any(f(x, k) for x in s))))
            out.append((f"ALL(tags) {op} {k}", q(lambda s, f=f, k=k: bool(s) and all(f(x, k) for x in s))))
        out.append((f"{k} < ANY(tags)", q(lambda s, k=k: any(x > k for x in s))))
    for lst in ((1, 2), (5,), (0, 7, 11)):
        L = ", ".join(map(str, lst))
        out.append((f"tags IN ({L})", q(lambda s, lst=lst: any(x in lst for x in s))))
        out.append((f"tags NOT IN ({L})", q(lambda s, lst=lst: not any(x in lst for x in s))))
        out.append((f"IN(tags, {L})", q(lambda s, lst=lst: any(x in lst for x in s))))
        out.append((f"ANY(tags) NOT IN ({L})", q(lambda s, lst=lst: any(x not in lst for x in s))))
        out.append((f"ALL(tags) IN ({L})", q(lambda s, lst=lst: bool(s) and all(x in lst for x in s))))
        out.append((f"ALL(tags) NOT IN ({L})", q(lambda s, lst=lst: bool(s) and all(x not in lst for x in s))))
    out.append(("tags BETWEEN 4 AND 6", q(lambda s: any(4 <= x <= 6 for x in s))))
    out.append(("tags NOT BETWEEN 4 AND 6", q(lambda s: not any(4 <= x <= 6 for x in s))))
    out.append(("ALL(tags) BETWEEN 2 AND 9", q(lambda s: bool(s) and all(2 <= x <= 9 for x in s))))
    out.append(("ANY(tags) NOT BETWEEN 2 AND 9", q(lambda s: any(not 2 <= x <= 9 for x in s))))
    out.append(("tags = '3'", q(lambda s: 3 in s)))
    out.append(("tags IS NULL", lambda s: s is None))
    out.append(("LENGTH(tags) > 2", q(lambda s: len(s) > 2)))
    out.append(("LEAST(tags) >= 2 AND GREATEST(tags) <= 9", q(lambda s: bool(s) and min(s) >= 2 and max(s) <= 9)))
    out.append(("NOT (tags = 3) OR ANY(tags) > 10", lambda s: None if s is None else (3 not in s) or any(x > 10 for x in s)))
    return out


def test_mva_values_filters_groups_against_python(cur, uniq):
    docs, rnd = _model()
    t = uniq()
    _load(cur, t, docs, rnd)
    ids = sorted(docs)

    got = rows(cur, f"SELECT id, tags, big, LENGTH(tags), LEAST(tags), GREATEST(tags), LEAST(big) "
                    f"FROM {t} ORDER BY id ASC LIMIT 1000")
    want = []
    for i in ids:
        s, b = _set(docs[i]["tags"]), _set(docs[i]["big"])
        want.append((i, _shown(s), _shown(b), None if s is None else len(s),
                     min(s) if s else None, max(s) if s else None, min(b) if b else None))
    assert got == want

    for cond, pred in _conditions():
        want = [(i,) for i in ids if pred(_set(docs[i]["tags"]))]
        assert rows(cur, f"SELECT id FROM {t} WHERE {cond} ORDER BY id ASC LIMIT 1000") == want, cond
    # under MATCH, with an attribute filter beside it
    want = [(i,) for i in ids if docs[i]["word"] == "beta" and docs[i]["tags"] and 3 in docs[i]["tags"]
            and docs[i]["n"] > 0]
    assert rows(cur, f"SELECT id FROM {t} WHERE MATCH('beta') AND ANY(tags) = 3 AND n > 0 "
                     f"ORDER BY id ASC LIMIT 1000") == want
    # multi64: the int64 extremes
    for k in (-(2 ** 63), 2 ** 63 - 1, 0):
        want = [(i,) for i in ids if docs[i]["big"] and k in docs[i]["big"]]
        assert rows(cur, f"SELECT id FROM {t} WHERE ANY(big) = {k} ORDER BY id ASC LIMIT 1000") == want
    want = [(i,) for i in ids if docs[i]["big"] and all(x < 0 for x in docs[i]["big"])]
    assert rows(cur, f"SELECT id FROM {t} WHERE ALL(big) < 0 ORDER BY id ASC LIMIT 1000") == want

    # GROUP BY a multi-value: one group per item (an empty or NULL set: none / the NULL group)
    counts = {}
    for i in ids:
        s = _set(docs[i]["tags"])
        for x in ([None] if s is None else s):
            counts[x] = counts.get(x, 0) + 1
    want = sorted(counts.items(), key=lambda kv: (-1 if kv[0] is None else kv[0]))
    assert rows(cur, f"SELECT tags, COUNT(*) FROM {t} GROUP BY tags ORDER BY tags ASC LIMIT 100") == want
    assert rows(cur, f"SELECT groupby(), COUNT(*) FROM {t} GROUP BY tags ORDER BY groupby() ASC LIMIT 100") == want
    assert rows(cur, f"SELECT tags AS tg, COUNT(*) FROM {t} GROUP BY tg ORDER BY tg ASC LIMIT 100") == want
    # two keys: each (item, n)
    pairs = {}
    for i in ids:
        for x in _set(docs[i]["tags"]) or []:
            pairs[(x, docs[i]["n"])] = pairs.get((x, docs[i]["n"]), 0) + 1
    assert rows(cur, f"SELECT tags, n, COUNT(*) FROM {t} WHERE tags IS NOT NULL GROUP BY tags, n "
                     f"ORDER BY tags ASC, n ASC LIMIT 1000") == sorted((a, b, c) for (a, b), c in pairs.items())
    # FACET over a MATCH: the same counts for the matching rows
    fc = {}
    for i in ids:
        if docs[i]["word"] == "gamma":
            s = _set(docs[i]["tags"])
            for x in ([None] if s is None else s):
                fc[x] = fc.get(x, 0) + 1
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('gamma') LIMIT 1 FACET tags ORDER BY FACET() DESC LIMIT 100")
    cur.nextset()
    assert [(None if a is None else int(a), b) for a, b in cur.fetchall()] == \
        sorted(fc.items(), key=lambda kv: -1 if kv[0] is None else kv[0], reverse=True)
    # GROUP_CONCAT shows each row's set
    want = {}
    for i in ids:
        if docs[i]["n"] == 2 and docs[i]["tags"]:
            want.setdefault(2, []).append(_shown(docs[i]["tags"]))
    got = rows(cur, f"SELECT n, GROUP_CONCAT(tags) FROM {t} WHERE n = 2 AND LENGTH(tags) > 0 GROUP BY n")
    assert len(got) == 1 and sorted(got[0][1].split(",")) == sorted(",".join(want[2]).split(","))

    # the table survives a merge with its sets intact
    cur.execute(f"FLUSH TABLE {t}")
    cur.execute(f"OPTIMIZE TABLE {t} OPTION sync=1")
    assert rows(cur, f"SELECT id, tags, big FROM {t} ORDER BY id ASC LIMIT 1000") == \
        [(i, _shown(docs[i]["tags"]), _shown(docs[i]["big"])) for i in ids]


def test_mva_errors(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, tags MULTI, big MULTI64, n INT)")
    cur.execute(f"INSERT INTO {t} (id, title, tags) VALUES (1, 'x', (1, 2))")
    for sql, errno, frag in [
        (f"INSERT INTO {t} (id, tags) VALUES (2, (1, -1))", 1264, "out of range for MULTI column 'tags' (0 to 4294967295)"),
        (f"INSERT INTO {t} (id, tags) VALUES (2, (4294967296))", 1264, "out of range for MULTI column 'tags'"),
        (f"INSERT INTO {t} (id, big) VALUES (2, (1, 2.5))", 1064, "expected an integer as a multi-value item"),
        (f"INSERT INTO {t} (id, tags) VALUES (2, 'a,b')", 1366, "expected a list of integers like (1, 2, 3)"),
        (f"UPDATE {t} SET tags = ('x') WHERE id = 1", 1064, "expected an integer as a multi-value item"),
        (f"SELECT id FROM {t} ORDER BY tags", 1064, "a multi-value cannot be sorted on"),
        (f"SELECT id FROM {t} WHERE tags", 1064, "a multi-value is not a condition"),
        (f"SELECT id FROM {t} WHERE tags AND n = 1", 1064, "a multi-value is not a condition"),
        (f"SELECT id FROM {t} WHERE tags = big", 1366, "cannot compare two multi-values"),
        (f"SELECT id FROM {t} WHERE ANY(n) = 1", 1064, "ANY() takes a multi-value column (multi or multi64), not INT column 'n'"),
        (f"SELECT ANY(tags) FROM {t}", 1064, "ANY() and ALL() of a multi-value are compared with values"),
        (f"SELECT tags + 1 FROM {t}", 1366, "arithmetic needs numbers, got MULTI column 'tags'"),
        (f"SELECT ABS(tags) FROM {t}", 1064, "abs() does not take MULTI column 'tags'"),
        (f"SELECT LENGTH(n) FROM {t}", 1064, "LENGTH() takes a multi-value or a string"),
        (f"SELECT id FROM {t} WHERE tags = 'x'", 1366, "cannot compare"),
        (f"SELECT n, MAX(tags) FROM {t} GROUP BY n", 1064, "MIN() and MAX() of a multi-value"),
        (f"SELECT n, COUNT(DISTINCT tags) FROM {t} GROUP BY n", 1064, "COUNT(DISTINCT x) of a multi-value"),
        (f"CREATE TABLE {t}x (a MULTI32)", 1064, "expected text, string, int, bigint, float, bool, timestamp, json, "
                                                 "float_vector, multi or multi64"),
    ]:
        expect_error(cur, sql, errno, re.escape(frag))
    assert rows(cur, f"SELECT id, tags FROM {t}") == [(1, "1,2")]  # nothing half-written
    assert rows(cur, f"DESCRIBE {t}")[2:4] == [("tags", "mva", ""), ("big", "mva64", "")]
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "tags multi,\nbig multi64," in cur.fetchone()[1]


def test_mva_over_http(http, cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, tags MULTI, big MULTI64)")

    def post(path, body):
        st, _, data = http(path, json.dumps(body).encode() if not isinstance(body, bytes) else body)
        return st, json.loads(data)

    st, ans = post("/insert", {"table": t, "id": 1, "doc": {"title": "red shoe", "tags": [4, 2, 1, 2], "big": [-9]}})
    assert st == 201, ans
    lines = "\n".join(json.dumps({"insert": {"table": t, "id": i, "doc": {"title": "shoe", "tags": [i, i + 10]}}})
                      for i in (2, 3, 4)).encode() + b"\n"
    st, ans = post("/bulk", lines)
    assert st == 200 and not ans.get("errors"), ans
    st, ans = post("/replace", {"table": t, "id": 4, "doc": {"title": "hat", "tags": []}})
    assert st == 200, ans
    assert rows(cur, f"SELECT id, tags, big FROM {t} ORDER BY id ASC") == \
        [(1, "1,2,4", "-9"), (2, "2,12", None), (3, "3,13", None), (4, "", None)]

    st, ans = post("/search", {"table": t, "query": {"equals": {"any(tags)": 2}}, "sort": ["_id"]})
    assert st == 200 and [h["_id"] for h in ans["hits"]["hits"]] == [1, 2]
    assert ans["hits"]["hits"][0]["_source"]["tags"] == [1, 2, 4]
    assert ans["hits"]["hits"][0]["_source"]["big"] == [-9]
    st, ans = post("/search", {"table": t, "query": {"range": {"all(tags)": {"gte": 2}}}, "sort": ["_id"]})
    assert [h["_id"] for h in ans["hits"]["hits"]] == [2, 3]
    st, ans = post("/search", {"table": t, "query": {"in": {"tags": [13, 4]}}, "sort": ["_id"]})
    assert [h["_id"] for h in ans["hits"]["hits"]] == [1, 3]
    st, ans = post("/search", {"table": t, "query": {"match_all": {}},
                               "sort": [{"tags": {"order": "desc", "mode": "max"}}, "_id"]})
    assert [h["_id"] for h in ans["hits"]["hits"]] == [3, 2, 1, 4]
    st, ans = post("/search", {"table": t, "query": {"match_all": {}}, "limit": 0,
                               "aggs": {"t": {"terms": {"field": "tags", "size": 10}, "sort": [{"tags": "asc"}]}}})
    assert [(b["key"], b["doc_count"]) for b in ans["aggregations"]["t"]["buckets"]] == \
        [(1, 1), (2, 2), (3, 1), (4, 1), (12, 1), (13, 1)]
    # bad input: a 400 naming the problem, nothing written
    st, ans = post("/insert", {"table": t, "id": 9, "doc": {"tags": [1.5]}})
    assert st == 400 and "its array holds integers only" in json.dumps(ans)
    st, ans = post("/insert", {"table": t, "id": 9, "doc": {"tags": [-1]}})
    assert st == 400 and "out of range for MULTI column 'tags'" in json.dumps(ans)
    st, ans = post("/search", {"table": t, "query": {"match_all": {}}, "sort": [{"tags": {"order": "asc", "mode": "avg"}}]})
    assert st == 400 and '\\"mode\\": \\"min\\" or \\"max\\"' in json.dumps(ans)
    assert rows(cur, f"SELECT COUNT(*) FROM {t}") == [(4,)]


def test_mva_survives_crash_and_restart(tmp_path):
    """Sets in the log (kill -9 before any flush), in a sealed segment and in
    a merged one read back the same after each restart."""
    s = LoupeServer(name="mvarestart", data_dir=str(tmp_path / "data"))
    s.start()
    want = {1: "1,2,3", 2: "", 3: "4294967295", 4: None, 5: "0,7"}
    try:
        def connect():
            return pymysql.connect(host=s.host, port=s.mysql_port, user="root", autocommit=True)

        with connect() as c, c.cursor() as cur:
            cur.execute("CREATE TABLE m (title TEXT, tags MULTI, big MULTI64)")
            cur.execute("INSERT INTO m (id, title, tags, big) VALUES (1, 'a', (3, 2, 1), (-1)), (2, 'b', (), ()), "
                        "(3, 'c', (4294967295), NULL), (4, 'd', NULL, (9223372036854775807)), (5, 'e', (7), NULL)")
            cur.execute("UPDATE m SET tags = (0, 7) WHERE id = 5")
        s.kill()
        s.restart()
        read = "SELECT id, tags FROM m ORDER BY id ASC"
        with connect() as c, c.cursor() as cur:
            assert rows(cur, read) == sorted(want.items())
            assert rows(cur, "SELECT id, big FROM m WHERE ANY(big) > 0") == [(4, "9223372036854775807")]
            cur.execute("FLUSH TABLE m")
            cur.execute("INSERT INTO m (id, title, tags) VALUES (6, 'f', (5))")
            cur.execute("FLUSH TABLE m")
            cur.execute("OPTIMIZE TABLE m OPTION sync=1")
            want[6] = "5"
        assert s.signal_stop() == 0
        s.start()
        with connect() as c, c.cursor() as cur:
            assert rows(cur, read) == sorted(want.items())
            assert rows(cur, "SELECT id FROM m WHERE tags IN (5, 7) ORDER BY id ASC") == [(5,), (6,)]
    finally:
        problems = s.stop()
        assert not problems, problems


def test_mva_group_n_by_keeps_each_groups_rows(cur, uniq):
    """GROUP N BY keeps a group's best rows, copying each in over the worst:
    rows come in descending id order (each beats the kept ones), with
    empty and long sets alternating, so every kept row's room is reused
    for a set of another size (an empty set once pointed into the row it
    came from, and the next copy overwrote that row: ASan caught it)."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, n INT, big MULTI64, tags MULTI)")
    ids = list(range(240, 0, -1))

    def big(i):
        return [] if i % 2 else list(range(i, i + (i % 7) + 1))

    for chunk in range(0, len(ids), 60):
        cur.execute(f"INSERT INTO {t} (id, title, n, big, tags) VALUES " +
                    ", ".join(f"({i}, 'x', {i % 3}, {_lit(big(i))}, {_lit([i % 5] if i % 4 else [])})"
                              for i in ids[chunk:chunk + 60]))
    want = []
    for n in range(3):
        best = sorted(i for i in ids if i % 3 == n)[:2]
        want += [(n, i, _shown(big(i))) for i in best]
    assert rows(cur, f"SELECT n, id, big FROM {t} GROUP 2 BY n ORDER BY n ASC LIMIT 100") == want
    # the same through a multi-value key: each item's two best rows
    want = []
    for k in range(5):
        best = sorted(i for i in ids if i % 4 and i % 5 == k)[:2]
        want += [(k, i, _shown(big(i))) for i in best]
    assert rows(cur, f"SELECT tags, id, big FROM {t} GROUP 2 BY tags ORDER BY tags ASC LIMIT 100") == want


def test_any_all_indexof_for_json_arrays_and_multi_values(cur, uniq):
    """Manticore's ANY(cond FOR x IN arr), ALL(...) and INDEXOF(...): cond
    tested on each element of a JSON array (a property or the column
    itself) or of a multi-value, against Python over random documents
    (numbers, strings with escapes, nested values, missing and non-array
    paths), sealed and in RAM. ALL of an empty array is 0, as ANY's."""
    rnd = random.Random(17)
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, j JSON, tags MULTI)")
    docs = {}
    for i in range(1, 121):
        r = rnd.random()
        a = ([rnd.randint(-3, 12) for _ in range(rnd.randint(0, 5))] if r < 0.7 else
             [rnd.choice(["red", 'q"t', "Blue", 1.5, None, [1, 2], {"k": 3}]) for _ in range(rnd.randint(1, 4))] if r < 0.9
             else {"not": "an array"})
        d = {"a": a, "s": [rnd.choice(["red", "green", 'gr"een']) for _ in range(rnd.randint(0, 3))]}
        if i % 13 == 0:
            del d["a"]
        docs[i] = (d, sorted({rnd.randint(0, 9) for _ in range(rnd.randint(0, 4))}))

    def ins(ids):
        cur.execute(f"INSERT INTO {t} (id, title, j, tags) VALUES " + ", ".join("(%s, 'x', %s, %s)" for _ in ids),
                    [v for i in ids for v in (i, json.dumps(docs[i][0]), ",".join(map(str, docs[i][1])))])
    ins(list(range(1, 61)))
    cur.execute(f"FLUSH TABLE {t}")
    ins(list(range(61, 121)))

    def num(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    def arr(i, which):
        d, tags = docs[i]
        if which == "tags":
            return tags
        v = d.get(which)
        return v if isinstance(v, list) else None

    def quant(kind, elems, pred):
        if elems is None:
            return None
        hits = [bool(pred(x)) for x in elems]
        if kind == "ANY":
            return int(any(hits))
        if kind == "ALL":
            return int(bool(hits) and all(hits))
        return hits.index(True) if True in hits else -1

    cases = [
        # (a string, or an object or array as its JSON text, sorts after every number)
        ("x > 5", "a", lambda x: (num(x) and x > 5) or isinstance(x, (str, list, dict))),
        ("x % 2 = 0", "a", lambda x: num(x) and x == int(x) and int(x) % 2 == 0),
        ("x = 'red'", "a", lambda x: isinstance(x, str) and x.lower() == "red"),
        ("x = 'gr\"een'", "s", lambda x: x == 'gr"een'),
        ("x <> 'red'", "s", lambda x: x.lower() != "red"),
        ("x IN (3, 7)", "tags", lambda x: x in (3, 7)),
        ("x BETWEEN 2 AND 4 OR x = 9", "tags", lambda x: 2 <= x <= 4 or x == 9),
    ]
    for cond, which, pred in cases:
        src = "tags" if which == "tags" else f"j.{which}"
        for kind in ("ANY", "ALL", "INDEXOF"):
            got = rows(cur, f"SELECT id, {kind}({cond} FOR x IN {src}) FROM {t} ORDER BY id ASC LIMIT 1000")
            want = [(i, quant(kind, arr(i, which), pred)) for i in sorted(docs)]
            assert got == want, (kind, cond, which)
    # in WHERE, beside other conditions; the whole JSON column as the array
    got = rows(cur, f"SELECT id FROM {t} WHERE ANY(x > 5 FOR x IN j.a) AND ALL(x < 9 FOR x IN tags) ORDER BY id ASC LIMIT 1000")
    assert got == [(i,) for i in sorted(docs) if quant("ANY", arr(i, "a"), lambda x: (num(x) and x > 5) or
                                                       isinstance(x, (str, list, dict))) == 1
                   and quant("ALL", arr(i, "tags"), lambda x: x < 9) == 1]
    assert rows(cur, f"SELECT ANY(x > 1 FOR x IN j) FROM {t} WHERE id = 1") == [(None,)]  # an object, not an array
    # without a table (the element's name is looked up in no schema: this crashed once)
    assert rows(cur, "SELECT ANY(x > 1 FOR x IN NULL), ALL(x > 1 FOR x IN NULL), INDEXOF(x FOR x IN NULL)") == \
        [(None, None, None)]
    for sql, frag in [
        (f"SELECT ANY(x FOR x IN title) FROM {t}", "FOR x IN takes a JSON array or a multi-value, not"),
        (f"SELECT ANY(title = 1 FOR title IN j.a) FROM {t}", "the element's name is a column's"),
        (f"SELECT ANY(ANY(y > 1 FOR y IN j.a) FOR x IN j.a) FROM {t}", "cannot be inside another one"),
        (f"SELECT SUM(x FOR x IN j.a) FROM {t}", "FOR x IN ... belongs to ANY(), ALL() or INDEXOF()"),
        (f"SELECT ANY(x.k > 1 FOR x IN j.a) FROM {t}", "a path into the element of FOR x IN ... is not supported"),
        (f"SELECT ANY(x > 1 FOR x j.a) FROM {t}", "expected IN and the array"),
        (f"SELECT ANY(x > 1 FOR 5 IN j.a) FROM {t}", "expected a name for the array's element"),
    ]:
        expect_error(cur, sql, 1064, re.escape(frag))
