"""Checks of what the engines are sent and of the speed query derivation.

Run: /usr/bin/python3 -m pytest -q bench/fulltext/test_queries.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import engines  # noqa: E402
import workload  # noqa: E402
from workload import Query  # noqa: E402


def test_match_text_per_kind():
    assert engines.match_text(Query("or", ["wing", "lift", "wing"])) == "wing | lift | wing"
    assert engines.match_text(Query("and", ["wing", "lift"])) == "wing lift"
    assert engines.match_text(Query("term", ["wing"])) == "wing"
    assert engines.match_text(Query("phrase", ["free", "stream"])) == '"free stream"'
    assert engines.match_text(Query("prefix", ["aerod"])) == "aerod*"


def test_sphinx_splits_words_like_its_charset():
    # Greek is not in Sphinx's default charset_table: it separates words.
    assert engines._sphinx_pieces("qβ") == ["q"]
    assert engines._sphinx_pieces("β") == []
    assert engines._sphinx_pieces("κbx2") == ["bx2"]
    assert engines._sphinx_pieces("a_b") == ["a_b"]
    q = Query("or", ["nf", "κb", "β"])
    assert engines.match_text(q, split=engines._sphinx_pieces) == "nf | b"
    assert engines.match_text(Query("or", ["β"]), split=engines._sphinx_pieces) is None


def test_loupe_statement_is_escaped_and_limited():
    e = engines.LoupeEngine("/nonexistent", None)
    sql = e.compile(Query("phrase", ["free", "stream"]), 10)
    assert sql == ("SELECT id, WEIGHT() FROM c WHERE MATCH('\\\"free stream\\\"') "
                   "ORDER BY WEIGHT() DESC LIMIT 10")


def test_fts5_match_strings():
    e = engines.Fts5Engine("/nonexistent", None)
    assert e.compile(Query("or", ["a", "b"]), 100)[1] == ('"a" OR "b"',)
    assert e.compile(Query("and", ["a", "b"]), 10)[1] == ('"a" AND "b"',)
    assert e.compile(Query("phrase", ["a", "b"]), 10)[1] == ('"a b"',)
    assert e.compile(Query("prefix", ["abcd"]), 10)[1] == ('"abcd"*',)
    assert e.compile(Query("or", ["a"]), 100)[0].endswith("ORDER BY rank LIMIT 100")


def test_insert_statements_batch_and_escape():
    docs = [("t%d" % i, "it's %d" % i) for i in range(engines.INSERT_ROWS + 1)]
    sqls = engines.insert_statements(docs)
    assert len(sqls) == 2
    assert sqls[0].startswith("INSERT INTO c (id, title, body) VALUES (1, 't0', 'it\\'s 0'), (2, ")
    assert sqls[1] == "INSERT INTO c (id, title, body) VALUES (%d, 't%d', 'it\\'s %d')" % (
        engines.INSERT_ROWS + 1, engines.INSERT_ROWS, engines.INSERT_ROWS)


def _collection(docs, queries):
    c = workload.Collection("tiny", "/nonexistent")
    c.docs = docs
    c.doc_ids = [str(i) for i in range(len(docs))]
    c.queries = [Query("or", q.split(), str(i)) for i, q in enumerate(queries)]
    return c


def test_speed_queries_follow_the_rules():
    c = _collection(
        [("supersonic flow", "the boundary layer of a supersonic wing"),
         ("", "boundary conditions for heat transfer")],
        ["supersonic boundary layer flow", "heat transfer boundary", "nothing matches zzzz"])
    q = workload.speed_queries(c, cap=100, seed=1)
    terms = {x.words[0] for x in q["term"]}
    assert "zzzz" not in terms and {"supersonic", "heat", "nothing"} - terms == {"nothing"}
    ands = {tuple(x.words) for x in q["and"]}
    # Query 0 (position 0: 2 words) -> its 2 longest words, which co-occur in doc 0.
    assert ("supersonic", "boundary") in ands
    # Query 1 (position 1: 3 words): transfer, boundary, heat all occur in doc 1.
    assert ("transfer", "boundary", "heat") in ands
    phrases = {tuple(x.words) for x in q["phrase"]}
    # "boundary layer" is adjacent in doc 0; "supersonic boundary" is not.
    assert ("boundary", "layer") in phrases and ("supersonic", "boundary") not in phrases
    assert ("heat", "transfer") in phrases
    prefixes = {x.words[0] for x in q["prefix"]}
    # supersonic (10 letters) -> 5; transfer (8) -> 4.
    assert prefixes == {"super", "tran"}
    assert len(q["or"]) == 3
