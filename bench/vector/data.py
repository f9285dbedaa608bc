"""Vector data sets for the vector benchmark: generated and real, cached.

Two kinds, both ending as files the C/C++ drivers read (TEXMEX layout:
fvecs = per row an int32 d then d float32; ivecs the same with int32):

- Generated (issue 4, Benchmark (a)): a Gaussian mixture of `centres`
  centres drawn N(0, 1) per component, each row a centre picked uniformly
  plus N(0, noise^2) noise per component; float32; for cosine every row is
  normalised to unit length. The base rows and the queries come from one
  stream of the same mixture (queries are the rows after the base, so
  never base rows). Everything follows from the parameters and the seed.
- Real (Benchmark (b)): every folder of ../shared/data/vectors with
  base.fvecs and query.fvecs, read in place; groundtruth.ivecs is used
  when the folder has one, else computed and cached. The metric is L2
  unless the README's first line names cosine/angular or inner product.

Ground truth: exact top-GT_K by brute force (numpy, chunked matmul in
float32 to pick a few more candidates than needed, then re-ranked in
float64, ties to the lower row), written as gt.ivecs. Generated sets and
computed ground truth are cached under <cache>/<key>/, where the key holds
every parameter, so a changed parameter never reads a stale file; a file
is written under a temporary name and renamed, so an interrupted run
leaves nothing half-written.
"""

import json
import os

import numpy as np

GT_K = 100          # ground truth depth (recall@10 and recall@100)
CHUNK = 256         # queries per brute-force matmul block
METRICS = ("l2", "cosine")


class Dataset:
    """A base set, its queries and exact ground truth, as files and arrays."""

    def __init__(self, name, metric, base_path, query_path, gt_path, source):
        self.name, self.metric, self.source = name, metric, source
        self.base_path, self.query_path, self.gt_path = base_path, query_path, gt_path
        self.base = read_vecs(base_path, np.float32)
        self.queries = read_vecs(query_path, np.float32)
        self.gt = read_vecs(gt_path, np.int32)
        if self.base.shape[1] != self.queries.shape[1]:
            raise ValueError("%s: base is %d-d, queries %d-d" % (name, self.base.shape[1], self.queries.shape[1]))
        if self.gt.shape[0] != self.queries.shape[0] or self.gt.shape[1] < 10:
            raise ValueError("%s: ground truth is %s for %d queries" % (name, self.gt.shape, len(self.queries)))

    @property
    def n(self):
        return self.base.shape[0]

    @property
    def dims(self):
        return self.base.shape[1]

    def describe(self):
        return {"name": self.name, "metric": self.metric, "n": self.n, "dims": self.dims,
                "queries": len(self.queries), "gt_k": int(self.gt.shape[1]), "source": self.source,
                "base": self.base_path, "query": self.query_path, "groundtruth": self.gt_path}


# ------------------------------------------------------------ files ---

def read_vecs(path, dtype):
    """An fvecs/ivecs file as an (n, d) array (every row must have the same d)."""
    raw = np.fromfile(path, dtype=np.int32)
    if raw.size == 0:
        raise ValueError("%s is empty" % path)
    d = int(raw[0])
    if d <= 0 or raw.size % (d + 1) != 0:
        raise ValueError("%s: not an fvecs/ivecs file (d=%d, %d words)" % (path, d, raw.size))
    rows = raw.reshape(-1, d + 1)
    if not np.all(rows[:, 0] == d):
        raise ValueError("%s: rows of different lengths" % path)
    return np.ascontiguousarray(rows[:, 1:]).view(dtype)


def write_vecs(path, a):
    """Writes an (n, d) float32 or int32 array as fvecs/ivecs, atomically."""
    a = np.ascontiguousarray(a)
    out = np.empty((a.shape[0], a.shape[1] + 1), dtype=np.int32)
    out[:, 0] = a.shape[1]
    out[:, 1:] = a.view(np.int32)
    tmp = path + ".tmp"
    out.tofile(tmp)
    os.replace(tmp, path)


# ------------------------------------------------------------ ground truth ---

def distances(metric, q, x):
    """Exact distances (float64) of each query row to each x row, as loupe
    defines them: L2 squared; cosine 1 - dot (rows already unit length)."""
    q = q.astype(np.float64)
    x = x.astype(np.float64)
    if metric == "l2":
        return (q * q).sum(1)[:, None] - 2 * q @ x.T + (x * x).sum(1)[None, :]
    return 1.0 - q @ x.T


def ground_truth(metric, base, queries, k=GT_K):
    """Exact top-k row ids per query, nearest first, ties to the lower id."""
    k = min(k, base.shape[0])
    pick = min(base.shape[0], k + 32)   # float32 candidates, re-ranked in float64
    norms = (base.astype(np.float32) ** 2).sum(1) if metric == "l2" else None
    out = np.empty((queries.shape[0], k), dtype=np.int32)
    for s in range(0, queries.shape[0], CHUNK):
        q = queries[s:s + CHUNK]
        dot = q @ base.T
        approx = norms[None, :] - 2 * dot if metric == "l2" else -dot
        cand = np.argpartition(approx, pick - 1, axis=1)[:, :pick]
        for j in range(q.shape[0]):
            c = np.sort(cand[j])
            d = distances(metric, q[j:j + 1], base[c])[0]
            order = np.lexsort((c, d))[:k]      # by distance, then id
            out[s + j] = c[order]
    return out


# ------------------------------------------------------------ generated ---

def generated(cache_dir, name, n, dims, metric, nq, centres=1000, noise=0.3, seed=42):
    """The Gaussian-mixture set for these parameters, generated on first use."""
    if metric not in METRICS:
        raise ValueError("unknown metric %r" % metric)
    key = "gmm-n%d-d%d-%s-q%d-c%d-s%g-seed%d-gt%d" % (n, dims, metric, nq, centres, noise, seed, GT_K)
    folder = os.path.join(cache_dir, key)
    paths = [os.path.join(folder, f) for f in ("base.fvecs", "query.fvecs", "gt.ivecs")]
    if not all(os.path.exists(p) for p in paths):
        os.makedirs(folder, exist_ok=True)
        rng = np.random.default_rng(seed)
        centre = rng.standard_normal((centres, dims), dtype=np.float32)
        label = rng.integers(0, centres, size=n + nq)
        rows = np.empty((n + nq, dims), dtype=np.float32)
        for s in range(0, n + nq, 8192):   # in blocks: bounded temporary memory
            e = min(n + nq, s + 8192)
            rows[s:e] = centre[label[s:e]] + np.float32(noise) * rng.standard_normal((e - s, dims), dtype=np.float32)
        if metric == "cosine":
            rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        base, queries = rows[:n], rows[n:]
        write_vecs(paths[0], base)
        write_vecs(paths[1], queries)
        write_vecs(paths[2], ground_truth(metric, base, queries))
        with open(os.path.join(folder, "params.json"), "w") as f:
            json.dump({"n": n, "dims": dims, "metric": metric, "queries": nq, "centres": centres,
                       "noise": noise, "seed": seed, "gt_k": GT_K}, f)
    source = ("Gaussian mixture: %d centres N(0,1), noise sd %g, seed %d%s; %d queries from the same "
              "mixture (not base rows)" % (centres, noise, seed, ", rows normalised" if metric == "cosine" else "", nq))
    return Dataset(name, metric, paths[0], paths[1], paths[2], source)


# ------------------------------------------------------------ real ---

def readme_metric(folder):
    """The metric a real set's README names on its first line; L2 by default."""
    try:
        with open(os.path.join(folder, "README.md")) as f:
            first = f.readline().lower()
    except OSError:
        return "l2"
    if "cosine" in first or "angular" in first:
        return "cosine"
    return "l2"


def real_sets(vectors_dir, cache_dir):
    """Every folder of vectors_dir with base.fvecs and query.fvecs."""
    out = []
    if not os.path.isdir(vectors_dir):
        return out
    for name in sorted(os.listdir(vectors_dir)):
        folder = os.path.join(vectors_dir, name)
        base, query = os.path.join(folder, "base.fvecs"), os.path.join(folder, "query.fvecs")
        if not (os.path.isfile(base) and os.path.isfile(query)):
            continue
        metric = readme_metric(folder)
        gt = os.path.join(folder, "groundtruth.ivecs")
        source = "real: %s" % folder
        if os.path.isfile(gt):
            source += " (its own queries and ground truth)"
        else:
            # Computed once per (folder, metric); cached.
            st = os.stat(base)
            key = "real-%s-%s-%d-%d" % (name, metric, st.st_size, int(st.st_mtime))
            os.makedirs(os.path.join(cache_dir, key), exist_ok=True)
            gt = os.path.join(cache_dir, key, "gt.ivecs")
            if not os.path.exists(gt):
                b, q = read_vecs(base, np.float32), read_vecs(query, np.float32)
                if metric == "cosine":
                    b = b / np.linalg.norm(b, axis=1, keepdims=True)
                    q = q / np.linalg.norm(q, axis=1, keepdims=True)
                write_vecs(gt, ground_truth(metric, b, q))
            source += " (its own queries; ground truth computed here)"
        out.append(Dataset(name, metric, base, query, gt, source))
    return out


# ------------------------------------------------------------ recall ---

def scored_rows(ds):
    """The base rows and queries distances are computed on: for cosine,
    unit length (real sets may not be; the engines normalise), computed
    once per data set and kept on it."""
    if ds.metric != "cosine":
        return ds.base, ds.queries
    if getattr(ds, "_unit", None) is None:
        ds._unit = (ds.base / np.linalg.norm(ds.base, axis=1, keepdims=True),
                    ds.queries / np.linalg.norm(ds.queries, axis=1, keepdims=True))
    return ds._unit


def recall(ds, ids, k):
    """Mean recall@k of result rows ids (nq x >=k, -1 = no result) against
    the exact top k. A result counts when it is a distinct row whose exact
    distance is at most the k-th true distance (plus float slack), so rows
    tied with the k-th neighbour count as hits (sift5k has such ties)."""
    ids = ids[:, :k]
    base, q = scored_rows(ds)
    total = 0
    for i in range(ids.shape[0]):
        got = np.unique(ids[i][ids[i] >= 0])
        if got.size == 0:
            continue
        dk = distances(ds.metric, q[i:i + 1], base[ds.gt[i, k - 1:k]])[0, 0]
        d = distances(ds.metric, q[i:i + 1], base[got])[0]
        total += min(k, int((d <= dk + 1e-5 * max(1.0, abs(dk))).sum()))
    return total / (k * ids.shape[0])
