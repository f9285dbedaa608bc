#!/usr/bin/python3
"""What OPTION fuzzy=1 costs on a real dictionary (make bench-fuzzy).

    bench/fulltext/fuzzy.py [--loupe build/loupe] [--rounds 7] [--calls 10]

SciFact (5,183 rows, title and text, no stemming, min_infix_len='3'; about
92,000 terms in the two fields) loaded into a loupe server and sealed
(FLUSH TABLE). Then MATCH queries with typos under OPTION fuzzy=1, each
beside the same query spelled right without it, --calls times a round
(SELECT id … LIMIT 10, one client over the MySQL protocol): the median
time of one query over --rounds rounds, the two alternating, so their
ratio is measured in one run. Each fuzzy word reads the whole dictionary
once (all of a query's words in one read), testing every term's edit
distance. The table also says whether the fuzzy query's SHOW META
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
from common import REPO, report_head, write_report  # noqa: E402
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
    ap.add_argument("--loupe", default=os.path.join(REPO, "build", "loupe"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=10)
    args = ap.parse_args(argv)
    tmp, srv, cur = sealed_table(args.loupe, "f", "(title TEXT, body TEXT) min_infix_len='3'")
    sql = "SELECT id FROM f WHERE MATCH(%s) LIMIT 10"
    timed = [(typo, " OPTION fuzzy=1" + opt) for typo, opt, _ in QUERIES] + [(right, "") for _, _, right in QUERIES]
    times = {q: [] for q in timed}
    found, words = {}, {}
    try:
        for text, opt in timed:
            cur.execute(sql + opt, (text,))
            cur.fetchall()
            cur.execute("SHOW META")
            words[(text, opt)] = {v for k, v in cur.fetchall() if k.startswith("keyword[")}
            cur.execute("SELECT COUNT(*) FROM f WHERE MATCH(%s)" + opt, (text,))
            found[(text, opt)] = cur.fetchall()[0][0]
        for _ in range(args.rounds):
            for text, opt in timed:
                t0 = time.perf_counter()
                for _ in range(args.calls):
                    cur.execute(sql + opt, (text,))
                    cur.fetchall()
                times[(text, opt)].append((time.perf_counter() - t0) / args.calls)
    finally:
        stop(srv, tmp)
    lines = report_head("OPTION fuzzy=1 on SciFact's dictionary", __file__, argv, __doc__.split("\n\n")[2]) + [
        "| fuzzy query | rows | ms | spelled right | rows | ms | fuzzy / right | finds the right words |",
        "|---|---:|---:|---|---:|---:|---:|---|"]
    for typo, opt, right in QUERIES:
        f, r = (typo, " OPTION fuzzy=1" + opt), (right, "")
        mf, mr = (statistics.median(times[k]) * 1e3 for k in (f, r))
        lines.append("| `%s` fuzzy=1%s | %d | %.2f | `%s` | %d | %.2f | %.1fx | %s |" % (
            typo, opt, found[f], mf, right, found[r], mr, mf / mr, "yes" if words[r] <= words[f] else "no"))
    lines.append("")
    write_report(OUT, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
