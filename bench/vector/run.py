#!/usr/bin/python3
"""Vector benchmark: loupe's HNSW against hnswlib (native), python3-hnswlib
and faiss, same data, same machine, one run (issue 4, Benchmark).

`make bench-vector` runs this with Debian's python3. Steps:

 1. Build the drivers into <build-dir>/bench: loupe_vec.c (gcc -O2, linked
    with <build-dir>/liblp_vec.a and liblp_util.a) and hnswlib_native.cc
    (g++ -O3 -march=native, Debian's header-only libhnswlib-dev). The
    Python peers run from peers.py. When loupe's library is missing or
    its driver does not build, the run goes on with the peers and the
    report says why loupe is missing.
 2. Data (data.py): 100,000 x 128 L2 and 100,000 x 384 cosine Gaussian
    mixtures (1,000 centres, noise 0.3, fixed seed, 1,000 queries, exact
    top-100 by brute force), generated once and cached under --cache-dir;
    then every real set in ../shared/data/vectors.
 3. Per data set, every engine is a process of its own (the protocol is
    in driver.h), all started up front and holding the data, so the
    query measurements can interleave:
    - builds, one engine at a time (the others idle): every engine with 1
      thread, then every engine with 2 threads; build seconds, the index
      memory (the library's own accounting, or computed from its layout)
      and the growth of resident memory over the 1-thread build;
    - queries on the 2-thread index, one thread, one query at a time,
      k = 10: --rounds rounds; in each, for each ef, each engine runs
      whole passes over the queries for at least --seconds; the engine
      that goes first rotates per round; queries/s is the median over
      rounds, recall@10 comes from the first round's results (data.py's
      recall: ties with the k-th neighbour count);
    - recall@100 at ef 100 and 200 (k = 100), one round;
    - peak resident memory (VmHWM) of each process, which includes the
      data set it loaded.
 4. queries/s at recall@10 >= 0.90 / 0.95 / 0.99: the fastest ef whose
    recall reaches it. Targets (loupe against native hnswlib, per set):
    queries/s >= 1.3x at 0.95 and at 0.99, build time <= with 1 and with 2
    threads, index memory <= (resident growth, measured alike for both).
 5. docs/benchmarks/vector.md and vector.json (with --quick, into
    <build-dir>/bench): tables, targets, command, date, machine, load,
    versions.

Every driver process is started with PR_SET_PDEATHSIG and killed on every
exit path (Ctrl-C and SIGTERM included); the temporary folder is removed.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from common import (run_cli, REPO, BenchError, _die_with_parent, command_line, git_revision,  # noqa: E402
                    install_signal_handlers, machine, package_version, utc_now)
import data  # noqa: E402

ENGINES = ("loupe", "hnswlib", "hnswlib-py", "faiss")
EFS = (10, 20, 40, 80, 160, 320)
EFS_QUICK = (10, 40, 160)
EF_R100 = (100, 200)
THRESHOLDS = (0.90, 0.95, 0.99)
QPS_TARGET = 1.3
M, EF_CONSTRUCTION, SEED = 16, 200, 42
THREADS = (1, 2)
ENGINE_NOTES = {
    "loupe": "loupe's library (src/vec/hnsw.h) from `bench/vector/loupe_vec.c`: vec_hnsw_new (capacity = every row, "
             "so no growth while building), vec_hnsw_add from T pthreads (ids map back to rows), "
             "vec_hnsw_search(k, ef) with no filter; VEC_L2 / VEC_COSINE (the library normalises). Index memory: "
             "vec_hnsw_memory (vectors, neighbour lists, locks).",
    "hnswlib": "Debian's libhnswlib-dev (header-only) in `bench/vector/hnswlib_native.cc`, compiled -O3 -march=native "
               "(its AVX-512 distance kernels): HierarchicalNSW(max_elements = every row), addPoint from T std::threads, "
               "setEf + searchKnn; L2Space, or InnerProductSpace on normalised rows for cosine. Index memory computed "
               "from its layout: level-0 block, upper-level blocks, per-node arrays and mutexes, the label map.",
    "hnswlib-py": "python3-hnswlib (Debian: built for baseline SSE) from `bench/vector/peers.py`: add_items(num_threads=T), "
                  "set_ef + knn_query(one row, num_threads=1); space 'l2' or 'ip' on normalised rows. A Python call "
                  "per query is in the timing. Index memory estimated from hnswlib's layout (the binding exposes none).",
    "faiss": "python3-faiss IndexHNSWFlat (Debian: baseline SSE) from `bench/vector/peers.py`: METRIC_L2, or "
             "METRIC_INNER_PRODUCT on normalised rows for cosine; omp_set_num_threads(T) for add, 1 for search; "
             "hnsw.efSearch = ef, search(one row, k). A Python call per query is in the timing. Index memory: codes + "
             "neighbour, offset and level arrays.",
}


def log(msg):
    print("bench-vector: %s" % msg, flush=True)


# ------------------------------------------------------------ drivers ---

def build_drivers(build_dir):
    """Compiles loupe_vec and hnswlib_native into <build-dir>/bench.
    Returns ({engine: argv prefix}, {engine: why it is missing})."""
    out_dir = os.path.join(build_dir, "bench")
    os.makedirs(out_dir, exist_ok=True)
    argv, missing = {}, {}
    libs = [os.path.join(build_dir, "liblp_vec.a"), os.path.join(build_dir, "liblp_util.a")]
    exe = os.path.join(out_dir, "loupe_vec")
    if not all(os.path.exists(p) for p in libs):
        missing["loupe"] = "no %s (build the lp_vec target first)" % " / ".join(p for p in libs if not os.path.exists(p))
    else:
        res = subprocess.run(["gcc", "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(REPO, "src"),
                              os.path.join(HERE, "loupe_vec.c"), "-o", exe] + libs + ["-lpthread", "-lm"],
                             capture_output=True, text=True)
        if res.returncode != 0:
            missing["loupe"] = "loupe_vec.c did not build against the library:\n" + res.stderr.strip()[-3000:]
        else:
            argv["loupe"] = [exe]
    exe = os.path.join(out_dir, "hnswlib_native")
    if not os.path.exists("/usr/include/hnswlib/hnswlib.h"):
        raise BenchError("libhnswlib-dev is missing (scripts/install-deps.sh bench)")
    res = subprocess.run(["g++", "-O3", "-march=native", "-g", "-Wall", "-Wextra", "-Werror",
                          os.path.join(HERE, "hnswlib_native.cc"), "-o", exe, "-lpthread"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise BenchError("building hnswlib_native failed:\n%s" % res.stderr)
    argv["hnswlib"] = [exe]
    for name, mod, deb in (("hnswlib-py", "hnswlib", "python3-hnswlib"), ("faiss", "faiss", "python3-faiss")):
        chk = subprocess.run([sys.executable, "-c", "import %s" % mod], capture_output=True, text=True)
        if chk.returncode != 0:
            raise BenchError("%s is missing (scripts/install-deps.sh bench): %s" % (deb, chk.stderr.strip()[-300:]))
        argv[name] = [sys.executable, os.path.join(HERE, "peers.py"), name]
    return argv, missing


class Driver:
    """One engine's driver process on one data set (protocol: driver.h)."""

    def __init__(self, name, argv, ds, workdir):
        self.name = name
        self.err_path = os.path.join(workdir, "%s-%s.stderr" % (name, ds.name))
        self._err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(
            argv + ["--base", ds.base_path, "--queries", ds.query_path, "--metric", ds.metric,
                    "--M", str(M), "--ef-construction", str(EF_CONSTRUCTION), "--seed", str(SEED)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True,
            preexec_fn=_die_with_parent)
        try:
            self.ready = self._reply()
        except (BenchError, ValueError):
            self.stop()
            raise

    def _reply(self):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            raise BenchError("%s driver exited (status %s); stderr tail:\n%s"
                             % (self.name, self.proc.returncode, self.stderr_tail()))
        r = json.loads(line)
        if "error" in r:
            raise BenchError("%s: %s" % (self.name, r["error"]))
        return r

    def cmd(self, line):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass    # _reply reports the exit
        return self._reply()

    def stderr_tail(self, n=20):
        self._err.flush()
        try:
            with open(self.err_path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._err.close()


# ------------------------------------------------------------ measure ---

def qps_at(efs, threshold):
    """The fastest ef whose recall@10 reaches threshold: (qps, ef) or None."""
    ok = [(e["qps"], e["ef"]) for e in efs if e["recall10"] >= threshold]
    return max(ok) if ok else None


def bench_dataset(ds, names, argv, args, workdir, turn):
    """Every engine on one data set; {engine: result or {"error": ...}}."""
    res = {n: {} for n in names}
    drivers, loads = {}, []
    order = names[turn % len(names):] + names[:turn % len(names)]

    def fail(n, e):
        res[n] = {"error": str(e)}
        log("%s on %s failed: %s" % (n, ds.name, e))
        d = drivers.pop(n, None)
        if d is not None:
            d.stop()

    def safe(n, f):
        if n not in drivers:
            return None
        try:
            return f(drivers[n])
        except (BenchError, ValueError, OSError) as e:
            fail(n, e)
            return None

    try:
        for n in order:
            try:
                drivers[n] = Driver(n, argv[n], ds, workdir)
                res[n]["version"] = drivers[n].ready["version"]
                res[n]["data_rss_mib"] = drivers[n].ready["rss_mib"]
            except (BenchError, ValueError, OSError) as e:
                fail(n, e)
        # Builds: one engine at a time, so each has the machine (what is left of it).
        for t in THREADS:
            for n in order:
                r = safe(n, lambda d: d.cmd("build %d" % t))
                if r is not None:
                    res[n]["build_%dt_s" % t] = r["build_s"]
                    res[n]["build_%dt_cpu_s" % t] = r["build_cpu_s"]
                    if t == 1:
                        res[n]["index_bytes"] = r["index_bytes"]
                        res[n]["rss_growth_mib"] = round(r["rss_after_mib"] - r["rss_before_mib"], 1)
                    log("%s %s: built with %d thread(s) in %.1f s" % (ds.name, n, t, r["build_s"]))
                    loads.append(os.getloadavg()[0])
        # Queries, k = 10, interleaved: rounds x ef x engines.
        runs = {n: {ef: [] for ef in args.efs} for n in names}   # queries/s per round
        rec10 = {n: {} for n in names}                             # recall@10 of round 1
        exact = {n: {} for n in names}                             # loupe: share answered by exact scan
        for rnd in range(args.rounds):
            rot = order[rnd % len(order):] + order[:rnd % len(order)]
            for ef in args.efs:
                for n in rot:
                    out = os.path.join(workdir, "rows-%s-%s-%d.i32" % (ds.name, n, ef))
                    r = safe(n, lambda d: d.cmd("query 10 %d %g %s" % (ef, args.seconds, out)))
                    if r is None:
                        continue
                    runs[n][ef].append(r["qps"])
                    if "exact_share" in r:
                        exact[n][ef] = max(exact[n].get(ef, 0.0), r["exact_share"])
                    if rnd == 0:
                        rows = np.fromfile(out, dtype=np.int32).reshape(len(ds.queries), 10)
                        rec10[n][ef] = data.recall(ds, rows, 10)
            loads.append(os.getloadavg()[0])
            log("%s: query round %d of %d done" % (ds.name, rnd + 1, args.rounds))
        for n in list(drivers):
            efs = []
            for ef in args.efs:
                efs.append({"ef": ef, "recall10": round(rec10[n][ef], 4),
                            "qps": round(statistics.median(runs[n][ef]), 1), "qps_rounds": runs[n][ef]})
                if ef in exact[n]:
                    efs[-1]["exact_share"] = exact[n][ef]
            res[n]["efs"] = efs
            for th in THRESHOLDS:
                best = qps_at(efs, th)
                res[n]["qps_at_%.2f" % th] = None if best is None else {"qps": best[0], "ef": best[1]}
        # Recall@100.
        for ef in EF_R100:
            for n in order:
                out = os.path.join(workdir, "rows100-%s-%s-%d.i32" % (ds.name, n, ef))
                r = safe(n, lambda d: d.cmd("query 100 %d %g %s" % (ef, args.seconds, out)))
                if r is not None:
                    rows = np.fromfile(out, dtype=np.int32).reshape(len(ds.queries), 100)
                    res[n].setdefault("recall100", {})[str(ef)] = {
                        "recall100": round(data.recall(ds, rows, 100), 4), "qps": r["qps"]}
                    if "exact_share" in r:
                        res[n]["recall100"][str(ef)]["exact_share"] = r["exact_share"]
        for n in order:
            r = safe(n, lambda d: d.cmd("stats"))
            if r is not None:
                res[n]["peak_rss_mib"] = r["peak_rss_mib"]
    finally:
        for d in drivers.values():
            d.stop()
    return res, loads


# ------------------------------------------------------------ targets ---

def targets(results, names):
    """Per data set, loupe against native hnswlib: {key: {...}} where met is
    True/False, or None when it cannot be judged (an engine missing, or
    hnswlib never reaching the recall)."""
    out = {}
    if "loupe" not in names:
        return out
    for ds, R in results.items():
        L, H = R["engines"].get("loupe", {}), R["engines"].get("hnswlib", {})
        t = {}
        if "error" in L or "error" in H or not L or not H:
            out[ds] = t
            continue
        for th in (0.95, 0.99):
            k = "qps_at_%.2f" % th
            if H.get(k) is None:
                t[k] = {"met": None, "why": "hnswlib never reaches recall@10 %.2f" % th}
            elif L.get(k) is None:
                t[k] = {"met": False, "ratio": 0.0, "why": "loupe never reaches recall@10 %.2f" % th}
            else:
                ratio = L[k]["qps"] / H[k]["qps"]
                t[k] = {"met": ratio >= QPS_TARGET, "ratio": round(ratio, 3)}
                share = next(e.get("exact_share", 0) for e in L["efs"] if e["ef"] == L[k]["ef"])
                if share:
                    t[k]["why"] = "loupe's number is its exact scan (%.0f%% of searches), not the graph" % (100 * share)
        for th in THREADS:
            k = "build_%dt_s" % th
            ratio = L[k] / H[k]
            t[k] = {"met": ratio <= 1.0, "ratio": round(ratio, 3),
                    "cpu_ratio": round(L["build_%dt_cpu_s" % th] / max(H["build_%dt_cpu_s" % th], 1e-3), 3)}
        ratio = L["rss_growth_mib"] / max(H["rss_growth_mib"], 0.1)
        t["memory"] = {"met": ratio <= 1.0, "ratio": round(ratio, 3),
                       "accounted_ratio": round(L["index_bytes"] / H["index_bytes"], 3)}
        out[ds] = t
    return out


TARGET_KEYS = [  # key, label, short label, unit of the ratio
    ("qps_at_0.95", "queries/s at recall@10 >= 0.95 >= 1.3x hnswlib (native)", "q/s at 0.95", "x"),
    ("qps_at_0.99", "queries/s at recall@10 >= 0.99 >= 1.3x hnswlib (native)", "q/s at 0.99", "x"),
    ("build_1t_s", "build time, 1 thread <= hnswlib (native)", "build 1 thread", "x its time"),
    ("build_2t_s", "build time, 2 threads <= hnswlib (native)", "build 2 threads", "x its time"),
    ("memory", "index memory <= hnswlib (native) (resident growth)", "memory", "x its memory"),
]


# ------------------------------------------------------------ report ---

def verdict(met):
    return "met" if met else "**NOT met**"


def fmt_qps(x):
    return "–" if x is None else "%.0f (ef %d)" % (x["qps"], x["ef"])


def write_report(out_dir, meta, results, tgt, names, missing):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "vector.json"), "w") as f:
        json.dump({"meta": meta, "missing": missing, "targets": tgt, "results": results}, f, indent=1)
    sets = list(results)
    L = ["# Vector benchmark: loupe HNSW, hnswlib (native), python3-hnswlib, faiss", "",
         "Issue 4's Benchmark: every engine on every data set in one run, M = %d, efConstruction = %d."
         % (M, EF_CONSTRUCTION),
         "Each engine runs as its own process (`bench/vector/run.py` drives them; the C/C++ drivers",
         "and peers.py share one protocol, `bench/vector/driver.h`). Builds run one engine at a time;",
         "query speed is one thread, one query at a time, k = 10, the median of %d interleaved round(s)"
         % meta["settings"]["rounds"],
         "(each engine's whole passes over the queries for at least %g s per ef); recall@10 counts a"
         % meta["settings"]["seconds"],
         "result as a hit when its exact distance is at most the 10th true distance (ties count).",
         "Queries run on the index built with 2 threads. The two Python peers pay a Python call per",
         "query, and Debian builds them for baseline SSE: they are the weaker peers the issue expects.", ""]
    if missing:
        L += ["**Missing engines:** " + "; ".join("%s: %s" % (n, w.splitlines()[0]) for n, w in missing.items())
              + " (the full reason is in vector.json).", ""]
    L += ["## Targets", ""]
    if "loupe" in names:
        for k, label, _, unit in TARGET_KEYS:
            cells = [(d, tgt.get(d, {}).get(k)) for d in sets]
            judged = [(d, x) for d, x in cells if x is not None and x["met"] is not None]
            if not judged:
                L.append("- %s: n/a (not measurable on any set)" % label)
                continue
            good = sum(1 for _, x in judged if x["met"])
            # Worst: lowest speed ratio, highest time/memory ratio.
            worst = (min if k.startswith("qps") else max)(judged, key=lambda dx: dx[1]["ratio"])
            why = sorted({"%s: %s" % (d, x["why"]) for d, x in judged if x.get("why")})
            L.append("- %s: %s (met on %d of %d sets; worst: %s, %.2f%s%s)%s" % (
                label, verdict(good == len(judged)), good, len(judged), worst[0], worst[1]["ratio"], unit,
                "; CPU time %.2fx" % worst[1]["cpu_ratio"] if "cpu_ratio" in worst[1] else "",
                "; note " + "; ".join(why) if why else ""))
    else:
        L.append("- not judged: loupe did not run (see Missing engines above)")
    L.append("")
    L += ["## Summary", "",
          "Build: wall seconds, and in parentheses the process's CPU seconds (all threads; under a loaded",
          "machine the wall time grows and the CPU time much less). Index: MiB by the library's own accounting (loupe), or computed from the layout",
          "(the others; see Setup), and in parentheses the growth of resident memory over the 1-thread",
          "build. Peak: the process's peak resident memory, data set included (the Python peers also",
          "carry the interpreter and numpy). Queries/s at a recall: the fastest ef reaching it.", ""]
    for d in sets:
        R = results[d]
        L += ["### %s (%d x %d, %s, %d queries)" % (d, R["n"], R["dims"], R["metric"], R["queries"]), "",
              "| engine | build 1 thr s (CPU) | build 2 thr s (CPU) | index MiB | peak RSS MiB | q/s @ r≥0.90 | q/s @ r≥0.95 "
              "| q/s @ r≥0.99 | recall@100 ef 100 | ef 200 |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n in names:
            E = R["engines"].get(n, {})
            if not E or "error" in E:
                L.append("| %s | failed: %s |" % (n, (E.get("error") or missing.get(n, "missing")).splitlines()[0][:200]))
                continue
            r100 = E.get("recall100", {})
            L.append("| %s | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.0f | %s | %s | %s | %s | %s |" % (
                n, E["build_1t_s"], E["build_1t_cpu_s"], E["build_2t_s"], E["build_2t_cpu_s"],
                E["index_bytes"] / 2**20, E["rss_growth_mib"],
                E.get("peak_rss_mib", 0), *(fmt_qps(E.get("qps_at_%.2f" % th)) for th in THRESHOLDS),
                *("%.4f" % r100[str(ef)]["recall100"] if str(ef) in r100 else "–" for ef in EF_R100)))
        L.append("")
        ok = [n for n in names if "efs" in R["engines"].get(n, {})]
        L += ["recall@10 / queries/s per ef:", "",
              "| ef | " + " | ".join(ok) + " |", "|---:|" + "---:|" * len(ok)]
        for i, ef in enumerate(meta["settings"]["efs"]):
            L.append("| %d | %s |" % (ef, " | ".join(
                "%.4f / %.0f" % (R["engines"][n]["efs"][i]["recall10"], R["engines"][n]["efs"][i]["qps"]) for n in ok)))
        L.append("")
        if "loupe" in names and tgt.get(d):
            cells = []
            for k, _, short, unit in TARGET_KEYS:
                x = tgt[d].get(k)
                if x is None:
                    continue
                cells.append("%s: %s" % (short, "n/a (%s)" % x["why"] if x["met"] is None else "%s, %.2f%s%s%s" % (
                    verdict(x["met"]), x["ratio"], unit,
                    " (CPU time %.2fx)" % x["cpu_ratio"] if "cpu_ratio" in x else "",
                    " (%s)" % x["why"] if x.get("why") else "")))
            L += ["Targets on %s: %s." % (d, "; ".join(cells)), ""]
        E = R["engines"].get("loupe", {})
        ex = ["ef %d%s (%.0f%%)" % (e["ef"], k, 100 * e["exact_share"]) for k, e in
              [("", e) for e in E.get("efs", [])] + [(", k 100", dict(v, ef=int(ef))) for ef, v in E.get("recall100", {}).items()]
              if e.get("exact_share")]
        if ex:
            L += ["loupe answered some searches on %s by its exact scan, not the graph (its cost model picks" % d,
                  "the scan when n^2 <= exactFactor x ef x n, i.e. small sets at large ef), so these numbers",
                  "are not the graph's: %s." % ", ".join(ex), ""]
    m = meta["machine"]
    loads = meta["load_average"]
    L += ["## Setup", "",
          "- Command: `%s`" % meta["command"],
          "- Date: %s; the whole run took %.0f s" % (meta["date"], meta["wall_s"]),
          "- Machine: %s, %d cores, %.1f GiB, kernel %s; shared with other engineers' builds: the 1-minute load "
          "average after each build and query round ranged %.1f–%.1f (the benchmark itself adds 1, 2 during "
          "2-thread builds)" % (m["cpu"], m["cores"], m["memory_gib"], m["kernel"], min(loads or [0]), max(loads or [0])),
          "- Versions: %s" % "; ".join("%s %s" % kv for kv in meta["versions"].items()),
          "- Settings: M %d, efConstruction %d, level seed %d; ef %s; recall@100 at ef %s; %d round(s) of at least %g s"
          % (M, EF_CONSTRUCTION, SEED, ", ".join(map(str, meta["settings"]["efs"])), ", ".join(map(str, EF_R100)),
             meta["settings"]["rounds"], meta["settings"]["seconds"]),
          "- Drivers: built by run.py into `<build-dir>/bench`: loupe_vec.c with `gcc -O2 -g -Wall -Wextra -Werror` "
          "against the build's liblp_vec.a (CMake build type of `--build-dir`), hnswlib_native.cc with "
          "`g++ -O3 -march=native -g -Wall -Wextra -Werror`", "", "### Engines", ""]
    for n in names:
        L.append("- **%s**: %s" % (n, ENGINE_NOTES[n]))
    L += ["", "### Data sets", ""]
    for d in sets:
        L.append("- %s: %s" % (d, results[d]["source"]))
    L += ["", "Raw numbers (every round's queries/s, resident memory before and after each build):",
          "`vector.json` next to this file.", ""]
    with open(os.path.join(out_dir, "vector.md"), "w") as f:
        f.write("\n".join(L))


# ------------------------------------------------------------ main ---

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                   help="where liblp_vec.a and liblp_util.a are (default build/)")
    p.add_argument("--cache-dir", default=os.path.join(os.path.expanduser("~"), ".cache", "loupe-bench", "vector"),
                   help="generated data sets and ground truth (default ~/.cache/loupe-bench/vector)")
    p.add_argument("--vectors-dir", default=os.path.join(os.path.dirname(REPO), "shared", "data", "vectors"),
                   help="real vector sets (default ../shared/data/vectors)")
    p.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, of %s" % ", ".join(ENGINES))
    p.add_argument("--datasets", help="comma-separated names (default: every set)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved query rounds (default 3)")
    p.add_argument("--seconds", type=float, default=0.3, help="minimum seconds per query measurement (default 0.3)")
    p.add_argument("--n", type=int, default=100000, help="rows of the generated sets (default 100000)")
    p.add_argument("--nq", type=int, default=1000, help="queries of the generated sets (default 1000)")
    p.add_argument("--out-dir", help="where vector.md/json go (default docs/benchmarks, or <build-dir>/bench with --quick)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 20,000-row sets, 200 queries, ef 10/40/160, 1 round of 0.1 s; report not in docs/")
    args = p.parse_args(argv)
    args.efs = EFS
    if args.quick:
        args.n, args.nq, args.rounds, args.seconds, args.efs = 20000, 200, 1, 0.1, EFS_QUICK
    args.out_dir = args.out_dir or (os.path.join(args.build_dir, "bench") if args.quick
                                    else os.path.join(REPO, "docs", "benchmarks"))
    args.engines = [s.strip() for s in args.engines.split(",") if s.strip()]
    if not args.engines or not set(args.engines) <= set(ENGINES):
        p.error("--engines takes a list of %s" % ", ".join(ENGINES))
    args.engines = [n for n in ENGINES if n in args.engines]
    if args.rounds < 1 or args.seconds <= 0 or args.n < 100 or args.nq < 1:
        p.error("--rounds, --seconds, --n and --nq must be positive (--n at least 100)")
    return args


def datasets(args):
    log("data: generating or reading the cached sets under %s" % args.cache_dir)
    sets = [data.generated(args.cache_dir, "gmm-%dk-128-l2" % (args.n // 1000), args.n, 128, "l2", args.nq, seed=SEED),
            data.generated(args.cache_dir, "gmm-%dk-384-cosine" % (args.n // 1000), args.n, 384, "cosine", args.nq,
                           seed=SEED + 1)]
    sets += data.real_sets(args.vectors_dir, args.cache_dir)
    if args.datasets:
        want = [s.strip() for s in args.datasets.split(",") if s.strip()]
        unknown = [w for w in want if w not in [s.name for s in sets]]
        if unknown:
            raise BenchError("unknown data set(s) %s (have %s)" % (", ".join(unknown), ", ".join(s.name for s in sets)))
        sets = [s for s in sets if s.name in want]
    return sets


def main(argv):
    args = parse_args(argv)
    install_signal_handlers()
    t_start = time.monotonic()
    argv_of, missing = build_drivers(args.build_dir)
    missing = {n: w for n, w in missing.items() if n in args.engines}
    for n, why in missing.items():
        log("%s is missing: %s" % (n, why.splitlines()[0]))
    names = [n for n in args.engines if n in argv_of]
    sets = datasets(args)
    results, loads = {}, []
    tmp = tempfile.mkdtemp(prefix="loupe-bench-vec-")
    try:
        for i, ds in enumerate(sets):
            log("%s: %d x %d %s, %d queries" % (ds.name, ds.n, ds.dims, ds.metric, len(ds.queries)))
            eng, ld = bench_dataset(ds, names, argv_of, args, tmp, i)
            loads += ld
            results[ds.name] = dict(ds.describe(), engines=eng)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    versions = {}
    for n in names:
        v = [results[d]["engines"][n].get("version") for d in results if "version" in results[d]["engines"][n]]
        versions[n] = v[0] if v else "?"
    versions.update(git=git_revision(), python=platform.python_version(), numpy=np.__version__,
                    gcc=subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True).stdout.strip())
    for deb in ("libhnswlib-dev", "python3-hnswlib", "python3-faiss", "python3-numpy"):
        versions[deb.replace("-", "_") + "_pkg"] = package_version(deb)
    meta = {"command": command_line(__file__, argv), "date": utc_now(), "machine": machine(), "versions": versions,
            "settings": {"engines": names, "datasets": list(results), "efs": list(args.efs), "ef_recall100": list(EF_R100),
                         "rounds": args.rounds, "seconds": args.seconds, "M": M, "ef_construction": EF_CONSTRUCTION,
                         "seed": SEED, "threads": list(THREADS), "quick": args.quick},
            "load_average": [round(x, 2) for x in loads],
            "wall_s": round(time.monotonic() - t_start, 1)}
    write_report(args.out_dir, meta, results, targets(results, names), names, missing)
    log("wrote %s (%.0f s)" % (os.path.join(args.out_dir, "vector.md"), meta["wall_s"]))
    return 0


if __name__ == "__main__":
    run_cli(main, "bench-vector", "drivers stopped, temporary files removed")
