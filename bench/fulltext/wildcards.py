#!/usr/bin/python3
"""Infix wildcards, loupe next to Sphinx 2.2.11 (make bench-wildcards).

    bench/fulltext/wildcards.py [--loupe build/loupe] [--searchd searchd]
                                [--rounds 5] [--seconds 1] [--infix 3] [--stem]

SciFact (title and text, no stemming) loaded into a loupe table with
min_infix_len='3' and into a Sphinx RT index with dict = keywords and
min_infix_len = 3. Then 200 infix patterns drawn from the collection's
words of 8 letters or more (seed 1): `*abcd*` (4 letters from inside a
word, 100 of them) and `*abcde` (a word's last 5 letters, 100); each
engine gets the same statements, `SELECT id FROM t WHERE MATCH('…')
LIMIT 10 OPTION ranker=bm25` (loupe's with `expansion_limit=1000000`
too: Sphinx expands every term, loupe by default at most 1,000 per field),
timed by bench/fulltext/ftq.c (one
libmariadb connection, whole passes over the list for at least --seconds
a round, rounds interleaved, the median round counts). Three phases: the
rows still in memory (loupe's RAM segment, Sphinx's RAM chunk); then,
--writes times, one new row of new words inserted and one pattern run
(the patterns in turn; the SELECT's latency timed from Python, the same
client for both engines; median); then sealed (FLUSH TABLE, FLUSH
RAMCHUNK) and timed as the first. In the first and last phases each
pattern's matches (SELECT COUNT(*)) are compared between the engines: the
two split words and cap expansions differently, so the report counts the
patterns on which they agree rather than requiring all. Writes
docs/benchmarks/wildcards.md.

With --infix 2 (make bench-wildcards2) both engines get min_infix_len 2
and the patterns are `*ab*` (2 letters from inside a word) and `*ab` (a
word's last 2), the same number of each; it writes
docs/benchmarks/wildcards-2.md.

With --stem (make bench-wildcards-stem) both engines stem English too
(loupe morphology='stem_en', Sphinx morphology = stem_en): each then
indexes every word's exact form beside its stem (Sphinx forces
index_exact_words with prefixes or infixes, and so does loupe), and the
patterns match the words as written; it writes
docs/benchmarks/wildcards-stem.md.
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from common import (REPO, LoupeServer, SphinxServer, command_line, connect, git_revision,  # noqa: E402
                    machine, utc_now)
from run import build_drivers, driver_passes  # noqa: E402

DATA = os.path.join(os.path.dirname(REPO), "shared", "data", "scifact", "docs.jsonl")
OUT = os.path.join(REPO, "docs", "benchmarks", "wildcards.md")
OUT2 = os.path.join(REPO, "docs", "benchmarks", "wildcards-2.md")
OUT_STEM = os.path.join(REPO, "docs", "benchmarks", "wildcards-stem.md")

SPHINX_INDEX = """\
index w
{{
    type            = rt
    path            = {dir}/data/w
    rt_mem_limit    = 1024M
    rt_field        = title
    rt_field        = body
    rt_attr_uint    = pad
    dict            = keywords
    min_infix_len   = {infix}
{morphology}}}
"""


def esc(s):
    return s.replace("\\", "\\\\").replace("'", "\\'")


class Side:
    """One engine: its server and the name under which it is measured."""

    def __init__(self, name, server):
        self.name = name
        self.server = server
        self.server_pid = None

    def start(self):
        self.server.start()
        self.server_pid = self.server.pid
        self.conn = connect(self.server.port)
        return self.conn.cursor()


def load(cur, table, docs):
    for i in range(0, len(docs), 200):
        cur.execute("INSERT INTO %s (id, title, body) VALUES " % table + ",".join(
            "(%d,'%s','%s')" % (i + k + 1, esc(d.get("title", "")), esc(d.get("text", "")))
            for k, d in enumerate(docs[i:i + 200])))


def describe(infix, nPattern, bStem):
    """The setup paragraph of the docstring, for min_infix_len infix (and
    stemming with bStem)."""
    text = __doc__.split("\n\n")[2].strip().replace("\n", " ")
    text = text.replace("Then 200 infix patterns", "Then %d distinct infix patterns" % nPattern)
    if bStem:
        text = (text.replace("(title and text, no stemming)", "(title and text, stemmed)")
                .replace("min_infix_len='3'", "morphology='stem_en' min_infix_len='3'")
                .replace("min_infix_len = 3.", "min_infix_len = 3 and morphology = stem_en (both then "
                         "index each word's exact form beside its stem, and patterns match the words as "
                         "written).")
                .replace("Writes docs/benchmarks/wildcards.md.", "Writes docs/benchmarks/wildcards-stem.md."))
    if infix == 2:
        text = (text.replace("min_infix_len='3'", "min_infix_len='2'").replace("min_infix_len = 3", "min_infix_len = 2")
                .replace("`*abcd*` (4 letters from inside a word, 100 of them) and `*abcde` (a word's last 5 letters, 100)",
                         "`*ab*` (2 letters from inside a word, of 100 drawn) and `*ab` (a word's last 2 letters, "
                         "of 100)")
                .replace("Writes docs/benchmarks/wildcards.md.", "Writes docs/benchmarks/wildcards-2.md."))
    return text


# Sphinx expands a wildcard to every term it fits; loupe to at most
# expansion_limit (default 1,000) per field: the same work and the same
# matches asked of both.
OPTIONS = {"loupe": "ranker=bm25, expansion_limit=1000000", "sphinx": "ranker=bm25"}


def count(cur, table, pattern, engine):
    opt = " OPTION expansion_limit=1000000" if engine == "loupe" else ""
    cur.execute("SELECT COUNT(*) FROM %s WHERE MATCH('%s')%s" % (table, pattern, opt))
    return int(cur.fetchone()[0])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", default=os.path.join(REPO, "build", "loupe"))
    ap.add_argument("--searchd", default=shutil.which("searchd") or "/usr/bin/searchd")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--infix", type=int, default=3, choices=(2, 3),
                    help="min_infix_len of both engines; 2: patterns of 2 letters")
    ap.add_argument("--stem", action="store_true", help="both engines stem English (and index exact forms)")
    args = ap.parse_args(argv)
    if args.stem and args.infix != 3:
        ap.error("--stem runs with --infix 3")
    nIn, nEnd = (4, 5) if args.infix == 3 else (2, 2)
    tmp = tempfile.mkdtemp(prefix="loupe-wildcards-")
    drivers = build_drivers(os.path.join(REPO, "build"), ["ftq"])
    docs = [json.loads(line) for line in open(DATA)]
    rng = random.Random(1)
    words = sorted({w for d in docs for w in re.findall(r"[a-z]+", (d.get("title", "") + " " + d.get("text", "")).lower())
                    if len(w) >= 8})
    patterns = []
    for w in rng.sample(words, 100):
        at = rng.randint(1, len(w) - nIn - 1)
        patterns.append("*%s*" % w[at:at + nIn])
    for w in rng.sample(words, 100):
        patterns.append("*%s" % w[-nEnd:])
    patterns = list(dict.fromkeys(patterns))  # 2 letters repeat: each once
    os.makedirs(os.path.join(tmp, "loupe"))
    os.makedirs(os.path.join(tmp, "sphinx"))
    sides = [Side("loupe", LoupeServer(os.path.join(tmp, "loupe"), args.loupe)),
             Side("sphinx", SphinxServer(os.path.join(tmp, "sphinx"), args.searchd, "sphinx",
                                         SPHINX_INDEX.replace("{infix}", str(args.infix)).replace(
                                             "{morphology}",
                                             "    morphology      = stem_en\n" if args.stem else "")))]
    paths = {}
    for s in sides:
        paths[s.name] = os.path.join(tmp, "statements-%s.sql" % s.name)
        with open(paths[s.name], "w") as f:
            for p in patterns:
                f.write("SELECT id FROM w WHERE MATCH('%s') LIMIT 10 OPTION %s\n" % (p, OPTIONS[s.name]))

    def timed(phase):
        """Counts compared, then the timed rounds: phase's results."""
        agree, found = 0, {}
        for p in patterns:
            n = [count(tables[s.name], "w", p, s.name) for s in sides]
            found[p] = n
            agree += n[0] == n[1]
        runs = {s.name: [] for s in sides}
        cpu = {s.name: [] for s in sides}
        for _ in range(args.rounds):
            for s in sides:
                q, sec, _, c, cut = driver_passes([drivers["ftq"], "--port", str(s.server.port), "--file", paths[s.name],
                                                   "--seconds", str(args.seconds), "--warmup", str(len(patterns)),
                                                   "--hard-stop", str(args.seconds * 20)], "ftq", s)
                runs[s.name].append(q / sec)
                cpu[s.name].append(c / q * 1e6)
        return {"phase": phase, "agree": agree, "found": found, "runs": runs,
                "med": {k: statistics.median(v) for k, v in runs.items()},
                "cpu": {k: statistics.median(v) for k, v in cpu.items()}}

    try:
        tables = {}
        for s in sides:
            cur = s.start()
            if s.name == "loupe":
                cur.execute("CREATE TABLE w (title TEXT, body TEXT) min_infix_len='%d'%s"
                            % (args.infix, " morphology='stem_en'" if args.stem else ""))
            load(cur, "w", docs)
            tables[s.name] = cur
        phases = [timed("in memory (RAM segment, RAM chunk)")]
        # writes between wildcards: each new row's words are new terms
        lat = {s.name: [] for s in sides}
        wrng = random.Random(2)
        for k in range(args.writes):
            text = " ".join("".join(wrng.choice("abcdefghij") for _ in range(9)) for _ in range(5))
            for s in sides:
                cur = tables[s.name]
                cur.execute("INSERT INTO w (id, title, body) VALUES (%d, 'new', '%s')" % (900000 + k, text))
                t0 = time.perf_counter()
                cur.execute("SELECT id FROM w WHERE MATCH('%s') LIMIT 10 OPTION %s"
                            % (patterns[k % len(patterns)], OPTIONS[s.name]))
                cur.fetchall()
                lat[s.name].append((time.perf_counter() - t0) * 1e6)
        tables["loupe"].execute("FLUSH TABLE w")
        tables["sphinx"].execute("FLUSH RAMCHUNK w")
        phases.append(timed("sealed (FLUSH TABLE, FLUSH RAMCHUNK)"))
        versions = {"loupe": s.server.version() for s in sides if s.name == "loupe"}
        versions["sphinx"] = sides[1].server.version()
    finally:
        for s in sides:
            s.server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    m = machine()
    lines = ["# Infix wildcards: loupe and Sphinx", "",
             "Run %s at %s on %s (%d cores, kernel %s):" % (utc_now(), git_revision(), m["cpu"], m["cores"],
                                                             m["kernel"]), "",
             "    " + command_line(__file__, argv), "",
             describe(args.infix, len(patterns), args.stem), "",
             "Versions: %s; %s." % (versions["loupe"], versions["sphinx"]), ""]
    for ph in phases:
        med, med_cpu = ph["med"], ph["cpu"]
        lines += ["## %s" % ph["phase"], "",
                  "| engine | queries/s (median of %d rounds) | server CPU per query (µs) | vs Sphinx |" % args.rounds,
                  "|---|---:|---:|---:|"]
        for s in sides:
            lines.append("| %s | %.0f | %.0f | %.2fx |" % (s.name, med[s.name], med_cpu[s.name],
                                                          med[s.name] / med["sphinx"]))
        lines += ["", "Rounds (queries/s): " + "; ".join("%s %s" % (k, ", ".join("%.0f" % x for x in v))
                                                      for k, v in ph["runs"].items()), "",
                  "The engines count the same matches for %d of %d patterns." % (ph["agree"], len(patterns))]
        differ = [(p, n) for p, n in ph["found"].items() if n[0] != n[1]]
        if differ:
            lines.append("Where they differ (pattern: loupe, Sphinx): " + "; ".join(
                "`%s`: %d, %d" % (p, n[0], n[1]) for p, n in differ[:10]) + ("; …" if len(differ) > 10 else "") + ".")
        lines.append("")
        if ph is phases[0]:
            lines += ["## A write before each wildcard", "",
                      "%d times: one row of 5 new 9-letter words inserted, then one pattern run; the "
                      "SELECT's latency from Python (µs):" % args.writes, "",
                      "| engine | median | 90th percentile |", "|---|---:|---:|"]
            for s in sides:
                v = sorted(lat[s.name])
                lines.append("| %s | %.0f | %.0f |" % (s.name, statistics.median(v), v[int(len(v) * 0.9)]))
            lines.append("")
    with open(OUT_STEM if args.stem else OUT if args.infix == 3 else OUT2, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
