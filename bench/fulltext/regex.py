#!/usr/bin/python3
"""What MATCH('REGEX(/…/)') costs on a real dictionary (make bench-regex).

    bench/fulltext/regex.py [--loupe build/loupe] [--rounds 7] [--calls 20]

SciFact (5,183 rows, title and text, no stemming, min_infix_len='3'; about
92,000 terms in the two fields) loaded into a loupe server and sealed
(FLUSH TABLE). Then each REGEX() query, and beside it the wildcard or prefix
that finds the same terms where one exists (for a pattern with top-level
alternatives, the same pattern in a group), --calls times a round (SELECT
id … LIMIT 10 OPTION expansion_limit=1000000, one client over the MySQL
protocol): the median time of one query over --rounds rounds, the REGEX and
its twin alternating, so their ratio is measured in one run. A pattern
that starts with letters or digits reads only that range of the dictionary;
the runs of letters and digits every match holds narrow the read to the
dictionary blocks holding them (for top-level alternatives, each
alternative's own, when each has a run of two bytes or more); any other
pattern reads all of it. The run checks that each pair finds the same
rows and expands to as many terms. Writes docs/benchmarks/regex.md.
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

OUT = os.path.join(REPO, "docs", "benchmarks", "regex.md")
# (REGEX query, the wildcard or prefix finding the same terms, or None)
QUERIES = [("REGEX(/prot.*/)", "prot*"), ("REGEX(/kinases?/)", None), ("REGEX(/.*kinase/)", "*kinase"),
           ("REGEX(/.*kinase.*/)", "*kinase*"), ("REGEX(/[a-z]+ase/)", None), ("REGEX(/colou?r/)", None),
           ("REGEX(/insulin|glucose/)", "REGEX(/(insulin|glucose)/)"),
           ("REGEX(/kinases?|phosphatases?/)", "REGEX(/(kinases?|phosphatases?)/)"),
           ("REGEX(/.*kinase|insulin.*/)", "REGEX(/(.*kinase|insulin.*)/)"), ("REGEX(/\\d+mg/)", None)]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", default=os.path.join(REPO, "build", "loupe"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args(argv)
    tmp, srv, cur = sealed_table(args.loupe, "r", "(title TEXT, body TEXT) min_infix_len='3'")
    texts = [q for pair in QUERIES for q in pair if q]
    times = {q: [] for q in texts}
    rows, expansions = {}, {}
    try:
        sql = "SELECT id FROM r WHERE MATCH(%s) LIMIT 10 OPTION expansion_limit=1000000"
        for q in texts:
            cur.execute(sql, (q,))
            rows[q] = cur.fetchall()
            cur.execute("SHOW META")
            expansions[q] = int(dict(cur.fetchall()).get("prefix_expansions", "0"))
        for _ in range(args.rounds):
            for q in texts:
                t0 = time.perf_counter()
                for _ in range(args.calls):
                    cur.execute(sql, (q,))
                    cur.fetchall()
                times[q].append((time.perf_counter() - t0) / args.calls)
    finally:
        stop(srv, tmp)
    same = all(rows[r] == rows[w] and expansions[r] == expansions[w] for r, w in QUERIES if w)
    lines = report_head("REGEX() on SciFact's dictionary", __file__, argv, __doc__.split("\n\n")[2]) + [
        "| query | terms | ms | same terms as | its ms | REGEX / it |", "|---|---:|---:|---|---:|---:|"]
    for r, w in QUERIES:
        ms = statistics.median(times[r]) * 1e3
        row = "| `%s` | %d | %.2f |" % (r.replace("|", "\\|"), expansions[r], ms)
        if w:
            mw = statistics.median(times[w]) * 1e3
            row += " `%s` | %.2f | %.2fx |" % (w.replace("|", "\\|"), mw, ms / mw)
        else:
            row += " | | |"
        lines.append(row)
    lines += ["", "Each REGEX found the rows and terms of its wildcard: %s." % ("yes" if same else "**no**"), ""]
    write_report(OUT, lines)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
