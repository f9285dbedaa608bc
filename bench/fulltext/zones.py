#!/usr/bin/python3
"""What a zone limit costs a query (make bench-zones).

    bench/fulltext/zones.py [--loupe build/loupe] [--rounds 7] [--seconds 1]

SciFact loaded into one loupe server as HTML, each document's title in an
<h1> ahead of its text (`<h1>title</h1> <p>text</p>`, html_strip='1',
index_zones='h1', stem_en), and sealed (FLUSH TABLE). Then 200 one-word and
200 two-word queries drawn from the titles (seed 1), each in its plain form
(`@body w`), under ZONE:h1 and, for two words, under ZONESPAN:h1: top 10,
one client over the MySQL protocol, passes over the list for at least
--seconds a round, rounds interleaved, median queries/s. The ratio to the
plain form is the zone limit's price (every clause reads positions and
the spans' terms). The run also checks that `@body ZONE:h1 w` finds what
`@title w` does (the h1 holds the title). Writes docs/benchmarks/zones.md.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import REPO, command_line, connect, free_port, git_revision, machine, utc_now, write_report  # noqa: E402

DATA = os.path.join(os.path.dirname(REPO), "shared", "data", "scifact", "docs.jsonl")
OUT = os.path.join(REPO, "docs", "benchmarks", "zones.md")


def esc(s):
    return s.replace("\\", "\\\\").replace("'", "\\'")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", default=os.path.join(REPO, "build", "loupe"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="loupe-zones-")
    port, http = free_port(), free_port()
    srv = subprocess.Popen([args.loupe, "serve", "--data", os.path.join(tmp, "data"), "--mysql",
                            "127.0.0.1:%d" % port, "--http", "127.0.0.1:%d" % http, "--log-level", "warn"])
    try:
        for _ in range(100):
            try:
                c = connect(port)
                break
            except Exception:
                time.sleep(0.05)
        else:
            raise SystemExit("zones.py: the server did not start")
        cur = c.cursor()
        docs = [json.loads(line) for line in open(DATA)]
        cur.execute("CREATE TABLE z (title TEXT, body TEXT) html_strip='1' index_zones='h1' "
                    "morphology='stem_en'")
        for i in range(0, len(docs), 200):
            cur.execute("INSERT INTO z (id, title, body) VALUES " + ",".join(
                "(%d,'%s','%s')" % (i + k + 1, esc(d.get("title", "")),
                                    esc("<h1>%s</h1> <p>%s</p>" % (d.get("title", ""), d.get("text", ""))))
                for k, d in enumerate(docs[i:i + 200])))
        cur.execute("FLUSH TABLE z")
        rng = random.Random(1)
        words = [w.lower() for d in docs[:2000] for w in d.get("title", "").split() if w.isalpha() and len(w) > 4]
        one = [rng.choice(words) for _ in range(200)]
        two = [(rng.choice(words), rng.choice(words)) for _ in range(200)]
        forms = [("w", "@body %s", one), ("ZONE:h1 w", "@body ZONE:h1 %s", one),
                 ("w1 w2", "@body %s %s", two), ("ZONE:h1 w1 w2", "@body ZONE:h1 %s %s", two),
                 ("ZONESPAN:h1 w1 w2", "@body ZONESPAN:h1 %s %s", two)]

        def rate(fmt, items):
            qs = [fmt % x for x in items]
            t0, n = time.perf_counter(), 0
            while time.perf_counter() - t0 < args.seconds:
                for q in qs:
                    cur.execute("SELECT id FROM z WHERE MATCH(%s) LIMIT 10", (q,))
                    cur.fetchall()
                    n += 1
            return n / (time.perf_counter() - t0)

        runs = {name: [] for name, _, _ in forms}
        for _ in range(args.rounds):
            for name, fmt, items in forms:
                runs[name].append(rate(fmt, items))
        agree = 0
        for w in one[:50]:
            got = []
            for q in ("@body ZONE:h1 " + w, "@title " + w):
                cur.execute("SELECT id FROM z WHERE MATCH(%s) LIMIT 100000", (q,))
                got.append({r[0] for r in cur.fetchall()})
            agree += got[0] == got[1]
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in runs.items()}
    m = machine()
    lines = ["# Zone limits: what ZONE: and ZONESPAN: cost a query", "",
             "Run %s at %s on %s (%d cores, kernel %s):" % (utc_now(), git_revision(), m["cpu"], m["cores"],
                                                             m["kernel"]), "",
             "    " + command_line(__file__, argv), "",
             __doc__.split("\n\n")[2].strip().replace("\n", " "), "",
             "| query form | queries/s (median of %d) | vs the plain form |" % args.rounds, "|---|---:|---:|"]
    for name, _, _ in forms:
        base = med["w"] if name.count("w") == 1 else med["w1 w2"]
        lines.append("| `%s` | %.0f | %.2fx |" % (name, med[name], med[name] / base))
    lines += ["", "`@body ZONE:h1 w` found what `@title w` finds for %d of 50 words." % agree, ""]
    write_report(OUT, lines)
    return 0 if agree == 50 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
