#!/usr/bin/python3
"""Attribute scans: loupe's column arrays next to its own row-by-row path and
to Sphinx's RT index.

`make bench-scan` runs this with Debian's python3 after `make build`. One run:

 1. Starts loupe and Sphinx 2.2.11 (searchd) on fresh folders and loads the
    same rows into both with build/loupe-load (same seed): a text field
    `<text/10/60>`, INT a in 1..1000, BIGINT b in 1..1000000, FLOAT f in
    [0, 1); loupe's table also has a 32-d FLOAT_VECTOR v (a typical
    semantic-search row), Sphinx has no vector type. loupe's rows are then
    written to a sealed segment (FLUSH TABLE; the columns live there), and
    Sphinx's to a disk chunk (FLUSH RAMCHUNK).
 2. Runs each filter query (no MATCH: a full scan on every engine) over one
    connection each, the three ways interleaved, for --rounds rounds of
    --seconds each:
      loupe       the query as written (numeric tests and sort keys on
                  column arrays)
      loupe-rows  the same WHERE as NOT NOT (...) (no WHERE: NOT NOT
                  (id > 0)), which the column scan does not compile: every
                  row block is read and evaluated, as before the columns
                  existed
      sphinx      the query as written
    and checks that every engine gives the same total_found (and, with an
    ORDER BY, the same rows).
 3. Writes docs/benchmarks/scan.md and scan.json: median queries/s per
    engine and query, and the ratios measured in the same run.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import (run_cli, REPO, BenchError, LoupeServer, SphinxServer, connect,  # noqa: E402
                    install_signal_handlers, machine, git_revision, command_line, utc_now,
                    package_version)

LOUPE_DDL = ("CREATE TABLE t (body TEXT, a INT, b BIGINT, f FLOAT, "
             "v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='32' HNSW_SIMILARITY='L2')")
LOUPE_LOAD = ("INSERT INTO t (id, body, a, b, f, v) VALUES (<increment>, '<text/10/60>', <int/1/1000>, "
              "<int/1/1000000>, <float/0/1>, <array_float/32/0/1>)")
SPHINX_LOAD = ("INSERT INTO t (id, body, a, b, f) VALUES (<increment>, '<text/10/60>', <int/1/1000>, "
               "<int/1/1000000>, <float/0/1>)")
SPHINX_INDEX = """
index t
{{
    type            = rt
    path            = {dir}/data/t
    rt_mem_limit    = 2047M
    rt_field        = body
    rt_attr_uint    = a
    rt_attr_bigint  = b
    rt_attr_float   = f
}}
"""
# Both engines answer these by scanning every row (no full-text part).
QUERIES = [
    "SELECT id FROM t WHERE a > 900 LIMIT 10",
    "SELECT id FROM t WHERE a BETWEEN 10 AND 20 AND f < 0.5 LIMIT 10",
    "SELECT id, b FROM t WHERE a = 7 ORDER BY b DESC LIMIT 5",
    "SELECT id FROM t WHERE b < 1000 LIMIT 10",
    "SELECT id FROM t WHERE a IN (3, 30, 300) AND b > 500000 ORDER BY id DESC LIMIT 10",
    "SELECT id, b FROM t WHERE a > 500 ORDER BY b DESC LIMIT 10",
    "SELECT id, f FROM t ORDER BY f DESC LIMIT 10",
]


def rows_path(sql):
    """The query with its WHERE wrapped in NOT NOT (...) (without a WHERE:
    WHERE NOT NOT (id > 0)): loupe's row path."""
    if " WHERE " not in sql:
        head, tail = sql.split(" ORDER BY ", 1)
        return "%s WHERE NOT NOT (id > 0) ORDER BY %s" % (head, tail)
    head, rest = sql.split(" WHERE ", 1)
    for kw in (" ORDER BY ", " LIMIT "):
        if kw in rest:
            cond, tail = rest.split(kw, 1)
            return "%s WHERE NOT NOT (%s)%s%s" % (head, cond, kw, tail)
    return "%s WHERE NOT NOT (%s)" % (head, rest)


def load(loupe_load, port, sql, rows, seed, pid):
    argv = [loupe_load, "--port", str(port), "--load=" + sql, "--total=%d" % rows, "--batch-size=1000",
            "--threads=2", "--seed=%d" % seed, "--server-pid=%d" % pid, "--json", "--quiet"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise BenchError("loupe-load failed (exit %d): %s" % (p.returncode, p.stderr.strip()[-500:]))
    return json.loads(p.stdout)


def answer(cur, sql):
    cur.execute(sql)
    rows = cur.fetchall()
    cur.execute("SHOW META")
    meta = {str(k): str(v) for k, v in cur.fetchall()}
    return rows, int(meta.get("total_found", -1))


def timed(cur, sql, seconds):
    """Queries per second over `seconds` (whole statements, rows fetched)."""
    n, t0 = 0, time.perf_counter()
    while True:
        cur.execute(sql)
        cur.fetchall()
        n += 1
        el = time.perf_counter() - t0
        if el >= seconds:
            return n / el


def machine_text(m):
    return "%s, %s cores, %s GiB, Linux %s" % (m.get("cpu"), m.get("cores"), m.get("memory_gib"), m.get("kernel"))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=300000, help="rows per table (default 300000)")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    p.add_argument("--seconds", type=float, default=1.0, help="seconds per query per round (default 1)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    p.add_argument("--searchd", default="/usr/bin/searchd")
    p.add_argument("--out-dir", default=os.path.join(REPO, "docs", "benchmarks"))
    args = p.parse_args(argv)
    install_signal_handlers()
    loupe_bin = os.path.join(args.build_dir, "loupe")
    loupe_load = os.path.join(args.build_dir, "loupe-load")
    for f in (loupe_bin, loupe_load, args.searchd):
        if not os.access(f, os.X_OK):
            raise BenchError("no %s (make build; scripts/install-deps.sh bench for searchd)" % f)
    tmp = tempfile.mkdtemp(prefix="loupe-bench-scan-")
    servers = []
    t_start = time.monotonic()
    try:
        os.mkdir(os.path.join(tmp, "loupe"))
        os.mkdir(os.path.join(tmp, "sphinx"))
        lo = LoupeServer(os.path.join(tmp, "loupe"), loupe_bin)
        sp = SphinxServer(os.path.join(tmp, "sphinx"), args.searchd, "sphinx", SPHINX_INDEX)
        servers += [lo, sp]
        lo.start()
        sp.start()
        with connect(lo.port) as c, c.cursor() as cur:
            cur.execute(LOUPE_DDL)
        print("scan: loading %d rows into each server" % args.rows, file=sys.stderr)
        ll = load(loupe_load, lo.port, LOUPE_LOAD, args.rows, args.seed, lo.pid)
        ls = load(loupe_load, sp.port, SPHINX_LOAD, args.rows, args.seed, sp.pid)
        cl, cs = connect(lo.port), connect(sp.port)
        cl.autocommit(True)
        kl, ks = cl.cursor(), cs.cursor()
        kl.execute("FLUSH TABLE t")
        ks.execute("FLUSH RAMCHUNK t")
        # Same answers everywhere before anything is timed.
        for sql in QUERIES:
            a, fa = answer(kl, sql)
            b, fb = answer(kl, rows_path(sql))
            c, fc = answer(ks, sql)
            if not (fa == fb == fc) or ("ORDER BY" in sql and not (list(a) == list(b) == list(c))):
                raise BenchError("answers differ for %r: loupe %d %r, loupe-rows %d %r, sphinx %d %r"
                                 % (sql, fa, a[:5], fb, b[:5], fc, c[:5]))
        kl.execute(QUERIES[0])
        kl.fetchall()
        kl.execute("SHOW META")
        meta = dict(kl.fetchall())
        if int(meta.get("rows_tested_by_columns", 0)) != args.rows:
            raise BenchError("loupe did not test its columns: SHOW META %r" % meta)
        rounds = {sql: {"loupe": [], "loupe-rows": [], "sphinx": []} for sql in QUERIES}
        for r in range(args.rounds):
            for sql in QUERIES:
                order = [("loupe", kl, sql), ("loupe-rows", kl, rows_path(sql)), ("sphinx", ks, sql)]
                if r % 2:
                    order.reverse()
                for name, cur, text in order:
                    for _ in range(3):  # warm
                        cur.execute(text)
                        cur.fetchall()
                    rounds[sql][name].append(timed(cur, text, args.seconds))
            print("scan: round %d of %d done" % (r + 1, args.rounds), file=sys.stderr)
        cl.close()
        cs.close()
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    res = []
    for sql in QUERIES:
        med = {k: statistics.median(v) for k, v in rounds[sql].items()}
        res.append({"query": sql, "qps": {k: round(v, 1) for k, v in med.items()},
                    "rounds": {k: [round(x, 1) for x in v] for k, v in rounds[sql].items()},
                    "columns_vs_rows": round(med["loupe"] / med["loupe-rows"], 2),
                    "loupe_vs_sphinx": round(med["loupe"] / med["sphinx"], 2)})
    meta = {"command": command_line(__file__, argv), "date": utc_now(), "machine": machine(),
            "git": git_revision(), "sphinxsearch_pkg": package_version("sphinxsearch"),
            "rows": args.rows, "rounds": args.rounds, "seconds": args.seconds, "seed": args.seed,
            "load_docs_per_s": {"loupe": ll.get("docs_per_s"), "sphinx": ls.get("docs_per_s")},
            "wall_s": round(time.monotonic() - t_start, 1)}
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "scan.json"), "w") as f:
        json.dump({"meta": meta, "results": res}, f, indent=1)
    md = ["# Attribute scans: column arrays, rows, Sphinx", "",
          "Command: `%s` (%s, %s s). Machine: %s. git %s, sphinxsearch %s." % (
              meta["command"], meta["date"], meta["wall_s"], machine_text(meta["machine"]), meta["git"],
              meta["sphinxsearch_pkg"]), "",
          "%d rows loaded by loupe-load (seed %d): text `<text/10/60>`, INT a 1..1000, BIGINT b "
          "1..1000000, FLOAT f [0,1); loupe's rows also hold a 32-d vector. loupe: one sealed "
          "segment after FLUSH TABLE; Sphinx: a disk chunk after FLUSH RAMCHUNK. One pymysql "
          "connection per engine; %d interleaved rounds of %.1f s per query; the median round counts. "
          "`loupe-rows` is loupe with the WHERE written `NOT NOT (...)` (`NOT NOT (id > 0)` where there "
          "is none), which its column scan does not compile: every row is read and evaluated, as before "
          "segments kept columns. Every engine "
          "gave the same total_found (and rows, with ORDER BY) before timing." % (
              args.rows, args.seed, args.rounds, args.seconds), "",
          "| query | loupe q/s | loupe-rows q/s | sphinx q/s | columns / rows | loupe / sphinx |",
          "|---|---:|---:|---:|---:|---:|"]
    for r in res:
        md.append("| `%s` | %.0f | %.0f | %.0f | %.2fx | %.2fx |" % (
            r["query"], r["qps"]["loupe"], r["qps"]["loupe-rows"], r["qps"]["sphinx"],
            r["columns_vs_rows"], r["loupe_vs_sphinx"]))
    md.append("")
    with open(os.path.join(args.out_dir, "scan.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md[-len(res) - 3:]))
    return 0


if __name__ == "__main__":
    run_cli(main, "bench-scan")
