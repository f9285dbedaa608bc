"""Checks of metrics.py against small examples computed by hand.

Run: /usr/bin/python3 -m pytest -q bench/fulltext/test_metrics.py
"""

import math

import pytest

import metrics

# One graded query: a is the best answer, c useful, b of minimum interest.
JUDGED = {"a": 3, "b": 1, "c": 2}


def test_ndcg_graded_by_hand():
    # Ranking b, x, a, y: DCG = 1/log2(2) + 3/log2(4) = 1 + 1.5 = 2.5.
    # Ideal a, c, b: 3/1 + 2/log2(3) + 1/log2(4) = 3 + 1.26186 + 0.5 = 4.76186.
    got = metrics.ndcg_at(["b", "x", "a", "y"], JUDGED, 10)
    assert got == pytest.approx(2.5 / 4.76186, abs=1e-5)
    assert got == pytest.approx(0.52500, abs=1e-5)


def test_ndcg_perfect_and_empty():
    assert metrics.ndcg_at(["a", "c", "b"], JUDGED, 10) == pytest.approx(1.0)
    assert metrics.ndcg_at([], JUDGED, 10) == 0.0
    assert metrics.ndcg_at(["x", "y"], JUDGED, 10) == 0.0


def test_ndcg_cutoff():
    # a at rank 3 counts for nDCG@3 but not nDCG@2; ideal@2 = 3 + 2/log2(3).
    ranking = ["x", "y", "a"]
    assert metrics.ndcg_at(ranking, JUDGED, 2) == 0.0
    assert metrics.ndcg_at(ranking, JUDGED, 3) == pytest.approx(
        (3 / 2) / (3 + 2 / math.log2(3) + 1 / 2))


def test_mrr_by_hand():
    assert metrics.mrr_at(["b", "x", "a"], JUDGED, 10) == 1.0
    assert metrics.mrr_at(["x", "y", "c"], JUDGED, 10) == pytest.approx(1 / 3)
    # First relevant at rank 11: outside MRR@10.
    assert metrics.mrr_at(["n%d" % i for i in range(10)] + ["a"], JUDGED, 10) == 0.0


def test_recall_by_hand():
    assert metrics.recall_at(["b", "x", "a", "y"], JUDGED, 100) == pytest.approx(2 / 3)
    assert metrics.recall_at(["c"], JUDGED, 100) == pytest.approx(1 / 3)
    # c at rank 101 is past the cutoff.
    assert metrics.recall_at(["n%d" % i for i in range(100)] + ["c"], JUDGED, 100) == 0.0


def test_mean_skips_unjudged_and_counts_missing_as_zero():
    qrels = {
        "q1": JUDGED,            # nDCG 0.525, MRR 1, recall 2/3
        "q2": {"d": 1},          # ranked first: nDCG 1, MRR 1, recall 1
        "q3": {"e": 1},          # judged, no ranking: all 0
        "q4": {},                # no judgments: skipped
    }
    rankings = {"q1": ["b", "x", "a", "y"], "q2": ["d"], "q4": ["z"]}
    got = metrics.mean_metrics(rankings, qrels)
    assert got["queries"] == 3
    assert got["ndcg@10"] == pytest.approx((0.52500 + 1 + 0) / 3, abs=1e-5)
    assert got["mrr@10"] == pytest.approx(2 / 3)
    assert got["recall@100"] == pytest.approx((2 / 3 + 1 + 0) / 3)


def test_per_query_values_are_the_ones_averaged():
    qrels = {"q1": JUDGED, "q2": {"d": 1}, "q3": {"e": 1}, "q4": {}}
    rankings = {"q1": ["b", "x", "a", "y"], "q2": ["d"], "q4": ["z"]}
    pq = metrics.per_query_metrics(rankings, qrels)
    assert set(pq) == {"ndcg@10", "mrr@10", "recall@100"}
    assert set(pq["mrr@10"]) == {"q1", "q2", "q3"}     # q4 has no judgments
    assert pq["mrr@10"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    assert pq["recall@100"]["q1"] == pytest.approx(2 / 3)
    assert metrics.means(pq) == metrics.mean_metrics(rankings, qrels)
    assert metrics.means(metrics.per_query_metrics({}, {"q": {}})) == {
        "queries": 0, "ndcg@10": 0.0, "mrr@10": 0.0, "recall@100": 0.0}


def test_duplicate_document_in_ranking_is_an_error():
    with pytest.raises(ValueError):
        metrics.mean_metrics({"q": ["a", "a"]}, {"q": {"a": 1}})


def test_paired_difference_no_difference_and_clear_difference():
    same = {str(i): i / 10 for i in range(10)}
    r = metrics.paired_difference(same, dict(same), n_resamples=2000)
    assert r["mean_diff"] == 0.0 and r["ci95"] == (0.0, 0.0)
    assert r["p_value"] == 1.0
    # A better on every one of 30 queries by 0.1: mean 0.1, CI around it,
    # and only the all-positive and all-negative sign assignments are as
    # far from 0 (2 in 2^30), so p is 1/2000 (the observed one alone).
    a = {str(i): 0.5 for i in range(30)}
    b = {str(i): 0.4 for i in range(30)}
    r = metrics.paired_difference(a, b, n_resamples=2000)
    assert r["mean_diff"] == pytest.approx(0.1)
    assert r["ci95"][0] == pytest.approx(0.1) and r["ci95"][1] == pytest.approx(0.1)
    assert r["p_value"] == pytest.approx(1 / 2000)
    assert r["queries"] == 30


def test_paired_difference_by_hand():
    # Differences +0.3, -0.1: mean 0.1. Of the 4 sign assignments, the means
    # are 0.1, 0.2, -0.2, -0.1: all at least 0.1 from 0, so p tends to 1.
    a, b = {"q1": 0.5, "q2": 0.2}, {"q1": 0.2, "q2": 0.3}
    r = metrics.paired_difference(a, b, n_resamples=4000)
    assert r["mean_diff"] == pytest.approx(0.1)
    assert r["p_value"] == pytest.approx(1.0)
    # Resamples of two differences: means -0.1, 0.1 or 0.3.
    assert r["ci95"][0] == pytest.approx(-0.1) and r["ci95"][1] == pytest.approx(0.3)


def test_paired_difference_needs_the_same_queries():
    with pytest.raises(ValueError):
        metrics.paired_difference({"q1": 0.5}, {"q2": 0.5})
    with pytest.raises(ValueError):
        metrics.paired_difference({}, {})
