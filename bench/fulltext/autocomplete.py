#!/usr/bin/python3
"""What CALL AUTOCOMPLETE costs on a real dictionary (make bench-autocomplete).

    bench/fulltext/autocomplete.py [--loupe build/loupe] [--baseline OTHER_LOUPE]
                                   [--rounds 7] [--calls 20]

SciFact (5,183 rows, title and text, stem_en, min_infix_len='3', so the
words as written are indexed too) loaded into a loupe server and sealed
(FLUSH TABLE). Then CALL AUTOCOMPLETE for texts being typed: a short
prefix, a misspelled word, a misspelled word with the next one begun, a
long sentence, an absent word; each --calls times a round, one client over
the MySQL protocol: the median time of one call over --rounds rounds, with
a plain CALL SUGGEST of the last word measured in the same rounds for
scale. With --baseline, a second server (another build) gets the same
table, its rounds alternate with this build's, it must answer alike, and
the two are compared by the server's CPU time per call (its threads' run
time, from /proc), which a busy machine disturbs less than the clock.
Writes docs/benchmarks/autocomplete.md.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from common import REPO, add_binary_args, binaries, command_line, thread_cpu_seconds, git_revision, machine, utc_now, write_report  # noqa: E402
import suggest  # noqa: E402

OUT = os.path.join(REPO, "docs", "benchmarks", "autocomplete.md")
TEXTS = ["prot", "protien", "diabetis ins", "insulin resistance in diab", "cel", "tumour supr",
         "immunohistochem", "xyzzyq"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_binary_args(ap)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args(argv)
    bins = binaries(args)
    calls = [(t, "CALL AUTOCOMPLETE('%s', 's')" % t) for t in TEXTS] + \
            [(t, "CALL SUGGEST('%s', 's')" % t.split()[-1]) for t in TEXTS]
    times = {(name, sql): [] for name in bins for _, sql in calls}
    cpus = {(name, sql): [] for name in bins for _, sql in calls}
    answers = {}
    servers = {}
    try:
        for name, binary in bins.items():
            servers[name] = suggest.sealed_table(binary, "s", "(title TEXT, body TEXT) morphology='stem_en' "
                                                              "min_infix_len='3'")
        for _ in range(args.rounds):
            for name in bins:
                cur, pid = servers[name][2], servers[name][1].pid
                for _, sql in calls:
                    t0, c0 = time.perf_counter(), thread_cpu_seconds(pid)
                    for _ in range(args.calls):
                        cur.execute(sql)
                        rows = cur.fetchall()
                    times[(name, sql)].append((time.perf_counter() - t0) / args.calls)
                    cpus[(name, sql)].append((thread_cpu_seconds(pid) - c0) / args.calls)
                    answers[(name, sql)] = [r[0] for r in rows]
    finally:
        for tmp, srv, _ in servers.values():
            suggest.stop(srv, tmp)
    same = all(answers[("loupe", sql)] == answers[("baseline", sql)] for _, sql in calls) if args.baseline else True
    m = machine()
    head = "| text | suggestions | first three | ms | CALL SUGGEST of its last word, ms |"
    rule = "|---|---:|---|---:|---:|"
    if args.baseline:
        head += " server CPU ms | baseline ms | baseline server CPU ms | baseline / loupe (CPU) |"
        rule += "---:|---:|---:|---:|"
    lines = ["# CALL AUTOCOMPLETE on SciFact's dictionary", "",
             "Run %s at %s on %s (%d cores, kernel %s):" % (utc_now(), git_revision(), m["cpu"], m["cores"],
                                                             m["kernel"]), "",
             "    " + command_line(__file__, argv), "",
             __doc__.split("\n\n")[2].strip().replace("\n", " "), "", head, rule]
    for t in TEXTS:
        ac = "CALL AUTOCOMPLETE('%s', 's')" % t
        sg = "CALL SUGGEST('%s', 's')" % t.split()[-1]
        ms = statistics.median(times[("loupe", ac)]) * 1e3
        row = "| `%s` | %d | %s | %.2f | %.2f |" % (
            t, len(answers[("loupe", ac)]), ", ".join(answers[("loupe", ac)][:3]) or "(none)", ms,
            statistics.median(times[("loupe", sg)]) * 1e3)
        if args.baseline:
            mb = statistics.median(times[("baseline", ac)]) * 1e3
            ca, cb = (statistics.median(cpus[(name, ac)]) * 1e3 for name in ("loupe", "baseline"))
            row += " %.2f | %.2f | %.2f | %.2fx |" % (ca, mb, cb, cb / ca)
        lines.append(row)
    if args.baseline:
        lines += ["", "Both builds gave the same rows for every call: %s." % ("yes" if same else "**no**")]
    lines.append("")
    write_report(OUT, lines)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
