"""Checks of variants.py's knobs and idf forms (run: python3 -m pytest bench/fulltext)."""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import variants  # noqa: E402


def test_default_variant_is_loupes_defaults():
    v = variants.parse_variant("")
    assert (v["k1"], v["b"], v["wt"], v["stem"], v["length"], v["idf"]) == (1.2, 0.75, 1.0, "english", "field", "rsj")
    assert v["k3"] is None and v["bt"] is None


def test_knobs_parse():
    v = variants.parse_variant("k1=1.0, b=0.5,stem=porter,length=row,k3=none,idf=xapian")
    assert (v["k1"], v["b"], v["stem"], v["length"], v["k3"], v["idf"]) == (1.0, 0.5, "porter", "row", None, "xapian")


@pytest.mark.parametrize("bad", ["k2=1", "k1=", "length=doc", "idf=bm25", "b=x"])
def test_bad_knobs_are_refused(bad):
    with pytest.raises(SystemExit):
        variants.parse_variant(bad)


def test_idf_forms():
    n = 1000
    # Robertson-Sparck Jones, floored just above 0 past half the documents
    assert variants.idf_of("rsj", n, 10) == pytest.approx(math.log(990.5 / 10.5))
    assert variants.idf_of("rsj", n, 900) == 1e-6
    # Xapian's: a ratio under 2 is halved plus 1, so it meets log(2) at 2 and stays above 0
    df2 = (n + 0.5 - 1.0) / 3  # ratio exactly 2
    assert variants.idf_of("xapian", n, df2) == pytest.approx(math.log(2))
    assert variants.idf_of("xapian", n, 900) == pytest.approx(math.log(100.5 / 900.5 * 0.5 + 1))
    assert variants.idf_of("lucene", n, 900) == pytest.approx(math.log(1 + 100.5 / 900.5))


def test_model_and_feedback_knobs_parse():
    v = variants.parse_variant("")
    assert (v["model"], v["fbmode"], v["fbw"], v["fbmin"], v["fbqmax"]) == ("bm25", "mix", "score", 1.0, 0.0)
    v = variants.parse_variant("model=lmdir,mu=300,fb=0.2,fbmode=add,fbw=exp,fbmin=2,fbqmax=20")
    assert (v["model"], v["mu"], v["fbmode"], v["fbw"], v["fbmin"], v["fbqmax"]) == ("lmdir", 300.0, "add", "exp", 2.0, 20.0)
    assert variants.parse_variant("fbw=exp,fbtemp=2")["fbtemp"] == 2.0
    v = variants.parse_variant("model=pl2,c=4")
    assert (v["model"], v["c"]) == ("pl2", 4.0)
    for m in ("dph", "inl2"):
        assert variants.parse_variant("model=" + m)["model"] == m


@pytest.mark.parametrize("bad", ["model=bm11", "fbmode=both", "fbw=rank", "mu=x", "c="])
def test_bad_model_and_feedback_knobs_are_refused(bad):
    with pytest.raises(SystemExit):
        variants.parse_variant(bad)


def test_fusion_knobs_parse():
    v = variants.parse_variant("fb=0.2,fuse=60,fusew=0.4")
    assert (v["fb"], v["fuse"], v["fusew"]) == (0.2, 60.0, 0.4)
    assert variants.parse_variant("")["fuse"] == 0.0


def test_ensemble_knobs_parse():
    v = variants.parse_variant("")
    assert (v["ens"], v["ensstem"], v["enslength"], v["ensk1"], v["ensb"], v["ensmode"], v["ensk"]) == \
        (0.0, "porter", "row", 1.2, 0.75, "sum", 60.0)
    v = variants.parse_variant("ens=2,ensstem=english,enslength=field,ensk1=1.0,ensb=0.5,ensmode=rrf,ensk=30")
    assert (v["ens"], v["ensstem"], v["enslength"], v["ensk1"], v["ensb"], v["ensmode"], v["ensk"]) == \
        (2.0, "english", "field", 1.0, 0.5, "rrf", 30.0)


@pytest.mark.parametrize("bad", ["enslength=doc", "ensmode=combmnz", "ens=x", "ensk="])
def test_bad_ensemble_knobs_are_refused(bad):
    with pytest.raises(SystemExit):
        variants.parse_variant(bad)


def test_ensemble_fusions():
    first, second = {0: 4.0, 1: 2.0}, {1: 3.0, 2: 1.0}
    v = variants.parse_variant("ens=0.5")
    assert variants.ensemble(first, second, v) == pytest.approx({0: 4.0, 1: 3.5, 2: 0.5})
    v = variants.parse_variant("ens=0.5,ensmode=max")
    assert variants.ensemble(first, second, v) == pytest.approx({0: 1.0, 1: 0.5 + 0.5, 2: 0.5 / 3})
    v = variants.parse_variant("ens=1,ensmode=minmax")
    assert variants.ensemble(first, second, v) == pytest.approx({0: 1.0, 1: 1.0, 2: 0.0})
    v = variants.parse_variant("ens=2,ensmode=rrf,ensk=60")
    assert variants.ensemble(first, second, v) == pytest.approx({0: 1 / 61, 1: 1 / 62 + 2 / 61, 2: 2 / 62})
