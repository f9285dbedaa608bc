#!/usr/bin/python3
"""What CALL AUTOCOMPLETE costs on a real dictionary (make bench-autocomplete).

    bench/fulltext/autocomplete.py [--loupe build/loupe] [--rounds 7] [--calls 20]

SciFact (5,183 rows, title and text, stem_en, min_infix_len='3', so the
words as written are indexed too) loaded into a loupe server and sealed
(FLUSH TABLE). Then CALL AUTOCOMPLETE for texts being typed: a short
prefix, a misspelled word, a misspelled word with the next one begun, a
long sentence, an absent word; each --calls times a round, one client over
the MySQL protocol: the median time of one call over --rounds rounds, with
a plain CALL SUGGEST of the last word measured in the same rounds for
scale (one read of the dictionary). Writes docs/benchmarks/autocomplete.md.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from common import REPO, command_line, git_revision, machine, utc_now, write_report  # noqa: E402
import suggest  # noqa: E402

OUT = os.path.join(REPO, "docs", "benchmarks", "autocomplete.md")
TEXTS = ["prot", "protien", "diabetis ins", "insulin resistance in diab", "cel", "tumour supr",
         "immunohistochem", "xyzzyq"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", default=os.path.join(REPO, "build", "loupe"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args(argv)
    binary = args.loupe
    tmp, srv, cur = suggest.sealed_table(binary, "s", "(title TEXT, body TEXT) morphology='stem_en' "
                                                      "min_infix_len='3'")
    calls = [(t, "CALL AUTOCOMPLETE('%s', 's')" % t) for t in TEXTS] + \
            [(t, "CALL SUGGEST('%s', 's')" % t.split()[-1]) for t in TEXTS]
    times = {sql: [] for _, sql in calls}
    answers = {}
    try:
        for _ in range(args.rounds):
            for _, sql in calls:
                t0 = time.perf_counter()
                for _ in range(args.calls):
                    cur.execute(sql)
                    rows = cur.fetchall()
                times[sql].append((time.perf_counter() - t0) / args.calls)
                answers[sql] = [r[0] for r in rows]
    finally:
        suggest.stop(srv, tmp)
    m = machine()
    lines = ["# CALL AUTOCOMPLETE on SciFact's dictionary", "",
             "Run %s at %s on %s (%d cores, kernel %s):" % (utc_now(), git_revision(), m["cpu"], m["cores"],
                                                             m["kernel"]), "",
             "    " + command_line(__file__, argv), "",
             __doc__.split("\n\n")[2].strip().replace("\n", " "), "",
             "| text | suggestions | first three | ms | CALL SUGGEST of its last word, ms |",
             "|---|---:|---|---:|---:|"]
    for t in TEXTS:
        ac = "CALL AUTOCOMPLETE('%s', 's')" % t
        sg = "CALL SUGGEST('%s', 's')" % t.split()[-1]
        lines.append("| `%s` | %d | %s | %.2f | %.2f |" % (
            t, len(answers[ac]), ", ".join(answers[ac][:3]) or "(none)",
            statistics.median(times[ac]) * 1e3, statistics.median(times[sg]) * 1e3))
    lines.append("")
    write_report(OUT, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
