#!/usr/bin/python3
"""What GROUP BY and FACET cost over many matches (make bench-grouping).

    bench/sql/grouping.py [--loupe build/loupe] [--baseline OTHER_LOUPE]
                          [--rows 1000000] [--rounds 5]

A table of --rows rows (a text of six words from eight, each row also
holding the word 'common'; an INT cat with 100 values, a STRING s with 7),
inserted 5,000 rows a statement, half sealed (FLUSH TABLE) and half in
RAM. Each query runs once a round, one client over the MySQL protocol;
the table gives the median over --rounds rounds and how much the server's
peak resident memory (VmHWM) grew over the whole run of that query (the
first query's growth includes the server warming up). With --baseline, a
second server (another build) gets the same rows and the rounds
alternate between the two, so the ratios are measured in one run on one
machine; the two must answer alike (the run checks every answer). Writes
docs/benchmarks/grouping.md.
"""
import argparse
import hashlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import (REPO, LoupeServer, add_binary_args, binaries, command_line, connect, git_revision, machine, utc_now,  # noqa: E402
                    write_report)

OUT = os.path.join(REPO, "docs", "benchmarks", "grouping.md")
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
QUERIES = [
    ("GROUP BY over a MATCH of every row", "SELECT cat, COUNT(*) FROM t WHERE MATCH('common') GROUP BY cat ORDER BY cat ASC LIMIT 3"),
    ("GROUP BY over a MATCH of 1 row in 2", "SELECT s, COUNT(*), AVG(cat) FROM t WHERE MATCH('alpha') GROUP BY s LIMIT 3"),
    ("GROUP BY over a scan of every row", "SELECT cat, COUNT(*), MAX(id) FROM t GROUP BY cat LIMIT 3"),
    ("a MATCH, its top 10", "SELECT id FROM t WHERE MATCH('alpha') LIMIT 10"),
    ("a MATCH, top 10 and 3 FACETs", "SELECT id FROM t WHERE MATCH('alpha') LIMIT 10 FACET cat FACET s "
                                     "FACET cat DIV 10 AS dec"),
    ("a filter, top 10 and 3 FACETs", "SELECT id FROM t WHERE cat < 50 LIMIT 10 FACET cat FACET s FACET cat DIV 10 AS dec"),
]


def hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(f.read().split("VmHWM:")[1].split()[0])


def load(cur, n):
    rnd = random.Random(1)
    cur.execute("CREATE TABLE t (body TEXT, cat INT, s STRING)")
    for b in range(0, n, 5000):
        cur.execute("INSERT INTO t (id, body, cat, s) VALUES " + ",".join(
            "(%d,'%s common',%d,'s%d')" % (i + 1, " ".join(rnd.choice(WORDS) for _ in range(5)), i % 100, i % 7)
            for i in range(b, min(n, b + 5000))))
        if b + 5000 >= n // 2 > b:
            cur.execute("FLUSH TABLE t")


def run_query(cur, sql):
    """Every result set's rows, and the seconds the statement took."""
    t0 = time.perf_counter()
    cur.execute(sql)
    sets = []
    while True:
        sets.append(cur.fetchall())
        if not cur.nextset():
            break
    return sets, time.perf_counter() - t0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_binary_args(ap)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="loupe-grouping-")
    bins = binaries(args)
    servers, curs = {}, {}
    times = {(name, q): [] for name in bins for q, _ in QUERIES}
    growth, answers = {}, {}
    try:
        for name, binary in bins.items():
            os.mkdir(os.path.join(tmp, name))
            servers[name] = LoupeServer(os.path.join(tmp, name), binary)
            servers[name].start()
            curs[name] = connect(servers[name].port).cursor()
            load(curs[name], args.rows)
        for q, sql in QUERIES:
            before = {name: hwm_kib(srv.pid) for name, srv in servers.items()}
            for _ in range(args.rounds):
                for name, cur in curs.items():
                    sets, secs = run_query(cur, sql)
                    times[(name, q)].append(secs)
                    answers[(name, q)] = hashlib.sha1(repr(sets).encode()).hexdigest()
            for name, srv in servers.items():
                growth[(name, q)] = (hwm_kib(srv.pid) - before[name]) / 1024
    finally:
        for srv in servers.values():
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    same = all(answers[("loupe", q)] == answers[("baseline", q)] for q, _ in QUERIES) if args.baseline else True
    m = machine()
    lines = ["# GROUP BY and FACET over many matches", "",
             "Run %s at %s on %s (%d cores, kernel %s):" % (utc_now(), git_revision(), m["cpu"], m["cores"],
                                                             m["kernel"]), "",
             "    " + command_line(__file__, argv), "",
             " ".join(__doc__.split("\n\n")[2].split()), "",
             "%d rows." % args.rows, ""]
    head = "| query | loupe ms | peak memory growth MiB |"
    rule = "|---|---:|---:|"
    if args.baseline:
        head += " baseline ms | baseline peak growth MiB | baseline / loupe |"
        rule += "---:|---:|---:|"
    lines += [head, rule]
    for q, sql in QUERIES:
        ms = statistics.median(times[("loupe", q)]) * 1e3
        row = "| %s: `%s` | %.1f | %.0f |" % (q, sql, ms, growth[("loupe", q)])
        if args.baseline:
            mb = statistics.median(times[("baseline", q)]) * 1e3
            row += " %.1f | %.0f | %.2fx |" % (mb, growth[("baseline", q)], mb / ms)
        lines.append(row)
    if args.baseline:
        lines += ["", "Both builds gave the same rows for every query: %s." % ("yes" if same else "**no**")]
    lines.append("")
    write_report(OUT, lines)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
