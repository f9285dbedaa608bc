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


def test_duplicate_document_in_ranking_is_an_error():
    with pytest.raises(ValueError):
        metrics.mean_metrics({"q": ["a", "a"]}, {"q": {"a": 1}})
