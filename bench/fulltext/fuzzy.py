#!/usr/bin/python3
"""What OPTION fuzzy=1 costs on a real dictionary (make bench-fuzzy).

    bench/fulltext/fuzzy.py [--loupe build/loupe] [--baseline OTHER_LOUPE]
                            [--rounds 7] [--calls 10]

SciFact (5,183 rows, title and text, no stemming, min_infix_len='3'; about
92,000 terms in the two fields) loaded into a loupe server and sealed
(FLUSH TABLE). Then MATCH queries with typos under OPTION fuzzy=1, each
beside the same query spelled right without it, --calls times a round
(SELECT id … LIMIT 10, one client over the MySQL protocol): the median
time of one query over --rounds rounds, the two alternating, so their
ratio is measured in one run. A query's fuzzy words walk the dictionary
together, testing terms' edit distances and passing over every prefix no
term near enough can begin with. With --baseline, a second server
(another build) gets the same table, its rounds alternate with this
build's, and its fuzzy queries must answer alike; the two are compared by
the server's CPU time per query (its threads' run time, from /proc), which a
busy machine disturbs less than the clock. The table also says whether the fuzzy query's SHOW META
keywords hold every word of the right spelling, and the rows each query
finds (COUNT(*)).
Writes docs/benchmarks/fuzzy.md.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import REPO, add_binary_args, binaries, thread_cpu_seconds, report_head, write_report  # noqa: E402
from suggest import sealed_table, stop  # noqa: E402

OUT = os.path.join(REPO, "docs", "benchmarks", "fuzzy.md")
# (with typos, options, spelled right)
QUERIES = [("protien", "", "protein"), ("protien kinaze", "", "protein kinase"),
           ("insulin resistence in diabetis", "", "insulin resistance in diabetes"),
           ('"tumour supressor"', "", '"tumour suppressor"'), ("imunohistochemical", ", distance=1",
                                                               "immunohistochemical"),
           ("xyzzyq vaccine", ", preserve=1", "xyzzyq vaccine")]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_binary_args(ap)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=10)
    args = ap.parse_args(argv)
    bins = binaries(args)
    sql = "SELECT id FROM f WHERE MATCH(%s) LIMIT 10"
    timed = [(typo, " OPTION fuzzy=1" + opt) for typo, opt, _ in QUERIES] + [(right, "") for _, _, right in QUERIES]
    times = {(name, q): [] for name in bins for q in timed}
    cpus = {(name, q): [] for name in bins for q in timed}
    found, words, rows = {}, {}, {}
    servers = {}
    try:
        for name, binary in bins.items():
            servers[name] = sealed_table(binary, "f", "(title TEXT, body TEXT) min_infix_len='3'")
            cur = servers[name][2]
            for text, opt in timed:
                cur.execute(sql + opt, (text,))
                rows[(name, text, opt)] = cur.fetchall()
                cur.execute("SHOW META")
                words[(name, text, opt)] = {v for k, v in cur.fetchall() if k.startswith("keyword[")}
                cur.execute("SELECT COUNT(*) FROM f WHERE MATCH(%s)" + opt, (text,))
                found[(name, text, opt)] = cur.fetchall()[0][0]
        for _ in range(args.rounds):
            for name in bins:
                cur, pid = servers[name][2], servers[name][1].pid
                for text, opt in timed:
                    t0, c0 = time.perf_counter(), thread_cpu_seconds(pid)
                    for _ in range(args.calls):
                        cur.execute(sql + opt, (text,))
                        cur.fetchall()
                    times[(name, (text, opt))].append((time.perf_counter() - t0) / args.calls)
                    cpus[(name, (text, opt))].append((thread_cpu_seconds(pid) - c0) / args.calls)
    finally:
        for tmp, srv, _ in servers.values():
            stop(srv, tmp)
    same = all(rows[("loupe",) + q] == rows[("baseline",) + q] and words[("loupe",) + q] == words[("baseline",) + q]
               for q in timed) if args.baseline else True
    head = "| fuzzy query | rows | ms | spelled right | rows | ms | fuzzy / right | finds the right words |"
    rule = "|---|---:|---:|---|---:|---:|---:|---|"
    if args.baseline:
        head += " fuzzy server CPU ms | baseline fuzzy ms | baseline server CPU ms | baseline / loupe (CPU) |"
        rule += "---:|---:|---:|---:|"
    lines = report_head("OPTION fuzzy=1 on SciFact's dictionary", __file__, argv, __doc__.split("\n\n")[2]) + [
        head, rule]
    for typo, opt, right in QUERIES:
        f, r = (typo, " OPTION fuzzy=1" + opt), (right, "")
        mf, mr = (statistics.median(times[("loupe", k)]) * 1e3 for k in (f, r))
        row = "| `%s` fuzzy=1%s | %d | %.2f | `%s` | %d | %.2f | %.1fx | %s |" % (
            typo, opt, found[("loupe",) + f], mf, right, found[("loupe",) + r], mr, mf / mr,
            "yes" if words[("loupe",) + r] <= words[("loupe",) + f] else "no")
        if args.baseline:
            mb = statistics.median(times[("baseline", f)]) * 1e3
            cf, cb = (statistics.median(cpus[(name, f)]) * 1e3 for name in ("loupe", "baseline"))
            row += " %.2f | %.2f | %.2f | %.2fx |" % (cf, mb, cb, cb / cf)
        lines.append(row)
    if args.baseline:
        lines += ["", "Both builds gave the same rows and keywords for every query: %s." % ("yes" if same else "**no**")]
    lines.append("")
    write_report(OUT, lines)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
