"""kNN search through the MySQL protocol: knn(), knn_dist(), filters, radius.

The expected rows come from a brute-force reference written here from the
definitions in docs/sql.md (squared L2; 1 - dot; 1 - cosine), computed in
double precision from the same float32 components the server stores; the
server computes in float32, so distances are compared with a tolerance and
the order only where neighbours are not near-ties.
"""

import math
import random
import re
import struct

import pymysql
import pytest

DIMS = 8
N = 300


def f32(x):
    """x rounded to float32, as the server stores it."""
    return struct.unpack("f", struct.pack("f", x))[0]


def dist(metric, q, v):
    if metric == "l2":
        return sum((a - b) ** 2 for a, b in zip(q, v))
    dot = sum(a * b for a, b in zip(q, v))
    if metric == "ip":
        return 1 - dot
    nq = math.sqrt(sum(a * a for a in q))
    nv = math.sqrt(sum(b * b for b in v))
    return 1 - dot / (nq * nv) if nv else 1.0


def vec_sql(v):
    return "(" + ", ".join(repr(x) for x in v) + ")"


@pytest.fixture(scope="module", params=["l2", "ip", "cosine"])
def table(request, server):
    """N rows with random vectors (a few NULL), a price and a category."""
    from conftest import pymysql_connect
    metric = request.param
    rng = random.Random(7)
    rows = {}
    for i in range(1, N + 1):
        v = None if i % 50 == 0 else [f32(rng.uniform(-1, 1)) for _ in range(DIMS)]
        rows[i] = (v, rng.randint(1, 100), rng.randint(1, 5))
    name = "knn_" + metric
    c = pymysql_connect(server.mysql_port)
    with c.cursor() as cur:
        cur.execute(f"CREATE TABLE {name} (price INT, cat INT, v FLOAT_VECTOR KNN_TYPE='hnsw' "
                    f"KNN_DIMS='{DIMS}' HNSW_SIMILARITY='{metric}')")
        cur.execute(f"INSERT INTO {name} (id, price, cat, v) VALUES " + ", ".join(
            "(%d, %d, %d, %s)" % (i, p, k, vec_sql(v) if v else "NULL") for i, (v, p, k) in rows.items()))
    c.close()
    return name, metric, rows


def reference(rows, metric, q, k, keep=lambda i, d: True):
    """[(id, distance)] of the k nearest rows that keep() accepts."""
    got = [(i, dist(metric, q, v)) for i, (v, _, _) in rows.items() if v is not None]
    got = [(i, d) for i, d in got if keep(i, d)]
    got.sort(key=lambda t: (t[1], t[0]))
    return got[:k]


def check(result, want):
    """Same rows, same distances (float32 tolerance), in distance order."""
    assert len(result) == len(want), (result, want)
    assert sorted(i for i, _ in result) == sorted(i for i, _ in want), (result, want)
    exp = dict(want)
    for i, d in result:
        assert d == pytest.approx(exp[i], rel=1e-4, abs=1e-5), (i, d, exp[i])
    ds = [d for _, d in result]
    assert ds == sorted(ds)


def test_nearest_first(cur, table):
    name, metric, rows = table
    rng = random.Random(11)
    found = wanted = 0
    for k in (1, 5, 20, 1000):
        q = [rng.uniform(-1, 1) for _ in range(DIMS)]
        want = reference(rows, metric, [f32(x) for x in q], k)
        # Through the graph: approximate, so the rows may differ slightly,
        # but each comes with its true distance, nearest first.
        cur.execute(f"SELECT id, knn_dist() FROM {name} WHERE knn(v, {k}, {vec_sql(q)}) LIMIT 1000")
        got = cur.fetchall()
        assert len(got) == len(want)
        exp = {i: dist(metric, [f32(x) for x in q], rows[i][0]) for i, _ in got}
        for i, d in got:
            assert d == pytest.approx(exp[i], rel=1e-4, abs=1e-5), (i, d, exp[i])
        assert [d for _, d in got] == sorted(d for _, d in got)
        found += len({i for i, _ in got} & {i for i, _ in want})
        wanted += len(want)
        # A filter every row passes, with ef over the table's size: the
        # library scans exactly, so the answer is the reference's.
        cur.execute(f"SELECT id, knn_dist() FROM {name} WHERE knn(v, {k}, {vec_sql(q)}, {{ef=1000}}) "
                    f"AND price > 0 LIMIT 1000")
        check(cur.fetchall(), want)
    assert found / wanted >= 0.95


def test_filter_does_not_eat_k(cur, table):
    # The k nearest among the rows that pass, not the k nearest then filtered.
    name, metric, rows = table
    q = [0.25] * DIMS
    cur.execute(f"SELECT id, knn_dist(), price FROM {name} WHERE knn(v, 10, {vec_sql(q)}) "
                f"AND price < 20 AND cat IN (1, 2)")
    got = cur.fetchall()
    want = reference(rows, metric, q, 10, lambda i, d: rows[i][1] < 20 and rows[i][2] in (1, 2))
    check([(i, d) for i, d, _ in got], want)
    assert all(p < 20 for _, _, p in got)


def test_radius_and_order_by(cur, table):
    name, metric, rows = table
    q = [f32(x) for x in rows[3][0]]
    radius = {"l2": 2.0, "ip": 0.5, "cosine": 0.5}[metric]
    cur.execute(f"SELECT id, knn_dist() FROM {name} WHERE knn(v, 50, 3) AND knn_dist() < {radius} "
                f"LIMIT 1000")
    want = reference(rows, metric, q, 50, lambda i, d: d < radius)
    got = cur.fetchall()
    check(got, want)
    if metric != "ip":
        assert got[0][0] == 3 and got[0][1] == pytest.approx(0, abs=1e-5)  # the row itself
    # ORDER BY replaces the distance order; LIMIT/OFFSET cut the k rows.
    cur.execute(f"SELECT id, price FROM {name} WHERE knn(v, 8, 3, {{ef=1000}}) AND price > 0 "
                f"ORDER BY price DESC, id ASC LIMIT 3, 4")
    eight = reference(rows, metric, q, 8)
    by_price = sorted(eight, key=lambda t: (-rows[t[0]][1], t[0]))
    assert [i for i, _ in cur.fetchall()] == [i for i, _ in by_price[3:7]]
    cur.execute(f"SELECT COUNT(*) FROM {name} WHERE knn(v, 8, 3, {{ef=1000}}) AND price > 50")
    # (a filter keeping fewer rows than ef: the exact scan answers)
    assert cur.fetchone()[0] == len(reference(rows, metric, q, 8, lambda i, d: rows[i][1] > 50))


def test_meta_and_paths(cur, table):
    name, _, rows = table
    with_vec = sum(1 for v, _, _ in rows.values() if v is not None)

    def meta():
        cur.execute("SHOW META")
        return dict(cur.fetchall())
    # A table this small costs less to scan than to walk (the library's
    # cost model: rows^2 <= 36 * ef * rows): every row with a vector.
    cur.execute(f"SELECT id FROM {name} WHERE knn(v, 5, 1, {{ef=64}})")
    assert len(cur.fetchall()) == 5
    m = meta()
    assert m["plan"] == "knn_exact" and int(m["knn_distances"]) == with_vec, m
    assert m["total_found"] == "5", m
    # With ef 4 the walk is cheaper.
    cur.execute(f"SELECT id FROM {name} WHERE knn(v, 2, 1, {{ef=4}})")
    assert len(cur.fetchall()) == 2
    m = meta()
    assert m["plan"] == "knn_hnsw" and 0 < int(m["knn_distances"]) < with_vec, m
    # A filter that keeps a handful of rows: an exact scan of those.
    cur.execute(f"SELECT id FROM {name} WHERE knn(v, 5, 1) AND price = 7")
    got = cur.fetchall()
    m = meta()
    want = [i for i, (v, p, _) in rows.items() if v is not None and p == 7]
    assert m["plan"] == "knn_exact", m                   # fewer rows pass than ef
    assert len(got) == min(5, len(want)) and {r[0] for r in got} <= set(want), (got, want)
    assert int(m.get("knn_distances", 0)) == len(want)
    # A radius is a range search on the graph; on a table this small the
    # library scans every row instead.
    cur.execute(f"SELECT id FROM {name} WHERE knn(v, 5, 1) AND knn_dist() < 100")
    m = meta()
    assert m["plan"] == "knn_exact" and int(m["knn_distances"]) == with_vec, m
    # KNN_DIST() used any other way (here under OR) needs every distance.
    cur.execute(f"SELECT id FROM {name} WHERE knn(v, 5, 1) AND (knn_dist() < 100 OR price = 7)")
    m = meta()
    assert m["plan"] == "knn_exact" and int(m["knn_distances"]) == with_vec, m
    # EXPLAIN (and SHOW PLAN) describe the search, the filter and the order
    sim = table[1]  # the metric, as the column names it
    cur.execute(f"EXPLAIN SELECT id FROM {name} WHERE knn(v, 5, 1, {{ef=64}}) AND price = 7")
    plan = [r[0] for r in cur.fetchall()]
    assert plan[0].startswith(f"knn: column v, k=5, ef=64, {sim} distance: each segment's HNSW graph"), plan
    assert plan[1].startswith("filter:") and plan[2].startswith("order:"), plan
    cur.execute("SET profiling=1")
    cur.execute(f"SELECT id FROM {name} WHERE knn(v, 3, 1)")
    cur.execute("SHOW PLAN")
    assert cur.fetchall()[0][1].startswith(f"knn: column v, k=3, {sim} distance")
    cur.execute("SET profiling=0")


@pytest.mark.parametrize("sql, code, pattern", [
    ("knn(v, 3, (1, 2))", 1064, r"2 components, column 'v' has 8"),
    ("knn(price, 3, (1,2,3,4,5,6,7,8))", 1064, r"not a float_vector"),
    ("knn(nope, 3, 1)", 1054, r"unknown column 'nope'"),
    ("knn(v, 0, 1)", 1064, r"k must be an integer"),
    ("knn(v, 3, 99999)", 1064, r"no row with id 99999"),
    ("knn(v, 3, 50)", 1064, r"row 50 has no vector"),
    ("knn(v, 3, 1, {foo=1})", 1064, r"unknown option"),
    ("knn(v, 3, 1, {ef=0})", 1064, r"ef must be"),
    ("knn(v, 3, 'some text')", 1064, r"needs a vector column with model_name"),
    ("knn(v, 3, 1) OR id = 1", 1064, r"condition of its own"),
    ("NOT knn(v, 3, 1)", 1064, r"condition of its own"),
    ("id = 1 AND knn_dist() < 1", 1064, r"knn_dist\(\) needs a knn\(\)"),
    ("knn(v, 3, 1) OPTION cutoff=2", 1064, r"option 'cutoff' is not supported with knn\(\)"),
    ("knn(v, 3, 1) OPTION max_query_time=5", 1064, r"option 'max_query_time' is not supported with knn\(\)"),
])
def test_errors(cur, table, sql, code, pattern):
    name, _, _ = table
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(f"SELECT id FROM {name} WHERE {sql}")
    assert ei.value.args[0] == code, ei.value.args
    assert re.search(pattern, ei.value.args[1]), ei.value.args


def test_zero_query_vector_for_cosine(cur, table):
    name, metric, _ = table
    sql = f"SELECT id, knn_dist() FROM {name} WHERE knn(v, 3, {vec_sql([0.0] * DIMS)})"
    if metric != "cosine":
        cur.execute(sql)
        assert len(cur.fetchall()) == 3
        return
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(sql)
    assert "all zeros" in ei.value.args[1]


def test_graph_recall_and_writes(cur, uniq):
    """A larger table through SQL: recall of the graph against brute force,
    then deletes, REPLACE, a refused UPDATE, compaction and TRUNCATE keep
    the answers right."""
    t = uniq()
    dims, n = 16, 3000
    rng = random.Random(5)
    centres = [[rng.gauss(0, 1) for _ in range(dims)] for _ in range(30)]
    rows = {}
    for i in range(1, n + 1):
        c = centres[i % 30]
        rows[i] = [f32(x + rng.gauss(0, 0.3)) for x in c]
    cur.execute(f"CREATE TABLE {t} (grp INT, v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='{dims}' "
                f"HNSW_SIMILARITY='l2')")
    ids = list(rows)
    for j in range(0, n, 500):
        cur.execute(f"INSERT INTO {t} (id, grp, v) VALUES " + ", ".join(
            f"({i}, {i % 7}, {vec_sql(rows[i])})" for i in ids[j:j + 500]))

    def ask(q, k=10, where=""):
        cur.execute(f"SELECT id, knn_dist() FROM {t} WHERE knn(v, {k}, {vec_sql(q)}) {where} "
                    f"LIMIT 1000")
        return cur.fetchall()

    def truth(q, k=10, keep=lambda i: True):
        d = sorted((dist("l2", q, v), i) for i, v in rows.items() if keep(i))
        return [i for _, i in d[:k]]

    queries = [[f32(x + rng.gauss(0, 0.3)) for x in centres[rng.randrange(30)]] for _ in range(30)]
    hit = sum(len({i for i, _ in ask(q)} & set(truth(q))) for q in queries)
    assert hit / (10 * len(queries)) >= 0.95
    cur.execute("SHOW META")
    assert dict(cur.fetchall())["plan"] == "knn_hnsw"
    # A filter keeping 1/7 of the rows: still 10 rows, all passing.
    for q in queries[:5]:
        got = ask(q, 10, "AND grp = 3")
        assert len(got) == 10 and all(i % 7 == 3 for i, _ in got)
        assert len({i for i, _ in got} & set(truth(q, 10, lambda i: i % 7 == 3))) >= 8
    # Deleted rows are never neighbours; REPLACE moves a row.
    q = queries[0]
    near = truth(q, 5)
    cur.execute(f"DELETE FROM {t} WHERE id IN ({', '.join(map(str, near[:3]))})")
    for i in near[:3]:
        del rows[i]
    assert not {i for i, _ in ask(q, 20)} & set(near[:3])
    far = [f32(100.0)] * dims
    cur.execute(f"REPLACE INTO {t} (id, grp, v) VALUES ({near[3]}, 1, {vec_sql(far)})")
    rows[near[3]] = far
    assert near[3] not in {i for i, _ in ask(q, 20)}
    assert ask(far, 1)[0][0] == near[3]
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(f"UPDATE {t} SET v = {vec_sql(far)} WHERE id = 1")
    assert "REPLACE the row instead" in ei.value.args[1]
    # Delete most rows (the table compacts its slots): answers stay right.
    gone = [i for i in list(rows) if i % 5 != 0]
    for j in range(0, len(gone), 500):
        cur.execute(f"DELETE FROM {t} WHERE id IN ({', '.join(map(str, gone[j:j + 500]))})")
    for i in gone:
        del rows[i]
    for q in queries[:5]:
        got = [i for i, _ in ask(q)]
        assert all(i % 5 == 0 for i in got) and len(got) == 10
        assert len(set(got) & set(truth(q))) >= 9
    cur.execute(f"TRUNCATE TABLE {t}")
    assert ask(queries[0]) == ()
    cur.execute(f"INSERT INTO {t} (id, grp, v) VALUES (7, 0, {vec_sql(queries[0])})")
    assert [i for i, _ in ask(queries[0])] == [7]


def test_every_row_finds_itself_after_flush(server, cur, uniq):
    """Random 4-d rows written from two connections at once: low dimension
    and concurrent inserts leave a few graph rows with no in-link (no
    search could return them). FLUSH TABLE links them back before the
    segment is written (vec_hnsw_repair), so afterwards every row's own
    vector finds it. Without the repair this fails whenever a row was left
    unreachable (a few per 10,000 rows, most runs)."""
    import threading
    from conftest import pymysql_connect
    t = uniq()
    n = 8000
    rng = random.Random(11)
    rows = {i: [round(rng.random(), 3) for _ in range(4)] for i in range(1, n + 1)}
    cur.execute(f"CREATE TABLE {t} (v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='4' HNSW_SIMILARITY='l2')")
    errors = []

    def writer(part):
        try:
            c = pymysql_connect(server.mysql_port)
            with c.cursor() as cu:
                ids = [i for i in rows if i % 2 == part]
                for j in range(0, len(ids), 50):
                    cu.execute(f"INSERT INTO {t} (id, v) VALUES " + ", ".join(
                        f"({i}, {vec_sql(rows[i])})" for i in ids[j:j + 50]))
            c.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    ths = [threading.Thread(target=writer, args=(p,)) for p in (0, 1)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert not errors, errors
    cur.execute(f"FLUSH TABLE {t}")
    missed = []
    for i, v in rows.items():
        cur.execute(f"SELECT id FROM {t} WHERE knn(v, 5, {vec_sql(v)})")
        if i not in [r[0] for r in cur.fetchall()]:
            missed.append(i)
    assert not missed, f"rows their own vector does not find: {missed[:20]}"
    # The graph answered (an exact scan would find every row regardless).
    cur.execute("SHOW META")
    m = dict(cur.fetchall())
    assert m["plan"] == "knn_hnsw", m
