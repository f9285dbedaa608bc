#!/usr/bin/python3
"""The vector benchmark's driver for the Python peers: python3-hnswlib and
python3-faiss (IndexHNSWFlat), Debian's builds (baseline SSE only).

    peers.py hnswlib-py|faiss --base B.fvecs --queries Q.fvecs
             --metric l2|cosine --M 16 --ef-construction 200 --seed S

Speaks the protocol of driver.h (the C/C++ drivers' loop), so run.py
drives every engine alike: one JSON line per command on stdout; `query`
times one query at a time from this process (a Python call per query, a
few microseconds each, are inside the numbers: these are the peers as a
Python user meets them).

- hnswlib-py: Index(space='l2' | 'ip'), init_index(max_elements = every
  row, ef_construction, M, random_seed), add_items(rows, row numbers,
  num_threads=T); set_ef(ef) and knn_query(q, k, num_threads=1).
- faiss: IndexHNSWFlat(dims, M, METRIC_L2 | METRIC_INNER_PRODUCT),
  hnsw.efConstruction; faiss.omp_set_num_threads(T) around add, 1 for
  queries; hnsw.efSearch = ef, search(q, k). faiss's IP is a similarity
  (larger is closer); only the order matters here.
Cosine: rows and queries normalised up front, inner product space.
index_bytes: hnswlib-py has no accounting and hides its layout, so it is
computed as hnswlib_native.cc does, from the per-node level-0 size and
the rows (upper levels and the label map estimated from M); faiss: the
flat codes plus its neighbour, offset and level arrays.
"""

import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from data import read_vecs  # noqa: E402


def proc_mib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class HnswlibPy:
    def __init__(self, opts):
        import hnswlib
        self.mod, self.opts, self.index = hnswlib, opts, None
        self.version = "python3-hnswlib (pybind11 binding of hnswlib)"

    def drop(self):
        self.index = None

    def build(self, base, threads):
        o = self.opts
        self.index = self.mod.Index(space="l2" if o["metric"] == "l2" else "ip", dim=base.shape[1])
        self.index.init_index(max_elements=base.shape[0], ef_construction=o["efc"], M=o["M"],
                              random_seed=o["seed"])
        self.index.add_items(base, np.arange(base.shape[0]), num_threads=threads)
        return self.layout_bytes(base.shape[0], base.shape[1])

    def layout_bytes(self, n, dims):
        # hnswlib's layout (see hnswlib_native.cc): level 0 per row, upper
        # levels for the expected 1/(M-1) of rows per level, per-row
        # pointer/level/mutex, the update locks and the label map.
        M = self.opts["M"]
        level0 = (2 * M * 4 + 4) + dims * 4 + 8
        upper = n / (M - 1) * (M * 4 + 4) + n / M
        return int(n * level0 + upper + n * (8 + 4 + 40) + 65536 * 40 + n * 32 + n * 8)

    def search(self, q, k, ef):
        self.index.set_ef(ef)
        labels, _ = self.index.knn_query(q, k=k, num_threads=1)
        return labels[0]


class Faiss:
    def __init__(self, opts):
        import faiss
        self.mod, self.opts, self.index = faiss, opts, None
        self.version = "python3-faiss %s" % faiss.__version__

    def drop(self):
        self.index = None

    def build(self, base, threads):
        f, o = self.mod, self.opts
        metric = f.METRIC_L2 if o["metric"] == "l2" else f.METRIC_INNER_PRODUCT
        self.index = f.IndexHNSWFlat(base.shape[1], o["M"], metric)
        self.index.hnsw.efConstruction = o["efc"]
        f.omp_set_num_threads(threads)
        self.index.add(base)
        f.omp_set_num_threads(1)
        h = self.index.hnsw
        return int(base.nbytes + h.neighbors.size() * 4 + h.offsets.size() * 8 + h.levels.size() * 4
                   + h.assign_probas.size() * 8 + h.cum_nneighbor_per_level.size() * 4)

    def search(self, q, k, ef):
        self.index.hnsw.efSearch = ef
        _, labels = self.index.search(q, k)
        return labels[0]


ENGINES = {"hnswlib-py": HnswlibPy, "faiss": Faiss}


def parse(argv):
    if not argv or argv[0] not in ENGINES:
        raise SystemExit("usage: peers.py %s --base B --queries Q [--metric l2|cosine] [--M 16] "
                         "[--ef-construction 200] [--seed 42]" % "|".join(ENGINES))
    opts = {"engine": argv[0], "metric": "l2", "M": 16, "efc": 200, "seed": 42}
    names = {"--base": "base", "--queries": "queries", "--metric": "metric", "--M": "M",
             "--ef-construction": "efc", "--seed": "seed"}
    rest = argv[1:]
    if len(rest) % 2:
        raise SystemExit("peers.py: options come in pairs")
    for flag, value in zip(rest[::2], rest[1::2]):
        if flag not in names:
            raise SystemExit("peers.py: unknown option %s" % flag)
        opts[names[flag]] = value if names[flag] in ("base", "queries", "metric") else int(value)
    if "base" not in opts or "queries" not in opts or opts["metric"] not in ("l2", "cosine"):
        raise SystemExit("peers.py: --base and --queries are required; --metric is l2 or cosine")
    return opts


def unit(a):
    return np.ascontiguousarray(a / np.linalg.norm(a, axis=1, keepdims=True), dtype=np.float32)


def query(eng, queries, k, ef, seconds, out):
    rows = np.full((len(queries), k), -1, dtype=np.int32)
    qs = [queries[i:i + 1] for i in range(len(queries))]   # sliced once, outside the clock
    for q in qs[:100]:
        eng.search(q, k, ef)
    done = 0
    t0 = time.perf_counter()
    first = True
    while True:
        for i, q in enumerate(qs):
            r = eng.search(q, k, ef)
            if first:
                rows[i, :len(r)] = r
        done += len(qs)
        first = False
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            break
    rows.tofile(out)
    return {"queries": done, "seconds": round(elapsed, 6), "qps": round(done / elapsed, 1)}


def main(argv):
    opts = parse(argv)
    base = read_vecs(opts["base"], np.float32)
    queries = read_vecs(opts["queries"], np.float32)
    if opts["metric"] == "cosine":
        base, queries = unit(base), unit(queries)
    eng = ENGINES[opts["engine"]](opts)
    say({"ready": True, "n": base.shape[0], "dims": base.shape[1], "queries": len(queries),
         "version": eng.version, "rss_mib": proc_mib("VmRSS:")})
    built = False
    for line in sys.stdin:
        w = line.split()
        try:
            if w[:1] == ["build"] and len(w) == 2:
                eng.drop()
                built = False
                rss0 = proc_mib("VmRSS:")
                t0, cpu0 = time.perf_counter(), time.process_time()
                nbytes = eng.build(base, int(w[1]))
                dt, cpu = time.perf_counter() - t0, time.process_time() - cpu0
                built = True
                say({"threads": int(w[1]), "build_s": round(dt, 3), "build_cpu_s": round(cpu, 3), "index_bytes": nbytes,
                     "rss_before_mib": rss0, "rss_after_mib": proc_mib("VmRSS:")})
            elif w[:1] == ["query"] and len(w) == 5:
                if not built:
                    say({"error": "no index: build first"})
                    continue
                say(query(eng, queries, int(w[1]), int(w[2]), float(w[3]), w[4]))
            elif w == ["stats"]:
                say({"peak_rss_mib": proc_mib("VmHWM:"), "rss_mib": proc_mib("VmRSS:")})
            elif w == ["quit"]:
                return 0
            else:
                say({"error": "unknown command"})
        except (RuntimeError, ValueError) as e:
            say({"error": "%s: %s" % (type(e).__name__, e)})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
