"""Retrieval quality metrics: nDCG@k, MRR@k, Recall@k, and their means.

Definitions (the ones trec_eval and pytrec_eval use, so numbers compare
with published BEIR/trec_eval figures):

- A ranking is a list of document ids, best first, without duplicates.
- Judgments for one query: {doc_id: grade}, grade >= 1 means relevant;
  documents not listed have grade 0. Cranfield is graded 1-4, the other
  collections use 1 for every relevant document.
- nDCG@k = DCG@k / IDCG@k with linear gain: DCG@k = sum over ranks
  r = 1..k of grade(doc at r) / log2(r + 1); IDCG@k is the DCG of the
  judged documents sorted by grade, best first.
- MRR@k: 1 / rank of the first relevant document within the top k, else 0.
- Recall@k: relevant documents within the top k / all relevant documents.
- mean_metrics() averages over the queries that have at least one relevant
  document; a judged query with no results counts as 0. Queries without
  judgments are skipped (CISI has 36, TIME 5), as is standard practice.
"""

import math


def dcg(grades):
    """Discounted cumulative gain of grades listed best rank first."""
    return sum(g / math.log2(r + 2) for r, g in enumerate(grades))


def ndcg_at(ranking, judged, k):
    ideal = dcg(sorted((g for g in judged.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([judged.get(d, 0) for d in ranking[:k]]) / ideal


def mrr_at(ranking, judged, k):
    for r, d in enumerate(ranking[:k]):
        if judged.get(d, 0) > 0:
            return 1.0 / (r + 1)
    return 0.0


def recall_at(ranking, judged, k):
    relevant = {d for d, g in judged.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


# The metrics reported (and targeted by issue 3): key, label, function, cutoff.
METRICS = (("ndcg@10", "nDCG@10", ndcg_at, 10),
           ("mrr@10", "MRR@10", mrr_at, 10),
           ("recall@100", "Recall@100", recall_at, 100))
KEYS = tuple(m[0] for m in METRICS)


def per_query_metrics(rankings, qrels):
    """rankings: {query_id: [doc_id, ...]}; qrels: {query_id: {doc_id: grade}}.

    Returns {metric key: {query_id: value}} over the judged queries. A
    judged query missing from rankings counts as an empty ranking.
    """
    out = {key: {} for key in KEYS}
    for q, judged in qrels.items():
        if not any(g > 0 for g in judged.values()):
            continue
        ranking = rankings.get(q, [])
        if len(set(ranking)) != len(ranking):
            raise ValueError("query %s: the ranking lists a document twice" % q)
        for key, _, fn, cut in METRICS:
            out[key][q] = fn(ranking, judged, cut)
    return out


def means(per_query):
    """{"queries": n, "ndcg@10": ..., ...}: per_query_metrics' values averaged."""
    n = len(per_query[KEYS[0]])
    out = {"queries": n}
    out.update({key: sum(per_query[key].values()) / n if n else 0.0 for key in KEYS})
    return out


def mean_metrics(rankings, qrels):
    """The means over the judged queries (n of them):
    {"queries": n, "ndcg@10": ..., "mrr@10": ..., "recall@100": ...}."""
    return means(per_query_metrics(rankings, qrels))


def paired_difference(a, b, n_resamples=10000, seed=1):
    """How sure is "system A scores higher than B"? a and b map the same
    queries to a per-query score (nDCG@10, say). Returns the mean difference
    mean(a - b), a 95% bootstrap interval of it (queries resampled with
    replacement, percentile method), and the two-sided p-value of a paired
    sign-flip randomisation test (under "no difference", each query's
    difference is as likely negated; p = the share of sign assignments
    whose mean is at least as far from 0 as the one observed, the observed
    one included). Deterministic for a given seed. Queries missing from
    either side are an error: the comparison must be paired."""
    import random
    if set(a) != set(b):
        raise ValueError("paired_difference: the two systems were scored on different queries")
    qs = sorted(a)
    d = [a[q] - b[q] for q in qs]
    n = len(d)
    if n == 0:
        raise ValueError("paired_difference: no queries")
    mean = sum(d) / n
    rng = random.Random(seed)
    boot = sorted(sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(n_resamples))
    lo = boot[int(0.025 * n_resamples)]
    hi = boot[min(n_resamples - 1, int(0.975 * n_resamples))]
    far = 1  # the observed assignment
    for _ in range(n_resamples - 1):
        m = sum(x if rng.random() < 0.5 else -x for x in d) / n
        if abs(m) >= abs(mean) - 1e-12:
            far += 1
    return {"mean_diff": mean, "ci95": (lo, hi), "p_value": far / n_resamples, "queries": n}
