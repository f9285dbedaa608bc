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
