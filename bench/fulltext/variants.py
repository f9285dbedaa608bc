#!/usr/bin/python3
"""Ranking variants, scored offline against the peers of the last run.

    bench/fulltext/variants.py [--collections a,b] [VARIANT ...]

A Python copy of loupe's default ranking for the benchmark's table (title
and body, stem_en, BM25F with k1 = 1.2, b = 0.75, field weights 1, query
words counted as often as the query repeats them, top 100 bag-of-words OR),
with knobs, so that a change to the ranking can be judged on every
collection and every quality metric before it is built. It answers "would
this setting be >= the best peer everywhere?" without running the engines:
the peers' numbers come from docs/benchmarks/fulltext.json (make
bench-fulltext writes it).

A VARIANT is a comma-separated list of knob=value ("" is the default):
    k1=1.2  b=0.75      BM25's saturation and length normalisation
    bt=0.75             b for the title field only (default: b)
    wt=1                the title field's weight
    stem=english        a Snowball algorithm (english = loupe's stem_en;
                        porter = Porter's original, FTS5's and Sphinx's)
    length=field        field: each field normalised by its own length
                        (BM25F, loupe); row: by the document's (FTS5)
    idf=rsj             rsj: log((N - n + .5) / (n + .5)) floored at 1e-6
                        (loupe, FTS5); xapian: below a ratio of 2, the
                        ratio halved plus 1; lucene: log(1 + ratio)
    minnorm=0           length / average floored here (Xapian's 0.5)
    k3=none             query-word saturation (k3 + 1) qtf / (k3 + qtf);
                        none: qtf itself
    delta=0             BM25+: delta added to each matching word's part
    lmix=0              length normalised by (1 - lmix) * the field's
                        length + lmix * the document's (each over its
                        average): between length=field (0) and row (1)
    prox=0              term proximity (Buettcher, Clarke and Lushman,
                        2006), this much of it added: per field, adjacent
                        occurrences of two different query words d apart
                        add idf(other) / d^2 to each word's accumulator,
                        saturated as a tf; the top `rerank` of the BM25
                        ranking are rescored
    rerank=300          how many documents prox rescores
    fb=0                pseudo-relevance feedback (RM3-like), this weight
                        of the expanded query: the top `fbdocs` of the
                        first ranking give each of their words the sum of
                        doc score * tf / doc length; the `fbterms` best
                        (by that, or by that * idf with fbsel=1) join the
                        query, mixed (1 - fb) * qtf / |query| + fb * share;
                        the query is then ranked again
    fbdocs=10  fbterms=10  fbsel=0
    fbdf=1              words in more than this fraction of documents are
                        never added
    fbmode=mix          mix: as above, the original words reweighted too;
                        add: the original query keeps its qtf weights and
                        only words not in it are added, each with
                        fb * |query| * its share among them (score =
                        BM25F(q) + fb * |q| * BM25F(expansion))
    fbw=score           a feedback document's weight: score (its first
                        score, as above); exp: exp((score - the top
                        score) / fbtemp) (RM3's P(q|d) when the model is
                        lmdir and fbtemp is 1)
    fbtemp=1
    fbmin=1             a word joins only if it occurs in at least this
                        many of the feedback documents
    fbqmax=0            no feedback for queries of more than this many
                        words (0: no limit)
    model=bm25          bm25: loupe's BM25F (the knobs above); lmdir:
                        query likelihood with Dirichlet smoothing, qtf *
                        log(1 + tf / (mu P(w|C))) per word plus |q| *
                        log(mu / (dl + mu)) (Zhai and Lafferty, 2001);
                        dph: DFR's parameter-free DPH (Amati, 2006, as
                        Terrier computes it); pl2, inl2: DFR's PL2F and
                        InL2F (Macdonald et al., 2005): each field's tf
                        normalised by log2(1 + c avg length / length),
                        then summed with the field weights. lmdir and dph
                        see a document as one field, title tf times wt
                        (k1, b, bt, length, lmix, idf, minnorm, delta, k3
                        and prox are BM25's only; exact is not for them)
    mu=1000             lmdir's Dirichlet prior
    c=1                 pl2's and inl2's length normalisation
    fuse=0              with fb: the final ranking fuses the first ranking
                        and the feedback one by reciprocal rank fusion
                        (Cormack et al., 2009), this constant k: each
                        document scores the sum over the two rankings of
                        weight / (k + its rank), weights 1 - fusew and
                        fusew (0: the feedback ranking alone)
    fusew=0.5
    coord=0             coordination: each score times (m / |q|)^coord, m
                        the distinct query words the document holds
                        (Lucene's classic coord factor at 1)
    exact=0             exact forms (index_exact_words with Manticore's
                        expand_keywords): each query word also matches its
                        unstemmed form, as a term of its own whose BM25F
                        score, times this, is added
    ens=0               an ensemble of two rankings (CombSUM): the
                        variant's score (all the knobs above) plus ens
                        times a second, plain BM25 score of the same
                        query from another prepared index (stemmer
                        ensstem, length normalisation enslength, ensk1,
                        ensb; field weights 1, rsj idf, none of the other
                        knobs), combined as ensmode says (0: no second
                        ranking)
    ensstem=porter      the second ranking's stemmer (as stem)
    enslength=row       the second ranking's length normalisation (as
                        length; porter and row are FTS5's bm25())
    ensk1=1.2           the second ranking's k1 and b (FTS5's constants)
    ensb=0.75
    ensmode=sum         sum: score + ens * second score; max: each score
                        first divided by its query's top score (so both
                        sides reach 1); minmax: each mapped onto [0, 1]
                        between its query's lowest and top scores (a
                        document the side does not match adds 0); rrf:
                        reciprocal rank fusion, 1 / (ensk + rank) + ens /
                        (ensk + rank in the second ranking), over every
                        document each side matches
    ensk=60             rrf's constant

Example: variants.py "" "stem=porter" "k1=1.0,b=0.5"

For each variant it prints nDCG@10, MRR@10 and Recall@100 per collection,
a '*' where the value is >= the best peer's, and the count of such cells.
The default variant must reproduce loupe's own numbers from fulltext.json
(to 0.001): the script says so, or says where it does not, and then exits
1, as the copy has drifted from the engine (words are split at non-letter,
non-digit characters and lower-cased; loupe's NFKC folding and its CJK
handling are not copied, and none of these collections needs them).

The prepared index of each collection is cached in the temporary folder
(loupe-variants-*.pkl, rebuilt when the collection or this file changes).
"""
import argparse
import hashlib
import json
import math
import os
import pickle
import re
import sys
import tempfile

import xapian

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from common import REPO  # noqa: E402
import metrics  # noqa: E402
import workload  # noqa: E402

DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
RESULTS = os.path.join(REPO, "docs", "benchmarks", "fulltext.json")
WORD = re.compile(r"[^\W_]+")
METRICS = metrics.KEYS
KNOBS = {"k1": 1.2, "b": 0.75, "bt": None, "wt": 1.0, "stem": "english", "length": "field",
         "idf": "rsj", "minnorm": 0.0, "k3": None, "delta": 0.0, "prox": 0.0, "rerank": 300.0, "lmix": 0.0,
         "fb": 0.0, "fbdocs": 10.0, "fbterms": 10.0, "fbdf": 1.0, "fbsel": 0.0, "exact": 0.0,
         "fbmode": "mix", "fbw": "score", "coord": 0.0, "fbmin": 1.0, "fbqmax": 0.0, "fbtemp": 1.0, "model": "bm25", "mu": 1000.0, "c": 1.0, "fuse": 0.0, "fusew": 0.5,
         "ens": 0.0, "ensstem": "porter", "enslength": "row", "ensk1": 1.2, "ensb": 0.75, "ensmode": "sum",
         "ensk": 60.0}
WORDS = {"stem": None, "length": ("field", "row"), "idf": ("rsj", "xapian", "lucene"), "fbmode": ("mix", "add"),
         "fbw": ("score", "exp"), "model": ("bm25", "lmdir", "dph", "pl2", "inl2"),
         "ensstem": None, "enslength": ("field", "row"), "ensmode": ("sum", "max", "minmax", "rrf")}


def parse_variant(text):
    v = dict(KNOBS)
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, val = part.partition("=")
        if key not in KNOBS or not val:
            raise SystemExit("variants.py: bad knob %r in %r (knobs: %s)" % (part, text, ", ".join(KNOBS)))
        if key in WORDS:
            if WORDS[key] is not None and val not in WORDS[key]:
                raise SystemExit("variants.py: %s is one of %s, not %r" % (key, ", ".join(WORDS[key]), val))
            v[key] = val
        else:
            try:
                v[key] = None if val == "none" else float(val)
            except ValueError:
                raise SystemExit("variants.py: %s wants a number, not %r" % (key, val))
    if v["length"] not in ("field", "row") or v["idf"] not in ("rsj", "xapian", "lucene") \
            or v["enslength"] not in ("field", "row"):
        raise SystemExit("variants.py: bad length or idf in %r" % text)
    return v


_PREPARED = {}


def prepare(name, stem_name):
    """Postings {stem: {doc: [tf title, tf body]}}, field lengths, the
    queries as stems and the judgments of one collection (kept in memory
    once loaded)."""
    if (name, stem_name) not in _PREPARED:
        _PREPARED[name, stem_name] = _prepare(name, stem_name)
    return _PREPARED[name, stem_name]


def _prepare(name, stem_name):
    path = os.path.join(DATA, name)
    with open(__file__, "rb") as f:
        h = hashlib.sha1(f.read())
    for f in ("docs.jsonl", "queries.jsonl", "qrels.tsv"):
        st = os.stat(os.path.join(path, f))
        h.update(("%s %d %d" % (f, st.st_size, st.st_mtime_ns)).encode())
    cache = os.path.join(tempfile.gettempdir(), "loupe-variants-%s-%s-%s.pkl" % (name, stem_name, h.hexdigest()[:12]))
    if os.path.exists(cache):
        with open(cache, "rb") as f:
            return pickle.load(f)
    coll = workload.load_collection(name, path)
    stemmer = xapian.Stem(stem_name)
    memo = {}

    def stem(w):
        s = memo.get(w)
        if s is None:
            s = memo[w] = stemmer(w).decode("utf-8")
        return s

    post, lens, seqs = {}, [], []
    for d, fields in enumerate(coll.docs):
        ls, sq = [], []
        for fi, text in enumerate(fields):
            words = [stem(w) for w in WORD.findall(text.lower())]
            ls.append(len(words))
            sq.append(words)
            for s in words:
                post.setdefault(s, {}).setdefault(d, [0, 0])[fi] += 1
        lens.append(ls)
        seqs.append(sq)
    queries = {q.qid: [stem(w) for w in q.words] for q in coll.queries}
    r = (coll.doc_ids, coll.qrels, queries, post, lens, seqs)
    with open(cache + ".tmp", "wb") as f:
        pickle.dump(r, f)
    os.replace(cache + ".tmp", cache)
    return r


def idf_of(kind, n_docs, df):
    ratio = (n_docs - df + 0.5) / (df + 0.5)
    if kind == "lucene":
        return math.log(1 + ratio)
    if kind == "xapian" and ratio < 2:
        ratio = ratio * 0.5 + 1
    v = math.log(ratio)
    return v if v > 1e-6 else 1e-6


_SCORES = {}


def scores_of(name, v):
    """{qid: {doc: score}} of the variant, its ens* knobs aside (the last
    few kept in memory, so that ensembles sharing a side reuse it)."""
    key = (name, tuple((k, v[k]) for k in sorted(KNOBS) if not k.startswith("ens")))
    r = _SCORES.pop(key, None)
    if r is None:
        if len(_SCORES) >= 32:
            del _SCORES[next(iter(_SCORES))]
        r = _scores(name, v)
    _SCORES[key] = r
    return r


def ensemble(first, second, v):
    """The fusion of two rankings' scores for one query, as ensmode says."""
    mode, w = v["ensmode"], v["ens"]
    if mode == "rrf":
        fused = {}
        for wgt, sc in ((1.0, first), (w, second)):
            order = sorted(sc.items(), key=lambda kv: (-kv[1], kv[0]))
            for r, (d, _) in enumerate(order):
                fused[d] = fused.get(d, 0.0) + wgt / (v["ensk"] + r + 1)
        return fused
    sides = []
    for sc in (first, second):
        if mode == "sum" or not sc:
            sides.append((0.0, 1.0))
            continue
        hi = max(sc.values())
        lo = min(sc.values()) if mode == "minmax" else 0.0
        sides.append((lo, (hi - lo) or 1.0))
    (lo1, sp1), (lo2, sp2) = sides
    fused = {d: (s - lo1) / sp1 for d, s in first.items()}
    for d, s in second.items():
        fused[d] = fused.get(d, 0.0) + w * (s - lo2) / sp2
    return fused


def rank(name, v):
    """The variant's top 100 for every query, scored: {metric: mean}."""
    doc_ids, qrels = prepare(name, v["stem"])[:2]
    scores = scores_of(name, v)
    if v["ens"]:
        v2 = dict(KNOBS, stem=v["ensstem"], length=v["enslength"], k1=v["ensk1"], b=v["ensb"])
        second = scores_of(name, v2)
        scores = {qid: ensemble(sc, second[qid], v) for qid, sc in scores.items()}
    rankings = {}
    for qid, sc in scores.items():
        top = sorted(sc.items(), key=lambda kv: (-kv[1], kv[0]))[:100]
        rankings[qid] = [doc_ids[d] for d, _ in top]
    return metrics.mean_metrics(rankings, qrels)


def _scores(name, v):
    """The scores of every document each query matches: {qid: {doc: score}}."""
    doc_ids, qrels, queries, post, lens, seqs = prepare(name, v["stem"])
    n = len(lens)
    avg = [sum(ls[i] for ls in lens) / n or 1 for i in (0, 1)]
    b, bt, k1 = v["b"], v["b"] if v["bt"] is None else v["bt"], v["k1"]
    if v["lmix"]:
        avg_row = avg[0] + avg[1]
        a = v["lmix"]
        norms = [[1 - bb + bb * ((1 - a) * ls[i] / avg[i] + a * (ls[0] + ls[1]) / avg_row)
                  for i, bb in ((0, bt), (1, b))] for ls in lens]
    elif v["length"] == "row":
        avg_row = avg[0] + avg[1]
        norms = [[1 - b + b * max((ls[0] + ls[1]) / avg_row, v["minnorm"])] * 2 for ls in lens]
    else:
        norms = [[1 - bb + bb * max(ls[i] / avg[i], v["minnorm"]) for i, bb in ((0, bt), (1, b))]
                 for ls in lens]
    weights = (v["wt"], 1.0)
    model = v["model"]
    if model != "bm25":
        dls = [ls[0] + ls[1] for ls in lens]
        avg_dl = sum(dls) / n or 1.0
        if model in ("pl2", "inl2"):
            # PL2F's per-field normalisation: log2(1 + c avg / length)
            tfnorm = [[math.log2(1 + v["c"] * avg[i] / ls[i]) if ls[i] else 0.0 for i in (0, 1)] for ls in lens]

    def add_scores(scores, qweights, postings):
        """Adds each word's part, times its weight, to scores."""
        if model != "bm25":
            return add_scores_other(scores, qweights, postings)
        for w, qw in qweights.items():
            p = postings.get(w)
            if not p:
                continue
            idf = idf_of(v["idf"], n, len(p))
            for d, tf in p.items():
                x = sum(weights[i] * tf[i] / norms[d][i] for i in (0, 1))
                part = (k1 + 1) * x / (k1 + x) + (v["delta"] if x > 0 else 0)
                scores[d] = scores.get(d, 0.0) + qw * idf * part

    def add_scores_other(scores, qweights, postings):
        """add_scores for the models other than BM25F."""
        qtot = 0.0
        for w, qw in qweights.items():
            p = postings.get(w)
            if not p:
                continue
            qtot += qw
            cf = float(sum(tf[0] + tf[1] for tf in p.values()))
            if model == "lmdir":
                mp = v["mu"] * cf / total_len
                for d, tf in p.items():
                    x = weights[0] * tf[0] + tf[1]
                    scores[d] = scores.get(d, 0.0) + qw * math.log(1 + x / mp)
            elif model == "dph":
                for d, tf in p.items():
                    x = weights[0] * tf[0] + tf[1]
                    dl = dls[d]
                    f = x / dl
                    if x <= 0 or f >= 1:
                        scores.setdefault(d, 0.0)
                        continue
                    norm = (1 - f) * (1 - f) / (x + 1)
                    part = norm * (x * math.log2(x * avg_dl / dl * n / cf) + 0.5 * math.log2(2 * math.pi * x * (1 - f)))
                    scores[d] = scores.get(d, 0.0) + qw * part
            else:
                lam = cf / n
                inl = math.log2((n + 1) / (len(p) + 0.5))
                for d, tf in p.items():
                    x = sum(weights[i] * tf[i] * tfnorm[d][i] for i in (0, 1))
                    if x <= 0:
                        scores.setdefault(d, 0.0)
                        continue
                    if model == "inl2":
                        part = x * inl / (x + 1)
                    else:
                        part = (x * math.log2(x / lam) + (lam - x) / math.log(2)
                                + 0.5 * math.log2(2 * math.pi * x)) / (x + 1)
                    scores[d] = scores.get(d, 0.0) + qw * part
        if model == "lmdir":
            for d in scores:
                scores[d] += qtot * math.log(v["mu"] / (dls[d] + v["mu"]))

    if model == "lmdir":
        total_len = float(sum(weights[0] * ls[0] + ls[1] for ls in lens)) or 1.0

    result = {}
    for qid, words in queries.items():
        qtf = {}
        for w in words:
            qtf[w] = qtf.get(w, 0) + 1
        scores = {}
        add_scores(scores, {w: c if v["k3"] is None else (v["k3"] + 1) * c / (v["k3"] + c)
                            for w, c in qtf.items()}, post)
        if v["coord"]:
            nq = float(len(qtf))
            for d in scores:
                m = sum(1 for w in qtf if d in post.get(w, ()))
                scores[d] *= (m / nq) ** v["coord"]
        if v["prox"]:
            idfs = {w: idf_of(v["idf"], n, len(post[w])) for w in qtf if w in post}
            cand = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:int(v["rerank"])]
            for d, _ in cand:
                extra = 0.0
                for fi in (0, 1):
                    acc = {}
                    last, lastpos = None, 0
                    for pos, w in enumerate(seqs[d][fi]):
                        if w not in idfs:
                            continue
                        if last is not None and w != last:
                            dd = (pos - lastpos) ** 2
                            acc[w] = acc.get(w, 0.0) + idfs[last] / dd
                            acc[last] = acc.get(last, 0.0) + idfs[w] / dd
                        last, lastpos = w, pos
                    kd = k1 * norms[d][fi]
                    for w, a in acc.items():
                        extra += weights[fi] * min(1.0, idfs[w]) * a * (k1 + 1) / (a + kd)
                scores[d] += v["prox"] * extra
        first = scores
        if v["fb"] and not (v["fbqmax"] and len(words) > v["fbqmax"]):
            top = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:int(v["fbdocs"])]
            rel, seen = {}, {}
            for d, s in top:
                dl = (lens[d][0] + lens[d][1]) or 1
                if v["fbw"] == "exp":
                    s = math.exp((s - top[0][1]) / v["fbtemp"])
                for fi in (0, 1):
                    for w in seqs[d][fi]:
                        rel[w] = rel.get(w, 0.0) + s / dl
                for w in set(seqs[d][0]).union(seqs[d][1]):
                    seen[w] = seen.get(w, 0) + 1
            cand = []
            for w, r in rel.items():
                df = len(post[w])
                if df > v["fbdf"] * n or seen[w] < v["fbmin"]:
                    continue
                if v["fbmode"] == "add" and w in qtf:
                    continue
                key = r * (idf_of(v["idf"], n, df) if v["fbsel"] else 1.0)
                cand.append((-key, w, r))
            cand.sort()
            cand = cand[:int(v["fbterms"])]
            tot = sum(r for _, _, r in cand) or 1.0
            ql = float(len(words))
            if v["fbmode"] == "add":
                qmodel = dict(qtf)
                for _, w, r in cand:
                    qmodel[w] = v["fb"] * ql * r / tot
            else:
                qmodel = {w: (1 - v["fb"]) * c / ql for w, c in qtf.items()}
                for _, w, r in cand:
                    qmodel[w] = qmodel.get(w, 0.0) + v["fb"] * r / tot
            scores = {}
            add_scores(scores, qmodel, post)
            if v["fuse"]:
                fused = {}
                for wgt, sc in ((1 - v["fusew"], first), (v["fusew"], scores)):
                    order = sorted(sc.items(), key=lambda kv: (-kv[1], kv[0]))
                    for r, (d, _) in enumerate(order):
                        fused[d] = fused.get(d, 0.0) + wgt / (v["fuse"] + r + 1)
                scores = fused
        if v["exact"]:
            ex = prepare(name, "none")
            eq = {}
            for w in ex[2][qid]:
                eq[w] = eq.get(w, 0) + v["exact"]
            add_scores(scores, eq, ex[3])
        result[qid] = scores
    return result


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collections", help="comma-separated (default: those of fulltext.json)")
    ap.add_argument("variants", nargs="*", default=[""])
    args = ap.parse_args(argv)
    with open(RESULTS) as f:
        res = json.load(f)["collections"]
    colls = args.collections.split(",") if args.collections else sorted(res)
    best, loupe = {}, {}
    for c in colls:
        eng = res[c]["engines"]
        for m in METRICS:
            best[c, m] = max(eng[e]["quality"][m] for e in eng if e != "loupe")
            loupe[c, m] = eng["loupe"]["quality"][m]
    variants = [(text, parse_variant(text)) for text in [""] + [x for x in args.variants if x != ""]]
    print("%-24s %-10s %s" % ("variant", "metric", " ".join("%9s" % c for c in colls)))
    rc = 0
    for text, v in variants:
        got = {c: rank(c, v) for c in colls}
        met = sum(got[c][m] >= best[c, m] for c in colls for m in METRICS)
        for m in METRICS:
            cells = " ".join("%8.4f%s" % (got[c][m], "*" if got[c][m] >= best[c, m] else " ") for c in colls)
            print("%-24s %-10s %s" % (text or "(default)" if m == METRICS[0] else "", m, cells))
        print("%-24s %d of %d >= best peer" % ("", met, len(colls) * len(METRICS)))
        if text == "":
            off = ["%s %s %.4f vs %.4f" % (c, m, got[c][m], loupe[c, m])
                   for c in colls for m in METRICS if abs(got[c][m] - loupe[c, m]) > 0.001]
            if off:
                print("variants.py: the default does NOT reproduce loupe's numbers in %s: %s"
                      % (RESULTS, "; ".join(off)))
                rc = 1
            else:
                print("(the default reproduces loupe's numbers in fulltext.json to 0.001)")
        sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
