#!/usr/bin/python3
"""What hybrid search costs next to its two halves (make bench-hybrid).

    bench/fulltext/hybrid.py [--loupe build/loupe] [--queries 50] [--rounds 5]

SciFact (5,183 rows, title and text) loaded into a loupe server with a
vector column that embeds each row's title at INSERT (the generated test
model with all-MiniLM-L6-v2's architecture, `make models`: its weights are
deterministic, not trained, so its rankings mean nothing and no quality is
reported here, only time), then sealed (FLUSH TABLE). For --queries of
SciFact's queries, each way of searching is timed over --rounds rounds (one
client over the MySQL protocol, SELECT id … LIMIT 10; the median of the
per-query means): the words ORed in MATCH; knn() with the query's vector
given (embedded beforehand); knn() with the query's text (embedded by the
server, each time); MATCH and knn() with the vector, fused (OPTION
fusion_method='rrf'); MATCH and knn() unfused (the nearest among the
MATCH's rows); and hybrid_match() with the text, which embeds it too. The
ways alternate within each round, so their ratios are measured in one run.
Writes docs/benchmarks/hybrid.md.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import REPO, report_head, write_report  # noqa: E402
from suggest import sealed_table, stop  # noqa: E402

OUT = os.path.join(REPO, "docs", "benchmarks", "hybrid.md")
QUERIES = os.path.join(os.path.dirname(REPO), "shared", "data", "scifact", "queries.jsonl")
MODEL = os.path.join(REPO, "models", "loupe-test", "all-MiniLM-L6-v2")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", default=os.path.join(REPO, "build", "loupe"))
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    if not os.path.exists(os.path.join(MODEL, "loupe-test-model.stamp")):
        sys.exit("the test model is missing: run `make models`")
    texts = [json.loads(line)["text"] for line in open(QUERIES)][:args.queries]
    words = [" | ".join(re.findall(r"\w+", t.lower())) for t in texts]
    ddl = ("(title TEXT, body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='cosine' "
           "MODEL_NAME='%s' FROM='title')" % MODEL)
    t0 = time.perf_counter()
    tmp, srv, cur = sealed_table(args.loupe, "h", ddl)
    load_s = time.perf_counter() - t0
    try:
        # hybrid_match() reads its text as MATCH syntax: the queries it refuses
        # (a stray operator) are left out of every way
        keep = []
        for i, t in enumerate(texts):
            try:
                cur.execute("SELECT id FROM h WHERE MATCH(%s) LIMIT 1", (t,))
                cur.fetchall()
                keep.append(i)
            except Exception:  # noqa: BLE001 - a syntax error in the query's text
                pass
        n_all = len(texts)
        texts = [texts[i] for i in keep]
        words = [words[i] for i in keep]
        # each query's vector, embedded once by the server: a side table with the same model
        cur.execute("CREATE TABLE qv (title TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='cosine' "
                    "MODEL_NAME='%s' FROM='title')" % MODEL)
        for i, t in enumerate(texts):
            cur.execute("INSERT INTO qv (id, title) VALUES (%s, %s)", (i + 1, t))
        cur.execute("SELECT id, v FROM qv LIMIT %d" % len(texts))
        vecs = {i: "(" + v + ")" for i, v in cur.fetchall()}
        ways = [
            ("MATCH (words ORed)", lambda i: ("SELECT id FROM h WHERE MATCH(%s) LIMIT 10", (words[i],))),
            ("knn(), vector given", lambda i: ("SELECT id FROM h WHERE knn(v, 10, %s) LIMIT 10" % vecs[i + 1], ())),
            ("knn(), text embedded", lambda i: ("SELECT id FROM h WHERE knn(v, 10, %s) LIMIT 10", (texts[i],))),
            ("MATCH + knn(), fused (rrf)", lambda i: (
                "SELECT id FROM h WHERE MATCH(%%s) AND knn(v, 10, %s) LIMIT 10 OPTION fusion_method='rrf'"
                % vecs[i + 1], (words[i],))),
            ("MATCH + knn(), unfused", lambda i: (
                "SELECT id FROM h WHERE MATCH(%%s) AND knn(v, 10, %s) LIMIT 10" % vecs[i + 1], (words[i],))),
            ("hybrid_match(text)", lambda i: ("SELECT id FROM h WHERE hybrid_match(%s) LIMIT 10",
                                              (texts[i],))),
        ]
        times = {name: [] for name, _ in ways}
        rows = {name: 0 for name, _ in ways}
        for name, make in ways:  # a first pass: every query runs, and its rows are counted
            for i in range(len(texts)):
                sql, params = make(i)
                cur.execute(sql, params)
                rows[name] += len(cur.fetchall())
        for _ in range(args.rounds):
            for name, make in ways:
                t0 = time.perf_counter()
                for i in range(len(texts)):
                    sql, params = make(i)
                    cur.execute(sql, params)
                    cur.fetchall()
                times[name].append((time.perf_counter() - t0) / len(texts))
        cur.execute("SELECT id FROM h WHERE hybrid_match(%s) LIMIT 10", (texts[0],))
        cur.fetchall()
        cur.execute("SHOW META")
        meta = dict(cur.fetchall())
    finally:
        stop(srv, tmp)
    base = statistics.median(times[ways[0][0]])
    lines = report_head("Hybrid search on SciFact: its cost next to its halves", __file__, argv,
                        __doc__.split("\n\n")[2]) + [
        "Loading and sealing the 5,183 rows, each title embedded at INSERT: %.0f s. Queries: %d of the "
        "first %d (the others are not valid MATCH syntax as written, which hybrid_match() reads)." % (
            load_s, len(texts), n_all), "",
        "| way | ms per query | / MATCH | rows per query |", "|---|---:|---:|---:|"]
    for name, _ in ways:
        m = statistics.median(times[name])
        lines.append("| %s | %.2f | %.1fx | %.1f |" % (name, m * 1e3, m / base, rows[name] / len(texts)))
    lines += ["", "SHOW META after one hybrid_match(): plan `%s`, total_found %s." % (
        meta.get("plan"), meta.get("total_found")), ""]
    write_report(OUT, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
