"""SELECT: projections, WHERE, NULL semantics, ORDER BY, LIMIT, COUNT(*),
SHOW META, SELECT without FROM."""

import pytest

from conftest import pymysql_connect
from helpers import col_names, expect_error, rows, server_error

# id: (tag, n, f, g, body)
DATA = {
    1: ("apple", 10, 1.5, 1, "one"),
    2: ("Banana", 20, 2.5, 2, "two"),
    3: ("cherry", 30, None, 1, "three"),
    4: ("APPLE", None, 4.5, 2, "four"),
    5: (None, 50, 5.5, 1, "five"),
    6: ("date", 60, 6.5, 3, "six"),
    7: ("elder", -70, -7.5, 3, "seven"),
    8: ("fig", 80, 8.5, 2, "eight"),
}


def lit(v):
    if v is None:
        return "NULL"
    return f"'{v}'" if isinstance(v, str) else repr(v)


@pytest.fixture(scope="module")
def fruit(server):
    """A module-wide table with DATA in it (never written by the tests)."""
    c = pymysql_connect(server.mysql_port)
    with c.cursor() as cur:
        cur.execute("CREATE TABLE sel_fruit (tag STRING, n INT, f FLOAT, g INT, body TEXT)")
        # Inserted out of id order, so that "ascending id order without
        # ORDER BY" means something.
        for batch in ([5, 2, 8], [1, 7], [3, 6, 4]):
            cur.execute("INSERT INTO sel_fruit (id, tag, n, f, g, body) VALUES " + ", ".join(
                "(" + ", ".join(lit(x) for x in (i,) + DATA[i]) + ")" for i in batch))
    c.close()
    return "sel_fruit"


def test_star_in_id_order(cur, fruit):
    cur.execute(f"SELECT * FROM {fruit}")
    assert col_names(cur) == ["id", "tag", "n", "f", "g", "body"]
    assert [tuple(r) for r in cur.fetchall()] == [(i,) + v for i, v in DATA.items()]


def test_column_list_and_aliases(cur, fruit):
    cur.execute(f"SELECT n, id, tag FROM {fruit} WHERE id = 2")
    assert col_names(cur) == ["n", "id", "tag"]
    assert cur.fetchall() == ((20, 2, "Banana"),)
    cur.execute(f"SELECT n AS num, tag label, id AS MyId FROM {fruit} WHERE id = 1")
    assert col_names(cur) == ["num", "label", "MyId"]
    assert cur.fetchall() == ((10, "apple", 1),)
    cur.execute(f"SELECT n+1, n * 2 AS twice FROM {fruit} WHERE id = 1")
    assert col_names(cur) == ["n+1", "twice"]
    assert cur.fetchall() == ((11, 20),)


def test_count(cur, fruit):
    cur.execute(f"SELECT count(*) FROM {fruit}")
    assert col_names(cur) == ["count(*)"]
    assert cur.description[0][1] == 8           # LONGLONG
    assert cur.fetchall() == ((8,),)
    assert rows(cur, f"SELECT COUNT(*) AS c FROM {fruit} WHERE n > 20") == [(4,)]
    assert rows(cur, f"SELECT COUNT(*) FROM {fruit} WHERE n > 1000") == [(0,)]
    assert rows(cur, f"SELECT COUNT(*) FROM {fruit} WHERE id IN (1, 2, 99)") == [(2,)]


ALL = sorted(DATA)
WHERE_CASES = [
    ("n = 20", [2]),
    ("n != 20", [1, 3, 5, 6, 7, 8]),
    ("n <> 20", [1, 3, 5, 6, 7, 8]),
    ("n < 20", [1, 7]),
    ("n <= 20", [1, 2, 7]),
    ("n > 50", [6, 8]),
    ("n >= 50", [5, 6, 8]),
    ("n IN (10, 30, 99)", [1, 3]),
    ("n NOT IN (10, 30)", [2, 5, 6, 7, 8]),
    ("n BETWEEN 20 AND 50", [2, 3, 5]),
    ("n NOT BETWEEN 20 AND 50", [1, 6, 7, 8]),
    ("n > 10 AND g = 1", [3, 5]),
    ("g = 3 OR n = 10", [1, 6, 7]),
    ("n > 10 AND n < 60 OR g = 3", [2, 3, 5, 6, 7]),
    ("(g = 1 OR g = 2) AND n < 25", [1, 2]),
    ("NOT (g = 1)", [2, 4, 6, 7, 8]),
    ("NOT g = 1", [2, 4, 6, 7, 8]),
    ("n + 10 = 40", [3]),
    ("n * 2 > 100", [6, 8]),
    ("n / 2 = 5", [1]),
    ("n - 100 < -150", [7]),
    ("-n = 70", [7]),
    ("f > 5", [5, 6, 8]),
    ("f < 0", [7]),
    ("f = 1.5", [1]),
    ("f BETWEEN 2 AND 5", [2, 4]),
    ("id = 3", [3]),
    ("id IN (2, 4, 100)", [2, 4]),
    ("id > 6", [7, 8]),
    ("id BETWEEN 2 AND 3", [2, 3]),
    ("id != 1 AND id < 4", [2, 3]),
    # STRING compares case-insensitively.
    ("tag = 'apple'", [1, 4]),
    ("tag = 'BANANA'", [2]),
    ("tag IN ('CHERRY', 'Fig')", [3, 8]),
    ("tag > 'd'", [6, 7, 8]),
    ("tag BETWEEN 'B' AND 'c'", [2]),
    # NULL: comparisons are unknown, so the row never matches.
    ("n IS NULL", [4]),
    ("n IS NOT NULL", [1, 2, 3, 5, 6, 7, 8]),
    ("tag IS NULL", [5]),
    ("f IS NULL", [3]),
    ("tag != 'apple'", [2, 3, 6, 7, 8]),
    ("NOT (n = 20)", [1, 3, 5, 6, 7, 8]),
    ("NOT (n > 100)", [1, 2, 3, 5, 6, 7, 8]),
    ("n = NULL", []),
    ("n != NULL", []),
    ("NOT (n = NULL)", []),
    ("n IN (10, NULL)", [1]),
    ("n NOT IN (10, NULL)", []),
    ("n < 0 OR n IS NULL", [4, 7]),
]


@pytest.mark.parametrize("cond,expected", WHERE_CASES, ids=[c for c, _ in WHERE_CASES])
def test_where(cur, fruit, cond, expected):
    # No ORDER BY: rows come in ascending id order.
    assert [r[0] for r in rows(cur, f"SELECT id FROM {fruit} WHERE {cond}")] == expected
    assert rows(cur, f"SELECT COUNT(*) FROM {fruit} WHERE {cond}") == [(len(expected),)]


ORDER_CASES = [
    ("ORDER BY id DESC", [8, 7, 6, 5, 4, 3, 2, 1]),
    ("ORDER BY g ASC, id DESC", [5, 3, 1, 8, 4, 2, 7, 6]),
    ("ORDER BY g DESC, id ASC", [6, 7, 2, 4, 8, 1, 3, 5]),
    ("ORDER BY g, id", [1, 3, 5, 2, 4, 8, 6, 7]),
    ("WHERE n IS NOT NULL ORDER BY n DESC", [8, 6, 5, 3, 2, 1, 7]),
    ("WHERE f IS NOT NULL ORDER BY f ASC", [7, 1, 2, 4, 5, 6, 8]),
    # Case-insensitive order: binary order would put 'Banana' first.
    ("WHERE tag IS NOT NULL AND id != 4 ORDER BY tag", [1, 2, 3, 6, 7, 8]),
    ("WHERE tag IS NOT NULL AND id != 4 ORDER BY tag DESC", [8, 7, 6, 3, 2, 1]),
    ("ORDER BY id LIMIT 3", [1, 2, 3]),
    ("ORDER BY id LIMIT 2, 3", [3, 4, 5]),
    ("ORDER BY id LIMIT 3 OFFSET 2", [3, 4, 5]),
    ("ORDER BY id DESC LIMIT 1, 2", [7, 6]),
    ("LIMIT 0", []),
    ("LIMIT 100", ALL),
    ("LIMIT 50, 10", []),
    ("WHERE g = 2 LIMIT 1, 5", [4, 8]),
]


@pytest.mark.parametrize("tail,expected", ORDER_CASES, ids=[c for c, _ in ORDER_CASES])
def test_order_and_limit(cur, fruit, tail, expected):
    assert [r[0] for r in rows(cur, f"SELECT id FROM {fruit} {tail}")] == expected


def show_meta(cur):
    cur.execute("SHOW META")
    return {str(k): str(v) for k, v in cur.fetchall()}


def test_default_limit_and_show_meta(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT)")
    cur.execute(f"INSERT INTO {t} (id, n) VALUES " + ",".join(f"({i}, {i % 2})" for i in range(25, 0, -1)))
    assert [r[0] for r in rows(cur, f"SELECT * FROM {t}")] == list(range(1, 21))
    meta = show_meta(cur)
    assert meta["total"] == "20" and meta["total_found"] == "25", meta
    assert "time" in meta
    assert len(rows(cur, f"SELECT id FROM {t} WHERE n = 1")) == 13
    meta = show_meta(cur)
    assert (meta["total"], meta["total_found"]) == ("13", "13")
    assert len(rows(cur, f"SELECT id FROM {t} LIMIT 25")) == 25
    assert [r[0] for r in rows(cur, f"SELECT id FROM {t} ORDER BY id DESC")][:2] == [25, 24]
    assert len(rows(cur, f"SELECT id FROM {t} LIMIT 3")) == 3
    assert show_meta(cur)["total_found"] == "25"
    assert rows(cur, f"SELECT COUNT(*) FROM {t}") == [(25,)]


def test_text_column_not_filterable(cur, fruit):
    _, msg = server_error(cur, f"SELECT id FROM {fruit} WHERE body = 'one'")
    assert "body" in msg
    _, msg = server_error(cur, f"SELECT id FROM {fruit} ORDER BY body")
    assert "body" in msg
    # Selecting it is fine.
    assert rows(cur, f"SELECT body FROM {fruit} WHERE id = 1") == [("one",)]


def test_unknown_table_1146(cur, uniq):
    t = uniq()
    expect_error(cur, f"SELECT * FROM {t}", 1146, match=t)
    expect_error(cur, f"SELECT COUNT(*) FROM {t} WHERE id = 1", 1146, match=t)


@pytest.mark.parametrize("expr,value", [
    ("1", 1),
    ("-5", -5),
    ("1+2*3", 7),
    ("(1+2)*3", 9),
    ("10-3-2", 5),
    ("7/2", 3.5),
    ("1.5", 1.5),
    ("-2.25 * 2", -4.5),
    ("'abc'", "abc"),
    ("\"dq\"", "dq"),
    ("''", ""),
    ("NULL", None),
    ("9223372036854775807", 9223372036854775807),
    ("-9223372036854775808", -9223372036854775808),
])
def test_select_without_from(cur, expr, value):
    cur.execute(f"SELECT {expr}")
    (got,), = cur.fetchall()
    if isinstance(value, float):
        assert float(got) == value
    else:
        assert got == value and type(got) is type(value)


def test_select_without_from_names_and_functions(cur, conn):
    cur.execute("SELECT 1 AS one, 'x' two, 2+3")
    assert col_names(cur) == ["one", "two", "2+3"]
    assert cur.fetchall() == ((1, "x", 5),)
    cur.execute("SELECT DATABASE(), VERSION(), CONNECTION_ID(), USER(), LAST_INSERT_ID()")
    (db, ver, cid, user, lid), = cur.fetchall()
    assert ver == conn.get_server_info() and cid == conn.thread_id() and user.startswith("root")
    assert lid == 0


def scan_table(cur, uniq, n=3000):
    """n rows: id i, a = i % 3, k = (n - i) (a descending key); the first
    half flushed to a sealed segment (column arrays), the rest in RAM."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (a INT, k INT, body TEXT)")
    half = n // 2
    for lo, hi in ((1, half + 1), (half + 1, n + 1)):
        for base in range(lo, hi, 500):
            cur.execute(f"INSERT INTO {t} (id, a, k, body) VALUES " + ",".join(
                f"({i}, {i % 3}, {n - i}, 'x')" for i in range(base, min(base + 500, hi))))
        if lo == 1:
            cur.execute(f"FLUSH RAMCHUNK {t}")
    return t


def test_scan_cutoff(cur, uniq):
    """OPTION cutoff=N without MATCH stops the scan once N rows passed the
    WHERE, as it stops a full-text search: COUNT(*) says N, the rows are
    the best of those N (the first N in id order), total_relation is gte.
    Through column arrays (sealed rows), row by row (RAM rows) and across
    the two; 0 means no limit."""
    t = scan_table(cur, uniq)
    for cut, where, want in ((10, "", 10), (1600, "", 1600), (2999, "", 2999), (100, "WHERE a = 1", 100),
                             (1200, "WHERE a = 1", 1000), (0, "WHERE a = 1", 1000), (5000, "", 3000)):
        cur.execute(f"SELECT COUNT(*) FROM {t} {where} OPTION cutoff={cut}")
        assert cur.fetchone()[0] == want, (cut, where)
        assert show_meta(cur)["total_relation"] == ("gte" if 0 < cut <= want else "eq"), (cut, where)
    # the best of the first N matches: ids 1..10 (a = 1: 1, 4, ... 28)
    assert rows(cur, f"SELECT id FROM {t} ORDER BY k ASC LIMIT 3 OPTION cutoff=10") == [(10,), (9,), (8,)]
    assert rows(cur, f"SELECT id FROM {t} WHERE a = 1 ORDER BY k ASC LIMIT 2 OPTION cutoff=10") == [(28,), (25,)]
    assert rows(cur, f"SELECT id FROM {t} WHERE a = 1 LIMIT 3 OPTION cutoff=5") == [(1,), (4,), (7,)]
    m = show_meta(cur)
    assert m["total_found"] == "5" and m["total_relation"] == "gte", m
    # the cutoff falls among the RAM rows, past the sealed ones
    assert rows(cur, f"SELECT id FROM {t} WHERE a = 0 ORDER BY k ASC LIMIT 1 OPTION cutoff=600") == [(1800,)]
    # a filter the column arrays cannot decide (rows read one by one) stops too
    assert rows(cur, f"SELECT COUNT(*) FROM {t} WHERE a * 2 = 4 OPTION cutoff=7") == [(7,)]
    assert rows(cur, f"SELECT id FROM {t} WHERE a * 2 = 4 ORDER BY k DESC LIMIT 1 OPTION cutoff=7") == [(2,)]
    # by ids
    assert rows(cur, f"SELECT id FROM {t} WHERE id IN (5, 6, 7, 8) OPTION cutoff=2") == [(5,), (6,)]
    for bad in ("-1", "1.5", "'x'"):
        expect_error(cur, f"SELECT id FROM {t} OPTION cutoff={bad}", 1064, r"cutoff expects an integer from 0")


def test_scan_max_query_time(cur, uniq):
    """OPTION max_query_time=N (ms) without MATCH stops a scan N ms after
    the query starts, with a warning: the rows are the best found by then.
    A filter the column arrays cannot decide, on each of 300,000 rows,
    takes far more than 1 ms; a generous limit changes nothing."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (a INT, body TEXT)")
    for base in range(0, 300000, 10000):
        cur.execute(f"INSERT INTO {t} (id, a) VALUES " + ",".join(f"({base + i + 1}, {i % 7})"
                                                                 for i in range(10000)))
    where = "WHERE a * 2 + 1 > 0"
    cur.execute(f"SELECT COUNT(*) FROM {t} {where}")
    assert cur.fetchone()[0] == 300000
    cur.execute(f"SELECT COUNT(*) FROM {t} {where} OPTION max_query_time=1")
    assert cur.fetchone()[0] < 300000
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == (("Warning", "1105", "query time exceeded max_query_time=1 ms: the results "
                               "are the matches found by then"),)
    assert len(rows(cur, f"SELECT id FROM {t} {where} ORDER BY a DESC LIMIT 2 OPTION max_query_time=1")) == 2
    m = show_meta(cur)
    assert m["total_relation"] == "gte" and int(m["total_found"]) < 300000, m
    cur.execute(f"SELECT COUNT(*) FROM {t} {where} OPTION max_query_time=600000")
    assert cur.fetchone()[0] == 300000
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == ()
    expect_error(cur, f"SELECT id FROM {t} OPTION max_query_time=-1", 1064, r"'max_query_time' expects a number")


def test_string_functions(cur, uniq):
    """CONCAT, UPPER, LOWER, SUBSTRING_INDEX, TO_STRING and LEVENSHTEIN, as
    Manticore has them, in the select list, WHERE, ORDER BY and GROUP BY,
    over sealed and RAM rows alike, against Python."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (tag STRING, n INT, f FLOAT)")
    tags = ["Apple.pie", "banana", "Cherry.tart.big", "date", "Élan.vital", None]
    data = {i: (tags[i % len(tags)], i * 7 % 23, i / 4) for i in range(1, 61)}

    def insert(ids):
        cur.execute(f"INSERT INTO {t} (id, tag, n, f) VALUES " + ", ".join(
            "({}, {}, {}, {})".format(i, lit(data[i][0]), data[i][1], data[i][2]) for i in ids))
    insert(range(1, 41))
    cur.execute(f"FLUSH TABLE {t}")
    insert(range(41, 61))

    def lev(a, b):
        d = list(range(len(b) + 1))
        for i in range(1, len(a) + 1):
            prev, d[0] = d[0], i
            for j in range(1, len(b) + 1):
                prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] != b[j - 1]))
        return d[len(b)]

    def sub_index(s, dl, k):
        parts = s.split(dl)
        return dl.join(parts[:k]) if k > 0 else dl.join(parts[k:])

    got = rows(cur, f"SELECT id, CONCAT(tag, '#', TO_STRING(n)), UPPER(tag), LOWER(tag), SUBSTRING_INDEX(tag, '.', 1), "
                    f"SUBSTRING_INDEX(tag, '.', -1), LEVENSHTEIN('apple', LOWER(tag)) FROM {t} ORDER BY id ASC LIMIT 100")
    want = []
    for i in range(1, 61):
        s, n, _ = data[i]
        if s is None:
            want.append((i, None, None, None, None, None, None))
        else:
            want.append((i, f"{s}#{n}", s.upper(), s.lower(), sub_index(s, ".", 1), sub_index(s, ".", -1),
                         lev("apple", s.lower())))
    assert got == want
    # WHERE, ORDER BY and GROUP BY over them
    assert rows(cur, f"SELECT id FROM {t} WHERE LOWER(tag) = 'élan.vital' AND n > 5 ORDER BY id ASC LIMIT 100") == \
        [(i,) for i in range(1, 61) if data[i][0] == "Élan.vital" and data[i][1] > 5]
    assert rows(cur, f"SELECT id FROM {t} WHERE tag IS NOT NULL ORDER BY LEVENSHTEIN('cherry', LOWER(tag)) ASC, "
                     "id DESC LIMIT 3") == \
        [(i,) for i in sorted((i for i in range(1, 61) if data[i][0]), key=lambda i: (lev("cherry", data[i][0].lower()), -i))[:3]]
    groups = {}
    for i in range(1, 61):
        if data[i][0]:
            k = sub_index(data[i][0], ".", 1).upper()
            groups[k] = groups.get(k, 0) + 1
    assert sorted(rows(cur, f"SELECT UPPER(SUBSTRING_INDEX(tag, '.', 1)) k, COUNT(*) FROM {t} WHERE tag IS NOT NULL "
                            "GROUP BY k LIMIT 100")) == sorted(groups.items())
    assert rows(cur, f"SELECT TO_STRING(f), DOUBLE(TO_STRING(n)) FROM {t} WHERE id = 6") == [("1.5", float(data[6][1]))]
    assert rows(cur, "SELECT CONCAT('a', 'b', 'c'), LEVENSHTEIN('kitten', 'sitting', {normalize=1}) > 0.4") == [("abc", 1)]
    expect_error(cur, f"SELECT CONCAT(n) FROM {t}", 1064, r"concat\(\) takes a string as argument 1, not INT column 'n': "
                                                          r"convert it with TO_STRING\(\)")
    expect_error(cur, "SELECT LEVENSHTEIN('a')", 1064, r"levenshtein\(\) takes two strings and options")


def test_json_properties(cur, uniq):
    """A JSON column's properties, Manticore's j.a.b, j.a[0] and j['a b']:
    in the select list, WHERE, ORDER BY, GROUP BY and FACET, over sealed
    and RAM rows, against the same documents read by Python. A path that
    leads nowhere is NULL; an object or array is its JSON text."""
    import json
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, j JSON)")
    rnd = __import__("random").Random(3)
    docs = {}
    for i in range(1, 81):
        d = {"color": rnd.choice(["red", "blue", "green"]), "n": rnd.randint(-5, 20),
             "size": {"w": rnd.randint(1, 9), "tags": [rnd.choice(["x", "y", 'q"t']) for _ in range(rnd.randint(0, 3))]}}
        if i % 7 == 0:
            del d["n"]
        if i % 11 == 0:
            d["a b"] = {"Deep": i}
        docs[i] = d
    def insert(ids):
        cur.execute(f"INSERT INTO {t} (id, title, j) VALUES " + ", ".join("(%s, 'doc', %s)" for _ in ids),
                    [v for i in ids for v in (i, json.dumps(docs[i]))])
    insert(list(range(1, 51)))
    cur.execute(f"FLUSH TABLE {t}")
    insert(list(range(51, 81)))

    def prop(d, *path):
        for p in path:
            if isinstance(p, int):
                if not isinstance(d, list) or p >= len(d):
                    return None
                d = d[p]
            else:
                if not isinstance(d, dict) or p not in d:
                    return None
                d = d[p]
        return d

    got = rows(cur, f"SELECT id, j.color, j.n, j.size.w, j.size.tags[0], j.size.tags, j['a b'].Deep, j.nope "
                    f"FROM {t} ORDER BY id ASC LIMIT 100")
    want = []
    for i, d in sorted(docs.items()):
        tags = prop(d, "size", "tags")
        want.append((i, d["color"], None if "n" not in d else str(d["n"]), str(d["size"]["w"]), prop(d, "size", "tags", 0),
                     json.dumps(tags, separators=(",", ":")), None if prop(d, "a b", "Deep") is None else str(i), None))
    assert got == want
    assert rows(cur, f"SELECT id FROM {t} WHERE j.n > 10 AND j.color = 'red' ORDER BY j.n DESC, id ASC LIMIT 100") == \
        [(i,) for i, d in sorted(docs.items(), key=lambda kv: (-kv[1].get("n", -99), kv[0]))
         if d.get("n", -99) > 10 and d["color"] == "red"]
    assert rows(cur, f"SELECT id FROM {t} WHERE j.size.tags[0] = 'q\"t' ORDER BY id ASC LIMIT 100") == \
        [(i,) for i, d in sorted(docs.items()) if prop(d, "size", "tags", 0) == 'q"t']
    assert rows(cur, f"SELECT id FROM {t} WHERE j.n IS NULL ORDER BY id ASC LIMIT 100") == [(i,) for i in sorted(docs) if i % 7 == 0]
    counts = {}
    for d in docs.values():
        counts[d["color"]] = counts.get(d["color"], 0) + 1
    assert rows(cur, f"SELECT j.color c, COUNT(*) FROM {t} GROUP BY c ORDER BY c ASC") == sorted(counts.items())
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('doc') LIMIT 1 FACET j.size.w AS w ORDER BY FACET() ASC")
    cur.nextset()
    ws = {}
    for d in docs.values():
        ws[d["size"]["w"]] = ws.get(d["size"]["w"], 0) + 1
    assert [(int(w), n) for w, n in cur.fetchall()] == sorted(ws.items())
    expect_error(cur, f"SELECT title.x FROM {t}", 1064, r"a path \('\.key' or '\[\.\.\.\]'\) follows only a JSON column's name")
    expect_error(cur, f"SELECT j[x] FROM {t}", 1064, r"expected an array index or a quoted key inside \[ \]")
    expect_error(cur, f"SELECT nope.x FROM {t}", 1054, r"unknown column 'nope'")
    expect_error(cur, f"SELECT id FROM {t} WHERE j = 1", 1235, r"cannot be filtered or sorted on: JSON values have no order")


def test_update_json_properties_concurrently(connect, cur, uniq):
    """Each UPDATE of JSON properties reads the row's document and writes it
    back only if the row is still as it was read; a row changed meanwhile is
    read again. Four clients set properties of their own, and a number
    column, on the same rows (sealed and in RAM): every property every
    client set is there at the end, none lost to a writer that read the
    document before another wrote it (the build before this check lost
    some in every run)."""
    import json
    import threading
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, j JSON, n INT)")
    cur.execute(f"INSERT INTO {t} (id, title, j, n) VALUES (1, 'a', '{{}}', 0), (2, 'b', '{{\"keep\": 1}}', 0)")
    cur.execute(f"FLUSH TABLE {t}")
    cur.execute(f"INSERT INTO {t} (id, title, j, n) VALUES (3, 'c', NULL, 0)")
    n_each, errors = 60, []

    def writer(w):
        try:
            c = connect().cursor()
            for i in range(n_each):
                c.execute(f"UPDATE {t} SET j.w{w}_{i} = {i}, n = {i} WHERE id IN (1, 2, 3)")
                assert c.rowcount == 3, c.rowcount
        except Exception as e:  # reported below, with the thread's number
            errors.append((w, e))
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    cur.execute(f"SELECT id, j FROM {t} ORDER BY id ASC")
    for rid, j in cur.fetchall():
        doc = json.loads(j)
        want = {f"w{w}_{i}": i for w in range(4) for i in range(n_each)}
        if rid == 2:
            want["keep"] = 1
        lost = sorted(set(want) - set(doc))
        assert not lost, (rid, len(lost), lost[:10])
        assert doc == want


def test_update_json_properties(cur, uniq):
    """UPDATE t SET j.a.b = value (Manticore's JSON attribute updates, and
    more): each matching row's document gets the properties set in SET's
    order (missing keys made objects, an array index up to its length),
    sealed rows and RAM rows alike, other columns beside; a row whose
    document cannot take the path fails the statement, nothing written."""
    import json
    import random
    import re
    rnd = random.Random(8)
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, j JSON, n INT)")
    docs = {}
    for i in range(1, 41):
        docs[i] = rnd.choice([{"a": i, "arr": [1, 2]}, {"b": {"c": "x"}, "arr": []}, None, {"a": {"deep": 1}, "arr": [0]}])
    cur.execute(f"INSERT INTO {t} (id, title, j, n) VALUES " + ", ".join("(%s, 'doc', %s, 0)" for _ in range(20)),
                [v for i in range(1, 21) for v in (i, None if docs[i] is None else json.dumps(docs[i]))])
    cur.execute(f"FLUSH TABLE {t}")
    cur.execute(f"INSERT INTO {t} (id, title, j, n) VALUES " + ", ".join("(%s, 'doc', %s, 0)" for _ in range(20)),
                [v for i in range(21, 41) for v in (i, None if docs[i] is None else json.dumps(docs[i]))])

    def read():
        return {i: (None if j is None else json.loads(j), n) for i, j, n in rows(cur, f"SELECT id, j, n FROM {t} LIMIT 100")}

    ids = [i for i in docs if i % 3 == 0]
    cur.execute(f"UPDATE {t} SET j.a = 5, j.b.c = 'q\\'t', j.tags = (3, 1), j['x y'] = NULL, n = 7 "
                f"WHERE id IN ({', '.join(map(str, ids))})")
    for i in ids:
        d = docs[i] if docs[i] is not None else {}
        d["a"] = 5
        d.setdefault("b", {})["c"] = "q't"
        d["tags"] = [3, 1]
        d["x y"] = None
        docs[i] = d
    got = read()
    assert {i: got[i][0] for i in docs} == docs
    assert all(got[i][1] == (7 if i in ids else 0) for i in docs)
    # array elements: replaced, or appended at the end
    arr_ids = sorted(i for i in docs if isinstance(docs[i], dict) and isinstance(docs[i].get("arr"), list) and
                     len(docs[i]["arr"]) == 1)
    cur.execute(f"UPDATE {t} SET j.arr[0] = 2.5, j.arr[1] = 'two' WHERE id IN ({', '.join(map(str, arr_ids))})")
    for i in arr_ids:
        docs[i]["arr"] = [2.5, "two"]
    assert {i: read()[i][0] for i in docs} == docs
    # a row that cannot take the path: the statement fails, no row changes
    before = read()
    bad = next(i for i in docs if isinstance(docs[i], dict) and docs[i].get("arr") == [])
    expect_error(cur, f"UPDATE {t} SET j.arr[1] = 1 WHERE id IN ({ids[0]}, {bad})", 1366,
                 re.escape(f"row {bad}: cannot set j's property: index 1 of step 2 is past the array's end (0 elements)"))
    deep = next(i for i in docs if isinstance(docs[i], dict) and isinstance(docs[i].get("a"), int))
    expect_error(cur, f"UPDATE {t} SET j.a.b = 1 WHERE id = {deep}", 1366, "step 2 of the path needs an object there")
    for sql, errno, frag in [
        (f"UPDATE {t} SET n.a = 1 WHERE id = 1", 1064, "a path ('.key' or '[...]') follows only a JSON column's name"),
        (f"UPDATE {t} SET j.a = 1, j = '{{}}' WHERE id = 1", 1110, "column 'j' specified twice"),
        (f"UPDATE {t} SET j = '{{}}', j.a = 1 WHERE id = 1", 1110, "column 'j' specified twice"),
        (f"UPDATE {t} SET j.a = (1.5, 2) WHERE id = 1", 1064, "expected an integer as an array element"),
    ]:
        expect_error(cur, sql, errno, re.escape(frag))
    assert read() == before


def test_bitwise_operators_and_crc32(cur, uniq):
    """Manticore's & and | on integers (MySQL's precedence: | below &, both
    below + and above comparisons), NULL through them, refused on floats
    and strings with the place; CRC32() of a string as zlib computes it;
    the two together, as Manticore's manual writes them, in a select list,
    a WHERE and an ORDER BY, checked against Python over random rows."""
    import json
    import random
    import zlib
    rnd = random.Random(20261207)
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, a INT, b BIGINT, s STRING, f FLOAT, j JSON)")
    data = {}
    for i in range(1, 81):
        a, b = rnd.randint(-50, 2000), rnd.choice([rnd.randint(-2**40, 2**40), rnd.randint(0, 255)])
        s = rnd.choice(["", "abc", "héllo wörld", "x" * rnd.randint(1, 40), "Ünïcode ✓"])
        jv = rnd.choice([rnd.randint(-100, 100), 2.5, "str", None])
        data[i] = (a, b, s, jv)
        cur.execute(f"INSERT INTO {t} (id, title, a, b, s, f, j) VALUES (%s, %s, %s, %s, %s, 1.5, %s)",
                    (i, s, a, b, s, json.dumps({"v": jv})))
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        got = rows(cur, f"SELECT id, a & b, a | b, a | b & 7, a + 1 | 2, a & 3 = 1, CRC32(s), CRC32(title), "
                        f"(a * 10) | CRC32(s), j.v | 1 FROM {t} ORDER BY id ASC LIMIT 1000")
        want = []
        for i, (a, b, s, jv) in sorted(data.items()):
            crc = zlib.crc32(s.encode())
            want.append((i, a & b, a | b, a | (b & 7), (a + 1) | 2, int(a & 3 == 1), crc, crc, (a * 10) | crc,
                         # (a JSON property's result is JSON: its text)
                         str(jv | 1) if isinstance(jv, int) else None))
        assert got == want, step
        got = rows(cur, f"SELECT id FROM {t} WHERE a & 1 = 1 AND b | 4 > 100 ORDER BY CRC32(s) DESC, id ASC LIMIT 1000")
        want = [i for i, (a, b, s, _) in sorted(data.items(), key=lambda x: (-zlib.crc32(x[1][2].encode()), x[0]))
                if a & 1 == 1 and (b | 4) > 100]
        assert [r[0] for r in got] == want, step
    assert rows(cur, "SELECT 6 & 3, 6 | 3, 1 | 2 & 3, NULL & 1, -1 & 255, CRC32(''), CRC32(NULL)") == \
        [(2, 7, 3, None, 255, 0, None)]
    expect_error(cur, f"SELECT f & 1 FROM {t}", 1064, r"col 8: bitwise & needs integers, got FLOAT column 'f'")
    expect_error(cur, "SELECT 1 | 2.5", 1064, r"col 12: bitwise \| needs integers")
    expect_error(cur, "SELECT 'x' | 1", 1064, r"bitwise \| needs integers, got a string")
    expect_error(cur, "SELECT 1 & ", 1064, r"unexpected end of statement at line 1 col 11: expected an expression")
    expect_error(cur, f"SELECT CRC32(a) FROM {t}", 1064, r"crc32\(\) takes a string as argument 1")
    expect_error(cur, "SELECT CRC32('a', 'b')", 1064, r"crc32\(\) takes 1 argument")


def test_more_manticore_functions(cur, uniq):
    """SIN, COS, ATAN2, FIBONACCI (modulo 2^32, as Manticore), UINT, SINT,
    INTEGER, BITDOT and REMAP, over random rows against Python, RAM and
    sealed; their errors."""
    import math
    import random
    rnd = random.Random(7)
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, a INT, b BIGINT, f FLOAT)")
    data = {}
    for i in range(1, 61):
        a, b, f = rnd.randint(-10, 100), rnd.randint(-2**40, 2**40), rnd.choice([0.5, -2.25, 3.0, 10.75])
        data[i] = (a, b, f)
        cur.execute(f"INSERT INTO {t} (id, title, a, b, f) VALUES (%s, 'x', %s, %s, %s)", (i, a, b, f))

    def fib(n):
        x, y = 0, 1
        for _ in range(max(n, 0)):
            x, y = y, (x + y) % 2**32
        return x if n >= 0 else 0

    def sint(v):
        v &= 0xFFFFFFFF
        return v - 2**32 if v >= 2**31 else v

    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        got = rows(cur, f"SELECT id, SIN(f), COS(a), ATAN2(a, f), FIBONACCI(a), UINT(b), SINT(b), INTEGER(f), "
                        f"BITDOT(a, 1, 10, 100, 1000), BITDOT(b & 7, 0.5, f, 2), "
                        f"REMAP(a % 3, f, (0, 1), (a, b)) FROM {t} ORDER BY id ASC LIMIT 100")
        want = []
        for i, (a, b, f) in sorted(data.items()):
            bd = sum(w for k, w in enumerate((1, 10, 100, 1000)) if (a >> k) & 1)
            bf = sum(w for k, w in enumerate((0.5, f, 2)) if ((b & 7) >> k) & 1)
            m = int(math.fmod(a, 3))  # SQL's % keeps the sign of a
            rm = float(a) if m == 0 else float(b) if m == 1 else f
            want.append((i, math.sin(f), math.cos(a), math.atan2(a, f), fib(a), b & 0xFFFFFFFF, sint(b), int(f), bd,
                         bf, rm))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g[0] == w[0] and g[4:9] == w[4:9], (step, g, w)
            for k in (1, 2, 3, 9, 10):
                assert math.isclose(g[k], w[k], rel_tol=1e-6, abs_tol=1e-9), (step, k, g, w)
    assert rows(cur, "SELECT FIBONACCI(48), FIBONACCI(93), SINT(1 - 2), UINT(-1)") == \
        [(fib(48), fib(93), -1, 4294967295)]
    expect_error(cur, "SELECT SIN('x')", 1064, r"sin\(\) takes numbers: argument 1 is a string")
    expect_error(cur, "SELECT ATAN2(1)", 1064, r"atan2\(\) takes 2 arguments")
    expect_error(cur, "SELECT BITDOT(1)", 1064, r"bitdot\(\) takes 2 to 65 arguments")
    expect_error(cur, "SELECT REMAP(1, 2, (1, 2), (3))", 1064, r"two lists of as many items")
    expect_error(cur, "SELECT REMAP(1, 2, 3, 4)", 1064, r"REMAP\(\) takes a condition")
