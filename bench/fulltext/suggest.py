#!/usr/bin/python3
"""What CALL SUGGEST costs on a real dictionary (make bench-suggest).

    bench/fulltext/suggest.py [--loupe build/loupe] [--baseline OTHER_LOUPE]
                              [--rounds 7] [--calls 20]

SciFact (5,183 rows, title and text, stem_en; 92,000 terms in the two
fields) loaded into a loupe server and sealed (FLUSH TABLE). Then CALL
SUGGEST for words misspelled, short, long and absent (as Manticore's
default, within 4 edits, where every key is read, then within 2 or 1,
where the prefixes out of reach are passed over), each --calls times a
round, one client over the MySQL protocol: the median time of one call
over --rounds rounds, and the server's CPU time (its threads' run
time, from /proc) per call, which a busy machine disturbs less than the clock. With --baseline, a second server (another build)
gets the same table and the rounds alternate between the two, so the ratio
is measured in one run on one machine; the two must answer alike (the run
checks every call's rows). Writes docs/benchmarks/suggest.md.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import REPO, add_binary_args, binaries, command_line, connect, thread_cpu_seconds, free_port, git_revision, machine, utc_now, write_report  # noqa: E402

DATA = os.path.join(os.path.dirname(REPO), "shared", "data", "scifact", "docs.jsonl")
OUT = os.path.join(REPO, "docs", "benchmarks", "suggest.md")
# (word, options): misspelled, short (thousands within 4 edits), long,
# absent, and a far reach
CALLS = [("protien", ""), ("diabetis", ""), ("insulen", ""), ("cel", ""), ("immunohistochemical", ""),
         ("xyzzyq", ""), ("tumour", ", 10 AS max_edits, 20 AS limit, 10 AS delta_len"),
         # within 2 edits, the reach of fuzzy search and CALL AUTOCOMPLETE:
         # the dictionary's prefixes out of reach are passed over
         ("protien", ", 2 AS max_edits"), ("diabetis", ", 2 AS max_edits"), ("xyzzyq", ", 2 AS max_edits"),
         ("immunohistochemical", ", 1 AS max_edits")]


def esc(s):
    return s.replace("\\", "\\\\").replace("'", "\\'")


def load_sealed(cur, table, docs):
    """Inserts the SciFact docs (ids from 1, title and text) into table, 200
    a statement, and seals them (FLUSH TABLE)."""
    for i in range(0, len(docs), 200):
        cur.execute("INSERT INTO %s (id, title, body) VALUES " % table + ",".join(
            "(%d,'%s','%s')" % (i + k + 1, esc(d.get("title", "")), esc(d.get("text", "")))
            for k, d in enumerate(docs[i:i + 200])))
    cur.execute("FLUSH TABLE %s" % table)


def sealed_table(binary, table, ddl):
    """A loupe server (binary) in a fresh temporary folder, with table (ddl:
    its columns and options) holding SciFact, sealed: (tmp, srv, cur). On a
    failure the server is stopped and the folder removed."""
    tmp = tempfile.mkdtemp(prefix="loupe-%s-" % table)
    srv, cur = start(binary, tmp, "loupe")
    try:
        cur.execute("CREATE TABLE %s %s" % (table, ddl))
        load_sealed(cur, table, [json.loads(line) for line in open(DATA)])
    except BaseException:
        stop(srv, tmp)
        raise
    return tmp, srv, cur


def stop(srv, tmp):
    """Stops a server start() started and removes its folder."""
    srv.terminate()
    srv.wait()
    shutil.rmtree(tmp, ignore_errors=True)


def start(binary, tmp, name):
    port, http = free_port(), free_port()
    srv = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, name), "--mysql", "127.0.0.1:%d" % port,
                            "--http", "127.0.0.1:%d" % http, "--log-level", "warn"])
    for _ in range(200):
        try:
            return srv, connect(port).cursor()
        except Exception:
            time.sleep(0.05)
    srv.terminate()
    raise SystemExit("suggest.py: %s did not start" % binary)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_binary_args(ap)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="loupe-suggest-")
    bins = binaries(args)
    servers, curs = [], {}
    docs = [json.loads(line) for line in open(DATA)]
    try:
        for name, binary in bins.items():
            srv, cur = start(binary, tmp, name)
            servers.append(srv)
            curs[name] = cur
            cur.execute("CREATE TABLE s (title TEXT, body TEXT) morphology='stem_en'")
            load_sealed(cur, "s", docs)
        times = {(name, w, opt): [] for name in bins for w, opt in CALLS}
        cpus = {(name, w, opt): [] for name in bins for w, opt in CALLS}
        pids = {name: srv.pid for name, srv in zip(bins, servers)}
        answers = {}
        for _ in range(args.rounds):
            for name, cur in curs.items():
                for w, opt in CALLS:
                    t0, c0 = time.perf_counter(), thread_cpu_seconds(pids[name])
                    for _ in range(args.calls):
                        cur.execute("CALL SUGGEST('%s', 's'%s)" % (w, opt))
                        rows = cur.fetchall()
                    times[(name, w, opt)].append((time.perf_counter() - t0) / args.calls)
                    cpus[(name, w, opt)].append((thread_cpu_seconds(pids[name]) - c0) / args.calls)
                    answers[(name, w, opt)] = rows
    finally:
        for srv in servers:
            srv.terminate()
            srv.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    same = all(answers[("loupe", w, o)] == answers[("baseline", w, o)] for w, o in CALLS) if args.baseline else True
    m = machine()
    lines = ["# CALL SUGGEST on SciFact's dictionary", "",
             "Run %s at %s on %s (%d cores, kernel %s):" % (utc_now(), git_revision(), m["cpu"], m["cores"],
                                                             m["kernel"]), "",
             "    " + command_line(__file__, argv), "",
             __doc__.split("\n\n")[2].strip().replace("\n", " "), ""]
    head = "| call | suggestions | loupe ms | server CPU ms |" + (
        " baseline ms | baseline server CPU ms | baseline / loupe (CPU) |" if args.baseline else "")
    lines += [head, "|---|---:|---:|---:|" + ("---:|---:|---:|" if args.baseline else "")]
    for w, opt in CALLS:
        ms = statistics.median(times[("loupe", w, opt)]) * 1e3
        cpu = statistics.median(cpus[("loupe", w, opt)]) * 1e3
        row = "| `CALL SUGGEST('%s', 's'%s)` | %d | %.2f | %.2f |" % (w, opt, len(answers[("loupe", w, opt)]), ms, cpu)
        if args.baseline:
            mb = statistics.median(times[("baseline", w, opt)]) * 1e3
            cb = statistics.median(cpus[("baseline", w, opt)]) * 1e3
            row += " %.2f | %.2f | %.2fx |" % (mb, cb, cb / cpu)
        lines.append(row)
    if args.baseline:
        lines += ["", "Both builds gave the same rows for every call: %s." % ("yes" if same else "**no**")]
    lines.append("")
    write_report(OUT, lines)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
