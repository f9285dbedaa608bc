"""Hybrid search over the MySQL protocol: MATCH() and knn() in one query
with OPTION fusion_method='rrf', as Manticore has it. Each search retrieves
its window of best rows; a row's HYBRID_SCORE() is the sum of
1 / (rank_constant + rank) over the searches that found it (Reciprocal Rank
Fusion). The reference fuses the two searches' own answers, fetched as
separate queries, in Python."""
import math
import random
import re

import pymysql
import pytest

from conftest import pymysql_connect

DIMS = 4
N = 200
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]


def dist(q, v):
    return sum((a - b) ** 2 for a, b in zip(q, v))


@pytest.fixture(scope="module")
def table(server):
    """N rows: a text of random words, a category, a vector (some NULL)."""
    rng = random.Random(11)
    rows = {}
    for i in range(1, N + 1):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        v = None if i % 40 == 0 else [round(rng.uniform(-1, 1), 3) for _ in range(DIMS)]
        rows[i] = (text, rng.randint(1, 3), v)
    c = pymysql_connect(server.mysql_port)
    with c.cursor() as cur:
        cur.execute(f"CREATE TABLE hyb (title TEXT, cat INT, v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='{DIMS}' "
                    "HNSW_SIMILARITY='l2')")
        cur.execute("INSERT INTO hyb (id, title, cat, v) VALUES " + ", ".join(
            "(%d, '%s', %d, %s)" % (i, t, k, "(" + ", ".join(map(repr, v)) + ")" if v else "NULL")
            for i, (t, k, v) in rows.items()))
    c.close()
    return "hyb", rows


def vec(v):
    return "(" + ", ".join(map(repr, v)) + ")"


def reference(cur, t, text, q, window, rc=60, where="", wt=1.0, wk=1.0):
    """{id: (hybrid, weight, rank)} fused from the two searches run alone."""
    extra = f" AND {where}" if where else ""
    cur.execute(f"SELECT id, WEIGHT() FROM {t} WHERE MATCH(%s){extra} ORDER BY WEIGHT() DESC, id ASC "
                f"LIMIT {window}", (text,))
    texts = cur.fetchall()
    cur.execute(f"SELECT id, knn_dist() FROM {t} WHERE knn(v, {window}, {vec(q)}){extra} LIMIT {window}")
    knns = cur.fetchall()
    fused = {}
    for rank, (i, w) in enumerate(texts, 1):
        fused[i] = [wt / (rc + rank), w]
    for rank, (i, _) in enumerate(knns, 1):
        fused.setdefault(i, [0, 0.0])[0] += wk / (rc + rank)
    return fused


@pytest.mark.parametrize("text, q, opts, where", [
    ("alpha", [0.1, 0.2, -0.3, 0.4], "", ""),
    ("alpha | zeta", [0.1, 0.2, -0.3, 0.4], ", fusion_weights=(text=0.7, dense=0.3)", ""),
    ("eta", [0.9, -0.9, 0.0, 0.2], ", fusion_weights=(dense=2.5)", ""),
    ("beta | gamma", [0.5, 0.5, 0.5, 0.5], ", rank_constant=5", ""),
    ("alpha delta", [-0.2, 0.0, 0.9, -0.5], ", window_size=15", ""),
    ("theta | eta", [0.0, 0.0, 0.0, 0.1], "", "cat = 2"),
    ("nosuchword", [0.3, -0.3, 0.3, -0.3], "", ""),
])
def test_rrf_matches_the_two_searches_fused(cur, table, text, q, opts, where):
    t, rows = table
    m = re.search(r"window_size=(\d+)", opts)
    if not m:
        opts += ", window_size=40"
    window = int(m.group(1)) if m else 40
    m = re.search(r"rank_constant=(\d+)", opts)
    rc = int(m.group(1)) if m else 60
    m = re.search(r"text=([\d.]+)", opts)
    wt = float(m.group(1)) if m else 1.0
    m = re.search(r"dense=([\d.]+)", opts)
    wk = float(m.group(1)) if m else 1.0
    want = reference(cur, t, text, q, window, rc, where, wt, wk)
    extra = f" AND {where}" if where else ""
    cur.execute(f"SELECT id, hybrid_score(), WEIGHT(), knn_dist() FROM {t} WHERE MATCH(%s) AS text AND "
                f"knn(v, 10, {vec(q)}) AS dense{extra} LIMIT 1000 OPTION fusion_method='rrf'{opts}", (text,))
    got = cur.fetchall()
    assert sorted(i for i, *_ in got) == sorted(want), (got, want)
    scores = [s for _, s, _, _ in got]
    assert scores == sorted(scores, reverse=True)  # best fused first
    for i, s, w, d in got:
        assert s == pytest.approx(want[i][0], rel=1e-12), i
        assert w == pytest.approx(want[i][1], rel=1e-6), i  # the text score, 0 when only knn found it
        v = rows[i][2]
        if v is None:
            assert d is None
        else:
            assert d == pytest.approx(dist(q, v), rel=1e-4, abs=1e-5), i  # also for text-only rows
    # ties in the fused score go to the smaller id
    for a, b in zip(got, got[1:]):
        if a[1] == b[1]:
            assert a[0] < b[0]
    cur.execute("SHOW META")
    meta = dict(cur.fetchall())
    assert meta["plan"] == "hybrid_rrf" and int(meta["total_found"]) == len(want)


def test_order_limit_count(cur, table):
    """The window is the larger of k and offset+limit (or window_size):
    LIMIT 5, 3 pages through the fusion of windows of 10, as LIMIT 8 does."""
    t, _ = table
    q = vec([0.1, 0.1, 0.1, 0.1])
    base = f"FROM {t} WHERE MATCH('alpha | beta') AND knn(v, 10, {q})"
    cur.execute(f"SELECT id, hybrid_score() {base} LIMIT 8 OPTION fusion_method='rrf'")
    first = cur.fetchall()
    cur.execute(f"SELECT id {base} LIMIT 5, 3 OPTION fusion_method='rrf'")
    assert [r[0] for r in cur.fetchall()] == [r[0] for r in first[5:8]]
    cur.execute(f"SELECT id {base} LIMIT 5, 3 OPTION fusion_method='rrf', window_size=30")
    paged = [r[0] for r in cur.fetchall()]
    cur.execute(f"SELECT id {base} LIMIT 8 OPTION fusion_method='rrf', window_size=30")
    assert paged == [r[0] for r in cur.fetchall()][5:8]
    # every fused row counts: the two windows of 10, less the rows both found
    cur.execute(f"SELECT id {base} LIMIT 10 OPTION fusion_method='rrf'")
    shown = len(cur.fetchall())
    cur.execute("SHOW META")
    found = int(dict(cur.fetchall())["total_found"])
    assert 10 <= found <= 20 and shown == 10
    cur.execute(f"SELECT COUNT(*) {base} OPTION fusion_method='rrf', window_size=10")
    assert cur.fetchone()[0] == found
    cur.execute(f"SELECT id, WEIGHT() {base} ORDER BY WEIGHT() DESC, id ASC LIMIT 10 OPTION fusion_method='rrf', "
                "window_size=10")
    ws = [w for _, w in cur.fetchall()]
    assert ws == sorted(ws, reverse=True)
    cur.execute(f"SELECT id, knn_dist() {base} ORDER BY knn_dist() ASC LIMIT 40 OPTION fusion_method='rrf'")
    ds = [d for _, d in cur.fetchall()]
    nulls = ds.count(None)  # rows without a vector (only the text found them) come first, as NULLs do
    assert ds[:nulls] == [None] * nulls and ds[nulls:] == sorted(ds[nulls:]) and len(ds) > nulls


@pytest.mark.parametrize("sql, pattern", [
    ("knn(v, 5, (0,0,0,0)) OPTION fusion_method='rrf'", r"need MATCH\(\) and knn\(\)"),
    ("MATCH('alpha') OPTION rank_constant=5", r"need MATCH\(\) and knn\(\)"),
    ("MATCH('alpha') AND knn(v, 5, (0,0,0,0)) OPTION rank_constant=5", r"need OPTION fusion_method='rrf'"),
    ("MATCH('alpha') AND knn(v, 5, (0,0,0,0)) ORDER BY hybrid_score() DESC", r"hybrid_score\(\) needs a hybrid"),
    ("MATCH('alpha') AND knn(v, 5, (0,0,0,0)) OPTION fusion_method='max'", r"fusion_method takes 'rrf'"),
    ("MATCH('alpha') AND knn(v, 5, (0,0,0,0)) OPTION fusion_method='rrf', rank_constant=0", r"rank_constant"),
    ("MATCH('alpha') AND knn(v, 5, (0,0,0,0)) OPTION fusion_method='rrf', fusion_weights=(a=1)",
     r"fusion_weights: no search is named 'a'"),
    ("MATCH('alpha') AS a AND knn(v, 5, (0,0,0,0)) AS a OPTION fusion_method='rrf'", r"two searches have one name"),
    ("MATCH('alpha') AS 7 AND knn(v, 5, (0,0,0,0)) OPTION fusion_method='rrf'", r"expected a name for the search"),
    ("MATCH('alpha') AS a AND knn(v, 5, (0,0,0,0)) OPTION fusion_weights=(a=2)", r"need OPTION fusion_method"),
    ("MATCH('alpha') AND knn(v, 5, (0,0,0,0)) AND knn_dist() < 1 OPTION fusion_method='rrf'",
     r"knn_dist\(\) cannot filter a hybrid search"),
    ("hybrid_match('alpha')", r"needs a vector column with model_name"),
    ("MATCH('alpha') AND knn(v, 5, (0,0,0,0)) OPTION fusion_method='rrf', cutoff=3",
     r"option 'cutoff' is not supported with knn\(\)"),
    ("MATCH('alpha') AND knn(v, 5, (0,0,0,0)) OPTION cutoff=3", r"option 'cutoff' is not supported with knn\(\)"),
    ("hybrid_match('alpha') AND MATCH('beta')", r"goes without them"),
])
def test_errors(cur, table, sql, pattern):
    t, _ = table
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(f"SELECT id FROM {t} WHERE {sql}")
    assert re.search(pattern, ei.value.args[1]), ei.value.args
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(f"SELECT id, hybrid_score() FROM {t} WHERE MATCH('alpha')")
    assert "hybrid_score() needs a hybrid search" in ei.value.args[1]


def test_explain(cur, table):
    t, _ = table
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('alpha') AND knn(v, 7, (0,0,0,0)) AND cat = 1 "
                "OPTION fusion_method='rrf', rank_constant=9")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "hybrid: reciprocal rank fusion (rank_constant=9)" in plan, plan
    assert "knn: column v, k=7" in plan and 'term "alpha"' in plan and "filter:" in plan, plan


@pytest.mark.parametrize("text, where", [("alpha", ""), ("beta | gamma", "cat = 1"), ("theta -eta", "")])
def test_match_with_knn_unfused_is_knn_among_the_matches(cur, table, text, where):
    """Without fusion_method, as in Manticore: the k nearest among the rows
    the MATCH finds (and the WHERE passes), nearest first, WEIGHT() their
    text score."""
    t, rows = table
    q = [0.2, -0.1, 0.4, 0.0]
    extra = f" AND {where}" if where else ""
    cur.execute(f"SELECT id, WEIGHT() FROM {t} WHERE MATCH(%s){extra} LIMIT 1000", (text,))
    text_w = dict(cur.fetchall())
    want = sorted((dist(q, rows[i][2]), i) for i in text_w if rows[i][2] is not None)[:7]
    cur.execute(f"SELECT id, knn_dist(), WEIGHT() FROM {t} WHERE MATCH(%s) AND knn(v, 7, {vec(q)}){extra}", (text,))
    got = cur.fetchall()
    assert [i for i, _, _ in got] == [i for _, i in want], (got, want)
    for (i, d, w), (dd, _) in zip(got, want):
        assert d == pytest.approx(dd, rel=1e-4, abs=1e-5) and w == pytest.approx(text_w[i], rel=1e-6)
    cur.execute("SHOW META")
    assert dict(cur.fetchall())["plan"] == "fulltext_then_knn"
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE MATCH(%s) AND knn(v, 7, {vec(q)}){extra}", (text,))
    assert cur.fetchone()[0] == len(want)


def test_several_knn_fused(cur, uniq):
    """Several knn() (with a MATCH or without) fused as Manticore does:
    each its own window, weights by name, KNN_DIST() the nearest any search
    measured, WEIGHT() 1 without a MATCH."""
    t = uniq()
    rng = random.Random(5)
    cur.execute(f"CREATE TABLE {t} (title TEXT, a FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='3' HNSW_SIMILARITY='l2', "
                "b FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='2' HNSW_SIMILARITY='l2')")
    rows = {i: (" ".join(rng.choice(WORDS[:4]) for _ in range(3)), [round(rng.uniform(-1, 1), 3) for _ in range(3)],
                [round(rng.uniform(-1, 1), 3) for _ in range(2)]) for i in range(1, 61)}
    cur.execute(f"INSERT INTO {t} (id, title, a, b) VALUES " + ", ".join(
        f"({i}, '{s}', {vec(x)}, {vec(y)})" for i, (s, x, y) in rows.items()))
    qa, qb = [0.1, -0.2, 0.3], [0.5, 0.5]
    for text, opts, wt, wa, wb in [(None, "", 1, 1, 1), ("alpha", ", fusion_weights=(ta=0.5, kb=2)", 0.5, 1, 2)]:
        fused = {}
        parts = []
        if text:
            cur.execute(f"SELECT id, WEIGHT() FROM {t} WHERE MATCH('{text}') ORDER BY WEIGHT() DESC, id ASC LIMIT 12")
            parts.append((wt, [(i, None) for i, _ in cur.fetchall()]))
        for col, q, w in (("a", qa, wa), ("b", qb, wb)):
            cur.execute(f"SELECT id, knn_dist() FROM {t} WHERE knn({col}, 12, {vec(q)}) LIMIT 12")
            parts.append((w, cur.fetchall()))
        for w, found in parts:
            for rank, (i, d) in enumerate(found, 1):
                f = fused.setdefault(i, [0.0, None])
                f[0] += w / (60 + rank)
                if d is not None and (f[1] is None or d < f[1]):
                    f[1] = d
        match = f"MATCH('{text}') AS ta AND " if text else ""
        cur.execute(f"SELECT id, hybrid_score(), knn_dist(), WEIGHT() FROM {t} WHERE {match}knn(a, 5, {vec(qa)}) "
                    f"AND knn(b, 5, {vec(qb)}) AS kb LIMIT 100 OPTION fusion_method='rrf', window_size=12{opts}")
        got = cur.fetchall()
        assert sorted(i for i, *_ in got) == sorted(fused), (text, got)
        for i, s, d, w in got:
            assert s == pytest.approx(fused[i][0], rel=1e-12), (text, i)
            if fused[i][1] is not None:
                assert d == pytest.approx(fused[i][1], rel=1e-5, abs=1e-6), (text, i)
            else:  # only the text found it: measured by the first knn()
                assert d == pytest.approx(sum((x - y) ** 2 for x, y in zip(qa, rows[i][1])), rel=1e-4, abs=1e-5)
            if not text:
                assert w == 1
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(f"SELECT id FROM {t} WHERE knn(a, 5, {vec(qa)}) AND knn(b, 5, {vec(qb)})")
    assert "several knn() are a hybrid search" in ei.value.args[1]
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE knn(a, 5, {vec(qa)}) AND knn(b, 7, {vec(qb)}) "
                "OPTION fusion_method='rrf'")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "of 2 searches" in plan and "knn: column a, k=5" in plan and "knn: column b, k=7" in plan, plan
