#!/usr/bin/python3
"""What word forms, exceptions and ignore_chars cost indexing (make bench-analysis).

    bench/fulltext/analysis.py [--inspect build/loupe-inspect] [--collection cisi] [--runs 9]

The collection's documents (title and text, stem_en) analysed and indexed
in process by `loupe-inspect fts-build ... --threads 1`, once per setting,
the settings alternated run after run; the median of each setting's
analyse_s (documents into their terms, the part these options touch) over
--runs runs, and its ratio to the plain setting's median. The settings:
word forms of 1,000, 100,000 and 1,000,000 rules (up to a tenth of them,
and never more than a tenth of the collection's words, map a word of the
collection to another word; the rest map made-up words: a table's
dictionary is mostly words its text does not hold), exceptions of
4 and of 1,000 rules (C++, C#, AT & T, .NET; and made-up ones on capital
letters), all generated with a fixed seed. Manticore says 1M word forms
slow its indexing about 1.5 times. Writes docs/benchmarks/analysis.md.
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import REPO, command_line, git_revision, machine, utc_now, write_report  # noqa: E402

DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
OUT = os.path.join(REPO, "docs", "benchmarks", "analysis.md")


def fake(rnd):
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(5, 12)))


def write_rules(tmp, coll_words):
    """The rule files: name -> (path, description)."""
    rnd = random.Random(7)
    files = {}
    for n in (1000, 100000, 1000000):
        path = os.path.join(tmp, "wf%d.txt" % n)
        # at most a tenth of the collection's words are mapped, whatever
        # the size: mapped words skip stemming, which would flatter the
        # larger dictionaries
        real = rnd.sample(coll_words, min(len(coll_words) // 10, n // 10))
        with open(path, "w") as f:
            for w in real:
                f.write("%s > %sx\n" % (w, w))
            for _ in range(n - len(real)):
                f.write("%s > %s\n" % (fake(rnd), fake(rnd)))
        files["wordforms %d" % n] = (["--wordforms", path], "%d word forms" % n)
    path = os.path.join(tmp, "exc4.txt")
    with open(path, "w") as f:
        f.write("C++ => cplusplus\nC# => csharp\nAT & T => att\n.NET => dotnet\n")
    files["exceptions 4"] = (["--exceptions", path], "4 exceptions")
    path = os.path.join(tmp, "exc1000.txt")
    with open(path, "w") as f:
        for i in range(1000):
            w = "".join(rnd.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(rnd.randint(2, 5)))
            f.write("%s%s => x%d\n" % (w, rnd.choice(["++", "#", "&Co", " & Co", ".js"]), i))
    files["exceptions 1000"] = (["--exceptions", path], "1,000 exceptions")
    return files


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inspect", default=os.path.join(REPO, "build", "loupe-inspect"))
    ap.add_argument("--collection", default="cisi")
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args(argv)
    docs = os.path.join(DATA, args.collection, "docs.jsonl")
    words = set()
    for line in open(docs):
        d = json.loads(line)
        for f in ("title", "text"):
            words.update(re.findall(r"[a-z]+", (d.get(f) or "").lower()))
    tmp = tempfile.mkdtemp(prefix="loupe-analysis-")
    try:
        settings = {"plain": ([], "no option")}
        settings.update(write_rules(tmp, sorted(words)))
        seg = os.path.join(tmp, "c.seg")
        base = [args.inspect, "fts-build", docs, seg, "--fields", "title,text", "--morphology", "stem_en",
                "--threads", "1"]
        times = {k: [] for k in settings}
        for _ in range(args.runs):
            for k, (extra, _) in settings.items():
                if os.path.exists(seg):
                    os.remove(seg)
                out = subprocess.run(base + extra, capture_output=True, text=True, check=True)
                times[k].append(json.loads(out.stdout)["analyse_s"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    m = machine()
    plain = statistics.median(times["plain"])
    lines = ["# What word forms and exceptions cost indexing", "",
             "Run %s at %s on %s (%d cores, kernel %s):" % (utc_now(), git_revision(), m["cpu"], m["cores"],
                                                           m["kernel"]), "",
             "    " + command_line(__file__, argv), "",
             "%s's %d documents, title and text, stem_en, analysed by `loupe-inspect fts-build "
             "--threads 1` (analyse_s: the documents into their terms), the settings alternated, %d runs "
             "each, medians. The rules are generated with a fixed seed (see the script)." % (
                 args.collection, sum(1 for _ in open(docs)), args.runs), "",
             "| setting | analyse_s (median) | vs no option |", "|---|---:|---:|"]
    for k, (_, desc) in settings.items():
        med = statistics.median(times[k])
        lines.append("| %s | %.2f ms | %.2fx |" % (desc, med * 1000, med / plain))
    lines.append("")
    write_report(OUT, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
