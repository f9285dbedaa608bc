"""Checks of the vector benchmark's data and scoring helpers (data.py,
run.qps_at) on small examples worked out by hand.

Run: /usr/bin/python3 -m pytest -q bench/vector/test_data.py
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import run  # noqa: E402


class Small:
    """A Dataset without files: what data.recall reads."""

    def __init__(self, metric, base, queries, gt):
        self.metric, self.base, self.queries, self.gt = metric, base, queries, gt


def test_vecs_round_trip(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    data.write_vecs(str(tmp_path / "a.fvecs"), a)
    raw = np.fromfile(str(tmp_path / "a.fvecs"), dtype=np.int32)
    assert raw.size == 3 * 5 and list(raw[::5]) == [4, 4, 4]     # a d before every row
    assert np.array_equal(data.read_vecs(str(tmp_path / "a.fvecs"), np.float32), a)
    i = np.array([[3, 1], [0, 2]], dtype=np.int32)
    data.write_vecs(str(tmp_path / "i.ivecs"), i)
    assert np.array_equal(data.read_vecs(str(tmp_path / "i.ivecs"), np.int32), i)


def test_read_vecs_rejects_mixed_lengths(tmp_path):
    p = str(tmp_path / "bad.fvecs")
    np.array([2, 0, 0, 3, 0, 0], dtype=np.int32).tofile(p)      # d 2, then d 3: 6 words
    with pytest.raises(ValueError):
        data.read_vecs(p, np.float32)


def test_ground_truth_l2_by_hand_with_ties():
    # Points on a line; the query at 2.0: rows 1 and 3 tie at distance 1,
    # row 2 (at 2.0) is nearest, the lower id wins the tie.
    base = np.array([[0.0], [1.0], [2.0], [3.0], [5.0]], dtype=np.float32)
    q = np.array([[2.0]], dtype=np.float32)
    assert data.ground_truth("l2", base, q, k=4).tolist() == [[2, 1, 3, 0]]


def test_ground_truth_matches_full_sort():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((700, 16)).astype(np.float32)
    q = rng.standard_normal((300, 16)).astype(np.float32)   # more than one CHUNK
    for metric in ("l2", "cosine"):
        b, qq = base, q
        if metric == "cosine":
            b = base / np.linalg.norm(base, axis=1, keepdims=True)
            qq = q / np.linalg.norm(q, axis=1, keepdims=True)
        want = np.argsort(data.distances(metric, qq, b), axis=1, kind="stable")[:, :20]
        assert np.array_equal(data.ground_truth(metric, b, qq, k=20), want)


def test_recall_counts_ties_and_ignores_duplicates():
    base = np.array([[0.0], [1.0], [2.0], [3.0], [5.0]], dtype=np.float32)
    q = np.array([[2.0]], dtype=np.float32)
    ds = Small("l2", base, q, np.array([[2, 1, 3, 0]], dtype=np.int32))
    # Top 2 is {2, 1}; row 3 ties with row 1, so {2, 3} is as good.
    assert data.recall(ds, np.array([[2, 3]], dtype=np.int32), 2) == 1.0
    assert data.recall(ds, np.array([[2, 0]], dtype=np.int32), 2) == 0.5
    # A repeated row counts once; -1 is no result.
    assert data.recall(ds, np.array([[2, 2]], dtype=np.int32), 2) == 0.5
    assert data.recall(ds, np.array([[-1, -1]], dtype=np.int32), 2) == 0.0


def test_generated_is_deterministic_and_unit_for_cosine(tmp_path):
    a = data.generated(str(tmp_path / "a"), "x", 300, 8, "cosine", 20, centres=10, seed=5)
    b = data.generated(str(tmp_path / "b"), "x", 300, 8, "cosine", 20, centres=10, seed=5)
    assert np.array_equal(a.base, b.base) and np.array_equal(a.queries, b.queries)
    assert np.allclose(np.linalg.norm(a.base, axis=1), 1.0, atol=1e-5)
    # Queries are fresh draws, not base rows.
    assert not any((a.base == row).all(1).any() for row in a.queries)
    assert data.recall(a, a.gt[:, :10].copy(), 10) == 1.0


def test_qps_at_picks_fastest_ef_reaching_recall():
    efs = [{"ef": 10, "recall10": 0.93, "qps": 900.0},
           {"ef": 20, "recall10": 0.96, "qps": 600.0},
           {"ef": 40, "recall10": 0.995, "qps": 300.0}]
    assert run.qps_at(efs, 0.95) == (600.0, 20)
    assert run.qps_at(efs, 0.99) == (300.0, 40)
    assert run.qps_at(efs, 0.999) is None
