#!/usr/bin/python3
"""Full-text benchmark: loupe against SQLite FTS5, Xapian and Sphinx, same run.

`make bench-fulltext` runs this with Debian's python3. For every IR
collection in ../shared/data (docs.jsonl + queries.jsonl + qrels.tsv), one
after the other:

 1. Start every engine on its own folder in one temporary directory: loupe
    (`loupe serve`, MySQL port 0, read from its log) and searchd 2.2.11
    (generated sphinx.conf) as servers; FTS5 and Xapian in this process.
 2. Index the documents (title and text as two fields, English stemming,
    no stop words), timed from the first INSERT to an index that is on disk
    and searchable; then the index size on disk. loupe also in process,
    before any server starts: `loupe-inspect fts-build` writes the sealed
    segment for the collection (its file is loupe's index size),
    alternating with fts5b.c, which builds FTS5's index in the same
    conditions (a fresh C process, the same timed window); medians of
    BUILD_RUNS runs each or more (inproc_builds).
 3. Quality: each bag-of-words query as an OR of its words, top 100 by
    BM25; nDCG@10, MRR@10, Recall@100 over the judged queries (metrics.py).
 4. Speed: five query types derived from the query set (workload.py), top
    10, one client, `--rounds` rounds; in each round every runner runs, for
    each type, whole passes over the same query list until `--seconds` have
    passed (the runner that goes first rotates per round); queries/s is the
    median over rounds. Two kinds of runner, compared within their kind:
    - in process: C/C++ drivers calling each engine's library, no Python
      and no client in the loop: `loupe-inspect fts-bench` on the segment,
      fts5q.c on FTS5's database file, xapq.cc on Xapian's database.
    - over the wire: the servers (loupe, Sphinx) over one connection by
      ftq.c, a C loop on libmariadb (or, with --client pymysql, from
      Python); statements are built beforehand and every row is fetched;
      the floor (`SELECT 1`, no search) is measured the same way.
    The C/C++ drivers are built into <build-dir>/bench (passes.h is their
    common loop). Each in-process driver's mean results per query is
    checked against the same engine's other path.
 5. Stop everything, then write docs/benchmarks/fulltext.md and
    fulltext.json: tables, targets met or not, machine, versions, settings.

Any failed statement, a result id outside the collection or a duplicate id
fails the run. Servers are stopped and the temporary directory removed on
every exit path, Ctrl-C and SIGTERM included.
"""

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from common import (run_cli, REPO, BenchError, command_line, cpu_seconds, git_revision,  # noqa: E402
                    install_signal_handlers, machine, package_version, rss_mib, utc_now)
import engines as eng  # noqa: E402
import metrics  # noqa: E402
import workload  # noqa: E402

SPEED_TYPES = workload.TYPES
QUALITY_K = 100
QUALITY_KEYS = metrics.KEYS
SPEED_K = 10
SPEED_TARGET = 2.0
# A pass that runs this many times past --seconds is cut short (a very slow
# engine must not stall the run); the cut is recorded in the JSON.
HARD_STOP = 10.0


def log(msg):
    print("bench-fulltext: %s" % msg, flush=True)


# ------------------------------------------------------------ measure ---

def check_ranking(e, coll, ids, q, k):
    n = len(coll.docs)
    if len(ids) > k or len(set(ids)) != len(ids) or any(not (1 <= i <= n) for i in ids):
        raise BenchError("%s on %s, query %r: bad result ids %s" % (e.name, coll.name, q, ids[:20]))


def quality(e, coll):
    """Top-100 OR rankings of every query, mapped to collection ids; metrics."""
    rankings, hits = {}, 0
    for q in coll.queries:
        ids = e.run(e.compile(q, QUALITY_K))
        check_ranking(e, coll, ids, q, QUALITY_K)
        hits += len(ids)
        rankings[q.qid] = [coll.doc_ids[i - 1] for i in ids]
    per_query = metrics.per_query_metrics(rankings, coll.qrels)
    m = metrics.means(per_query)
    m.update(avg_results=round(hits / len(coll.queries), 1),
             per_query={key: {q: round(v, 4) for q, v in pq.items()} for key, pq in per_query.items()})
    return m


def timed_passes(e, compiled, seconds):
    """Whole passes over `compiled` until `seconds` have passed. Returns the
    queries run, the wall time, the mean results per query, the CPU seconds
    spent (the server's; in process, this process's: engine plus Python)
    and whether a pass was cut short."""
    pid = e.server_pid
    cpu0 = cpu_seconds(pid) if pid else time.process_time()
    n = hits = 0
    cut = False
    t0 = time.perf_counter()
    while True:
        for c in compiled:
            hits += len(e.run(c))
            n += 1
            if time.perf_counter() - t0 > seconds * HARD_STOP:
                cut = True
                break
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds or cut:
            break
    cpu = (cpu_seconds(pid) if pid else time.process_time()) - cpu0
    return n, elapsed, hits / max(n, 1), cpu, cut


def driver_passes(argv, tool, e=None):
    """Runs a C/C++ timing driver to completion (ftq.c, fts5q.c, xapq.cc,
    `loupe-inspect fts-bench`; their common loop is passes.h) and returns
    what timed_passes returns. With a server engine e, the CPU is the
    server's, sampled at the driver's "<tool>: measuring" / "<tool>: done"
    markers; in process, the driver's own over the same window."""
    if e is not None:
        e.server.check_alive()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cpu0 = cpu1 = None
    marks, errlines = 0, []
    try:
        for line in proc.stderr:
            if line.strip() == tool + ": measuring":
                marks += 1
                cpu0 = cpu_seconds(e.server_pid) if e is not None else 0
            elif line.strip() == tool + ": done":
                marks += 1
                cpu1 = cpu_seconds(e.server_pid) if e is not None else 0
            else:
                errlines.append(line)
        out = proc.stdout.read()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0 or marks != 2:
        raise BenchError("%s failed (exit %d): %s\n%s%s%s" % (
            tool, proc.returncode, " ".join(argv), "".join(errlines[-20:]), out,
            "\nserver log tail:\n" + e.server.log_tail() if e is not None else ""))
    r = json.loads(out)
    cpu = cpu1 - cpu0 if e is not None else r["cpu_seconds"]
    return r["queries"], r["seconds"], r["rows"] / max(r["queries"], 1), cpu, r["cut_short"]


class Runner:
    """One engine measured one way. section "wire": a server timed over one
    MySQL connection (by ftq.c, or by pymysql from here with --client
    pymysql); "inproc": a C/C++ driver calling the engine's library in its
    own process. lists[type] is the number of queries of that type; measure
    (type, seconds, warmup) returns what timed_passes returns."""

    def __init__(self, name, section, lists, measure):
        self.name, self.section, self.lists, self.measure = name, section, lists, measure


def write_lines(path, lines):
    with open(path, "w") as f:
        for s in lines:
            if "\n" in s or "\r" in s:
                raise BenchError("%s: a query spans lines: %r" % (path, s[:200]))
            f.write(s + "\n")
    return path


def wire_runner(e, queries, args, workdir):
    """A server engine, every type plus the floor (`SELECT 1`)."""
    compiled = {}
    for t in SPEED_TYPES:
        # None: nothing left to search for this engine (a Sphinx word made
        # only of characters its charset_table drops); left out.
        sqls = [c for c in (e.compile(q, SPEED_K) for q in queries[t]) if c is not None]
        if sqls:
            compiled[t] = sqls
    compiled["floor"] = [e.floor_sql()]
    if args.client == "c":
        files = {t: write_lines(os.path.join(workdir, "ftq-%s-%s.sql" % (e.name, t)), sqls)
                 for t, sqls in compiled.items()}

        def measure(t, seconds, warmup):
            return driver_passes([args.drivers["ftq"], "--port", str(e.server.port), "--file", files[t],
                                  "--seconds", str(seconds), "--warmup", str(warmup),
                                  "--hard-stop", str(seconds * HARD_STOP)], "ftq", e)
    else:
        def measure(t, seconds, warmup):
            for c in compiled[t][:warmup]:
                e.run(c)
            return timed_passes(e, compiled[t], seconds)
    return Runner(e.name, "wire", {t: len(v) for t, v in compiled.items()}, measure)


def inproc_lines(name, q, e):
    """The line an in-process driver gets for query q (see each driver's
    header): loupe's MATCH text, FTS5's MATCH expression as Fts5Engine
    binds it, `kind<TAB>words` for xapq, which builds XapianEngine's query."""
    if name == "loupe":
        return eng.match_text(q)
    if name == "fts5":
        return e.compile(q, SPEED_K)[1][0]
    return "%s\t%s" % (q.kind, " ".join(q.words))


def inproc_runner(name, e, target, queries, args, workdir):
    """loupe (`loupe-inspect fts-bench` on the segment target), fts5
    (fts5q on the database file) or xapian (xapq on the database folder)."""
    files = {}
    for t in SPEED_TYPES:
        lines = [x for x in (inproc_lines(name, q, e) for q in queries[t]) if x is not None]
        if lines:
            files[t] = write_lines(os.path.join(workdir, "inproc-%s-%s.txt" % (name, t)), lines)
    counts = {t: sum(1 for _ in open(p)) for t, p in files.items()}
    if name == "loupe":
        head, tool = [args.loupe_inspect, "fts-bench"], "loupe-inspect"
        tail = ["--fields", "title,text", "--morphology", "stem_en"]
    else:
        tool = "fts5q" if name == "fts5" else "xapq"
        head, tail = [args.drivers[tool]], []

    def measure(t, seconds, warmup):
        return driver_passes(head + [target, files[t], "--k", str(SPEED_K), "--seconds", str(seconds),
                                     "--warmup", str(warmup), "--hard-stop", str(seconds * HARD_STOP)]
                             + tail, tool)
    return Runner(name, "inproc", counts, measure)


def speed(runners, args):
    """{(name, section): {type: summary}}. Each round runs every type on
    every runner, the runner that goes first rotating per round, so slow
    drifts of the machine spread over all runners alike; the first round
    starts with an unmeasured warm-up."""
    runs = {(r.name, r.section): {} for r in runners}
    types = list(SPEED_TYPES) + ["floor"]
    for rnd in range(args.rounds):
        for t in types:
            present = [r for r in runners if t in r.lists]
            if not present:
                continue
            shift = rnd % len(present)
            for rn in present[shift:] + present[:shift]:
                warmup = min(20, rn.lists[t]) if rnd == 0 else 0
                n, el, hits, cpu, cut = rn.measure(t, args.seconds, warmup)
                # Other work on the machine skews a round; the 1-minute load
                # average at its end shows how busy the machine was.
                r = {"round": rnd + 1, "queries": n, "seconds": round(el, 4), "qps": round(n / el, 1),
                     "avg_results": round(hits, 2), "cut_short": cut,
                     "loadavg_1m": round(os.getloadavg()[0], 2),
                     "cpu_us_per_query": round(cpu / n * 1e6, 1)}
                runs[rn.name, rn.section].setdefault(t, []).append(r)
    out = {}
    for rn in runners:
        per = out[rn.name, rn.section] = {}
        for t, rs in runs[rn.name, rn.section].items():
            per[t] = {"queries_in_list": rn.lists[t],
                      "qps_median": round(statistics.median(r["qps"] for r in rs), 1),
                      "qps_min": min(r["qps"] for r in rs), "qps_max": max(r["qps"] for r in rs),
                      "avg_results": rs[0]["avg_results"],
                      "cpu_us_per_query": round(statistics.median(r["cpu_us_per_query"] for r in rs), 1),
                      "rounds": rs}
    return out


# Alternating runs of each in-process build: a fresh process each, the
# median counts (a few ms on a small collection vary by tens of percent on a
# shared machine). At least BUILD_RUNS each, and more while loupe's timed
# builds add up to less than BUILD_SECONDS, up to BUILD_RUNS_MAX: a build of
# a few ms (adi) gets dozens of runs, one of a second gets five.
BUILD_RUNS = 5
BUILD_SECONDS = 1.0
BUILD_RUNS_MAX = 51


def _run_json(argv, what):
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise BenchError("%s failed (exit %d):\n%s" % (" ".join(argv), res.returncode, res.stderr))
    try:
        return json.loads(res.stdout), wall
    except ValueError:
        raise BenchError("%s printed no JSON: %r" % (what, res.stdout[:300]))


def inproc_builds(coll, args, seg_path, fts5_path):
    """In-process indexing, loupe against FTS5 in the same conditions: each
    a C program in a fresh process that reads and parses docs.jsonl first,
    untimed, then times the build up to a durable index. loupe is
    `loupe-inspect fts-build` (title and text, stem_en, no stop words):
    analysis (documents in batches on one thread per CPU, as the server's
    work pool analyses a large INSERT, or on one when the load's INSERT
    around them holds under 64 KiB of text; no thread is started when
    every INSERT is that small), added to the in-memory index
    in order, then the sealed segment written and fsynced. FTS5 (when
    fts5_path is given) is bench/fulltext/fts5b.c: the statements of
    Fts5Engine.load(), BEGIN, the INSERTs, optimize, COMMIT. The two
    alternate, BUILD_RUNS times each or more (until loupe's timed builds
    add up to BUILD_SECONDS, at most BUILD_RUNS_MAX; once with --quick),
    each run on a fresh file; medians. Returns (loupe's, FTS5's or None)."""
    docs = os.path.join(coll.path, "docs.jsonl")
    lo_argv = [args.loupe_inspect, "fts-build", docs, seg_path, "--fields", "title,text", "--morphology", "stem_en"]
    lo_runs, f5_runs = [], []
    while True:
        n = len(lo_runs)
        if args.quick and n >= 1:
            break
        if n >= BUILD_RUNS and (n >= BUILD_RUNS_MAX or sum(r[0] for r in lo_runs) >= BUILD_SECONDS):
            break
        if os.path.exists(seg_path):
            os.remove(seg_path)
        out, wall = _run_json(lo_argv, "loupe-inspect fts-build")
        if out["documents"] != len(coll.docs):
            raise BenchError("loupe-inspect fts-build indexed %d documents of %s, the benchmark reads %d"
                             % (out["documents"], coll.name, len(coll.docs)))
        lo_runs.append((out["analyse_index_s"] + out["write_s"], wall, out))
        if fts5_path:
            out, wall = _run_json([args.drivers["fts5b"], docs, fts5_path], "fts5b")
            if out["documents"] != len(coll.docs):
                raise BenchError("fts5b indexed %d documents of %s, the benchmark reads %d"
                                 % (out["documents"], coll.name, len(coll.docs)))
            f5_runs.append((out["build_s"], wall, out))

    def summary(runs, path):
        s = statistics.median(r[0] for r in runs)
        mid = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
        return {"build_s": round(s, 6), "docs_per_s": round(len(coll.docs) / s, 1),
                "runs_s": [round(r[0], 6) for r in runs],
                "process_wall_s": round(statistics.median(r[1] for r in runs), 4),
                "page_faults": mid[2].get("page_faults"), "size_bytes": os.path.getsize(path),
                "output": mid[2]}

    return summary(lo_runs, seg_path), (summary(f5_runs, fts5_path) if fts5_path else None)


def reference_counts(e, queries):
    """Mean results per query of each type, one untimed pass from Python:
    what the in-process driver must reproduce."""
    out = {}
    for t in SPEED_TYPES:
        compiled = [c for c in (e.compile(q, SPEED_K) for q in queries[t]) if c is not None]
        if compiled:
            out[t] = round(sum(len(e.run(c)) for c in compiled) / len(compiled), 2)
    return out


def bench_collection(coll, args, tmp):
    queries = workload.speed_queries(coll, args.cap, args.seed)
    res = {"docs": len(coll.docs), "queries": len(coll.queries), "judged": coll.judged,
           "qrels_rows": sum(len(j) for j in coll.qrels.values()), "notes": coll.notes,
           "speed_queries": {t: len(v) for t, v in queries.items()},
           "speed_query_examples": {t: [" ".join(q.words) for q in v[:3]] for t, v in queries.items()},
           "engines": {}}
    workdir = os.path.join(tmp, coll.name)
    os.makedirs(workdir)
    started, complaints = [], []
    # The in-process builds first, on a quiet machine: no server of any
    # engine is running yet. Neither needs one, and a comparison of two
    # processes should not depend on what else is up (cranfield, 9
    # alternations: 1.06x with idle loupe and Sphinx servers up, 1.17x and
    # 1.14x without, before and after; whether that is more than noise,
    # one test cannot say).
    builds = None
    if "loupe" in args.engines:
        seg = os.path.join(workdir, "loupe.seg")
        f5 = os.path.join(workdir, "fts5b.db") if "fts5" in args.engines else None
        builds = b, c = inproc_builds(coll, args, seg, f5)
        log("%s: loupe-inspect fts-build indexed %d docs in %.4f s (%.0f docs/s), segment %s" % (
            coll.name, len(coll.docs), b["build_s"], b["docs_per_s"], fmt_bytes(b["size_bytes"])))
        if c:
            log("%s: fts5b indexed %d docs in %.4f s (%.0f docs/s)" % (
                coll.name, len(coll.docs), c["build_s"], c["docs_per_s"]))
    try:
        for name in args.engines:
            d = os.path.join(workdir, name)
            os.makedirs(d)
            e = eng.ENGINES[name](d, args)
            started.append(e)
            e.start()
            e.prepare(coll)
            t0 = time.perf_counter()
            e.load()
            load_s = time.perf_counter() - t0
            transport = e.transport
            if e.server_pid and args.client == "c":
                transport = "MySQL protocol, 1 connection: loading and quality by pymysql, speed by ftq.c"
            r = {"load_s": round(load_s, 3), "docs_per_s": round(len(coll.docs) / load_s, 1),
                 "size_bytes": e.size_bytes(), "transport": transport, "version": e.version()}
            if e.server_pid:
                r["server_rss_mib"] = rss_mib(e.server_pid)
            if name == "loupe":
                r["table_status"] = {k: str(v) for k, v in e.status().items()}
            r["notes"] = e.notes
            res["engines"][name] = r
            log("%s: %s indexed %d docs in %.2f s (%.0f docs/s), %s" % (
                coll.name, name, len(coll.docs), load_s, len(coll.docs) / load_s,
                "size %s" % fmt_bytes(r["size_bytes"])))
        E = res["engines"]
        if builds:
            b, c = builds
            E["loupe"]["inproc"] = b
            if c:
                E["fts5"]["inproc_c"] = c
        for e in started:
            q = quality(e, coll)
            E[e.name]["quality"] = q
            log("%s: %s nDCG@10 %.3f  MRR@10 %.3f  R@100 %.3f" % (
                coll.name, e.name, q["ndcg@10"], q["mrr@10"], q["recall@100"]))
        runners, refs = [], {}
        for e in started:
            if e.server_pid:
                runners.append(wire_runner(e, queries, args, workdir))
        for e in started:
            if e.name in INPROC:
                target = os.path.join(workdir, "loupe.seg") if e.name == "loupe" else e.path
                runners.append(inproc_runner(e.name, e, target, queries, args, workdir))
                if not e.server_pid:
                    refs[e.name] = reference_counts(e, queries)
        for (name, section), per_type in speed(runners, args).items():
            E[name]["speed" if section == "wire" else "speed_inproc"] = per_type
            log("%s: %s %s qps %s" % (coll.name, name, section, "  ".join(
                "%s %.0f" % (t, s["qps_median"]) for t, s in per_type.items())))
        check_counts(coll, E, refs)
        for e in started:
            if e.server is not None:
                e.server.check_alive()
    finally:
        for e in started:
            note = e.close()
            if note:
                complaints.append("%s on %s %s" % (e.name, coll.name, note))
    for c in complaints:
        print("bench-fulltext: warning: %s" % c, file=sys.stderr)
    res["shutdown_complaints"] = complaints
    return res


def check_counts(coll, E, refs):
    """The in-process drivers must find what the same engine finds the other
    way (loupe: its server over the wire; FTS5 and Xapian: Python): mean
    results per query of each type within 1%. A difference is noted in the
    report (the query files or a driver are wrong), not fatal."""
    for name, e in E.items():
        for t, s in e.get("speed_inproc", {}).items():
            ref = refs.get(name, {}).get(t)
            if ref is None and name == "loupe" and t in e.get("speed", {}):
                ref = e["speed"][t]["avg_results"]
            if ref is None:
                continue
            s["reference_avg_results"] = ref
            if abs(s["avg_results"] - ref) > 0.01 * max(ref, 1):
                msg = ("%s on %s, %s: the in-process driver finds %.2f results per query, the %s %.2f"
                       % (name, coll.name, t, s["avg_results"],
                          "server" if name == "loupe" else "Python path", ref))
                e["notes"].append(msg)
                print("bench-fulltext: warning: %s" % msg, file=sys.stderr)


# ------------------------------------------------------------ targets ---

# Engines with an in-process driver; their peers in-process are the
# others of these, loupe's peers over the wire are the other servers.
INPROC = ("loupe", "fts5", "xapian")
# Target keys, in report order, with their labels.
TARGET_KEYS = ([(key, "%s ≥ best peer" % label) for key, label, _, _ in metrics.METRICS]
               + [("qps/" + t, "%s queries/s in process ≥ %gx best of FTS5/Xapian" % (t, SPEED_TARGET))
                  for t in SPEED_TYPES]
               + [("wire_qps/" + t, "%s queries/s over the wire ≥ %gx Sphinx" % (t, SPEED_TARGET))
                  for t in SPEED_TYPES]
               + [("indexing", "indexing docs/s in process ≥ best of FTS5 (C driver)/Xapian"),
                  ("wire_indexing", "indexing docs/s over the wire ≥ Sphinx"),
                  ("size", "index size ≤ best peer")])


def inproc_rate(e):
    """A peer's in-process indexing docs/s for the target: its C driver's
    (fresh process, as loupe-inspect) when it has one, else its Python
    loader's."""
    return e["inproc_c"]["docs_per_s"] if "inproc_c" in e else e["docs_per_s"]


def _ratio_target(lo, best, peer, higher_better=True, paired=None):
    """loupe's number against the best peer's. paired: the ratios of runs
    made side by side (speed: the same round; in-process indexing: the
    same alternation), whose median then is the ratio judged: on a machine
    whose speed shifts between states for seconds at a time, a pair sees
    the same state far more often than two medians taken over all runs do.
    The ratio of the medians is kept as ratio_of_medians."""
    r = lo / peer if peer else None
    t = {"loupe": lo, "best_peer": best, "peer": peer, "ratio": round(r, 2) if r is not None else None}
    if paired:
        t["ratio_of_medians"] = t["ratio"]
        r = statistics.median(paired)
        t["ratio"] = round(r, 2)
        t["paired_ratios"] = [round(x, 3) for x in paired]
    t["met"] = None if r is None else (r >= 1 if higher_better else r <= 1)
    return t


def paired_round_ratios(lo, peer):
    """loupe's qps over the peer's, round by round (rounds both ran)."""
    pq = {r["round"]: r["qps"] for r in peer["rounds"]}
    return [r["qps"] / pq[r["round"]] for r in lo["rounds"] if pq.get(r["round"])]


def targets(results, names):
    """Per collection: loupe vs the best peer for each target (TARGET_KEYS);
    a target is left out when loupe or every peer lacks the numbers."""
    peers = [n for n in names if n != "loupe"]
    out = {}
    if "loupe" not in names or not peers:
        return out
    for cname, res in results.items():
        E = res["engines"]
        lo = E["loupe"]
        t = {}
        for key in QUALITY_KEYS:
            best = max(peers, key=lambda p: E[p]["quality"][key])
            t[key] = {"loupe": lo["quality"][key], "best_peer": best, "peer": E[best]["quality"][key],
                      "met": lo["quality"][key] >= E[best]["quality"][key]}
            # Is the difference more than the sample of queries can tell?
            d = metrics.paired_difference(lo["quality"]["per_query"][key], E[best]["quality"]["per_query"][key])
            t[key].update(mean_diff=round(d["mean_diff"], 4), ci95=[round(x, 4) for x in d["ci95"]],
                          p_value=round(d["p_value"], 4))
        for section, prefix in (("speed_inproc", "qps/"), ("speed", "wire_qps/")):
            for ty in SPEED_TYPES:
                have = [p for p in peers if ty in E[p].get(section, {})]
                if ty not in lo.get(section, {}) or not have:
                    continue
                best = max(have, key=lambda p: E[p][section][ty]["qps_median"])
                x = _ratio_target(lo[section][ty]["qps_median"], best, E[best][section][ty]["qps_median"],
                                  paired=paired_round_ratios(lo[section][ty], E[best][section][ty]))
                x["met"] = x["ratio"] >= SPEED_TARGET
                t[prefix + ty] = x
        local = [p for p in peers if p in INPROC]
        if local and "inproc" in lo:
            # Each peer as measured in loupe's conditions where it has a C
            # driver for it (FTS5: fts5b.c), else from Python (Xapian).
            best = max(local, key=lambda p: inproc_rate(E[p]))
            c = E[best].get("inproc_c")
            # The C driver's runs alternated with loupe's: pair them (time ratio).
            paired = [f / l for l, f in zip(lo["inproc"]["runs_s"], c["runs_s"])] if c else None
            t["indexing"] = _ratio_target(lo["inproc"]["docs_per_s"], best + (" (C)" if c else ""),
                                          inproc_rate(E[best]), paired=paired)
        servers = [p for p in peers if p not in INPROC]
        if servers:
            best = max(servers, key=lambda p: E[p]["docs_per_s"])
            t["wire_indexing"] = _ratio_target(lo["docs_per_s"], best, E[best]["docs_per_s"])
        sized = [p for p in peers if E[p]["size_bytes"]]
        lo_size = lo["inproc"]["size_bytes"] if "inproc" in lo else lo["size_bytes"]
        if sized and lo_size:
            best = min(sized, key=lambda p: E[p]["size_bytes"])
            t["size"] = _ratio_target(lo_size, best, E[best]["size_bytes"], higher_better=False)
        out[cname] = t
    return out


# ------------------------------------------------------------ report ---

TYPE_TITLES = {
    "term": "term (one word)", "and": "AND (2-3 words, all required)",
    "or": "OR (the bag-of-words queries)", "phrase": "phrase (2 adjacent words)",
    "prefix": "prefix (`pre*`)",
    "floor": "floor: `SELECT 1`, no search (servers only)",
}

INPROC_TEXT = [
    "**In process** (C/C++, no client): each engine's own library called from a small",
    "C/C++ loop in one process, no Python, no network, no SQL protocol: loupe by",
    "`loupe-inspect fts-bench` on the sealed segment `loupe-inspect fts-build` wrote",
    "(per query: MATCH parsed, planned, top k run, as the server does it, in an arena",
    "of its own), FTS5 by `bench/fulltext/fts5q.c` (one prepared statement, MATCH text",
    "bound per query, every row stepped), Xapian by `bench/fulltext/xapq.cc` (per query:",
    "words stemmed, the query built, Enquire + BM25Weight, `get_mset(0, k)`). Each",
    "number includes the engine's query parsing, analysis, planning and top-k retrieval,",
    "nothing else. CPU per query: the driver process's over the round (engine plus a",
    "loop of a few instructions).",
]
WIRE_C = [
    "**Over the wire**: the servers (loupe, Sphinx) timed by `bench/fulltext/ftq.c`, a",
    "C loop over one libmariadb connection (statements prepared as text beforehand,",
    "every row fetched): a TCP round trip, the MySQL protocol and SQL parsing are in",
    "every query, and the `floor` table shows the rate of a statement that searches",
    "nothing. CPU per query: the server process's, which leaves out the client.",
]
WIRE_PYMYSQL = [
    "**Over the wire**: the servers (loupe, Sphinx) timed through one pymysql connection",
    "from Python, round trip and row fetching included (the `floor` table shows what",
    "pymysql alone allows). CPU per query: the server process's.",
]
NO_PYTHON_SPEED = [
    "FTS5 and Xapian are not timed from Python any more: a Python call costs about as",
    "much as a cheap query, so those numbers measured the binding, and the in-process",
    "table now has both engines without it. Their quality, indexing and size still come",
    "from the Python path, which calls the same C/C++ libraries.",
]

SPHINX_RANKER_NOTE = [
    "What Sphinx's `ranker=bm25` computes (2.2.11, checked against its output): weight =",
    "1000 x (number of fields with a match, each field weight 1) + int(1000 x (0.5 + sum",
    "over matched keywords of tf / (tf + 1.2) x IDF)), IDF = log((N - n + 1) / n) scaled",
    "down (negative for words in more than half the documents). So a document matching",
    "in title and body outranks every document matching in one field, whatever the",
    "terms; within that, there is no document-length normalisation (b = 0), and integer",
    "weights tie often (ties go to the lower id). That is why Sphinx trails on quality.",
]


def fmt_bytes(n):
    if n is None:
        return "n/a"
    if n >= 1 << 20:
        return "%.1f MiB" % (n / (1 << 20))
    return "%.0f KiB" % (n / 1024)


def verdict(met):
    return "n/a" if met is None else ("met" if met else "**NOT met**")


def fmt_quality_diff(t):
    return "per query %+.3f, 95%% CI %+.3f..%+.3f, p %.2f" % (t["mean_diff"], t["ci95"][0], t["ci95"][1], t["p_value"])


def fmt_target(key, t):
    if key in QUALITY_KEYS:
        return "%.3f vs %s %.3f; %s" % (t["loupe"], t["best_peer"], t["peer"], fmt_quality_diff(t))
    return "%.2fx %s" % (t["ratio"], t["best_peer"])


def summary_lines(colls, tgt):
    """One line per target: met on how many collections, the worst case."""
    out = []
    for key, label in TARGET_KEYS:
        rows = [(c, tgt[c][key]) for c in colls if key in tgt[c] and tgt[c][key]["met"] is not None]
        if not rows:
            out.append("- %s: n/a" % label)
            continue
        ok = sum(1 for _, t in rows if t["met"])
        if key in QUALITY_KEYS:
            worst = min(rows, key=lambda ct: ct[1]["loupe"] - ct[1]["peer"])
        elif key == "size":     # smaller is better: the largest ratio is the worst
            worst = max(rows, key=lambda ct: ct[1]["ratio"])
        else:
            worst = min(rows, key=lambda ct: ct[1]["ratio"])
        out.append("- %s: %s (met on %d of %d collections; worst: %s, %s)" % (
            label, "met" if ok == len(rows) else "**NOT met**", ok, len(rows), worst[0],
            fmt_target(key, worst[1])))
    return out


def loadavg_range(results):
    la = [r["loadavg_1m"] for c in results.values() for e in c["engines"].values()
          for sec in ("speed", "speed_inproc") for s in e.get(sec, {}).values() for r in s["rounds"]]
    return (min(la), max(la)) if la else (0.0, 0.0)


def speed_tables(results, colls, names, section, types, tgt, prefix):
    """One table per query type: median queries/s (CPU µs per query) per
    engine that has the section, and loupe's ratio to the best peer."""
    L = []
    for t in types:
        have = [n for n in names if any(t in results[c]["engines"][n].get(section, {}) for c in colls)]
        if not have:
            continue
        ratio = "loupe" in have and len(have) > 1 and t != "floor"
        L += ["### %s" % TYPE_TITLES[t], "",
              "| collection | queries | " + " | ".join(have) + (" | loupe / best peer |" if ratio else " |"),
              "|---|---:|" + "---:|" * (len(have) + ratio)]
        for c in colls:
            E = results[c]["engines"]
            cells, nq = [], 0
            for n in have:
                s = E[n].get(section, {}).get(t)
                if s is None:
                    cells.append("–")
                    continue
                nq = max(nq, s["queries_in_list"])
                cell = "%.0f" % s["qps_median"]
                if t != "floor":
                    cell += " (%.0f µs)" % s["cpu_us_per_query"]
                cells.append(cell)
            row = "| %s | %d | %s |" % (c, nq, " | ".join(cells))
            if ratio:
                r = tgt.get(c, {}).get(prefix + t)
                row += " %s |" % ("%.2fx" % r["ratio"] if r else "–")
            L.append(row)
        L.append("")
    return L


def write_report(out_dir, meta, results, tgt):
    """fulltext.json: everything; fulltext.md: the tables and the setup."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "fulltext.json"), "w") as f:
        json.dump({"meta": meta, "targets": tgt, "collections": results}, f, indent=1)
        f.write("\n")

    names = meta["settings"]["engines"]
    local = [n for n in names if n in INPROC]
    servers = [n for n in names if n not in INPROC or n == "loupe"]
    colls = list(results)
    with_loupe = bool(tgt)
    L = ["# Full-text benchmark: loupe, SQLite FTS5, Xapian, Sphinx", "",
         "Every IR collection in `../shared/data`, indexed by every engine in one run with",
         "English stemming and no stop words, title and text as two fields, BM25 ranking.",
         "Quality: each query's words (`\\w+`, lower-cased) ORed, top %d, scored against the" % QUALITY_K,
         "collection's judgments. Speed: top %d, one client; %d interleaved round(s), each a" % (
             SPEED_K, meta["settings"]["rounds"]),
         "run of whole passes over the query list lasting at least %g s; the median round"
         % meta["settings"]["seconds"],
         "counts; `fulltext.json` has every round (the machine is shared, rounds vary).",
         "Speed is measured two ways, and each of loupe's speed targets (issue 3) is checked",
         "against the peers measured the same way:", ""] + INPROC_TEXT + [""] + (
             WIRE_C if meta["settings"]["client"] == "c" else WIRE_PYMYSQL) + [""] + NO_PYTHON_SPEED + [""]
    if not with_loupe:
        L += ["**loupe was not part of this run** (`--engines %s`): the tables show the peers."
              % ",".join(names), ""]
    else:
        L += ["## Targets", ""] + summary_lines(colls, tgt) + [
            "", "Per collection: the table at the end. For each quality metric it also gives loupe's mean",
            "per-query difference from the best peer, a 95% bootstrap interval of it and the",
            "p-value of a paired sign-flip randomisation test (`metrics.paired_difference`):",
            "an interval that holds 0 and a large p mean these queries cannot tell the two",
            "apart. `bench/fulltext/variants.py` scores a ranking setting (k1, b, stemmer,",
            "length, idf, ...) on every collection and metric against these peers offline,",
            "with a Python copy of loupe's ranking that reproduces its numbers here.", ""]

    # Quality.
    L += ["## Quality", "", "nDCG@10 (best per collection in bold):", "",
          "| collection | docs | judged queries | " + " | ".join(names) + " |",
          "|---|---:|---:|" + "---:|" * len(names)]
    for c in colls:
        E = results[c]["engines"]
        best = max(E[n]["quality"]["ndcg@10"] for n in names)
        cells = [("**%.3f**" if E[n]["quality"]["ndcg@10"] == best else "%.3f") % E[n]["quality"]["ndcg@10"]
                 for n in names]
        L.append("| %s | %d | %d | %s |" % (c, results[c]["docs"], results[c]["judged"], " | ".join(cells)))
    L.append("")
    for c in colls:
        E = results[c]["engines"]
        L += ["### %s" % c, "",
              "| engine | nDCG@10 | MRR@10 | Recall@100 | results/query |", "|---|---:|---:|---:|---:|"]
        top = {key: max(E[n]["quality"][key] for n in names) for key in QUALITY_KEYS}
        for n in names:
            q = E[n]["quality"]
            cells = [("**%.3f**" if q[key] == top[key] else "%.3f") % q[key] for key in QUALITY_KEYS]
            L.append("| %s | %s | %.1f |" % (n, " | ".join(cells), q["avg_results"]))
        L.append("")

    # Speed, in process.
    if local:
        L += ["## Speed in process (C/C++, no client): queries/s", "",
              "Median queries/s over the rounds, top %d, one thread; in parentheses the CPU time" % SPEED_K,
              "per query of the driver process. The query lists (derived from each collection's",
              "queries, at most %d per type; see \"Queries\" below) are the same for every engine."
              % meta["settings"]["cap"],
              "loupe searches the segment `loupe-inspect fts-build` wrote (the same documents,",
              "analyzer and BM25F ranking as the server; one sealed segment, mmap'd); FTS5 and",
              "Xapian the database files their Python loaders built (see Engines). All three",
              "files are in the page cache: nothing is read from disk.", ""]
        L += speed_tables(results, colls, local, "speed_inproc", SPEED_TYPES, tgt, "qps/")
        L += ["Each driver's mean results per query is checked against the same engine's other",
              "path (loupe: its server over the wire; FTS5, Xapian: one untimed Python pass), in",
              "`fulltext.json` as `avg_results` and `reference_avg_results`; a difference would be",
              "listed under \"Notes from this run\". Across engines the counts differ a little:",
              "Xapian's phrases are on unstemmed words, its prefixes expand unstemmed terms and",
              "FTS5's prefixes match Porter stems. FTS5 runs with SQLite's default page cache",
              "and no mmap, as from Python; a 200 MB cache with mmap made no difference.", ""]

    # Speed, over the wire.
    if servers:
        L += ["## Speed over the wire (MySQL protocol, servers): queries/s", "",
              "Median queries/s over the rounds, top %d, one connection; in parentheses the" % SPEED_K,
              "server process's CPU time per query (`/proc/<pid>/stat`), client and round trip",
              "left out. loupe answers from its RAM segment (what the INSERTs built), Sphinx from",
              "the disk chunk its `FLUSH RAMCHUNK` wrote.", ""]
        L += speed_tables(results, colls, servers, "speed", list(SPEED_TYPES) + ["floor"], tgt, "wire_qps/")

    # Indexing and size.
    L += ["## Indexing and size", "",
          "Documents/s, wall time. **In process**, loupe and FTS5 in the same conditions: each a",
          "C program started afresh, which reads and parses docs.jsonl first, untimed, then",
          "times the build up to an index that is durable on disk; the two alternate, at least",
          "%d runs each and more until loupe's builds add up to %g s (at most %d: a small"
          % (BUILD_RUNS, BUILD_SECONDS, BUILD_RUNS_MAX),
          "collection gets dozens), median (`runs_s` in the JSON has every run, `process_wall_s` the whole",
          "process). loupe is `loupe-inspect fts-build`: analysis (on one thread per CPU, as",
          "the server's work pool analyses a large INSERT; on one, with no other thread",
          "started, when every INSERT holds under 64 KiB of text), the in-memory index, the sealed",
          "segment written and fsynced. FTS5 (C) is `bench/fulltext/fts5b.c`: BEGIN, one",
          "INSERT per document, optimize, COMMIT (SQLite's defaults: rollback journal,",
          "synchronous=FULL). The target compares the C numbers: measured as loupe's are.",
          "FTS5 (Python) is the same statements from this benchmark's long-lived process",
          "(`executemany`, one sample), shown for reference; it is above or below the C",
          "number from one collection and run to the next. Xapian: one `replace_document` per",
          "document from Python, commit, compact. **Over the wire**: loupe and Sphinx from",
          "the first multi-row INSERT to the index searchable (Sphinx's `FLUSH RAMCHUNK`",
          "included; loupe keeps the index in RAM). Size: the index on disk, no text stored:",
          "loupe's the segment file, FTS5's the database file, Xapian's the compacted folder,",
          "Sphinx's the disk chunk.", ""]
    cols = []
    if "loupe" in names:
        cols += [("loupe in process", lambda E: E["loupe"].get("inproc", {}).get("docs_per_s"))]
    for n in local:
        if n == "loupe":
            continue
        if any("inproc_c" in results[c]["engines"][n] for c in colls):
            cols += [("%s (C)" % n, (lambda n: lambda E: E[n].get("inproc_c", {}).get("docs_per_s"))(n))]
        cols += [("%s (Python)" % n, (lambda n: lambda E: E[n]["docs_per_s"])(n))]
    if "loupe" in names:
        cols += [("loupe over the wire", lambda E: E["loupe"]["docs_per_s"])]
    cols += [(n, (lambda n: lambda E: E[n]["docs_per_s"])(n)) for n in servers if n != "loupe"]
    L += ["| collection | docs | " + " | ".join("%s docs/s" % h for h, _ in cols) + " |",
          "|---|---:|" + "---:|" * len(cols)]
    for c in colls:
        E = results[c]["engines"]
        L.append("| %s | %d | %s |" % (c, results[c]["docs"], " | ".join(
            "–" if f(E) is None else "%.0f" % f(E) for _, f in cols)))
    L.append("")
    sizes = [("loupe segment", lambda E: E["loupe"].get("inproc", {}).get("size_bytes"))] if "loupe" in names else []
    sizes += [(n, (lambda n: lambda E: E[n]["size_bytes"])(n)) for n in names if n != "loupe"]
    L += ["| collection | " + " | ".join("%s size" % h for h, _ in sizes) + " |", "|---|" + "---:|" * len(sizes)]
    for c in colls:
        E = results[c]["engines"]
        L.append("| %s | %s |" % (c, " | ".join(fmt_bytes(f(E)) for _, f in sizes)))
    L.append("")

    # Targets per collection.
    if with_loupe:
        keys = [(k, lab) for k, lab in TARGET_KEYS if any(k in tgt[c] for c in colls)]
        L += ["## Targets per collection", "",
              "loupe / best peer, the best peer being the one with the highest median. Speed:",
              "the median over rounds of loupe's rate over that peer's in the same round (the two",
              "ran seconds apart, so on a machine whose speed shifts for seconds at a time they",
              "mostly see the same state); in-process indexing: the same over the alternated",
              "builds; `ratio_of_medians` in the JSON is the ratio of the two medians. Size:",
              "loupe's segment / smallest peer.", "",
              "| target | " + " | ".join(colls) + " |", "|---|" + "---|" * len(colls)]
        for k, lab in keys:
            cells = []
            for c in colls:
                x = tgt[c].get(k)
                if x is None or x["met"] is None:
                    cells.append("n/a")
                else:
                    cells.append("%s (%s)" % (verdict(x["met"]), fmt_target(k, x)))
            L.append("| %s | %s |" % (lab, " | ".join(cells)))
        L.append("")

    # Setup.
    m = meta["machine"]
    L += ["## Setup", "",
          "- Command: `%s`" % meta["command"],
          "- Date: %s; the whole run took %.0f s" % (meta["date"], meta["wall_s"]),
          "- Machine: %s, %d cores, %.1f GiB, kernel %s; engines and client share it; the 1-minute "
          "load average at the end of a speed round ranged %.1f–%.1f (the benchmark itself adds 1-2)"
          % (m["cpu"], m["cores"], m["memory_gib"], m["kernel"], *loadavg_range(results)),
          "- Versions: %s" % "; ".join("%s %s" % kv for kv in meta["versions"].items()),
          "- Settings: %d round(s), at least %g s a round, at most %d queries per type, seed %d"
          % (meta["settings"]["rounds"], meta["settings"]["seconds"], meta["settings"]["cap"],
             meta["settings"]["seed"]),
          "- Drivers: built by run.py into `<build-dir>/bench` with `-O2 -g -Wall -Wextra -Werror`"
          " (ftq.c, fts5q.c, fts5b.c with gcc, xapq.cc with g++); loupe-inspect is the build's own"
          " (CMake build type of `--build-dir`)",
          "", "### Engines", "",
          "All with English stemming and no stop words.", ""]
    for n in names:
        L.append("- **%s** (%s)" % (n, results[colls[0]]["engines"][n]["transport"]))
        L += ["  - %s" % s for s in eng.SETTINGS[n]]
    L.append("")
    if "sphinx" in names:
        L += SPHINX_RANKER_NOTE + [""]
    notes = sorted({note for c in colls for n in names for note in results[c]["engines"][n].get("notes", [])})
    if notes:
        L += ["Notes from this run:", ""] + ["- %s" % x for x in notes] + [""]
    L += ["### Queries", "", "Query words: " + workload.__doc__.split("Query words: ", 1)[1].strip(), ""]
    L += ["### Collections", ""]
    for c in colls:
        r = results[c]
        L.append("- %s: %d documents, %d queries (%d judged), %d judgment rows; speed queries: %s.%s%s"
                 % (c, r["docs"], r["queries"], r["judged"], r["qrels_rows"],
                    ", ".join("%s %d" % kv for kv in r["speed_queries"].items()),
                    " Data: %s." % workload.DATA_NOTES[c] if c in workload.DATA_NOTES else "",
                    " " + "; ".join(r["notes"]) + "." if r["notes"] else ""))
    L += ["", "Raw numbers (every round; per-query nDCG@10, MRR@10 and Recall@100 for every",
          "engine, to find where one loses): `fulltext.json` next to this file.", ""]
    with open(os.path.join(out_dir, "fulltext.md"), "w") as f:
        f.write("\n".join(L))


# ------------------------------------------------------------ main ---

DRIVERS = {
    # name: (source, compiler, pkg-config package, what to install)
    "ftq": ("ftq.c", "gcc", "libmariadb", "libmariadb-dev"),
    "fts5q": ("fts5q.c", "gcc", "sqlite3", "libsqlite3-dev"),
    "fts5b": ("fts5b.c", "gcc", "sqlite3 jansson", "libsqlite3-dev"),
    "xapq": ("xapq.cc", "g++", "xapian-core", "libxapian-dev"),
}


def build_drivers(build_dir, wanted):
    """Compiles the wanted C/C++ drivers into <build-dir>/bench; {name: path}."""
    out_dir = os.path.join(build_dir, "bench")
    os.makedirs(out_dir, exist_ok=True)
    out = {}
    for name in wanted:
        src, cc, pkg, deb = DRIVERS[name]
        flags = subprocess.run(["pkg-config", "--cflags", "--libs"] + pkg.split(), capture_output=True, text=True)
        if flags.returncode != 0:
            raise BenchError("pkg-config %s failed (is %s installed? `scripts/install-deps.sh bench`): %s"
                             % (pkg, deb, flags.stderr.strip()))
        exe = os.path.join(out_dir, name)
        cmd = ([cc, "-O2", "-g", "-Wall", "-Wextra", "-Werror", os.path.join(HERE, src), "-o", exe]
               + flags.stdout.split())
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise BenchError("building %s failed:\n%s" % (name, res.stderr))
        out[name] = exe
    return out


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", default=os.path.join(os.path.dirname(REPO), "shared", "data"),
                   help="where the collections are (default ../shared/data)")
    p.add_argument("--collections", help="comma-separated (default: every folder with docs.jsonl, "
                   "queries.jsonl and qrels.tsv)")
    p.add_argument("--engines", default=",".join(eng.ORDER),
                   help="comma-separated, of %s (default all)" % ", ".join(eng.ORDER))
    # 5 short rounds rather than 3 long ones: on a shared machine a
    # disturbed round is common, and the median of 5 shrugs off two.
    p.add_argument("--seconds", type=float, default=0.6,
                   help="minimum seconds of whole passes per round (default 0.6)")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    p.add_argument("--cap", type=int, default=200, help="queries per speed type (default 200)")
    p.add_argument("--seed", type=int, default=42, help="speed query sample seed (default 42)")
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                   help="where loupe is (default build/)")
    p.add_argument("--loupe-bin", help="loupe binary (default <build-dir>/loupe)")
    p.add_argument("--loupe-inspect", help="loupe-inspect binary, which builds and times loupe's "
                   "segment in process (default <build-dir>/loupe-inspect)")
    p.add_argument("--searchd", default="/usr/bin/searchd", help="searchd binary")
    p.add_argument("--client", choices=("c", "pymysql"), default="c",
                   help="what times the servers' queries: c = ftq.c (libmariadb, built into "
                   "<build-dir>/bench), pymysql = from Python like the other engines (default c)")
    p.add_argument("--out-dir", help="where fulltext.md/json go (default docs/benchmarks, "
                   "or <build-dir>/bench with --quick)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 1 round of 0.2 s, 30 queries per type; report not written to docs/")
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.seconds, args.cap = 1, 0.2, 30
    args.loupe_bin = args.loupe_bin or os.path.join(args.build_dir, "loupe")
    args.loupe_inspect = args.loupe_inspect or os.path.join(args.build_dir, "loupe-inspect")
    args.out_dir = args.out_dir or (os.path.join(args.build_dir, "bench") if args.quick
                                    else os.path.join(REPO, "docs", "benchmarks"))
    args.engines = [s.strip() for s in args.engines.split(",") if s.strip()]
    if not args.engines or not set(args.engines) <= set(eng.ORDER) or len(set(args.engines)) != len(args.engines):
        p.error("--engines takes a list of %s" % ", ".join(eng.ORDER))
    args.engines = [n for n in eng.ORDER if n in args.engines]
    if not os.path.isdir(args.data_dir):
        p.error("no data folder %s (--data-dir)" % args.data_dir)
    found = workload.discover(args.data_dir)
    if args.collections:
        args.collections = [s.strip() for s in args.collections.split(",") if s.strip()]
        unknown = [c for c in args.collections if c not in found]
        if unknown:
            p.error("not a collection in %s: %s (have %s)" % (args.data_dir, ", ".join(unknown), ", ".join(found)))
    else:
        args.collections = found
    if not args.collections:
        p.error("no collections in %s" % args.data_dir)
    if args.rounds < 1 or args.seconds <= 0 or args.cap < 1:
        p.error("--rounds, --seconds and --cap must be positive")
    return args


def main(argv):
    args = parse_args(argv)
    install_signal_handlers()
    if "loupe" in args.engines and not os.access(args.loupe_bin, os.X_OK):
        raise BenchError("no loupe binary at %s (build it, or pass --loupe-bin)" % args.loupe_bin)
    if "loupe" in args.engines and not os.access(args.loupe_inspect, os.X_OK):
        raise BenchError("no loupe-inspect at %s (build it, or pass --loupe-inspect)" % args.loupe_inspect)
    if "sphinx" in args.engines and not os.access(args.searchd, os.X_OK):
        raise BenchError("no searchd at %s (scripts/install-deps.sh bench)" % args.searchd)
    if "xapian" in args.engines and importlib.util.find_spec("xapian") is None:
        raise BenchError("python3-xapian is missing (scripts/install-deps.sh bench)")

    wanted = ["ftq"] if args.client == "c" and {"loupe", "sphinx"} & set(args.engines) else []
    wanted += [d for n, d in (("fts5", "fts5q"), ("xapian", "xapq")) if n in args.engines]
    if {"loupe", "fts5"} <= set(args.engines):
        wanted.append("fts5b")
    args.drivers = build_drivers(args.build_dir, wanted)
    t_start = time.monotonic()
    results = {}
    tmp = tempfile.mkdtemp(prefix="loupe-bench-ft-")
    try:
        for cname in args.collections:
            try:
                coll = workload.load_collection(cname, os.path.join(args.data_dir, cname))
            except (OSError, ValueError) as e:
                raise BenchError("collection %s: %s" % (cname, e))
            log("%s: %d docs, %d queries (%d judged)" % (cname, len(coll.docs), len(coll.queries),
                                                          coll.judged))
            results[cname] = bench_collection(coll, args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    versions = {n: results[args.collections[0]]["engines"][n]["version"] for n in args.engines}
    versions.update(git=git_revision(), python=platform.python_version(), pymysql=package_version("python3-pymysql"))
    for name in args.drivers:
        deb = DRIVERS[name][3]
        versions[deb.replace("-", "_") + "_pkg"] = package_version(deb)
    if "sphinx" in args.engines:
        versions["sphinxsearch_pkg"] = package_version("sphinxsearch")
    if "xapian" in args.engines:
        versions["python3_xapian_pkg"] = package_version("python3-xapian")
    meta = {
        "command": command_line(__file__, argv),
        "date": utc_now(),
        "machine": machine(),
        "versions": versions,
        "settings": {"engines": args.engines, "collections": args.collections, "client": args.client,
                     "rounds": args.rounds,
                     "seconds": args.seconds, "cap": args.cap, "seed": args.seed,
                     "quality_k": QUALITY_K, "speed_k": SPEED_K},
        "wall_s": round(time.monotonic() - t_start, 1),
    }
    write_report(args.out_dir, meta, results, targets(results, args.engines))
    log("wrote %s (%.0f s)" % (os.path.join(args.out_dir, "fulltext.md"), meta["wall_s"]))
    return 0


if __name__ == "__main__":
    run_cli(main, "bench-fulltext")
