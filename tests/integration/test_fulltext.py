"""Full-text search through the real server (docs/sql.md, "Full-text
search"): text options of CREATE TABLE, every operator of the MATCH query
language on a hand-written corpus, stemming, stop words, Unicode, invalid
UTF-8, MATCH with attribute filters / ORDER BY / LIMIT / COUNT(*), weights
checked against the documented formulas (BM25F by default, per-field BM25
with ranker=bm25: by hand on a tiny table, and against a Python reference
on the corpus and on 2,000 random documents), rank options and stored
profiles, SHOW META / EXPLAIN / EXPLAIN_SCORE(), HIGHLIGHT() and SNIPPET(),
the index following every kind of write, and the errors.

Table DDL round trips and rank_profile validation at CREATE TABLE are in
test_ddl.py; UPDATE of a TEXT column and invalid UTF-8 in attributes in
test_dml.py.

MATCH texts are sent as query parameters (pymysql escapes them), so the
strings below are exactly what the server's MATCH parser sees."""

import collections
import json
import math
import random
import re
import signal
import time
import urllib.parse

import pytest

from conftest import pymysql_connect
from helpers import LoupeServer, col_names, expect_error, http_request, parse_batch, rows

FIELDS = ("title", "body")

# id: (title, body, cat, price). Small enough to reason about by hand.
CORPUS = {
    1: ("quick brown fox", "the fox jumps over the lazy dog", 1, 10.0),
    2: ("lazy dog", "the dog sleeps all day", 2, 20.0),
    3: ("brown bear", "a bear is brown and big and quick", 1, 30.0),
    4: ("red fox", "foxes are red and quick", 2, 40.0),
    5: ("hello world", "hello there big world", 3, 50.0),
    6: ("world news", "news about the world and the fox", 3, 60.0),
    7: ("quickly done", "done quickly by a quick worker", 1, 70.0),
    8: ("dog days", "hot days for a brown dog", 2, 80.0),
}


def q(s):
    """A SQL string literal (the corpus texts hold no quote or backslash)."""
    return "'" + s + "'"


def make_table(server, name, ddl, docs):
    """Creates name with ddl's columns and inserts docs {id: values}."""
    c = pymysql_connect(server.mysql_port)
    with c.cursor() as cur:
        cur.execute(f"CREATE TABLE {name} {ddl}")
        if docs:
            cur.execute(f"INSERT INTO {name} VALUES " + ", ".join(
                "(" + ", ".join([str(i)] + [q(v) if isinstance(v, str) else "NULL" if v is None else repr(v)
                                            for v in vals]) + ")"
                for i, vals in docs.items()))
    c.close()
    return name


@pytest.fixture(scope="module")
def corpus(server):
    """CORPUS, no stemming or stop words (never written by the tests)."""
    return make_table(server, "fts_corpus", "(title TEXT, body TEXT, cat INT, price FLOAT)", CORPUS)


def select_match(cur, cols, table, text, tail=""):
    """Runs SELECT cols ... WHERE MATCH(text) tail with LIMIT 1000 (before
    the OPTION clause when tail has one); returns the rows as tuples."""
    cond, _, opts = tail.partition("OPTION")
    cur.execute(f"SELECT {cols} FROM {table} WHERE MATCH(%s) {cond} LIMIT 1000 "
                + (f"OPTION {opts}" if opts else ""), (text,))
    return [tuple(r) for r in cur.fetchall()]


def match_ids(cur, table, text, tail=""):
    """Ids matching text, in the order the server returns them."""
    return [r[0] for r in select_match(cur, "id", table, text, tail)]


def assert_ids_ram_and_flushed(cur, table, cases):
    """Each (text, ids) of cases matches those ids (in any order), first
    from the RAM segment, then after FLUSH TABLE from a sealed one."""
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {table}")
        for text, want in cases:
            assert sorted(match_ids(cur, table, text)) == want, (step, text)


def match_weights(cur, table, text, tail=""):
    """[(id, WEIGHT())] of the matches, in the server's order."""
    return select_match(cur, "id, WEIGHT()", table, text, tail)


def meta(cur):
    """SHOW META as a dict."""
    cur.execute("SHOW META")
    return {k: v for k, v in cur.fetchall()}


# ---------------------------------------------------------------------------
# A reference ranker, written from docs/sql.md ("Ranking")

WORD_RE = re.compile(r"\w+")
BOTH = (0, 1)                   # field indexes: title, body


def term(word, fields=BOTH, qtype="term"):
    """A clause: (type, words, field indexes in its scope)."""
    return (qtype, (word,), tuple(fields))


def phrase(text, fields=BOTH):
    return ("phrase", tuple(text.split()), tuple(fields))


class Reference:
    """The ranking formulas of docs/sql.md computed in Python from a
    table's texts (words: lower-cased runs of letters and digits; the
    tables it is used on have no stemming and no stop words).

    A clause is (type, words, fields), type 'term', 'phrase' or 'prefix'
    (one of the terms a prefix expands to). Its fields are those of its
    scope where each of its words occurs in some document. Per field it has
    tf (for a phrase: exact matches) and dl, avgdl over the N documents, and
    idf(df) = max(ln((N - df + 0.5) / (df + 0.5)), 1e-6). The clause's idf
    (BM25F): a term's from the documents holding it in any field of its
    scope when the scope is the table's first k fields, else from its
    largest df over its fields; a phrase's is
    the sum of its words' idfs: docs/sql.md leaves open which df a word of a
    phrase takes, src/fts/search.c takes each field's and keeps the
    smallest sum over the fields.

      bm25f:  type_weight * idf * x*(k1+1)/(x+k1),
              x = sum over fields of field_weight * tf / (1 - b + b*dl/avgdl)
      bm25:   type_weight * sum over fields of
              field_weight * idf_field * t*(k1+1)/(t+k1),  t = tf / (1 - b + b*dl/avgdl)

    WEIGHT() sums the scores of the clauses a document matches."""

    def __init__(self, docs, nfields=2):
        self.tokens = {i: [WORD_RE.findall(t.lower()) for t in texts[:nfields]]
                       for i, texts in docs.items()}
        self.counts = {i: [collections.Counter(f) for f in tok] for i, tok in self.tokens.items()}
        self.n = len(docs)
        self.avgdl = [sum(len(tok[f]) for tok in self.tokens.values()) / self.n for f in range(nfields)]
        self.df = [collections.Counter() for _ in range(nfields)]
        self._upto = {}                                     # holders_upto's cache
        self.holders = collections.defaultdict(set)         # word -> ids
        for i, c in self.counts.items():
            for f in range(nfields):
                self.df[f].update(c[f].keys())
                for w in c[f]:
                    self.holders[w].add(i)

    def idf(self, df):
        return max(math.log((self.n - df + 0.5) / (df + 0.5)), 1e-6)

    def expand(self, stem, fields=BOTH):
        """The prefix clauses of stem*: one per indexed term, in term order."""
        terms = sorted({t for f in fields for t in self.df[f] if t.startswith(stem)})
        return [term(t, fields, "prefix") for t in terms]

    def fields_of(self, clause):
        return [f for f in clause[2] if all(self.df[f][w] for w in clause[1])]

    def field_idf(self, f, words):
        return sum(self.idf(self.df[f][w]) for w in words)

    def clause_idf(self, clause):
        fields = self.fields_of(clause)
        if clause[0] == "phrase":
            return min(self.field_idf(f, clause[1]) for f in fields)
        scope, w = sorted(clause[2]), clause[1][0]
        if scope == list(range(len(scope))):
            # fields 0..k: the documents holding the word in any of them
            return self.idf(len(self.holders_upto(len(scope) - 1)[w]))
        return self.idf(max(self.df[f][w] for f in fields))

    def holders_upto(self, top):
        """word -> ids of the documents holding it in a field 0..top."""
        if top not in self._upto:
            m = self._upto[top] = collections.defaultdict(set)
            for i, c in self.counts.items():
                for f in range(top + 1):
                    for w in c[f]:
                        m[w].add(i)
        return self._upto[top]

    def tf(self, i, f, words):
        if len(words) == 1:
            return self.counts[i][f][words[0]]
        toks, k = self.tokens[i][f], len(words)
        return sum(toks[j:j + k] == list(words) for j in range(len(toks) - k + 1))

    def hits(self, i, clause):
        """[(field, tf, dl)] of the fields where clause matches document i."""
        out = []
        for f in self.fields_of(clause):
            tf = self.tf(i, f, clause[1])
            if tf:
                out.append((f, tf, len(self.tokens[i][f])))
        return out

    def norm(self, f, dl, b):
        return 1 - b + b * dl / self.avgdl[f]

    def clause_score(self, i, clause, ranker="bm25f", k1=1.2, b=0.75, fw=(), tw=()):
        """clause's part of document i's WEIGHT() (0 when it does not
        match); fw maps field indexes, tw clause types to weights."""
        fw, tw = dict(fw), dict(tw)
        hits = self.hits(i, clause)
        if not hits:
            return 0.0

        def sat(x):
            return x * (k1 + 1) / (x + k1)
        if ranker == "bm25f":
            x = sum(fw.get(f, 1.0) * tf / self.norm(f, dl, b) for f, tf, dl in hits)
            s = self.clause_idf(clause) * sat(x)
        else:
            s = sum(fw.get(f, 1.0) * self.field_idf(f, clause[1]) * sat(tf / self.norm(f, dl, b))
                    for f, tf, dl in hits)
        return tw.get(clause[0], 1.0) * s

    def weights(self, clauses, mode="or", exclude=(), accept=None, **opts):
        """{id: WEIGHT()} of the documents matching any ('or') or every
        ('and') clause, none of the exclude clauses, and accept(id)."""
        ids = set().union(*(self.holders[c[1][0]] for c in clauses))
        out = {}
        for i in sorted(ids):
            if (accept and not accept(i)) or any(self.hits(i, c) for c in exclude):
                continue
            s = [self.clause_score(i, c, **opts) for c in clauses]
            if (any if mode == "or" else all)(v > 0 for v in s):
                out[i] = sum(s)
        return out


def ranked(weights):
    """Ids by weight descending, ties by ascending id."""
    return sorted(weights, key=lambda i: (-weights[i], i))


def assert_weights(got, want, rel=1e-5):
    """got [(id, WEIGHT())] in the server's order: the documents of want
    {id: weight}, best first, with those weights (WEIGHT() is a FLOAT)."""
    assert sorted(i for i, _ in got) == sorted(want), (got, want)
    for i, w in got:
        assert w == pytest.approx(want[i], rel=rel), (i, got, want)
    assert [w for _, w in got] == sorted((w for _, w in got), reverse=True), got


REF = Reference(CORPUS)


# ---------------------------------------------------------------------------
# CREATE TABLE options


def test_create_table_text_options(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) stopwords='en'")
    create = rows(cur, f"SHOW CREATE TABLE {t}")[0][1]
    assert "stopwords='en'" in create, create
    for morph in ("stem_de", "stem_fr", "stem_ru", "stem_porter", "none"):
        cur.execute(f"CREATE TABLE {uniq()} (body TEXT) morphology='{morph}'")
    cur.execute(f"CREATE TABLE {uniq()} (body TEXT) stopwords='none' min_prefix_len='0'")


@pytest.mark.parametrize("opts, pattern", [
    ("morphology='bogus'", r"unknown morphology 'bogus'.*stem_en"),
    ("stopwords='xx'", r"unknown stop-word list 'xx'"),
    ("min_prefix_len='abc'", r"min_prefix_len"),
    ("min_prefix_len='-1'", r"min_prefix_len"),
    ("min_prefix_len='101'", r"min_prefix_len"),
    ("rank_profile='x: bogus=1'", r"unknown option 'bogus'"),
    ("rank_profile='x: ranker=fast'", r"ranker 'fast'"),
    ("rank_profile='x: k1=-1'", r"k1"),
])
def test_create_table_bad_text_options(cur, uniq, opts, pattern):
    t = uniq()
    expect_error(cur, f"CREATE TABLE {t} (body TEXT) {opts}", 1064, pattern)
    expect_error(cur, f"DESCRIBE {t}", 1146)


# ---------------------------------------------------------------------------
# The query language, operator by operator, on CORPUS

OPERATOR_CASES = [
    # implicit AND, OR, and their precedence (| binds tighter)
    ("quick", [1, 3, 4, 7]),
    ("quick fox", [1, 4]),
    ("fox | bear", [1, 3, 4, 6]),
    ("quick fox | bear", [1, 3, 4]),
    ("fox | bear quick", [1, 3, 4]),
    ("hello world", [5]),
    # NOT
    ("quick -fox", [3, 7]),
    ("quick !fox", [3, 7]),
    ("-fox brown", [3, 8]),
    ("brown -(fox | bear)", [8]),
    ("brown -fox | bear", [8]),
    # Lucene's required
    ("+quick +fox", [1, 4]),
    ("+quick fox", [1, 4]),
    # phrase
    ('"lazy dog"', [1, 2]),
    ('"dog lazy"', []),
    ('"the fox jumps"', [1]),
    ('"fox jumps the"', []),
    ('"fox the"', []),               # title "... fox", body "the ...": no phrase across fields
    ('title:"lazy dog"', [2]),
    # proximity: a span of fewer than N + words positions, any order
    ('"fox dog"~4', []),            # fox .. dog spans 6 positions in doc 1
    ('"fox dog"~5', [1]),
    ('"dog fox"~5', [1]),
    ('"the dog"~1', [2]),
    ('"the dog"~2', [1, 2]),
    ('"dog the lazy"~1', [1]),
    ('"fox the"~5', [1, 6]),
    # prefix
    ("quick*", [1, 3, 4, 7]),
    ("quickl*", [7]),
    ("fox*", [1, 4, 6]),
    ("QUICKL*", [7]),
    ("@title qui*", [1, 7]),
    # field scope
    ("@title fox", [1, 4]),
    ("@body fox", [1, 6]),
    ("@body foxes", [4]),
    ("@(title,body) fox", [1, 4, 6]),
    ("@(title) dog", [2, 8]),
    ("@title brown @* dog", [1]),
    ("@title dog @body brown", [8]),
    ("@title brown dog", []),
    ("(@title brown) dog", [1]),
    ("@title (brown | red) fox", [1, 4]),
    ("title:dog", [2, 8]),
    ("title:dog brown", [8]),
    ("title:dog | title:bear", [2, 3, 8]),
    ('body:"lazy dog"', [1]),
    ("title:(fox | bear)", [1, 3, 4]),
    ("nope:fox", []),                # not a field: ':' separates two words
    ("-title:dog lazy", [1]),
    ("@title -dog lazy", []),
    # grouping
    ("(fox | bear) quick", [1, 3, 4]),
    ("(fox | dog) (red | lazy)", [1, 2, 4]),
    ("((fox))", [1, 4, 6]),
    # escapes: the special character is part of the word
    ("quick \\-fox", [1, 4]),
    ("fox \\| bear", []),            # the word "|" has no term: fox AND bear
    ("\\(fox\\)", [1, 4, 6]),
    ("\\@title fox", []),            # "@title" is a word here: title AND fox
    # a word that analyses to several terms is a phrase
    ("lazy-dog", [1, 2]),
    ("dog-lazy", []),
    # the empty query matches everything
    ("", [1, 2, 3, 4, 5, 6, 7, 8]),
    ("   ", [1, 2, 3, 4, 5, 6, 7, 8]),
    # MAYBE: the left side's documents; the right side only adds weight
    ("fox MAYBE quick", [1, 4, 6]),
    ("quick MAYBE nothere", [1, 3, 4, 7]),
    ("fox | bear MAYBE quick", [1, 3, 4, 6]),
    ("fox maybe", []),              # lower case: the word "maybe"
    # quorum: at least N (or a fraction, rounded) of the distinct words
    ('"quick fox dog"/2', [1, 4]),
    ('"quick fox dog"/1', [1, 2, 3, 4, 6, 7, 8]),
    ('"quick fox dog"/3', [1]),
    ('"quick fox dog"/5', [1]),     # more than there are words: all of them
    ('"quick fox dog bear"/0.5', [1, 3, 4]),
    ('@title "quick fox dog"/2', [1]),
    ('"the fox nope"/2', [1, 6]),
    # field start and end
    ("^the", [1, 2]),
    ("fox$", [1, 4, 6]),
    ("^dog", [8]),
    ("dog$", [1, 2, 8]),
    ('"^lazy dog$"', [2]),
    ('"lazy dog$"', [1, 2]),
    ("^hello$", []),
    ("^news", [6]),
    ("@title ^world", [6]),
    # strict order, in one field
    ("fox << dog", [1]),
    ("dog << fox", []),
    ("the << fox", [1, 6]),
    ("brown << dog", [8]),
    ('quick << "brown fox"', [1]),
    ("quick << brown", [1]),
    ("quick << brown << dog", []),  # title 1 has no dog, body 1 no quick
    ("the << lazy << dog", [1]),
    # an OR list as an operand: a chain for each choice (Sphinx's red|blue << car)
    ("(fox | bear) << dog", [1]),
    ("the << fox | dog", [1, 2, 6]),
    ("quick << (fox | dog | bear)", [1]),
    ('(bear | "lazy dog") << sleeps', []),
    ('the << (bear | "lazy dog")', [1]),
    # '<<' over groups, prefixes and quorums (Manticore's "(bag of words) <<
    # "exact phrase" << red|green|blue"): every operand matches, and in one
    # field an occurrence of each (a group's: any of its words) comes after
    # one of the operand before it
    ("fox << dog*", [1]),
    ("(quick brown) << fox", [1]),
    ("(lazy dog) << sleeps", [2]),  # the group holds in the row; its dog is in the body
    ("fox << (dog | bear*)", [1]),
    ("(fox dog) << (quick | lazy)", [1]),
    ("@title (brown | red) << fox", [1, 4]),
    ('"quick fox dog"/2 << lazy', [1]),
    ("(dog -lazy) << brown", []),
    ("brown << (dog -lazy)", [8]),
    ('(quick fox) << "lazy dog" << dog*', []),
    ('(the fox) << "lazy dog"', [1]),
    ("(fox MAYBE nothere) << dog", [1]),
    # a MAYBE's optional side counts where it matches, as in Sphinx: title
    # 1's brown comes before its fox (its dog is in the body)
    ("(dog MAYBE brown) << fox", [1]),
    ("quick << (dog MAYBE fox)", [1]),
    ("(big | quick) << (brown | bear)", [1]),  # words only: chains, as before
    ("(a bear) << (brown big)", [3]),
    # an ORDER first in another is one chain with it, as in Sphinx (the
    # group's quick and brown are the title's, lazy the body's)
    ("((quick brown) << fox) << lazy", []),
    ("(fox << lazy) << dog", [1]),
    # one elsewhere passes on the occurrences of the chains it finds: the
    # body's fox and lazy here, and quick is the title's
    ("fox << (lazy << dog)", [1]),
    ("quick << (fox << lazy)", []),
    ("the << (fox << lazy)", [1]),
    ("((quick brown) << fox) << quick", []),
    # a proximity phrase's occurrences are its windows, as Sphinx's: body 1's
    # "fox lazy"~5 spans fox .. lazy, around jumps and over
    ('"fox lazy"~5 << dog', [1]),
    ('"fox lazy"~5 << over', []),
    ('jumps << "fox lazy"~5', []),
    ('the << "fox lazy"~5', [1]),
    # ... and a NEAR chain's (of one distance) the chains Sphinx's automaton
    # completes, each from its start and one position per operand: body 1's
    # fox NEAR/4 lazy starts at fox and is 2 long, so over comes after it
    # and jumps does not
    ("(fox NEAR/4 lazy) << dog", [1]),
    ("(fox NEAR/4 lazy) << over", [1]),
    ("(fox NEAR/4 lazy) << jumps", []),
    ("the << (fox NEAR/4 lazy)", [1]),
    # the chain operators are left-associative, as Sphinx's: a NEAR/N or
    # SENTENCE chain before '<<' is its first operand
    ("fox NEAR/4 lazy << over", [1]),
    ("fox NEAR/4 lazy << jumps", []),
    ("the NEAR/1 fox << dog << day*", []),
    ("the NEAR/1 fox << dog", [1]),
    ("fox SENTENCE lazy << dog", [1]),
    # an anchored word or exact phrase operand: its occurrences at the
    # field's start or end only, as in Sphinx
    ("^quick << fox", [1]),
    ("^brown << fox", []),
    ("fox << dog$", [1]),
    ("lazy NEAR/1 dog$", [1, 2]),
    ("lazy NEAR/1 dog$ -sleeps", [1]),
    ("^the NEAR/2 fox", [1]),
    ('"^the fox" NEAR/5 dog$', [1]),
    ('"^the fox" NEAR/4 dog$', []),
    ("^the NEAR/2 fox << dog", [1]),
    ("days NOTNEAR/2 dog$", [8]),
    # an OR whose parts all match nothing matches nothing: an AND with it
    # too (as in Sphinx); only stop words are left out
    ("quick (nothere | zzz)", []),
    ("quick (nothere | zzz*)", []),
    ('quick ("nothere fox" | @title zzz)', []),
    ("quick -(nothere | zzz)", [1, 3, 4, 7]),
    ("quick | (nothere | zzz)", [1, 3, 4, 7]),
    ("quick MAYBE (nothere | zzz)", [1, 3, 4, 7]),
    # NEAR/N: at most N positions apart, either order, in one field
    ("fox NEAR/3 lazy", []),
    ("fox NEAR/4 lazy", [1]),
    ("lazy NEAR/4 fox", [1]),
    ("dog NEAR/1 lazy", [1, 2]),
    ("lazy NEAR/1 dog NEAR/1 over", []),
    ("lazy NEAR/1 dog NEAR/2 over", [1]),
    ("brown NEAR/2 quick", [1]),
    ('"lazy dog" NEAR/3 jumps', [1]),
    ("(red | brown) NEAR/1 (fox | dog)", [1, 4, 8]),
    # a prefix (or, with min_infix_len, a wildcard) as an operand: any of its
    # terms (Sphinx's hello NEAR/3 wor*)
    ("dog NEAR/2 sl*", [2]),
    ("fox* NEAR/1 red", [4]),
    ("hel* NEAR/3 wor*", [5]),
    ("fox NEAR/2 (dog | bear*)", []),
    ("dog NEAR/1 (lazy | bro*)", [1, 2, 8]),
    ("fox* NOTNEAR/1 red", [1, 4, 6]),         # body 4: "foxes are red", 2 apart
    ("quick NOTNEAR/3 bro*", [3, 4, 7]),
    ("fox NOTNEAR/2 zzz*", [1, 4, 6]),         # a prefix with no terms is far from everything
    # a repeated operand takes another occurrence (Sphinx's big NEAR/3 big)
    ("the NEAR/3 the", [6]),                   # body 6: the 2, the 5; body 1: the 0, the 4
    ("the NEAR/4 the", [1, 6]),
    ("fox NEAR/9 fox", []),                    # doc 1 has one fox per field
    ("the NEAR/1 fox NEAR/3 the", [1, 6]),
    ("the NOTNEAR/3 the", [1, 2]),             # a "the" with no other within 3
    ("zzz* NEAR/2 fox", []),
    ("quick SENTENCE bro*", [1, 3]),           # no boundaries indexed: a field is one part
    ('(quick | "lazy dog") NOTNEAR/2 fox', [1, 2, 3, 4, 7]),
    # NOTNEAR/N: the first operand where the second is absent or more than
    # N positions away (either side), in one field; any one occurrence
    ("fox NOTNEAR/2 dog", [1, 4, 6]),          # title 1 has no dog at all
    ("@body fox NOTNEAR/5 dog", [6]),          # body 1: fox 1, dog 6: 5 apart
    ("@body fox NOTNEAR/4 dog", [1, 6]),
    ("@body dog NOTNEAR/5 fox", [2, 8]),       # either side
    ("brown NOTNEAR/1 dog", [1, 3]),           # body 8: "brown dog"
    ("@body quick NOTNEAR/3 brown", [3, 4, 7]),
    ("@body quick NOTNEAR/4 brown", [4, 7]),
    ('@body "lazy dog" NOTNEAR/3 jumps', []),
    ('@body "lazy dog" NOTNEAR/1 jumps', [1]),
    ("fox NOTNEAR/3 nothere", [1, 4, 6]),
    ("nothere NOTNEAR/3 fox", []),
    ("quick (fox NOTNEAR/1 brown)", [1, 4]),   # title 1 "brown fox"; body 1 has no brown
    ("quick (@title fox NOTNEAR/1 brown)", [4]),
    # every field but some; unknown fields ignored under @@relaxed
    ("@!title fox", [1, 6]),
    ("@!(body) fox", [1, 4]),
    ("@@relaxed @(body,nope) fox", [1, 6]),
    ("@@relaxed @nope fox", []),
    # ... and the words of a scope of only unknown fields are left out, as
    # Sphinx drops them (quick alone: 1, 3, 4, 7)
    ("@@relaxed quick @nope fox", [1, 3, 4, 7]),
    ("@@relaxed (@nope quick) fox", [1, 4, 6]),
    ("@@relaxed quick | @nope fox", [1, 3, 4, 7]),
    ("@@relaxed quick -@nope fox", [1, 3, 4, 7]),
    ("@@relaxed quick MAYBE @nope fox", [1, 3, 4, 7]),
    ("@@relaxed quick NEAR/2 @nope fox", [1, 3, 4, 7]),
    ("@@relaxed quick << @nope (fox | dog*)", [1, 3, 4, 7]),
    ('@@relaxed @nope "quick fox"~3 qu* lazy', []),
    ("@@relaxed @nope quick @title fox", [1, 4]),
    # position limits: only the first N positions of the field count
    ("@body[2] fox", [1]),
    ("@title[2] fox", [4]),
    ("@title[3] fox", [1, 4]),
    ("@title [3] fox", [1, 4]),
    ("@(title,body)[2] dog", [2, 8]),
    ("@!title[2] dog", [2]),
    ("@body[5] quick", [4, 7]),
    ("@body[5] quick*", [4, 7]),
    ('@body[6] "lazy dog"', []),
    ('@body[7] "lazy dog"', [1]),
    ('@body[7] "fox lazy"~4', [1]),
    ('@body[5] "fox lazy"~4', []),
    ("@body[4] the << fox", [1]),
    ("@body[4] fox NEAR/3 @body the", [1]),
    ("@body[7] fox NEAR/3 @body the", [1, 6]),
    ("@body[3] fox$", []),
    ("@body[7] fox$", [6]),
    ("@body[1] ^the", [1, 2]),
    ('@body[4] "quick fox the"/2', [1]),
    ("@title[1] brown | @body[1] hot", [3, 8]),
    ("@body[2] dog @* lazy", [2]),
    ("(@body[2] dog) lazy", [2]),
    ("@body[2] dog -lazy", [2]),     # -lazy is scoped too: not in body 2
    ("lazy @body[2] -dog", [1]),
    # a prefix inside a phrase: that word of the phrase is any of its terms
    ('"brown fo*"', [1]),
    ('"quick*"', [1, 3, 4, 7]),                # one word: the prefix itself
    ('"the fox*"', [1, 6]),
    ('"qui* br*"', [1]),
    ('"lazy d*"', [1, 2]),
    ('"d* lazy"', []),
    ('"^d* days$"', [8]),
    ('"fox* are"', [4]),
    ('"fox* the"~3', [1, 6]),
    ('"quickl* done nothere"/2', [7]),
    ('"(fox* | bear) is"', [3]),
    ('@title "quick br*"', [1]),
    ('"brown fo*" << jumps', []),              # one field: "brown fox" is the title's
    ('"the fo*" << lazy', [1]),
    # '*' standing alone in an exact phrase: one word position, any word
    ('"quick * fox"', [1]),
    ('"quick fox"', []),
    ('"the * jumps"', [1]),
    ('"fox * * the"', [1]),                   # body 1: fox jumps over the
    ('"fox * the"', []),
    ('"hello * big"', [5]),
    ('"^* fox"', [1, 4]),                     # fox second in a field
    ('"* fox"', [1, 4, 6]),                   # a star first or last requires nothing
    ('"quick \\* fox"', []),                  # a literal star separates: "quick fox"
    ('quick << "fox * over"', []),
    ('"the * jumps" << dog', [1]),
    # alternatives in a phrase: each in turn (an OR of phrases)
    ('"(brown | red) fox"', [1, 4]),
    ('"the (fox | dog) (jumps | sleeps)"', [1, 2]),
    ('"((lazy dog) | bear) is"', [3]),
    ('"^(lazy | hot) (dog | days)"', [2, 8]),
    ('"(brown | red) fox" -lazy', [4]),
    ('@body "(brown | red) (fox | dog)"', [8]),
    ('"brown | red fox"', []),                # no parentheses: '|' separates: "brown red fox"
    ('"(brown) fox"', [1]),
    # word^N boosts the word's idf; it matches as the word does
    ("fox^2 | bear", [1, 3, 4, 6]),
    ("fox^0.5 dog", [1]),
    ("^the^3", [1, 2]),
    ("fox$^1.5", [1, 4, 6]),
    ("-fox^2 dog", [2, 8]),
    ("a^b", []),                              # no number: '^' is part of the word
]


@pytest.mark.parametrize("text, want", OPERATOR_CASES)
def test_query_operators(cur, corpus, text, want):
    assert sorted(match_ids(cur, corpus, text)) == want
    cur.execute(f"SELECT COUNT(*) FROM {corpus} WHERE MATCH(%s)", (text,))
    assert cur.fetchone()[0] == len(want)


# (text, offset in the message, what the message says)
SYNTAX_ERRORS = [
    ("a b ()", r"^MATCH: near '\)' at offset 5: expected a word, phrase or '\('$"),
    ("fox)", r"near '\)' at offset 3"),
    ("(fox", r"unexpected end of query at offset 4: expected '\)'"),
    ("fox |", r"unexpected end of query at offset 5"),
    ("fox | ", r"unexpected end of query at offset 6"),
    ('"abc', r"unexpected end of query at offset 4: expected closing '\"'"),
    ("quick ~ fox", r"at offset 6"),
    ('"a b"~', r"at offset 5: expected a number"),
    ("*", r"near '\*' at offset 0"),
    ("qu*ck", r"wildcard 'qu\*ck' at offset 0: a '\*' before or inside a word \(infix search\) "
              r"needs the table option min_infix_len"),
    ("qu*~", r"near '\*~' at offset 2: '\*' is only supported at the end of a word"),
    ("fox | -dog", r"at offset 6"),
    ("@", r"unexpected end of query at offset 1"),
    ("fox @nope dog", r"unknown field 'nope' at offset 5"),
    ("@(title,nope) fox", r"unknown field 'nope' at offset 8"),
    ("-fox", r"negated"),
    ("-fox !dog", r"negated"),
    ('"a b"/0', r"at offset 6: a quorum threshold must be at least 1"),
    ("fox << -dog", r"at offset 7: '<<' orders words, phrases, prefixes, wildcards, quorums and "
                    r"groups; this operand is a negation"),
    ("fox NOTNEAR/2 -dog", r"at offset 14: NOTNEAR/N joins words, phrases, prefixes, wildcards, quorums, "
                           r"chains and groups; this operand is a negation"),
    ('fox NEAR/2 ((dog bear) | cat)', r"at offset 12: NEAR/N joins words, prefixes, wildcards, exact "
                                      r"phrases, OR lists of them and groups of these; this operand is "
                                      r"a group in an OR list"),
    ('"brown *ox"', r"wildcard '\*ox' at offset 7: a '\*' before or inside a word \(infix search\) needs the "
                    r"table option min_infix_len"),
    ('"brown f*x"', r"wildcard 'f\*x' at offset 7: a '\*' before or inside a word"),
    ('"bro** fox"', r"at offset 4: a prefix inside a phrase ends in one '\*'"),
    ("fox << (a|b) << (c|d) << (e|f) << (g|h) << (i|j) << (k|l) << (m|n) << (o|p) << (q|r)",
     r"at offset 0: the OR lists of this chain make more than 256 chains"),
    ("fox NOTNEAR/3 dog MAYBE bear", r"at offset 14: NOTNEAR/N joins .*; this operand is a MAYBE \(it binds "
                                     r"tighter"),
    ("fox SENTENCE dog PARAGRAPH bear", r"at offset 17: SENTENCE and PARAGRAPH cannot be mixed"),
    ("fox SENTENCE (dog bear)", r"at offset 13: SENTENCE joins words, prefixes, wildcards, exact "
                                r"phrases and OR lists of them; this operand is a group"),
    ("SENTENCE dog", r"at offset 0: SENTENCE is an operator"),
    ("=fox*", r"at offset 0: the exact form operator '=' does not apply to a prefix"),
    ("MAYBE fox", r"at offset 0: MAYBE is an operator"),
    ("fox NEAR/0 dog", r"at offset 9: NEAR/N takes a distance from 1"),
    ("@title[0] fox", r"at offset 7: a field position limit is a number of positions from 1 to "
                      r"1000000000 \('@title\[50\]'\)"),
    ("@title[x] fox", r"at offset 7: a field position limit is a number of positions"),
    ("@title[3 fox", r"at offset 9: expected '\]' after the field position limit"),
    ('"quick * fox"~2', r"at offset 7: '\*' stands for one word of an exact phrase; a proximity"),
    ('"quick * fox"/1', r"at offset 7: '\*' stands for one word of an exact phrase"),
    ("fox^0", r"at offset 4: a boost must be above 0 and at most 1000"),
    ("fox^2.5.1", r"at offset 7: expected a space or an operator after the boost '\^2.5'"),
    ('"fox dog"^2', r"at offset 9: a boost \(\^N\) applies to a word \(word\^1.5\), not a phrase"),
    ("(fox dog)^2", r"at offset 9: a boost \(\^N\) applies to a word \(word\^1.5\), not a group"),
    ("fo*^2", r"at offset 3: a boost \(\^N\) applies to a word \(word\^1.5\), not a prefix"),
    ("fox^2 NEAR/3 dog", r"at offset 0: NEAR/N joins words and exact phrases; a boost"),
    ('"fox | dog lazy"/2', r"at offset 5: '\|' in a quorum separates the words of a group in parentheses"),
    ('"' + "(a|b) " * 9 + '"', r"at offset 0: a phrase's alternatives make more than 256 phrases"),
]


@pytest.mark.parametrize("text, pattern", SYNTAX_ERRORS)
def test_match_syntax_errors(cur, corpus, text, pattern):
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH(%s)", 1064, pattern, args=(text,))


def test_match_nesting_and_size_limits(cur, corpus):
    assert sorted(match_ids(cur, corpus, "(" * 100 + "fox" + ")" * 100)) == [1, 4, 6]
    for n in (101, 5000):
        expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH(%s)", 1064, r"at offset 100: .*nested",
                     args=("(" * n + "fox" + ")" * n,))
    assert sorted(match_ids(cur, corpus, "fox " + "| fox " * 5000)) == [1, 4, 6]
    assert match_ids(cur, corpus, "a" * 100000) == []
    assert sorted(match_ids(cur, corpus, "fox" + "*" * 100)) == [1, 4, 6]


def test_proximity_with_a_repeated_word(cur, corpus):
    """'"fox fox"~3' asks for two words within a span of fewer than 5
    positions; docs 4 and 6 hold one "fox" each (doc 1 one per field), so
    nothing matches, as the exact phrase '"fox fox"' matches nothing."""
    assert match_ids(cur, corpus, '"fox fox"') == []
    assert match_ids(cur, corpus, '"fox fox"~3') == []


# ---------------------------------------------------------------------------
# Analysis: stemming, stop words, Unicode, invalid UTF-8

STEM_DOCS = {
    1: ("he was running fast",),
    2: ("she runs daily",),
    3: ("a quick run",),
    4: ("the runner is here",),
    5: ("to be or not to be",),
    6: ("the cat of the house",),
    7: ("cat house",),
}


@pytest.fixture(scope="module")
def stemmed(server):
    return make_table(server, "fts_stemmed",
                      "(body TEXT) morphology='stem_en' stopwords='en' min_prefix_len='3'", STEM_DOCS)


@pytest.mark.parametrize("text, want", [
    ("run", [1, 2, 3]),
    ("running", [1, 2, 3]),
    ("RUNS", [1, 2, 3]),
    ('"quick running"', [3]),
    # prefixes match the words as written: min_prefix_len on a stemmed
    # table indexes exact forms too (index_exact_words, as Manticore forces)
    ("runn*", [1, 4]),
    ("run*", [1, 2, 3, 4]),
    ("runs*", [2]),
    # stop words are dropped, and keep their positions in phrases
    ("the cat", [6, 7]),
    ("cat -the", [6, 7]),
    ("cat | the", [6, 7]),
    ('"cat house"', [7]),
    ('"cat of the house"', [6]),
    ('"cat a a house"', [6]),
    ('"cat the house"', []),
    # an OR list's alternative of only stop words is left out of a chain's
    # list, as of any OR: the chain keeps its other alternatives (it was
    # left out as an operand, so the chain matched every 'cat'), and an
    # OR list of only stop words is left out as an operand of them is
    ("(the | cat) << house", [6, 7]),
    ("cat << (the | runner)", []),
    ("house NEAR/1 (the | cat)", [7]),
    ("(a | quick) NEAR/1 run", [3]),
    ("(the | of) << house", [6, 7]),
    ("cat << (the | of)", [6, 7]),
    ("cat SENTENCE (the | house)", [6, 7]),
    ("(cat << (the | runner)) | zzz", []),     # the choices in a group, ORed on
    ("((the | a) NEAR/1 quick) | zzz", [3]),
])
def test_stemming_and_stop_words(cur, stemmed, text, want):
    assert sorted(match_ids(cur, stemmed, text)) == want


def test_prefixes_in_phrases_and_near(server, cur, stemmed, uniq):
    """A word of a phrase that a '*' ends is a prefix ("hello wor*", as in
    Sphinx): that place of the phrase is any term it expands to, in the
    RAM segment and in a sealed one; NEAR/N, NOTNEAR/N, SENTENCE and
    PARAGRAPH take prefixes and wildcards as operands. HIGHLIGHT(), SHOW
    META and EXPLAIN show the prefix; min_prefix_len and expansion_limit
    apply as outside quotes."""
    # stemmed, with exact forms: a prefix matches the words as written
    assert sorted(match_ids(cur, stemmed, '"quick run*"')) == [3]
    assert sorted(match_ids(cur, stemmed, '"running fas*"')) == [1]
    assert sorted(match_ids(cur, stemmed, '"the runn*"')) == [1, 4]   # "the" a stop word: a gap
    assert sorted(match_ids(cur, stemmed, '"runn* fast"')) == [1]
    expect_error(cur, f"SELECT id FROM {stemmed} WHERE MATCH('\"was ru* fast\"')", 1064,
                 r"prefix 'ru\*' at offset 5 \(in a phrase\) is shorter than min_prefix_len=3")
    docs = {1: ("new york city", "the big apple"), 2: ("new yorkshire pudding", "york and new"),
            3: ("newer yorks", "new jersey"), 4: ("york new", "brand new yoghurt")}
    t = make_table(server, uniq(), "(title TEXT, body TEXT) min_infix_len='2' index_sp='1'", docs)
    cases = [('"new yor*"', [1, 2]), ('"new* york*"', [1, 2, 3]), ('"new y*"', [1, 2, 4]),
             ('"new yo*"~2', [1, 2, 4]), ('"^york* new$"', [4]), ('"new yor* cit*"', [1]),
             ("new NEAR/1 *ork*", [1, 2, 4]), ("*ork NEAR/2 *ew", [1, 2, 4]),
             ("new NOTNEAR/1 yo*", [2, 3]), ("@body new NEAR/2 yog*", [4]), ("new SENTENCE *rsey", [3]),
             ("new PARAGRAPH pud*", [2])]
    assert_ids_ram_and_flushed(cur, t, cases)
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('@title \"new yor*\"') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>new</b> <b>york</b> city | the big apple"),
                              (2, "<b>new</b> <b>yorkshire</b> pudding | york and new"))
    m = meta(cur)
    assert (m["keyword[0]"], m["keyword[1]"], m["docs[1]"]) == ("new", "yor*", "4"), m
    # a quorum's prefix too (2 of its 3 words, in any order)
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('@title \"new yor* zzz\"/2') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>new</b> <b>york</b> city | the big apple"),
                              (2, "<b>new</b> <b>yorkshire</b> pudding | york and new"),
                              (4, "<b>york</b> <b>new</b> | brand new yoghurt"))
    m = meta(cur)
    assert (m["keyword[1]"], m["docs[1]"]) == ("yor*", "4"), m
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('\"new yor*\"')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'phrase "new yor*"' in plan, plan
    # a prefix's terms spread over two sealed segments and the RAM one, a
    # deleted row among them
    m = make_table(server, uniq(), "(body TEXT) min_infix_len='2'", {1: ("new york",), 2: ("new yorkshire",)})
    cur.execute(f"FLUSH TABLE {m}")
    cur.execute(f"INSERT INTO {m} (id, body) VALUES (3, 'new yoke'), (4, 'new yorker')")
    cur.execute(f"FLUSH TABLE {m}")
    cur.execute(f"INSERT INTO {m} (id, body) VALUES (5, 'new yogurt'), (6, 'old york')")
    cur.execute(f"DELETE FROM {m} WHERE id = 2")
    for text, want in [('"new yo*"', [1, 3, 4, 5]), ('"new yor*"', [1, 4]), ("new NEAR/1 *ork*", [1, 4]),
                       ("yo* NOTNEAR/1 new", [6])]:
        assert sorted(match_ids(cur, m, text)) == want, text
    # expansion_limit cuts each field's terms, and says so
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('\"new yor*\"') OPTION expansion_limit=1")
    assert sorted(r[0] for r in cur.fetchall()) == [1]  # "york" only: "yorkshire" cut
    assert meta(cur).get("prefix_expansion_capped", "").startswith("yes")


# Rows and queries for test_near_chains_match_as_in_sphinx: every expected
# id list is what searchd 2.2.11 returned for the same rows (an RT index,
# title and body fields; bench/fulltext/parity.py checks many more, drawn
# at random, against a live searchd). Under loupe's former rule (each
# operand within N of the span the ones before it took) each of the chains
# of words below gave other rows.
NEAR_ROWS = ['a c d y e a', 'x y e d a y b y c d', 'e x a a b d y e b b c', 'x y c y d d e a d x x y', 'y e e x y b y d e c', 'e c b y b y y b y a', 'a b b c y d c a e x a', 'x y c b x y e y x b', 'd e e b', 'a c y e d c x b c']

NEAR_CASES = [
    # one distance: one automaton over every operand
    ("a NEAR/1 b NEAR/3 d", [3, 7]),
    ("a NEAR/4 c NEAR/4 e", [1, 2, 3, 4, 7, 10]),
    ("b NEAR/2 c NEAR/2 d", [2, 5, 7, 10]),
    ("c NEAR/1 b NEAR/1 a", [7]),
    ("c NEAR/4 a NEAR/4 b", [2, 3, 6, 7, 10]),
    ("e NEAR/1 d NEAR/1 a NEAR/1 c", [4, 7]),
    ("c NEAR/2 a NEAR/2 b NEAR/2 d", [2, 7]),
    # mixed distances: a NEAR/3 d NEAR/1 e is (a NEAR/3 d) NEAR/1 e
    ("a NEAR/3 d NEAR/1 e", [2, 4, 7]),
    ("a NEAR/6 e NEAR/3 c", [1, 7, 10]),
    ("b NEAR/2 c NEAR/3 d", [2, 7, 10]),
    ("a NEAR/6 e NEAR/1 b NEAR/2 c", []),
    ("c NEAR/6 d NEAR/3 a NEAR/1 b", [3, 7]),
    # groups: their words join the chain with the group's distance
    ("(a b) NEAR/1 d", [3]),
    ("c NEAR/4 (a b)", [2, 3, 6, 7, 10]),
    ("(b c) NEAR/2 d NEAR/2 e", [3, 5, 10]),
    ("(c e) NEAR/2 (a d)", [1, 4, 7, 10]),
    ("(c (e a)) NEAR/4 b", [2, 3, 6, 7, 10]),
    ("(a NEAR/1 b) NEAR/3 d", [3, 7]),
    ('a NEAR/4 (e "b y")', [2, 6]),
    ("(a -x) NEAR/3 e", [1]),
    ("(c -x) NEAR/4 (a b)", [6]),
]


# NEAR/N over a proximity phrase, a '<<' chain (`a << b NEAR/1 c` is
# `(a << b) NEAR/1 c`), a MAYBE holding a phrase, an OR list of these
NEAR_ANY_CASES = [
    ('"a b"~2 NEAR/1 c', []),
    ('"a b"~3 NEAR/2 e', [2]),
    ('c NEAR/2 "d e"~2', [1, 5, 10]),
    ("(a << b) NEAR/2 c", [2, 7, 10]),
    ("a << b NEAR/1 c", [10]),
    ("e NEAR/3 (a << c)", [1, 2, 3, 10]),
    ('(a MAYBE "b c") NEAR/1 d', [2, 4]),
    ('("a b"~1 | x) NEAR/1 c', [10]),
    ('"a b"~3 NEAR/2 c NEAR/2 d', [2, 7]),
    ("b << c NEAR/3 d NEAR/1 e", [2, 5, 10]),
    ("(d << e) NEAR/2 (a << b)", [3]),
    ('"e a"~2 NEAR/4 "b c"~1', [7]),
    ('x NEAR/1 ("b d"~2 | "e c")', []),
    ("e NEAR/2 (a NEAR/1 b)", []),
    ("e NEAR/3 (a NEAR/1 b)", [3]),
    ("d NEAR/1 (a NEAR/1 c NEAR/3 e)", [1, 7, 10]),
]


# Anchors on the words of phrases, proximities and quorums, each answer
# searchd 2.2.11's over ANCHOR_ROWS (title, body)
ANCHOR_ROWS = [("cat bee", "x"), ("yak cow", "cow"), ("owl yak", "ant emu owl"), ("bee cat", "cat"),
               ("cat the bee", "x"), ("bee", "cat x"), ("emu ant cat", "cat owl bee cat"), ("ant", "yak emu ant")]
ANCHOR_CASES = [
    ('"cat$ bee"', []),
    ('"yak ^cow"', []),
    ('"emu ant$ cat"', []),
    ('"cat$ *"', [4, 7]),
    ('"* ^bee"', [4, 6]),
    ('"cat$ the"', []),
    ('"cat$ bee"~3', [4, 7]),
    ('"bee ^cat"~3', [1, 5, 7]),
    ('"^cat bee"~3', [1, 5, 7]),
    ('"cat bee$"~3', [1, 5]),
    ('"emu ^ant"~2', [3]),
    ('"^emu cat$"~3', [7]),
    ('"ant$ emu"~1', [8]),
    ('"cat cat$"~5', [4, 7]),
    ('"cat$ bee"/2', [4, 7]),
    ('"cat bee$"/1', [1, 4, 5, 6, 7]),
    ('"^bee cat"/1', [1, 4, 5, 6, 7]),
    ('"^ant emu$ owl"/2', [3]),
    ('"^ant emu$ owl$"/3', []),
    ('"cat$ bee" | owl', [3, 7]),
    ('owl << "cat$ bee"~3', [7]),
    ('"bee ^cat"~3 NEAR/2 x', []),
    ('@title "cat$ bee"~3', [4]),
    ('@body "cat$ owl"~4', [7]),
    ('"(bee | cat) cat$"~2', [4, 7]),
]


def test_anchors_on_phrase_words(server, cur, uniq):
    """'^' and '$' on a word inside a phrase, a proximity or a quorum
    anchor that word, as in Sphinx: only its occurrences first (last) in a
    field count. An exact phrase's own '^' first and '$' last still anchor
    the phrase. RAM segment and sealed alike."""
    t = make_table(server, uniq(), "(title TEXT, body TEXT)",
                   {i + 1: r for i, r in enumerate(ANCHOR_ROWS)})
    assert_ids_ram_and_flushed(cur, t, ANCHOR_CASES)
    # alternatives (Manticore's; Sphinx 2.2.11 reads no '|' in a phrase)
    assert sorted(match_ids(cur, t, '"(emu | owl) ant$"')) == [8]
    # an escaped '$' is a character, no anchor
    assert sorted(match_ids(cur, t, r'"cat\$ bee"')) == [1]
    # a word a quorum repeats counts once, anchored as its first (searchd's rows)
    q = make_table(server, uniq(), "(body TEXT)",
                   {i + 1: (r,) for i, r in enumerate(["x dog run", "dog run", "x run dog", "dog x", "dog dog"])})
    assert_ids_ram_and_flushed(cur, q, [('"^dog dog run"/2', [2]), ('"dog$ dog run"/2', [3]),
                                        ('"^dog dog run"/3', [2]), ('"^dog dog"/2', [2, 4, 5])])
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('\"cat$ ^bee\"~3')")
    assert 'proximity "cat$ ^bee"~3' in "\n".join(r[0] for r in cur.fetchall())


# Wildcard words in phrases, proximities and quorums (min_infix_len 2),
# each answer searchd 2.2.11's over WILD_ROWS (title, body)
WILD_ROWS = [("yak hen", "x"), ("cat bee", "hen yak"), ("kayak hen", "owl"), ("yak owl hen", "x"),
             ("ant emu", "x"), ("pigeon hen hen", "pig")]
WILD_CASES = [
    ('"*ak hen"', [1, 3]),
    ('"*ak hen"~2', [1, 2, 3, 4]),
    ('"*ak hen"/1', [1, 2, 3, 4, 6]),
    ('"hen *ak"~3', [1, 2, 3, 4]),
    ('"*nt emu"', [5]),
    ('"*nt *mu"~3', [5]),
    ('"*nt *mu"/2', [5]),
    ('"*mu ant"~2', [5]),
    ('"^*ak hen"', [1, 3]),
    ('"*ak$"', [2]),
    ('"*ig* hen hen"', [6]),
    ('"*geon hen"', [6]),
    ('"* *ak hen"', [1, 3]),
    ('"ka*ak hen"', [3]),
    # an anchored prefix or wildcard outside quotes: that word, anchored
    ('^*ak', [1, 3, 4]),
    ('*ak$', [2]),
    ('^pig*', [6]),
    ('pig*$', [6]),
    ('^*ig*', [6]),
    ('^*ak hen$', [1, 3, 4]),
]


def test_quorum_or_groups(server, cur, uniq):
    """A group in a quorum whose parts '|' separates counts as one word,
    matched by any part (Manticore's "happy (sad | angry) man"/2); a part
    of several words is their exact phrase. In the RAM segment and
    sealed."""
    rows = ["a happy man", "a sad man", "the angry dog", "sad angry", "happy sad", "very glad boy", "glad very boy",
            "x very glad boy"]
    t = make_table(server, uniq(), "(body TEXT)", {i + 1: (r,) for i, r in enumerate(rows)})
    assert_ids_ram_and_flushed(cur, t, [
        ('"happy (sad | angry) man"/2', [1, 2, 5]), ('"happy (sad | angry) man"/1', [1, 2, 3, 4, 5]),
        ('"(sad | angry) (happy | glad)"/2', [5]), ('"(sad | angry) dog"/1.0', [3]),
        ('"((very glad) | sad) boy man"/2', [2, 6, 8]), ('"(a (sad | angry))"/2', [2]),
        ('"happy sad angry"/2', [4, 5]), ('"(^very glad | angry) boy"/2', [6]), ('"(very glad$ | angry) boy"/2', [])])
    for text in ['"happy | sad"/1', '"(a | (b | c))"/1']:
        expect_error(cur, f"SELECT id FROM {t} WHERE MATCH(%s)", 1064, "quorum", args=(text,))


def test_regex_operator(server, cur, uniq):
    """REGEX(/pattern/) (Manticore's operator) finds the terms its regular
    expression matches whole, expanded and weighted as a wildcard is, in
    the RAM segment and sealed; HIGHLIGHT(), SHOW META and CALL KEYWORDS
    show it; a bad pattern or a table without min_infix_len or
    min_prefix_len is an error that says so."""
    t = make_table(server, uniq(), "(title TEXT, body TEXT) min_infix_len='2'",
                   {1: ("the quick fox", "there is a tie"), 2: ("toe and tee", "nothing"), 3: ("the end", "t2e"),
                    4: ("protein kinase", "proteins")})
    assert_ids_ram_and_flushed(cur, t, [
        ("REGEX(/t.?e/)", [1, 2, 3]), ("REGEX(/t\\de/)", [3]), ("@body REGEX(/t.e/)", [1, 3]),
        ("REGEX(/t.?e/) -REGEX(/t\\de/)", [1, 2]), ("REGEX(/prot.*s/)", [4]), ("REGEX(|to|ti|)", []),
        ("REGEX(|toe|tie|)", [1, 2]), ("fox NEAR/3 REGEX(/t.e/)", [1]), ("REGEX(/nothing|kinase/) the", [])])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('REGEX(/t.?e/)') ORDER BY id ASC")
    assert cur.fetchall()[0] == (1, "<b>the</b> quick fox | there is a <b>tie</b>")
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('REGEX(/t.?e/)') OPTION expansion_limit=2")
    cur.execute("SHOW META")
    meta = dict(cur.fetchall())
    assert meta["keyword[0]"] == "REGEX(/t.?e/)" and meta["prefix_expansion_capped"].startswith("yes")
    cur.execute(f"CALL KEYWORDS('REGEX(/t.?e/)', '{t}', 1)")
    assert sorted(r[2] for r in cur.fetchall()) == ["t2e", "tee", "the", "tie", "toe"]
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('REGEX(/t(/)')", 1064,
                 r"near '/\)' at offset 9: REGEX\(\) pattern: missing closing parenthesis")
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('REGEX(/t')", 1064, r"offset 6: expected '/\)' to end REGEX")
    plain = make_table(server, uniq(), "(body TEXT)", {1: ("the tie",)})
    expect_error(cur, f"SELECT id FROM {plain} WHERE MATCH('REGEX(/t.e/)')", 1064,
                 r"REGEX\(\) needs the table option min_infix_len or min_prefix_len")
    prefixed = make_table(server, uniq(), "(body TEXT) min_prefix_len='3'", {1: ("the tie",), 2: ("toes",)})
    assert_ids_ram_and_flushed(cur, prefixed, [("REGEX(/t.e/)", [1]), ("REGEX(/to.*/)", [2])])
    # A pattern's literal runs narrow the dictionary blocks read (the infix
    # filter): over thousands of terms, in many blocks, no term it matches
    # may be left out. "qzk" sorts before 3,000 "qz..." words, "qzwk" after.
    rnd = random.Random(7)
    words = sorted({"qz" + "".join(rnd.choice("lmnopqrstuv") for _ in range(4)) for _ in range(3000)})
    docs = {i + 1: (" ".join(words[i * 10:i * 10 + 10]),) for i in range((len(words) + 9) // 10)}
    n = len(docs)
    docs[n + 1], docs[n + 2], docs[n + 3] = ("qzk",), ("qzwk",), ("xqzwkx",)
    big = make_table(server, uniq(), "(body TEXT) min_infix_len='3'", docs)
    assert_ids_ram_and_flushed(cur, big, [("REGEX(/qzw?k/)", [n + 1, n + 2]), ("REGEX(/.*zwk.*/)", [n + 2, n + 3]),
                                          ("REGEX(/[a-z]*w?k[a-z]?/)", [n + 1, n + 2, n + 3])])
    # top-level alternatives each narrow the read by their own runs; a term
    # two of them find counts once (the twin in a group reads everything)
    alts = "REGEX(/qzk|xqz.*|%s|%s.*|.*%s/)" % (words[7], words[len(words) // 2][:5], words[-5][-4:])
    cur.execute(f"FLUSH TABLE {big}")
    for text in [alts, "REGEX(/qzw?k|.*zwk.*/)"]:
        twin = text.replace("REGEX(/", "REGEX(/(").replace("/)", ")/)")
        got = sorted(match_ids(cur, big, text))
        cur.execute("SHOW META")
        n_got = dict(cur.fetchall())["prefix_expansions"]
        want = sorted(match_ids(cur, big, twin))
        cur.execute("SHOW META")
        assert got == want and len(got) > 2 and n_got == dict(cur.fetchall())["prefix_expansions"], (text, got, want)


def test_wildcards_in_phrases(server, cur, uniq):
    """A word of a phrase, proximity or quorum with a '*' before or inside
    it is a wildcard ("*ak hen", "ka*ak hen"), on a table with
    min_infix_len, as in Sphinx; HIGHLIGHT() marks what it finds, and SHOW
    META's keywords show its pattern. RAM segment and sealed alike."""
    t = make_table(server, uniq(), "(title TEXT, body TEXT) min_infix_len='2'",
                   {i + 1: r for i, r in enumerate(WILD_ROWS)})
    assert_ids_ram_and_flushed(cur, t, WILD_CASES)
    # a wildcard after the first word takes one place (searchd 2.2.11 counts
    # its '*' as a place of its own there, and finds "yak owl hen" instead)
    assert sorted(match_ids(cur, t, '"yak *en"')) == [1]
    assert sorted(match_ids(cur, t, '"an* *mu"')) == [5]
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('\"*ak hen\"') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>yak</b> <b>hen</b> | x"), (3, "<b>kayak</b> <b>hen</b> | owl"))
    assert meta(cur)["keyword[0]"] == "*ak"
    # a part under min_infix_len, and a table without min_infix_len: errors
    # naming the wildcard
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH(%s)", 1064,
                 r"wildcard '\*a' at offset 3: its longest part without a wildcard is shorter than "
                 r"min_infix_len=2", args=('"x *a hen"',))
    t2 = make_table(server, uniq(), "(body TEXT)", {1: ("yak hen",)})
    expect_error(cur, f"SELECT id FROM {t2} WHERE MATCH(%s)", 1064, r"needs the table option min_infix_len",
                 args=('"*ak hen"',))


def test_near_chains_match_as_in_sphinx(server, cur, uniq):
    """NEAR/N chains of three or more operands find the rows Sphinx and
    Manticore find: their automaton reads the operands' occurrences in
    position order, and a run of links of one distance is one level of it.
    A group is an operand too: its words join the chain with its distance
    and its negations exclude rows. In the RAM segment and sealed."""
    t = make_table(server, uniq(), "(title TEXT, body TEXT)",
                   {i + 1: (r, "") for i, r in enumerate(NEAR_ROWS)})
    assert_ids_ram_and_flushed(cur, t, NEAR_CASES)
    # the group spelled out finds the same rows
    assert sorted(match_ids(cur, t, "(b c) NEAR/2 d NEAR/2 e")) == \
        sorted(match_ids(cur, t, "b NEAR/2 c NEAR/2 d NEAR/2 e"))
    # operands that are more than words: their occurrences are where they
    # match, as Sphinx's NEAR reads them (each answer is searchd 2.2.11's)
    assert_ids_ram_and_flushed(cur, t, NEAR_ANY_CASES)
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('(a << b) NEAR/2 c')")
    assert "NEAR (where each matches, in one field: /2)" in "\n".join(r[0] for r in cur.fetchall())
    # what a NEAR chain cannot take is an error naming the operand
    for text, what in [("(-a -b) NEAR/3 c", "a negation"), ('"a b"~2 SENTENCE c', "a proximity phrase"),
                       ("((a b) | d) NEAR/3 c", "a group in an OR list"), ("(a b) SENTENCE c", "a group")]:
        expect_error(cur, f"SELECT id FROM {t} WHERE MATCH(%s)", 1064, "this operand is " + what, args=(text,))


def test_near_operands_of_words(server, cur, uniq):
    """A MAYBE, a quorum and a group with a negation and more, as a NEAR/N
    operand, stand for their words' occurrences and must match themselves
    (as in Sphinx): the rows of the rewritten query, and refusals where
    the operand holds a phrase."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT)")
    rows = ["aa cc", "bb cc", "aa xx cc", "bb zz zz cc aa", "aa bb", "cc bb xx aa", "zz aa zz zz cc bb",
            "xx cc", "cc aa bb zz zz xx"]
    cur.execute(f"INSERT INTO {t} VALUES " + ", ".join("(%d, '%s')" % (i + 1, r) for i, r in enumerate(rows)))

    def ids(text):
        cur.execute(f"SELECT id FROM {t} WHERE MATCH(%s) ORDER BY id ASC LIMIT 100", (text,))
        return [r[0] for r in cur.fetchall()]
    for text, same in [("(aa MAYBE bb) NEAR/1 cc", "((aa | bb) NEAR/1 cc) (aa MAYBE bb)"),
                       ("cc NEAR/2 (bb MAYBE aa)", "(cc NEAR/2 (bb | aa)) (bb MAYBE aa)"),
                       ('"aa bb xx"/2 NEAR/1 cc', '((aa | bb | xx) NEAR/1 cc) "aa bb xx"/2'),
                       ("(aa bb -xx) NEAR/1 cc", "((aa | bb) NEAR/1 cc) aa bb -xx"),
                       ("(aa (bb MAYBE xx)) NEAR/1 cc", "(aa NEAR/1 (bb | xx) NEAR/1 cc) (bb MAYBE xx)")]:
        got = ids(text)
        assert got == ids(same), text
        assert got, text  # the rows hold some: a check that can fail
    assert ids("(aa MAYBE bb) NEAR/1 cc") == [1, 4, 6, 7, 9]
    assert ids("(aa bb -xx) NEAR/1 cc") == [4, 7]


def test_near_operands_with_phrases_and_wildcards(server, cur, uniq):
    """A group with a negation and a phrase, as a NEAR/N operand, stands at
    its words' occurrences and its phrases' matches; a quorum's wildcard
    at its terms' occurrences. Each answer is searchd 2.2.11's."""
    rows = ["aa bb cc dd", "dd zz zz zz aa bb", "aax zz zz dd", "bb cc zz zz zz dd", "aa zz zz zz zz dd bb",
            "dd aax bb ee", "cc zz zz bb zz zz zz dd", "bb zz cc zz zz zz zz dd", "ee aa bb zz zz zz dd"]
    t = make_table(server, uniq(), "(body TEXT) min_infix_len='2'", {i + 1: (r,) for i, r in enumerate(rows)})
    assert_ids_ram_and_flushed(cur, t, [
        ('"*ax bb cc"/2 NEAR/2 dd', [1, 6]), ('"*ax bb"/1 NEAR/2 dd', [1, 5, 6]), ('"*ax* cc"/1 NEAR/1 dd', [1, 6]),
        ('dd NEAR/2 "*ax bb cc"/2', [1, 6]), ('(aa "bb cc" -ee) NEAR/1 dd', [1]),
        ('(bb "zz dd" -ee) NEAR/2 cc', [4, 8]), ('dd NEAR/2 (aa "bb cc" -ee)', [1]),
        ('("bb cc"~2 aa -ee) NEAR/3 dd', [1]), ("(aa (bb << cc) -ee) NEAR/2 dd", [1]),
        ("(zz (bb << cc) -ee) NEAR/1 dd", [4, 8]), ("(zz (bb NEAR/1 cc) -ee) NEAR/1 dd", [4]),
        ('(aa (bb MAYBE "cc dd") -ee) NEAR/2 dd', [1, 5]), ('(aa (bb MAYBE "cc dd") -ee) NEAR/1 zz', [2, 5])])
    # an anchored wildcard in a quorum holds at the field's start or end
    rows = ["aax dd", "zz aax dd", "bb zz aax", "dd zz aax", "aax zz zz zz dd"]
    t = make_table(server, uniq(), "(body TEXT) min_infix_len='2'", {i + 1: (r,) for i, r in enumerate(rows)})
    assert_ids_ram_and_flushed(cur, t, [('"^*ax bb"/1 NEAR/2 dd', [1]), ('"*ax$ bb"/1 NEAR/2 dd', [4]),
                                        ('"^aa* bb"/1 NEAR/2 dd', [1])])



def test_notnear_over_groups_lists_and_chains(server, cur, uniq):
    """As Manticore documents, both operands of NOTNEAR/N can be terms,
    phrases or groups of operators: the first operand's occurrences (each
    where it matches, as NEAR/N reads them) with none of the second's
    within N in their field; the second counts only where it matches (a
    group of two words, where both are in the row). NOTNEAR/N chains read
    left to right as the others do, and a NOTNEAR/N is an operand of NEAR/N
    and '<<' at those occurrences. Rows worked out by hand."""
    docs = {1: ("aa bb cc dd", "ee ff gg"), 2: ("aa xx xx xx xx bb", "cc"), 3: ("cc dd aa", "bb"),
            4: ("zz aa yy yy yy yy cc", "aa cc"), 5: ("aa", "bb"), 6: ("bb aa cc", "aa zz zz zz bb")}
    t = make_table(server, uniq(), "(title TEXT, body TEXT)", docs)
    assert_ids_ram_and_flushed(cur, t, [
        ("aa NOTNEAR/2 (bb | cc)", [2, 4, 5, 6]),      # 6: title aa by bb; body aa, bb 4 on
        ("(aa bb) NOTNEAR/2 cc", [2, 3, 5, 6]),        # 3: body bb, no cc there; 4: no bb at all
        ("aa NOTNEAR/2 (bb cc)", [2, 4, 5, 6]),        # 4, 5: the group is not in the row
        ('"aa bb"~4 NOTNEAR/2 cc', [6]),               # body 6: aa .. bb, 5 positions
        ("aa << bb NOTNEAR/2 cc", [2, 6]),             # (aa << bb) NOTNEAR/2 cc
        ("aa NEAR/4 bb NOTNEAR/2 cc", [6]),
        ("(aa NOTNEAR/2 bb) NEAR/6 cc", [3, 4]),       # 6: the body's aa is kept, but no cc there
        ("aa NOTNEAR/2 bb NOTNEAR/2 cc", [2, 4, 5, 6]),
        ('"aa bb cc"/3 NOTNEAR/1 dd', [1, 2, 3, 6]),   # 1: aa is 3 from dd; 3: body bb
        ("aa NOTNEAR/3 bb SENTENCE cc", [2, 3, 4, 5, 6]),
        ("cc NEAR/3 (aa NOTNEAR/1 bb)", [3, 4]),
        ("(aa (bb NOTNEAR/1 dd) -zz) NEAR/3 cc", [1, 3]),
        ("(aa | xx) NOTNEAR/1 (bb | \"xx xx\")", [3, 4, 5, 6]),
        ("aa NOTNEAR/1 aa", [1, 2, 3, 4, 5, 6]),         # no row has two aa within 1
        ("(aa | cc) NOTNEAR/1 cc", [1, 2, 3, 4, 5, 6]),  # 2: the body's cc is not near itself
        ("(aa | cc) NOTNEAR/1 (cc | dd)", [1, 2, 4, 5, 6])])  # 1: aa, 2 from cc; 3: all near one
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('aa NOTNEAR/2 (bb | cc)')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "NOTNEAR (the first where it matches, in one field, with no occurrence of the second within 2)" \
        in plan, plan
    assert "NOT NEAR" in plan and "not maxscore: the query has NOTNEAR over more than words" in plan, plan
    # the second operand is neither highlighted nor weighed
    cur.execute(f"SELECT HIGHLIGHT() FROM {t} WHERE MATCH('aa NOTNEAR/2 (bb | cc)') AND id = 4")
    assert cur.fetchall()[0][0] == "zz <b>aa</b> yy yy yy yy cc | <b>aa</b> cc"
    w = dict(select_match(cur, "id, WEIGHT()", t, "aa NOTNEAR/2 (bb | cc)", "OPTION ranker=bm25"))
    assert w == dict(select_match(cur, "id, WEIGHT()", t, "aa", "AND id IN (2, 4, 5, 6) OPTION ranker=bm25")), w
    for r in ("sph04", "proximity_bm25", "expr('sum(hit_count)')"):
        assert sorted(match_ids(cur, t, "aa NOTNEAR/2 (bb | cc)", f"OPTION ranker={r}")) == [2, 4, 5, 6]


def test_fuzzy_search_option(server, cur, uniq):
    """OPTION fuzzy=1, as Manticore's fuzzy search: each word of the MATCH
    (words, or one phrase) stands for its three nearest spellings in the
    table's dictionary within `distance` edits (2); a word with none is
    left out, or kept with preserve=1. Rows worked out by hand."""
    docs = {1: ("Crossbody Bag with Tassel", "microfiber sheet set"), 2: ("hello world", "something else"),
            3: ("hello wrld", "some thing"), 4: ("Pet Hair Remover Glove", "something")}
    t = make_table(server, uniq(), "(title TEXT, body TEXT) min_infix_len='2'", docs)
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for text, opts, want in [("crossbudy", "", [1]), ("hello wrld", "", [2, 3]),  # wrld and world
                                 ("hlelo", ", distance=1", []),  # two edits away: nothing, as written
                                 ("hlelo", ", distance=2", [2, 3]), ("glove zzqqx", "", [4]),
                                 ("glove zzqqx", ", preserve=1", []), ('"pet hiar"', "", [4]),
                                 ('"hiar pet"', "", []), ("tasel bagg", ", layouts=''", [1])]:
            got = sorted(match_ids(cur, t, text, "OPTION fuzzy=1" + opts))
            assert got == want, (step, text, opts, got)
    cur.execute(f"SELECT HIGHLIGHT() FROM {t} WHERE MATCH('tasel bagg') OPTION fuzzy=1")
    assert cur.fetchall()[0][0] == "Crossbody <b>Bag</b> with <b>Tassel</b> | microfiber sheet set"
    cur.execute("SHOW META")
    m = dict(cur.fetchall())
    assert (m["keyword[0]"], m["keyword[1]"]) == ("tassel", "bag"), m
    # fuzzy=0 is a plain search
    assert match_ids(cur, t, "crossbudy", "OPTION fuzzy=0") == []
    for text, opts, what in [("hello | wrld", "fuzzy=1", r"offset 6: OPTION fuzzy=1 takes words, or one phrase of "
                                                         r"words, without operators"),
                             ("hello -wrld", "fuzzy=1", r"offset 6: OPTION fuzzy=1 takes words"),
                             ("hello", "distance=1", r"option 'distance' is fuzzy search's: it needs fuzzy=1"),
                             ("hello", "fuzzy=1, distance=33", r"option 'distance' expects an integer from 0 to 32"),
                             ("hello", "fuzzy=2", r"fuzzy expects 0 or 1"),
                             ("hello", "fuzzy=1, layouts='us,ru'", r"loupe has no keyboard layouts")]:
        expect_error(cur, f"SELECT id FROM {t} WHERE MATCH(%s) OPTION {opts}", 1064, what, args=(text,))
    expect_error(cur, f"SELECT id FROM {t} OPTION fuzzy=1", 1064, "fuzzy=1 needs a MATCH")
    plain = make_table(server, uniq(), "(body TEXT)", {1: ("hello",)})
    expect_error(cur, f"SELECT id FROM {plain} WHERE MATCH('helo') OPTION fuzzy=1", 1064,
                 "fuzzy search requires the table option min_infix_len")


def test_stemmed_prefixes_match_words_as_written(server, cur, uniq):
    """On a stemmed table, min_prefix_len or min_infix_len indexes each
    word's exact form beside its stem (Manticore forces index_exact_words
    there, with a warning), and prefixes and wildcards expand over the
    exact forms: 'runn*' finds "running", whose stem "run" does not start
    with "runn", and '*kinase' finds "kinase", stemmed "kinas". A stemmed
    table without either option keeps expanding over its stems."""
    docs = {1: ("running fast", "the runner runs"), 2: ("kinases", "protein kinase activity"),
            3: ("run", "walking"), 4: ("Tiling", "a tiled floor")}
    name = uniq()
    cur.execute(f"CREATE TABLE {name} (title TEXT, body TEXT) morphology='stem_en' min_infix_len='3'")
    cur.execute("SHOW WARNINGS")
    assert [r[2] for r in cur.fetchall()] == [
        "morphology and min_prefix_len or min_infix_len are set: forcing index_exact_words=1 "
        "(prefixes and wildcards match words as written)"]
    cur.execute(f"SHOW CREATE TABLE {name}")
    assert "index_exact_words='1'" in cur.fetchone()[1]
    values = ", ".join(f"({i}, '{a}', '{b}')" for i, (a, b) in docs.items())
    cur.execute(f"INSERT INTO {name} (id, title, body) VALUES {values}")
    assert_ids_ram_and_flushed(cur, name, [
        ("runn*", [1]), ("run*", [1, 3]), ("runs*", [1]), ("*ing", [1, 3, 4]), ("@title *ing", [1, 4]),
        ("*kinase", [2]), ("kinase*", [2]), ("*nase*", [2]), ("r?nning", [1]), ("*unne*", [1]),
        ('"the runn*"', [1]), ('"runn* fast"', [1]), ("runn* NEAR/2 fast", [1]), ("til*", [4]),
        ("tile*", [4]), ("=running", [1]), ("running", [1, 3]), ("runn* -fast", []),
        ("kinase", [2]), ('"protein kin*"', [2])])
    # what was found is what HIGHLIGHT() marks, SHOW META counts and
    # CALL KEYWORDS lists (an exact form with its '=')
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {name} WHERE MATCH('*ing') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>running</b> fast | the runner runs"), (3, "run | <b>walking</b>"),
                              (4, "<b>Tiling</b> | a tiled floor"))
    m = meta(cur)
    assert (m["keyword[0]"], m["docs[0]"], m["hits[0]"]) == ("*ing", "3", "3"), m
    cur.execute(f"CALL KEYWORDS('runn* tile*', '{name}', 1 AS stats)")
    assert cur.fetchall() == (("1", "runn*", "=runner", "1", "1"), ("1", "runn*", "=running", "1", "1"),
                              ("2", "tile*", "=tiled", "1", "1"))
    cur.execute(f"EXPLAIN SELECT id FROM {name} WHERE MATCH('runn*')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'prefix "=running"' in plan and 'prefix "=runner"' in plan, plan
    # expand_keywords' star part ('*runn*': the table has min_infix_len)
    # expands over the exact forms too
    cur.execute(f"EXPLAIN SELECT id FROM {name} WHERE MATCH('runn') OPTION expand_keywords='star'")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'wildcard "=running"' in plan and 'wildcard "=runner"' in plan, plan
    # a word longer than a term: its exact form is cut as the index cuts
    # it, so a prefix as long as the word still finds it
    cur.execute(f"INSERT INTO {name} (id, title, body) VALUES (9, '{'a' * 64}', '{'b' * 70}')")
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {name}")
        for text in ("a" * 64 + "*", "a" * 63 + "*", "b" * 64 + "*", "b" * 70 + "*", "=" + "a" * 64):
            assert match_ids(cur, name, text) == [9], (step, text)
    # min_prefix_len forces it too, even over an explicit '0'
    for opts in ("min_prefix_len='2'", "min_prefix_len='2' index_exact_words='0'"):
        other = uniq()
        cur.execute(f"CREATE TABLE {other} (body TEXT) morphology='stem_en' {opts}")
        cur.execute("SHOW WARNINGS")
        assert len(cur.fetchall()) == 1, opts
        cur.execute(f"SHOW CREATE TABLE {other}")
        create = cur.fetchone()[1]
        assert create.count("index_exact_words") == 1 and "index_exact_words='1'" in create, create
    # no stemming, or no prefix option: nothing forced; a stemmed table
    # without the options expands its prefixes over the stems
    for opts in ("min_infix_len='3'", "morphology='stem_en'", "morphology='stem_en' min_prefix_len='0'",
                 "morphology='none' min_infix_len='2'"):
        other = uniq()
        cur.execute(f"CREATE TABLE {other} (title TEXT, body TEXT) {opts}")
        cur.execute("SHOW WARNINGS")
        assert cur.fetchall() == (), opts
        cur.execute(f"SHOW CREATE TABLE {other}")
        assert "index_exact_words" not in cur.fetchone()[1], opts
        if opts == "morphology='stem_en'":
            cur.execute(f"INSERT INTO {other} (id, title, body) VALUES {values}")
            assert_ids_ram_and_flushed(cur, other, [("runn*", [1]), ("run*", [1, 3]), ("kinase*", []),
                                                    ("kinas*", [2])])


def test_highlight_prefix_skips_unindexed_words(server, cur, uniq):
    """A prefix or wildcard marks only words the index holds: a stop word
    or a word under min_word_len that fits the pattern was never indexed,
    so it did not match, and HIGHLIGHT() and CALL SNIPPETS leave it
    unmarked."""
    text = "the theory of them and thermal"
    for opts, want in (("stopwords='en'", "the <b>theory</b> of them and <b>thermal</b>"),
                       ("stopwords='en' morphology='stem_en' min_infix_len='2'",
                        "the <b>theory</b> of them and <b>thermal</b>"),
                       ("min_word_len='4'", "the <b>theory</b> of <b>them</b> and <b>thermal</b>"),
                       ("", "<b>the</b> <b>theory</b> of <b>them</b> and <b>thermal</b>")):
        t = make_table(server, uniq(), f"(body TEXT) {opts}", {1: (text,)})
        for q in ("th*", "the* theory") + (("*he*",) if "infix" in opts else ()):
            cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('{q}')")
            assert cur.fetchall() == ((1, want),), (opts, q)
        cur.execute(f"CALL SNIPPETS('{text}', '{t}', 'th*')")
        assert cur.fetchall() == ((want,),), opts


def test_min_prefix_len(cur, stemmed, corpus):
    expect_error(cur, f"SELECT id FROM {stemmed} WHERE MATCH('ru*')", 1064,
                 r"prefix 'ru\*' at offset 0 is shorter than min_prefix_len=3")
    expect_error(cur, f"SELECT id FROM {stemmed} WHERE MATCH('cat | ho*')", 1064, r"offset 6")
    # Without min_prefix_len any prefix goes.
    assert sorted(match_ids(cur, corpus, "q*")) == [1, 3, 4, 7]


def test_highlight_follows_stemming(cur, stemmed):
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {stemmed} WHERE MATCH('runs') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "he was <b>running</b> fast"), (2, "she <b>runs</b> daily"),
                              (3, "a quick <b>run</b>"))


def test_call_keywords(cur, stemmed, corpus):
    """CALL KEYWORDS shows each word's position, its normalised form and
    its term; with stats, the documents and occurrences the index holds."""
    cur.execute(f"CALL KEYWORDS('The Runners ran RUNNING', '{stemmed}')")
    assert col_names(cur) == ["qpos", "tokenized", "normalized"]
    assert cur.fetchall() == (("2", "runners", "runner"), ("3", "ran", "ran"), ("4", "running", "run"))
    for stats in ("1", "1 AS stats", "1 as STATS"):
        cur.execute(f"CALL KEYWORDS('The Runners ran RUNNING', '{stemmed}', {stats})")
        assert col_names(cur) == ["qpos", "tokenized", "normalized", "docs", "hits"]
        assert cur.fetchall() == (("2", "runners", "runner", "1", "1"), ("3", "ran", "ran", "0", "0"),
                                  ("4", "running", "run", "3", "3"))
    cur.execute(f"CALL KEYWORDS('the cat', '{stemmed}', 0)")
    assert cur.fetchall() == (("2", "cat", "cat"),)
    # docs counts a document once over its fields, hits every occurrence
    cur.execute(f"CALL KEYWORDS('fox dog', '{corpus}', 1)")
    assert cur.fetchall() == (("1", "fox", "fox", "3", "4"), ("2", "dog", "dog", "3", "5"))
    cur.execute(f"CALL KEYWORDS('', '{corpus}')")
    assert cur.fetchall() == ()
    expect_error(cur, "CALL KEYWORDS('x', 'nope')", 1146, r"table 'nope' does not exist")
    expect_error(cur, f"CALL KEYWORDS(1, '{corpus}')", 1064, r"col 15: expected the text as a string")
    expect_error(cur, f"CALL KEYWORDS('x', '{corpus}', 2)", 1064, r"expected 0 or 1 \(stats\)")
    expect_error(cur, f"CALL KEYWORDS('x', '{corpus}', 1 AS fold)", 1064,
                 r"unknown CALL KEYWORDS option: expected stats")
    expect_error(cur, "CALL KEYWORDS('x')", 1064, r"CALL KEYWORDS takes \(text, table")
    expect_error(cur, "CALL KEYWORDS(%s, %s)", 1064, r"CALL KEYWORDS: the text: invalid UTF-8 at byte 1",
                 args=(b"a\xff", corpus))
    expect_error(cur, "CALL NOPE('x')", 1064, r"unknown procedure 'nope': loupe has CALL KEYWORDS, SNIPPETS, "
                 r"SUGGEST, QSUGGEST and AUTOCOMPLETE")


def test_call_keywords_wildcards(server, cur, uniq):
    """CALL KEYWORDS lists the terms a prefix or a wildcard expands to, one
    row each with the pattern as tokenized (Manticore's autocomplete
    recipe), with fold_wildcards one row of summed counts; expansion_limit
    and sort_mode apply; checked against the table's words."""
    rng = random.Random(13)
    syll = ["ca", "t", "do", "g", "mi", "ne", "ral", "s", "ox"]
    vocab = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(1, 3))) for _ in range(80)})
    docs = {i: (" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 6))),) for i in range(1, 201)}
    t = make_table(server, uniq(), "(body TEXT) min_infix_len='2'", docs)
    import fnmatch

    def stats(word):
        ids = [i for i, (b,) in docs.items() if word in b.split()]
        return len(ids), sum(b.split().count(word) for (b,) in docs.values())

    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for pat in ("ca*", "*ne*", "*ox", "do?", "mi*al", "*zz*"):
            want = sorted({w for w in vocab if fnmatch.fnmatchcase(w, pat.replace("?", "[!-]"))
                           and any(w in b.split() for (b,) in docs.values())})
            cur.execute(f"CALL KEYWORDS('x {pat} y', '{t}', 1 AS stats)")
            rows = cur.fetchall()
            assert rows[0][:3] == ("1", "x", "x") and rows[-1][:3] == ("3", "y", "y"), (step, pat, rows)
            mid = rows[1:-1]
            if not want:
                assert mid == (("2", pat, pat, "0", "0"),), (step, pat, mid)
                continue
            assert [r[2] for r in mid] == want, (step, pat)
            assert all(r[0] == "2" and r[1] == pat for r in mid), (step, pat)
            assert all((int(r[3]), int(r[4])) == stats(r[2]) for r in mid), (step, pat)
            cur.execute(f"CALL KEYWORDS('{pat}', '{t}', 1 AS stats, 1 AS fold_wildcards)")
            assert cur.fetchall() == (("1", pat, pat, str(sum(stats(w)[0] for w in want)),
                                       str(sum(stats(w)[1] for w in want))),), (step, pat)
            cur.execute(f"CALL KEYWORDS('{pat}', '{t}', 'hits' AS sort_mode, 1 AS stats)")
            by_hits = sorted(want, key=lambda w: (-stats(w)[1], w))
            assert [r[2] for r in cur.fetchall()] == by_hits, (step, pat)
            cur.execute(f"CALL KEYWORDS('{pat}', '{t}', 'docs' AS sort_mode)")
            got = cur.fetchall()
            assert col_names(cur) == ["qpos", "tokenized", "normalized"]
            assert [r[2] for r in got] == sorted(want, key=lambda w: (-stats(w)[0], w)), (step, pat)
            cur.execute(f"CALL KEYWORDS('{pat}', '{t}', 2 AS expansion_limit, 1 AS fold_lemmas, 0 AS fold_blended)")
            assert [r[2] for r in cur.fetchall()] == want[:2], (step, pat)
    # the query language's errors, with the word's offset in the text
    expect_error(cur, f"CALL KEYWORDS('cat *a*', '{t}')", 1064,
                 r"CALL KEYWORDS: the text: wildcard '\*a\*' at offset 4: its longest part without a wildcard "
                 r"is shorter than min_infix_len=2")
    expect_error(cur, f"CALL KEYWORDS('x', '{t}', 'x' AS sort_mode)", 1064, r"expected 'docs' or 'hits' \(sort_mode\)")
    expect_error(cur, f"CALL KEYWORDS('x', '{t}', 1 AS stats, 1)", 1064, r"expected an option as 'value AS name'")
    expect_error(cur, f"CALL KEYWORDS('x', '{t}', -1 AS expansion_limit)", 1064, r"expansion_limit")
    expect_error(cur, f"CALL KEYWORDS('x' AS a, '{t}')", 1064, r"CALL KEYWORDS takes AS only on its options")
    # a '*' that is no wildcard (a table without min_infix_len) leaves its words words
    u = make_table(server, uniq(), "(body TEXT)", {1: ("cat dog",)})
    cur.execute(f"CALL KEYWORDS('a * b cat*', '{u}', 1 AS stats)")
    assert cur.fetchall() == (("1", "a", "a", "0", "0"), ("3", "b", "b", "0", "0"), ("4", "cat*", "cat", "1", "1"))
    expect_error(cur, f"CALL KEYWORDS('*dog', '{u}')", 1064, r"needs the table option min_infix_len")


# Exact forms: index_exact_words='1' indexes each word's unstemmed form
# beside its stem, and '=word' finds that form only.

EXACT_VOCAB = ["run", "runs", "running", "runner", "cat", "cats", "dog", "dogs", "house", "houses",
               "quick", "quickly", "jump", "jumped", "jumping"]


def exact_vocab_docs(seed, n):
    """n random (title, body) documents over EXACT_VOCAB, ids from 1."""
    rng = random.Random(seed)
    return {i: (" ".join(rng.choice(EXACT_VOCAB) for _ in range(rng.randint(1, 4))),
                " ".join(rng.choice(EXACT_VOCAB) for _ in range(rng.randint(3, 12))))
            for i in range(1, n + 1)}


def exact_query(text):
    """text with '=' before each word (not before operators and numbers)."""
    return re.sub(r"(?<![\w/=@])([a-z]+)", r"=\1", text)


def test_exact_form_and_stem_at_one_position(server, cur):
    """A word's exact form and its stem are two keywords at one position:
    the proximity rankers count each, in every row (the positions of a
    row are read once, however the factors are computed)."""
    t = make_table(server, "fts_exact_shared", "(title TEXT) morphology='stem_en' index_exact_words='1'",
                   {1: ("running fast",), 2: ("x fast running runs",), 3: ("runs",)})
    expr = "OPTION ranker=expr('sum(hit_count)*100 + sum(lcs)*10 + sum(word_count)')"
    # row 1: =running and run at 0, fast after them (no run); row 2: fast
    # at 1, =running and run at 2, run at 3: 'fast =running runs' is a run
    # of 3 (each one position and one query place on); row 3 has no fast
    got = dict(match_weights(cur, t, "fast =running running", expr))
    assert got == {1: 3 * 100 + 1 * 10 + 3, 2: 4 * 100 + 3 * 10 + 3}


def test_exact_forms_weigh_as_unstemmed_words(server, cur):
    """On a stemmed table with exact forms, a query of '=word's matches and
    weighs exactly as the same query without '=' on a table that does not
    stem: an exact form is indexed at its word's position, so df, tf and
    field lengths are the unstemmed table's. Checked in the RAM segment,
    after FLUSH and after OPTIMIZE, for every operator, with BM25F and a
    proximity ranker."""
    docs = exact_vocab_docs(7, 120)
    ex = make_table(server, "fts_exact_forms", "(title TEXT, body TEXT) morphology='stem_en' "
                    "index_exact_words='1'", docs)
    plain = make_table(server, "fts_exact_plain", "(title TEXT, body TEXT)", docs)
    queries = ["running", "cats | dogs", "running cats", "running -cats", '"quick running"',
               '"running cat"~3', '"run runs running runner"/2', "running NEAR/2 cats",
               "running << cats", "@title running | @body cats", "^running", "cats$",
               "running MAYBE cats", "@body[4] runs"]
    for tail in ("", "OPTION ranker=sph04"):
        want = {text: match_weights(cur, plain, text, tail) for text in queries}
        assert sum(len(w) for w in want.values()) > 300
        for step in ("ram", "flush", "optimize"):
            if step == "flush" and not tail:
                cur.execute(f"FLUSH TABLE {ex}")
            if step == "optimize" and not tail:
                cur.execute(f"DELETE FROM {ex} WHERE id > 200")  # nothing: only a merge
                cur.execute(f"OPTIMIZE TABLE {ex} OPTION sync=1")
            for text in queries:
                got = match_weights(cur, ex, exact_query(text), tail)
                assert [i for i, _ in got] == [i for i, _ in want[text]], (step, text, tail)
                for (_, a), (_, b) in zip(got, want[text]):
                    assert a == pytest.approx(b, rel=1e-6), (step, text, tail)
    # ="..." makes every word of a phrase, a proximity or a quorum exact.
    for text in ['"quick running"', '"running cat"~3', '"run runs running runner"/2']:
        same = match_weights(cur, ex, "=" + text)
        assert same == match_weights(cur, ex, exact_query(text)), text
        assert [i for i, _ in same] == [i for i, _ in match_weights(cur, plain, text)], text
    # The stems are still there: 'running' finds every form of run.
    stems = sorted(i for i, (t, b) in docs.items()
                   if re.search(r"\b(run|runs|running)\b", t + " " + b))
    assert sorted(match_ids(cur, ex, "running")) == stems
    assert len(stems) > len(match_ids(cur, ex, "=running"))


def test_exact_forms_by_hand(server, cur, uniq):
    t = make_table(server, uniq(), "(body TEXT) morphology='stem_en' stopwords='en' "
                   "index_exact_words='1'", {
                       1: ("he was running fast",), 2: ("she runs daily",), 3: ("a quick run",),
                       4: ("raining cats and dogs",), 5: ("a cat and a dog",)})
    for text, want in [("running", [1, 2, 3]), ("=running", [1]), ("=runs | =run", [2, 3]),
                       ("=Running", [1]),                  # folded like any word
                       ("raining =cats and =dogs", [4]), ("cats dogs", [4, 5]),
                       ('"=cats and =dogs"', [4]), ('"=cat and a dog"', [5]),
                       ('="cats and dogs"', [4]), ('="cat and a dogs"', []),
                       ('="cats dogs"~3', [4]), ('="raining cats dogs"/2', [4]),
                       ("=the =cat", [5]),                 # a stop word is dropped either way
                       ("@body =running", [1]), ("^=raining", [4]), ("=dogs$", [4]),
                       ("=quick << run", [3]), ("=cats NEAR/3 dog", [4]),
                       ("x=cats", []),                     # 'x' and 'cats': no '=' operator
                       ("\\=cats", [4, 5]),               # escaped: a plain word
                       ("run* -=running", [2, 3])]:
        assert sorted(match_ids(cur, t, text)) == want, text
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('=cats | dog') ORDER BY id ASC")
    assert cur.fetchall() == ((4, "raining <b>cats</b> and <b>dogs</b>"),
                              (5, "a cat and a <b>dog</b>"))
    cur.execute(f"CALL KEYWORDS('=Running runs', '{t}', 1 AS stats)")
    assert cur.fetchall() == (("1", "running", "=running", "1", "1"), ("2", "runs", "run", "3", "3"))
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('=running')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'term "=running"' in plan and "df=1" in plan, plan
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "index_exact_words='1'" in cur.fetchall()[0][1]
    # A stemmed table without exact forms, and the option's values.
    u = make_table(server, uniq(), "(body TEXT) morphology='stem_en'", {1: ("running",)})
    expect_error(cur, f"SELECT id FROM {u} WHERE MATCH('a =running')", 1064,
                 r"the exact form '=running' needs the table option index_exact_words='1' "
                 r"\(words are indexed stemmed only\) \(in '=running' at offset 2\)")
    # Without stemming a word is its own exact form.
    v = make_table(server, uniq(), "(body TEXT)", {1: ("running",), 2: ("run",)})
    assert match_ids(cur, v, "=running") == [1]
    for bad in ("2", "-1", "yes"):
        expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) index_exact_words='{bad}'", 1064,
                     r"option 'index_exact_words' expects an integer from 0 to 1")



def test_option_morphology_none(server, cur, uniq):
    """Manticore's OPTION morphology=none: every word of the query is its
    exact form, as if written =word (phrases, quorums and chain operands
    too; prefixes match words as written already), so 'running' finds only
    "running"; the same in HIGHLIGHT() and SHOW META's keywords. It needs
    exact forms on a stemmed table, and 'none' is its one value."""
    t = make_table(server, uniq(), "(body TEXT) morphology='stem_en' index_exact_words='1'", {
        1: ("he was running fast",), 2: ("she runs daily",), 3: ("a quick run",), 4: ("running dogs",)})
    for text, stemmed, exact in [("running", [1, 2, 3, 4], [1, 4]), ("run", [1, 2, 3, 4], [3]),
                                 ('"running fast"', [1], [1]), ('"runs fast"', [1], []),
                                 ('"run daily"/2', [2], []), ("run* -=running", [2, 3], [2, 3]),
                                 ("dog NEAR/2 running", [4], []), ("dogs NEAR/2 running", [4], [4]),
                                 ("=run | daily", [2, 3], [2, 3])]:
        assert sorted(match_ids(cur, t, text)) == stemmed, text
        assert sorted(match_ids(cur, t, text, "OPTION morphology=none")) == exact, text
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('runs | running') "
                "ORDER BY id ASC OPTION morphology='None'")
    assert cur.fetchall() == ((1, "he was <b>running</b> fast"), (2, "she <b>runs</b> daily"),
                              (4, "<b>running</b> dogs"))
    assert meta(cur)["keyword[0]"] == "=runs"
    u = make_table(server, uniq(), "(body TEXT) morphology='stem_en'", {1: ("running",)})
    expect_error(cur, f"SELECT id FROM {u} WHERE MATCH('running') OPTION morphology=none", 1064,
                 r"needs the table option index_exact_words='1' \(this table indexes stems only\)")
    v = make_table(server, uniq(), "(body TEXT)", {1: ("running",), 2: ("run",)})
    assert match_ids(cur, v, "running", "OPTION morphology=none") == [1]
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('running') OPTION morphology=stem_en", 1064,
                 r"OPTION morphology takes 'none'")
    expect_error(cur, f"SELECT id FROM {t} OPTION morphology=none", 1064, r"needs a MATCH\(\) query")


SP_DOCS = {
    1: ("The cat sat. The dog ran.",),
    2: ("The cat and the dog sat.",),
    3: ("A cat here.\n\nA dog there.",),
    4: ("Dog first! Cat later? Then dog and cat",),
    5: ("News Corp. announced a cat and a dog",),       # "Corp." is no sentence end
    6: ("John D. Doe owns a cat. Mary owns a dog",),   # nor is a middle initial
}

SP_CASES = [
    ("cat SENTENCE dog", [2, 4, 5]),
    ("dog SENTENCE cat", [2, 4, 5]),                    # any order
    ("cat PARAGRAPH dog", [1, 2, 4, 5, 6]),
    ('"the cat" SENTENCE dog', [2]),
    ("(cat | sat) SENTENCE ran", []),
    ("(dog | sat) SENTENCE ran", [1]),
    ("cat SENTENCE dog SENTENCE sat", [2]),
    ("john SENTENCE doe SENTENCE cat", [6]),
    ("news SENTENCE announced", [5]),
    ('"cat sat"', [1]),
    ('"sat the"', []),                                 # a boundary takes a position
    ('"here a"', []),
    ("sat << the", [1]),                               # across sentences, as before
    ("sat NEAR/1 the", []),                            # the boundary counts in the gap
    ("sat NEAR/2 the", [1, 2]),
    ("ran$", [1]),                                     # '$' is still the last word
    ("there$", [3]),
]


def test_sentence_and_paragraph(server, cur, uniq):
    """index_sp='1' indexes sentence and paragraph boundaries; SENTENCE and
    PARAGRAPH need their operands in one of them, in any order. A boundary
    takes a position, as in Sphinx, so phrases and distances do not cross it
    unnoticed. The same answers from the RAM segment and after FLUSH; a
    table without index_sp takes each field as one sentence."""
    t = make_table(server, uniq(), "(body TEXT) index_sp='1'",
                   {i: (v[0],) for i, v in SP_DOCS.items()})
    want_flat = {}
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for text, want in SP_CASES:
            assert sorted(match_ids(cur, t, text)) == want, (step, text)
        cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('cat SENTENCE dog') ORDER BY id ASC")
        assert cur.fetchall()[0] == (2, "The <b>cat</b> and the <b>dog</b> sat.")
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('cat SENTENCE \"the dog\"')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'sentence "cat SENTENCE the dog"' in plan, plan
    cur.execute(f"SELECT EXPLAIN_SCORE() FROM {t} WHERE MATCH('cat PARAGRAPH dog') AND id = 2")
    assert '"terms":"cat PARAGRAPH dog"' in cur.fetchone()[0]
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "index_sp='1'" in cur.fetchall()[0][1]
    # The operands' words weigh as a phrase of them does; the boundaries'
    # terms add nothing.
    w = dict(match_weights(cur, t, "cat SENTENCE dog"))
    w2 = dict(match_weights(cur, t, "cat PARAGRAPH dog"))
    assert w[2] == pytest.approx(w2[2])
    # Without index_sp: a field is one sentence and one paragraph.
    u = make_table(server, uniq(), "(body TEXT)", {i: (v[0],) for i, v in SP_DOCS.items()})
    assert sorted(match_ids(cur, u, "cat SENTENCE dog")) == [1, 2, 3, 4, 5, 6]
    assert sorted(match_ids(cur, u, "cat PARAGRAPH dog")) == [1, 2, 3, 4, 5, 6]
    assert sorted(match_ids(cur, u, '"sat the"')) == [1]
    # Two fields: each holds its own sentences; a chain is in one field.
    v = make_table(server, uniq(), "(title TEXT, body TEXT) index_sp='1'",
                   {1: ("Cat", "dog"), 2: ("Cat. Dog", "cat dog")})
    assert match_ids(cur, v, "cat SENTENCE dog") == [2]
    assert match_ids(cur, v, "@title cat SENTENCE dog") == []
    for bad in ("2", "-1", "yes"):
        expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) index_sp='{bad}'", 1064,
                     r"option 'index_sp' expects an integer from 0 to 1")


def test_sentence_ends_as_in_sphinx(server, cur, uniq):
    """Where a '.' ends no sentence, by Sphinx's rules: after an initial, a
    title or a salutation (Mr., MS., drs., Xy., Q., x.Q.), before '(' and
    a lower-case letter, before '-'. Each answer is searchd 2.2.11's."""
    rows = ["Ask Mr. Doe", "Ask Mrx. Doe", "Ask MS. Doe", "Ask XX. Doe", "Ask drs. Doe", "Ask Q. Doe",
            "Ask x.Q. Doe", "Ask Inc. (the doe", "Ask Inc. (The doe", "Ask it. Doe", "Ask it.-doe", "Ask Xy. Doe"]
    t = make_table(server, uniq(), "(body TEXT) index_sp='1'", {i + 1: (r,) for i, r in enumerate(rows)})
    assert_ids_ram_and_flushed(cur, t, [("ask SENTENCE doe", [1, 3, 5, 6, 7, 8, 11, 12]),
                                        ("q SENTENCE doe", [6, 7]), ("inc SENTENCE doe", [8]),
                                        ('"mr doe"', [1]), ('"xy doe"', [12]), ('"xx doe"', [])])


def test_sentence_chain_inside_order(server, cur, uniq):
    """SENTENCE and PARAGRAPH bind tighter than '<<', as in Sphinx: `a << b
    SENTENCE c` is `a << (b SENTENCE c)`, and such a chain passes on its
    operands' occurrences in the parts that hold all of them. Each answer
    is searchd 2.2.11's."""
    rows = ["bb aa cc", "aa bb. Zz cc", "bb cc. Zz aa", "aa zz. Zz bb cc", "cc bb aa", "cc aa bb", "aa cc. Zz bb",
            "bb. Zz aa cc"]
    t = make_table(server, uniq(), "(body TEXT) index_sp='1' html_strip='1'",
                   {i + 1: (r,) for i, r in enumerate(rows)})
    assert_ids_ram_and_flushed(cur, t, [("aa << bb SENTENCE cc", [1, 4, 6]), ("aa << (bb SENTENCE cc)", [1, 4, 6]),
                                        ("aa SENTENCE bb << cc", [1, 2]), ("aa << bb PARAGRAPH cc", [1, 2, 4, 6, 7, 8]),
                                        ("aa << bb << cc SENTENCE zz", [2, 4]),
                                        ("zz << aa SENTENCE cc SENTENCE bb", [])])


def test_sentence_chain_as_near_operand(server, cur, uniq):
    """SENTENCE and PARAGRAPH bind tighter than NEAR/N too, as in Sphinx: `a
    SENTENCE b NEAR/2 c` is `(a SENTENCE b) NEAR/2 c`, and such a chain
    stands at its operands' occurrences in the parts that hold all of them
    (in "aa bb zz zz zz zz. Cc aa", cc is next to an aa in no sentence with
    a bb). Each answer is searchd 2.2.11's."""
    rows = ["aa bb. Cc dd", "aa xx bb cc", "cc aa bb", "aa. Bb cc", "bb aa zz zz zz cc", "cc zz zz zz aa bb",
            "aa bb zz. Zz cc", "dd cc. Aa bb", "aa zz zz zz zz zz bb cc", "cc. Aa zz. Bb"]
    t = make_table(server, uniq(), "(body TEXT) index_sp='1'", {i + 1: (r,) for i, r in enumerate(rows)})
    assert_ids_ram_and_flushed(cur, t, [
        ("(aa SENTENCE bb) NEAR/2 cc", [1, 2, 3, 8, 9]), ("cc NEAR/2 (aa SENTENCE bb)", [1, 2, 3, 8, 9]),
        ("(aa SENTENCE bb) NEAR/1 cc", [2, 3, 9]), ("(aa SENTENCE bb) NEAR/5 cc", [1, 2, 3, 5, 6, 7, 8, 9]),
        ("(aa PARAGRAPH bb) NEAR/2 cc", [1, 2, 3, 4, 8, 9, 10]), ("aa SENTENCE bb NEAR/2 cc", [1, 2, 3, 8, 9])])
    rows = ["aa bb zz zz zz zz. Cc aa", "aa zz zz zz zz bb. Cc", "aa bb. Zz zz zz. Cc zz bb", "cc bb zz zz aa. Zz",
            "aa bb cc", "bb zz zz zz zz zz zz aa. Zz cc bb", "cc zz aa zz zz zz zz zz zz bb"]
    t = make_table(server, uniq(), "(body TEXT) index_sp='1'", {i + 1: (r,) for i, r in enumerate(rows)})
    assert_ids_ram_and_flushed(cur, t, [
        ("(aa SENTENCE bb) NEAR/2 cc", [2, 4, 5, 7]), ("cc NEAR/2 aa SENTENCE bb", [2, 4, 5, 7]),
        ("(aa SENTENCE bb SENTENCE cc) NEAR/2 zz", [4, 7]), ("(aa SENTENCE bb) NEAR/2 cc NEAR/2 zz", [1, 2, 3, 4, 6, 7]),
        ("cc NEAR/3 aa SENTENCE bb << zz", [4, 6, 7]), ("aa SENTENCE bb NEAR/2 cc << zz", [4, 7]),
        ("zz << aa SENTENCE bb NEAR/2 cc", [2, 4, 7])])
    for text in ["aa SENTENCE (bb NEAR/2 cc)", "(cc NEAR/2 aa) SENTENCE bb", "cc NEAR/2 aa SENTENCE bb PARAGRAPH zz"]:
        expect_error(cur, f"SELECT id FROM {t} WHERE MATCH({q(text)})", 1064)


def test_sentence_boundaries_survive_restart(tmp_path):
    """A table's index_sp holds after a restart: the log replays with the
    same boundaries, and new rows get them too."""
    data = tmp_path / "data"
    data.mkdir()
    s = LoupeServer(name="sprestart", data_dir=str(data))
    s.start()
    try:
        conn = lambda: pymysql_connect(s.mysql_port)  # noqa: E731
        with conn() as c, c.cursor() as cur:
            cur.execute("CREATE TABLE sp (body TEXT) index_sp='1'")
            vals = ",".join(f"({i}, {q(v[0].replace(chr(10), ' '))})" for i, v in SP_DOCS.items()
                            if "\n" not in v[0])
            cur.execute(f"INSERT INTO sp (id, body) VALUES {vals}")
            before = {text: sorted(match_ids(cur, "sp", text)) for text, _ in SP_CASES}
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait()
        s.restart()
        with conn() as c, c.cursor() as cur:
            for text, _ in SP_CASES:
                assert sorted(match_ids(cur, "sp", text)) == before[text], text
            assert before["cat SENTENCE dog"] == [2, 4, 5]
            cur.execute("INSERT INTO sp (id, body) VALUES (10, 'A cat. A dog.'), (11, 'A cat, a dog.')")
            assert sorted(match_ids(cur, "sp", "cat SENTENCE dog")) == [2, 4, 5, 11]
    finally:
        s.stop()


def test_html_strip(server, cur, uniq):
    """html_strip='1' indexes a field's text without its markup: inline tags
    join a word's parts, other tags and comments separate words, block-level
    tags end a paragraph, references are decoded, html_remove_elements drops
    whole elements. The stored text keeps its markup; HIGHLIGHT() shows the
    text without it."""
    html = ('<h1>Caf&eacute; <b>te</b>st</h1><p>First <a href="http://example.com/secret" '
            'title="tip">link</a> &amp; more.</p><!-- note --><p>Second para</p>'
            '<script>var hidden = "x<y";</script><style>p { color: red }</style>')
    t = make_table(server, uniq(), "(body TEXT) html_strip='1' html_remove_elements='script, style' "
                   "index_sp='1'", {1: (html,), 2: ("<div>cat</div><div>dog</div>",),
                                    3: ("cat <span>and</span> dog",), 4: ("a &lt;b&gt; tag",)})
    assert_ids_ram_and_flushed(cur, t, [
        ("café", [1]), ("test", [1]), ("te | st", []), ("link", [1]), ("more", [1]),
        ("secret | href | tip | example", []), ("note", []), ("hidden | var | color", []),
        ("h1 | p | div | span | script", []), ("b", [4]), ("tag", [4]),
        ("first PARAGRAPH more", [1]), ("first PARAGRAPH second", []),
        ("cat PARAGRAPH dog", [3]), ("cat SENTENCE dog", [3]), ('"test first"', [])])
    cur.execute(f"SELECT body FROM {t} WHERE id = 1")
    assert cur.fetchone()[0] == html
    cur.execute(f"SELECT HIGHLIGHT() FROM {t} WHERE MATCH('test | second') AND id = 1")
    assert cur.fetchone()[0] == ("\n\nCafé <b>test</b>\n\n\n\nFirst link & more.\n\n \n\n<b>Second</b> "
                                 "para\n\n  ")
    cur.execute(f"CALL SNIPPETS('<p>a <i>test</i> here</p>', '{t}', 'test')")
    assert cur.fetchone()[0] == "\n\na <b>test</b> here\n\n"
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "html_strip='1' html_remove_elements='script, style'" in cur.fetchone()[1]
    # Without the option, markup is text: its names are words.
    u = make_table(server, uniq(), "(body TEXT)", {1: (html,)})
    assert match_ids(cur, u, "secret") == [1]
    assert match_ids(cur, u, "test") == []
    # Invalid UTF-8 inside a tag is still refused, at its offset.
    msg = expect_error(cur, f"INSERT INTO {t} (id, body) VALUES (9, %s)", {1064, 1366},
                       args=(b"ab<b \xff>",))
    assert "invalid UTF-8" in msg, msg
    assert match_ids(cur, t, "ab") == []
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) html_strip='1' html_remove_elements='1x'",
                 1064, r"html_remove_elements: '1x' is not an element name")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) html_strip='2'", 1064,
                 r"option 'html_strip' expects an integer from 0 to 1")


def hand_expanded(text, mode, star="prefix", min_len=1):
    """text with each plain word (not in quotes, not after - ! ^ = or @,
    not a prefix, not before $) written out as expand_keywords=mode
    expands it: (w | =w), (w | w*) or (w | =w | w*); with star="infix",
    *w* for w*; the star part only for words of at least min_len letters
    (min_infix_len, or min_prefix_len)."""
    def one(m):
        w = m.group(1)
        parts = [w]
        if mode in ("exact", "1"):
            parts.append("=" + w)
        if mode in ("star", "1") and len(w) >= min_len:
            parts.append(w + "*" if star == "prefix" else "*" + w + "*")
        return "(" + " | ".join(parts) + ")" if len(parts) > 1 else w
    out, quoted = [], False
    for tok in re.split(r'(")', text):
        if tok == '"':
            quoted = not quoted
            out.append(tok)
        elif quoted:
            out.append(tok)
        else:
            out.append(re.sub(r"(?<![\w\-!^=@*])([a-z]+)(?![\w*$])", one, tok))
    return "".join(out)


EXPAND_QUERIES = ["running", "cats | dogs", "running cats", "running -cats", '"quick running" cats',
                  "run* jump", "^running cats", "=running cats", "@title running | @body cats",
                  "running MAYBE cats", "jumping dogs$", "@body[5] houses", "run | jump", "dog quick"]


def test_expand_keywords_is_the_written_out_or(server, cur):
    """OPTION expand_keywords (and the table option) weighs and matches as
    the query with each plain word written out as the OR it stands for;
    words in phrases, anchored, negated or already exact stay as they are.
    Without exact forms in the table, 'exact' adds nothing."""
    docs = exact_vocab_docs(9, 80)
    ex = make_table(server, "fts_expand", "(title TEXT, body TEXT) morphology='stem_en' "
                    "index_exact_words='1' min_prefix_len='1'", docs)
    # min_infix_len: the star part is '*word*' (as Manticore's), for words
    # of at least that many letters
    inf = make_table(server, "fts_expand_inf", "(title TEXT, body TEXT) morphology='stem_en' index_exact_words='1' "
                     "min_infix_len='4'", docs)
    dflt = make_table(server, "fts_expand_dflt", "(title TEXT, body TEXT) morphology='stem_en' "
                      "index_exact_words='1' expand_keywords='exact'", docs)
    noex = make_table(server, "fts_expand_noex", "(title TEXT, body TEXT) morphology='stem_en'", docs)

    def same(got, want, what):
        assert [i for i, _ in got] == [i for i, _ in want], what
        for (_, a), (_, b) in zip(got, want):
            assert a == pytest.approx(b, rel=1e-6), what

    assert hand_expanded('run* "a b" -c ^d e$ =f g', "exact") == 'run* "a b" -c ^d e$ =f (g | =g)'
    for mode, opt in (("exact", "'exact'"), ("star", "star"), ("1", "1")):
        changed = 0
        for text in EXPAND_QUERIES:
            want = match_weights(cur, ex, hand_expanded(text, mode))
            got = match_weights(cur, ex, text, f"OPTION expand_keywords={opt}")
            same(got, want, (mode, text))
            changed += got != match_weights(cur, ex, text)
            if mode == "exact":
                same(match_weights(cur, dflt, text), want, ("table default", text))
                same(match_weights(cur, dflt, text, "OPTION expand_keywords=0"),
                     match_weights(cur, ex, text), ("option over the table", text))
                if "=" not in text:
                    same(match_weights(cur, noex, text, "OPTION expand_keywords='exact'"),
                         match_weights(cur, noex, text), ("no exact forms", text))
        # stems rarely begin other terms ('run*' does: runner), exact forms often differ
        assert changed >= (3 if mode == "star" else len(EXPAND_QUERIES) - 3), (mode, changed)
        if mode != "exact":
            changed = 0
            for text in EXPAND_QUERIES:
                want = match_weights(cur, inf, hand_expanded(text, mode, "infix", 4))
                got = match_weights(cur, inf, text, f"OPTION expand_keywords={opt}")
                same(got, want, ("infix", mode, text))
                changed += got != match_weights(cur, inf, text)
            assert changed >= 3, ("infix", mode, changed)
    # without min_prefix_len or min_infix_len there is no star part (as in
    # Sphinx): 'star' changes nothing
    for text in (t for t in EXPAND_QUERIES if "=" not in t):
        same(match_weights(cur, noex, text, "OPTION expand_keywords='star'"), match_weights(cur, noex, text),
             ("no star", text))
    # A proximity ranker sees the word and its exact form at one query
    # position: 'running cats' can still be a run of 2 (max_lcs: 2 in each
    # of two fields).
    cur.execute(f"SELECT id, EXPLAIN_SCORE() FROM {ex} WHERE MATCH('running cats') LIMIT 1 "
                "OPTION ranker=sph04, expand_keywords='exact'")
    assert json.loads(cur.fetchall()[0][1])["max_lcs"] == 4


def test_expand_keywords_in_writes_and_errors(server, cur, uniq):
    t = make_table(server, uniq(), "(body TEXT) morphology='stem_en' index_exact_words='1' min_prefix_len='2' "
                   "expand_keywords='star'", {1: ("catalog",), 2: ("cats",), 3: ("dog",)})
    assert sorted(match_ids(cur, t, "cat")) == [1, 2]
    # HIGHLIGHT() and CALL SNIPPETS mark what the star part found
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('cat') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>catalog</b>"), (2, "<b>cats</b>"))
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('cat') ORDER BY id ASC "
                "OPTION expand_keywords=0")
    assert cur.fetchall() == ((2, "<b>cats</b>"),)
    cur.execute(f"CALL SNIPPETS('a catalog of cats', '{t}', 'cat')")
    assert cur.fetchall() == (("a <b>catalog</b> of <b>cats</b>",),)
    cur.execute(f"DELETE FROM {t} WHERE MATCH('cat')")   # what the SELECT matched
    assert sorted(match_ids(cur, t, "")) == [3]
    # with min_infix_len the star part is '*word*': 'cat' finds "bobcats"
    # and HIGHLIGHT() marks it; a word shorter than min_infix_len has none
    i = make_table(server, uniq(), "(body TEXT) min_infix_len='3' expand_keywords='star'",
                   {1: ("bobcats",), 2: ("cat",), 3: ("ox oxen",)})
    assert sorted(match_ids(cur, i, "cat")) == [1, 2]
    assert sorted(match_ids(cur, i, "ox")) == [3]
    assert sorted(match_ids(cur, i, "xen")) == [3]
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {i} WHERE MATCH('cat | ox') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>bobcats</b>"), (2, "<b>cat</b>"), (3, "<b>ox</b> oxen"))
    # the words of a phrase (and of a word the table splits, 'hello-world')
    # are expanded at their places too, as Sphinx expands them
    p = make_table(server, uniq(), "(body TEXT) min_infix_len='3' expand_keywords='star'",
                   {1: ("hello worldly",), 2: ("hellos world",), 3: ("hello there world",), 4: ("world hello",),
                    5: ("othello worlds apart",)})
    for text, want in (('"hello world"', [1, 2, 5]), ("hello-world", [1, 2, 5]), ('"hello world"~2', [1, 2, 3, 4, 5]),
                       ('"hello wor*"', [1, 2, 5]), ('"=hello world"', [1]),
                       # quorums and chains too, as Sphinx
                       ('"hello world xyz"/2', [1, 2, 3, 4, 5]), ("hello NEAR/1 world", [1, 2, 4, 5]),
                       ("hello << world", [1, 2, 3, 5]), ("hello NOTNEAR/1 world", [3])):
        assert sorted(match_ids(cur, p, text)) == want, text
    assert sorted(match_ids(cur, p, '"hello world"', "OPTION expand_keywords=0")) == []
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {p} WHERE MATCH('\"hello world\"') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>hello</b> <b>worldly</b>"), (2, "<b>hellos</b> <b>world</b>"),
                              (5, "<b>othello</b> <b>worlds</b> apart"))
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "expand_keywords='star'" in cur.fetchall()[0][1]
    for bad in ("2", "'exactly'", "'exact,'", "-1"):
        expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('dog') OPTION expand_keywords={bad}", 1064,
                     r"expand_keywords expects 0, 1, 'exact', 'star' or 'exact,star'")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) expand_keywords='yes'", 1064,
                 r"near ''yes''.*expand_keywords expects")
    # A stored rank profile may set it too.
    p = make_table(server, uniq(), "(body TEXT) morphology='stem_en' index_exact_words='1' "
                   "rank_profile='x: expand_keywords=exact'", {1: ("running",), 2: ("runs",)})
    assert match_weights(cur, p, "running", "OPTION rank_profile='x'") == \
        match_weights(cur, p, "(running | =running)")


def test_call_snippets(cur, stemmed, corpus):
    """CALL SNIPPETS highlights texts given in the statement with the
    table's analysis (stemming here), one row per text, with HIGHLIGHT()'s
    options written as value AS name."""
    cur.execute(f"CALL SNIPPETS('Dogs were running home', '{stemmed}', 'run')")
    assert col_names(cur) == ["snippet"]
    assert cur.fetchall() == (("Dogs were <b>running</b> home",),)
    cur.execute(f"CALL SNIPPETS(('a run', 'nothing to see', 'runs and runs'), '{stemmed}', 'run | see', "
                f"'[' AS before_match, ']' AS after_match)")
    assert cur.fetchall() == (("a [run]",), ("nothing to [see]",), ("[runs] and [runs]",))
    cur.execute(f"CALL SNIPPETS(('a run', 'nothing'), '{stemmed}', 'run', 1 AS allow_empty)")
    assert cur.fetchall() == (("a <b>run</b>",), ("",))
    long_text = "word " * 40 + "the quick fox " + "word " * 40
    cur.execute(f"CALL SNIPPETS(%s, '{corpus}', 'fox', 20 AS limit, 2 AS around)", (long_text,))
    assert cur.fetchall() == ((" ... quick <b>fox</b> word word ... ",),)  # 19 characters shown
    # field scopes do not apply to a text outside the table
    cur.execute(f"CALL SNIPPETS('red fox', '{corpus}', '@title fox')")
    assert cur.fetchall() == (("red <b>fox</b>",),)
    expect_error(cur, f"CALL SNIPPETS('x', '{corpus}')", 1064, r"CALL SNIPPETS takes \(data, table, query")
    expect_error(cur, f"CALL SNIPPETS('x', '{corpus}', 'fox', 'a')", 1064,
                 r"col 41: expected an option as value AS name")
    expect_error(cur, f"CALL SNIPPETS('x', '{corpus}', 'fox', 'a' AS nope)", 1064,
                 r"unknown highlighting option 'nope'")
    expect_error(cur, f"CALL SNIPPETS('x', '{corpus}', 'fox', 'a' AS limit)", 1064, r"expected a number")
    expect_error(cur, f"CALL SNIPPETS(('x', 1), '{corpus}', 'fox')", 1064,
                 r"expected the data as a string or a list of strings")
    expect_error(cur, f"CALL SNIPPETS('x', '{corpus}', '\"fox')", 1064, r"MATCH: unexpected end of query")
    expect_error(cur, f"CALL SNIPPETS(('ok', %s), '{corpus}', 'fox')", 1366,
                 r"document 2: .*invalid UTF-8", args=(b"a\xff",))


UNICODE_DOCS = {
    1: ("Straße GROSS Ünïcode",),
    2: ("ＦＵＬＬ width ｗｉｄｅ",),
    3: ("東京タワー 日本語",),
    4: ("ÉCOLE",),
    5: ("ﬁne ligature",),
    6: ("京 and 東",),
}


@pytest.fixture(scope="module")
def unicode_table(server):
    return make_table(server, "fts_unicode", "(body TEXT)", UNICODE_DOCS)


@pytest.mark.parametrize("text, want", [
    # case folding (full: ß folds to ss)
    ("strasse", [1]), ("STRASSE", [1]), ("straße", [1]), ("groß", [1]),
    ("ünïcode", [1]), ("ÜNÏCODE", [1]), ("école", [4]), ("École", [4]),
    # NFKC: full-width letters and ligatures
    ("full", [2]), ("FULL", [2]), ("ｆｕｌｌ", [2]), ("wide", [2]), ("ｆｕ*", [2]),
    ("fine", [5]), ("ﬁne", [5]),
    # each CJK character is a word; a run of them is a phrase
    ("東", [3, 6]), ("京", [3, 6]), ("タ", [3]), ("東京", [3]), ("京東", []),
    ('"東 京"', [3]), ("京 東", [3, 6]), ("日本語", [3]),
])
def test_unicode_analysis(cur, unicode_table, text, want):
    assert sorted(match_ids(cur, unicode_table, text)) == want


ACCENT_DOCS = {
    1: ("Café crème", "Une tarte Tatin au café"),
    2: ("Łódź", "naïve ΆΓΙΟΣ résumés"),
    3: ("йогурт", "ёж"),
    4: ("cafe", "plain resume"),
    5: ("Infor\u00admation", "x"),
}


def accent_table(cur, name, options, want_option):
    """Creates name (title, body) with options, checks that SHOW CREATE
    TABLE lists want_option, and inserts ACCENT_DOCS."""
    cur.execute(f"CREATE TABLE {name} (title TEXT, body TEXT) {options}")
    cur.execute(f"SHOW CREATE TABLE {name}")
    assert want_option in cur.fetchone()[1]
    cur.execute(f"INSERT INTO {name} VALUES " + ", ".join(
        f"({i}, {q(a)}, {q(b)})" for i, (a, b) in ACCENT_DOCS.items()))
    return name


def test_remove_diacritics(cur, uniq):
    """A new table folds accents (remove_diacritics='1' by default, as
    Manticore's default charset_table and FTS5's tokenizer do): 'cafe' finds
    "Café", in documents and queries, phrases, prefixes, exact forms,
    HIGHLIGHT() and CALL KEYWORDS, in RAM and sealed. Cyrillic keeps its
    й and ё. A soft hyphen no longer splits a word. remove_diacritics='0'
    keeps accents apart, and splits at the soft hyphen."""
    t = accent_table(cur, uniq(), "morphology='stem_en' min_prefix_len='2'", "remove_diacritics='1'")
    assert_ids_ram_and_flushed(cur, t, [
        ("cafe", [1, 4]), ("CAFÉ", [1, 4]), ("cafe\u0301", [1, 4]), ("creme", [1]), ("caf*", [1, 4]),
        ('"cafe creme"', [1]), ('"café crème"', [1]), ("=cafe", [1, 4]), ("lodz", [2]), ("LÓDŹ", [2]),
        ("naive", [2]), ("αγιος", [2]), ("resume", [2, 4]), ("résumé", [2, 4]),
        ("йогурт", [3]), ("иогурт", []), ("ёж", [3]), ("еж", []),
        ("information", [5]), ("infor", []),
    ])
    # a soft hyphen joins the word it is in; HIGHLIGHT() marks the word as stored
    cur.execute(f"SELECT HIGHLIGHT({{}}, 'title') FROM {t} WHERE MATCH('information')")
    assert cur.fetchone()[0] == "<b>Infor\u00admation</b>"
    cur.execute(f"SELECT HIGHLIGHT({{}}, 'title') FROM {t} WHERE MATCH('cafe creme') AND id = 1")
    assert cur.fetchone()[0] == "<b>Café</b> <b>crème</b>"
    cur.execute(f"CALL KEYWORDS('Crème Brûlée', '{t}')")
    assert [r[1:] for r in cur.fetchall()] == [("creme", "creme"), ("brulee", "brule")]

    off = accent_table(cur, uniq(), "remove_diacritics='0'", "remove_diacritics='0'")
    assert_ids_ram_and_flushed(cur, off, [
        ("cafe", [4]), ("café", [1]), ("CAFÉ", [1]), ("lodz", []), ("łódź", [2]), ("resume", [4]),
        ("information", []), ("infor", [5]),
    ])
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) remove_diacritics='2'", 1064,
                 r"option 'remove_diacritics' expects an integer from 0 to 1")


def test_stopwords_languages(cur, uniq):
    """stopwords takes Snowball's lists of other languages, several at
    once; their words are dropped as the text is folded (with accents
    folded, the list's "für" drops "FUR" too), positions still count, and a
    query of stop words only finds nothing."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) morphology='stem_de' stopwords='de, en'")
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "stopwords='de, en'" in cur.fetchone()[1]
    cur.execute(f"INSERT INTO {t} VALUES (1, 'Für die Häuser und the Bücher'), (2, 'Das Haus am See'), "
                "(3, 'häuser bücher')")
    assert_ids_ram_and_flushed(cur, t, [
        ("haus", [1, 2, 3]), ("Bücher", [1, 3]), ('"häuser bücher"', [3]), ('"häuser und the bücher"', [1]),
        ("see", [2]), ("die", []), ("the | und", []),
    ])
    cur.execute(f"CALL KEYWORDS('FUR die Häuser', '{t}')")
    assert [r[1:] for r in cur.fetchall()] == [("hauser", "haus")]
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) stopwords='de, xx'", 1064,
                 r"unknown stop-word list 'xx' \(supported: none, en, da, de, .*\)")


def test_several_stemmers_and_min_stemming_len(cur, uniq):
    """morphology takes several stemmers (Manticore's 'stem_en, stem_ru' and
    stem_enru): each word is stemmed by the first that changes it, on both
    sides; min_stemming_len leaves shorter words unstemmed."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) morphology='stem_en, stem_ru' min_stemming_len='5'")
    cur.execute(f"SHOW CREATE TABLE {t}")
    ddl = cur.fetchone()[1]
    assert "morphology='stem_en, stem_ru'" in ddl and "min_stemming_len='5'" in ddl, ddl
    cur.execute(f"INSERT INTO {t} VALUES (1, 'running books'), (2, 'книги и журналы'), (3, 'runs cats')")
    assert_ids_ram_and_flushed(cur, t, [
        ("run", [1]), ("runner", []), ("book", [1]), ("книга", [2]), ("журналов", [2]),
        ("runs", [3]), ("run*", [1, 3]), ("cat", []), ("cats", [3]),
    ])
    cur.execute(f"CALL KEYWORDS('running книги runs', '{t}')")
    assert [r[2] for r in cur.fetchall()] == ["run", "книг", "runs"]
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) morphology='stem_enru'")
    cur.execute(f"INSERT INTO {u} VALUES (1, 'книги runs')")
    assert sorted(match_ids(cur, u, "книга run")) == [1]
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) morphology='stem_en, stem_zz'", 1064,
                 r"morphology 'stem_en, stem_zz': unknown processor 'stem_zz' \(supported: none, stem_ar")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) min_stemming_len='65'", 1064,
                 r"option 'min_stemming_len' expects an integer from 0 to 64")



def test_manticore_names_for_what_loupe_does(cur, uniq):
    """Options a Manticore table definition often carries that name what
    loupe always does: libstemmer_<code or algorithm> is the Snowball
    stemmer of stem_<code>, dict='keywords' and index_field_lengths='1' are
    kept and shown; the settings loupe cannot have are refused, saying why."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) morphology='libstemmer_fr, libstemmer_english' "
                "dict='keywords' index_field_lengths='1'")
    cur.execute(f"SHOW CREATE TABLE {t}")
    ddl = cur.fetchone()[1]
    assert "morphology='libstemmer_fr, libstemmer_english' dict='keywords' index_field_lengths='1'" in ddl, ddl
    assert_ddl_round_trips(cur, t, uniq)
    cur.execute(f"INSERT INTO {t} VALUES (1, 'les chevaux'), (2, 'running dogs')")
    assert_ids_ram_and_flushed(cur, t, [("cheval", [1]), ("run", [2]), ("dog", [2])])
    cur.execute(f"CALL KEYWORDS('chevaux running', '{t}')")
    assert [r[2] for r in cur.fetchall()] == ["cheval", "run"]
    for opt, msg in (("morphology='libstemmer_klingon'", r"no Snowball stemmer for 'libstemmer_klingon'"),
                     ("dict='crc'", r"dict must be 'keywords'"),
                     ("index_field_lengths='0'", r"index_field_lengths must be 1")):
        expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) {opt}", 1064, msg)



def test_regexp_filter(cur, uniq):
    """Manticore's regexp_filter: rules ('pattern => replacement', one per
    line) rewrite documents and queries before they are split into words,
    in order; HIGHLIGHT() shows the text as stored; CALL KEYWORDS reads
    the query's way; SHOW CREATE TABLE round-trips; ALTER indexes again;
    every bad rule, and a text a rule cannot finish matching, is an error."""
    t = uniq()
    # SQL strings take \\ for a backslash and \n for a line break
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT) morphology='stem_en' "
                "regexp_filter='(BLUE|RED) => COLOR\\n(\\\\d+)\" => \\\\1 inch'")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'RED TUBE 5\" LONG', 'PLANK 2\" x 4\"'), "
                "(2, 'green tube', 'blue sky'), (3, 'BLUE 5 inches', '')")
    assert_ids_ram_and_flushed(cur, t, [
        ("COLOR", [1, 3]), ("RED", [1, 3]), ("BLUE tube", [1]), ('"5 inch"', [1, 3]), ('5"', [1, 3]),
        ("inch", [1, 3]), ("blue", [2]), ('"2 inch x 4 inch"', [1]),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('RED | \"2 inch\"') ORDER BY id ASC")
    # (a phrase's words are marked wherever they are: exact_phrase is off;
    # '2"' was read as "2 inch", both words marked: one pair of tags)
    assert cur.fetchall() == ((1, '<b>RED</b> TUBE <b>5"</b> LONG | PLANK <b>2"</b> x <b>4"</b>'),
                              (3, '<b>BLUE</b> 5 <b>inches</b>'))
    cur.execute(f"CALL KEYWORDS('RED 7\"', '{t}')")
    assert [r[1:] for r in cur.fetchall()] == [("color", "color"), ("7", "7"), ("inch", "inch")]
    # CALL SUGGEST reads its word the same way: BLUE is COLOR
    cur.execute(f"CALL SUGGEST('BLUE', '{t}')")
    assert cur.fetchall()[0][:2] == ("color", 0)
    cur.execute(f"CALL SUGGEST('blu', '{t}')")
    assert cur.fetchall()[0][0] == "blue"
    assert_ddl_round_trips(cur, t, uniq)
    # rules changed: every row is indexed again the new way
    cur.execute(f"ALTER TABLE {t} regexp_filter='(?i)green => COLOR'")
    assert sorted(match_ids(cur, t, "COLOR")) == [2]
    assert sorted(match_ids(cur, t, "RED")) == [1]
    for rules, msg in (("no arrow", r"regexp_filter rule 1 'no arrow': expected 'pattern => replacement'"),
                       ("a => b\\n(c => d", r"regexp_filter rule 2: the pattern '\(c' at offset 2: missing closing"),
                       ("(a) => \\\\2", r"the replacement names group \\2, and the pattern has 1")):
        expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) regexp_filter='{rules}'", 1064, msg)
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) html_strip='1' index_zones='h1' regexp_filter='a => b'",
                 1064, r"regexp_filter cannot be used with index_zones")
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) regexp_filter='(a+)+$ => x'")
    expect_error(cur, f"INSERT INTO {u} VALUES (1, '{'a' * 40}b')", 1105, r"regexp_filter rule 1 stopped")
    cur.execute(f"SELECT COUNT(*) FROM {u}")
    assert cur.fetchall() == ((0,),)  # nothing half-written
    expect_error(cur, f"SELECT id FROM {u} WHERE MATCH('{'a' * 40}b')", 1064, r"regexp_filter rule 1 stopped")



def strip_tags(text):
    return text.replace("<b>", "").replace("</b>", "")


def test_highlight_with_regexp_filter(cur, uniq, http):
    """HIGHLIGHT() on a table with regexp_filter rules shows the text as
    stored, not as the rules rewrote it: a marked word a replacement wrote
    is the whole text that replacement replaced; text the rules dropped is
    shown where it was. With html_strip, passages, escape_html, retain,
    SNIPPET(), CALL SNIPPETS and /search's highlight alike."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) html_strip='1' "
                "regexp_filter='(\\\\d+) ?GB => \\\\1gb\\nAT&T => ATT company\\n\\\\?\\\\? => '")
    doc1 = '<p>Laptop with <b>16 GB</b> RAM &amp; 512GB disk from AT&amp;T??</p>'
    doc2 = "Ask AT&T?? about 8 GB plans; " + "filler words here " * 20 + "and 4GB phones"
    cur.execute(f"INSERT INTO {t} VALUES (1, '{doc1}'), (2, '{doc2}')")
    stripped1 = "\n\nLaptop with 16 GB RAM & 512GB disk from AT&T??\n\n"

    def hl(opts, query, ids=(1, 2)):
        cur.execute(f"SELECT id, HIGHLIGHT({opts}) FROM {t} WHERE MATCH('{query}') ORDER BY id ASC")
        got = dict(cur.fetchall())
        assert sorted(got) == list(ids), got
        return got

    for flushed in (False, True):
        got = hl("{limit=0}", "16gb | ram | company", ids=(1, 2))
        assert got[1] == "\n\nLaptop with <b>16 GB</b> <b>RAM</b> & 512GB disk from <b>AT&T</b>??\n\n"
        assert strip_tags(got[1]) == stripped1
        assert got[2] == "Ask <b>AT&T</b>?? about 8 GB plans; " + "filler words here " * 20 + "and 4GB phones"
        # both words the replacement wrote are marked: still one pair of tags
        assert hl("{limit=0}", "att company")[1].count("<b>AT&T</b>") == 1
        # a query's own text goes through the rules: '8 GB' is 8gb
        got = hl("{limit=0}", "8 GB | 4GB", ids=(2,))
        assert "about <b>8 GB</b> plans" in got[2] and "and <b>4GB</b> phones" in got[2]
        # passages: cut around the words read ("company about 8gb plans"),
        # shown as stored; a passage that starts inside a replacement shows
        # all it replaced
        got = hl("{limit=40, around=2}", "8gb | phones", ids=(2,))
        assert got[2] == " ... AT&T?? about <b>8 GB</b> plans; filler ... <b>phones</b>"
        got = hl("{limit=20, around=1}", "company", ids=(1, 2))
        assert got[2] == " ... <b>AT&T</b>?? about ... "
        # escape_html escapes the text shown, not the tags
        got = hl("{limit=0, escape_html=1}", "company", ids=(1, 2))
        assert "from <b>AT&amp;T</b>??" in got[1]
        # retain: the stored text with its markup, the marks inside it
        got = hl("{html_strip_mode='retain', limit=0}", "16gb | company | 512gb", ids=(1, 2))
        assert got[1] == '<p>Laptop with <b><b>16 GB</b></b> RAM &amp; <b>512GB</b> disk from <b>AT&amp;T</b>??</p>'
        # html_strip_mode none: the markup is text, the rules read it as such
        got = hl("{html_strip_mode='none', limit=0}", "16gb", ids=(1,))
        assert "<b><b>16 GB</b></b>" in got[1], got
        if not flushed:
            cur.execute(f"FLUSH TABLE {t}")
    cur.execute(f"SELECT id, SNIPPET(body, 'ram 16gb') FROM {t} WHERE id = 1")
    assert cur.fetchall()[0][1] == "\n\nLaptop with <b>16 GB</b> <b>RAM</b> & 512GB disk from AT&T??\n\n"
    cur.execute(f"CALL SNIPPETS(('a 32 GB card??', 'at&t AT&T'), '{t}', '32gb company')")
    assert cur.fetchall() == (("a <b>32 GB</b> card??",), ("at&t <b>AT&T</b>",))  # the rules match case
    status, _, data = http("/search", json.dumps({"table": t, "query": {"match": {"*": "16gb"}},
                                                  "highlight": {"fields": ["body"], "limit": 0}}).encode())
    assert status == 200, data
    hits = json.loads(data)["hits"]["hits"]
    assert [h["highlight"]["body"] for h in hits] == [[stripped1.replace("16 GB", "<b>16 GB</b>")]]


def test_soundex(cur, uniq):
    """morphology='soundex' (Sphinx's and Manticore's phonetic codes, the
    same as searchd 2.2.11 gives: bench-parity's table xp), alone and after
    a stemmer, where the first processor that changes a word wins."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (name TEXT) morphology='soundex'")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'Robert Smith'), (2, 'Rupert Smyth'), (3, 'Rubin Ashcraft'), (4, 'x 123abc')")
    assert_ids_ram_and_flushed(cur, t, [("robert", [1, 2]), ("rupurt smith", [1, 2]), ("ruben", [3]),
                                        ("ashcroft", [3]), ("x", [4]), ("123abc", [4]), ("r163", [1, 2])])
    cur.execute(f"CALL KEYWORDS('Robert Ashcraft ab x', '{t}')")
    assert [r[2] for r in cur.fetchall()] == ["r163", "a2613", "a1", "x"]
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('rupurt') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>Robert</b> Smith"), (2, "<b>Rupert</b> Smyth"))
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (name TEXT) morphology='stem_en, soundex'")
    cur.execute(f"CALL KEYWORDS('running run cats cat', '{u}')")
    assert [r[2] for r in cur.fetchall()] == ["run", "r50", "cat", "c30"]
    expect_error(cur, f"CREATE TABLE {uniq()} (name TEXT) morphology='metafone'", 1064,
                 r"unknown morphology 'metafone' \(supported: none, .*, soundex, metaphone\)")


def test_metaphone(cur, uniq):
    """morphology='metaphone' (Sphinx's and Manticore's: Double Metaphone's
    primary code, the same as searchd 2.2.11 gives: bench-parity's table
    xm): words that sound alike find each other, in RAM and sealed."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (name TEXT) morphology='metaphone'")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'John Smith'), (2, 'Jon Schmidt'), (3, 'Knight Thomas'), "
                "(4, 'Philip Wright'), (5, 'x 123abc h')")
    assert_ids_ram_and_flushed(cur, t, [("smith", [1]), ("smyth", [1]), ("schmidt", [2]), ("jon", [1, 2]),
                                        ("night", [3]), ("tomas", [3]), ("filip", [4]), ("rite", [4]),
                                        ("\"jon smyth\"", [1]), ("h", [5]), ("123abc", [5]), ("pk", [5])])
    cur.execute(f"CALL KEYWORDS('Smith Schmidt Knight Xavier 123abc h', '{t}')")
    assert [r[2] for r in cur.fetchall()] == ["SM0", "XMT", "NT", "SF", "PK", "h"]
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('smyth | nite') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "John <b>Smith</b>"), (3, "<b>Knight</b> Thomas"))
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (name TEXT) morphology='stem_en, metaphone'")
    cur.execute(f"CALL KEYWORDS('running run', '{u}')")
    assert [r[2] for r in cur.fetchall()] == ["run", "RN"]


def assert_ddl_round_trips(cur, table, uniq):
    """SHOW CREATE TABLE's statement, run under another name, makes a table
    whose SHOW CREATE TABLE is the same (the rules kept in the table need
    no file)."""
    cur.execute(f"SHOW CREATE TABLE {table}")
    ddl = cur.fetchone()[1]
    other = uniq()
    cur.execute(ddl.replace(f"CREATE TABLE {table} ", f"CREATE TABLE {other} ", 1))
    cur.execute(f"SHOW CREATE TABLE {other}")
    assert cur.fetchone()[1] == ddl.replace(f"CREATE TABLE {table} ", f"CREATE TABLE {other} ", 1)


def test_wordforms(cur, uniq, tmp_path):
    """Word forms (Manticore's wordforms files and wordforms_list): a word,
    or a run of words, is indexed and searched as the rule's destination,
    which is not stemmed; '~' rules match the stem. The files are read when
    the table is created and kept in it (SHOW CREATE TABLE lists the rules
    as one wordforms_list), so a later change to them changes nothing."""
    (tmp_path / "wf1.txt").write_text("geese > goose\ncore 2 duo > c2d  # cpus\na;b > ab\n")
    (tmp_path / "wf2a.txt").write_text("s02e02 > season 2 episode 2\n")
    (tmp_path / "wf2b.txt").write_text("walked > strolled\n")
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT) morphology='stem_en' "
                f"wordforms='{tmp_path}/wf1.txt, {tmp_path}/wf2*' wordforms_list='walked > walk; ~run > sprint'")
    cur.execute(f"SHOW CREATE TABLE {t}")
    ddl = cur.fetchone()[1]
    assert "wordforms=" not in ddl, ddl
    assert ("wordforms_list='geese > goose\ncore 2 duo > c2d  # cpus\na\\\\;b > ab\n"
            "s02e02 > season 2 episode 2\nwalked > strolled\nwalked > walk; ~run > sprint\n'") in ddl, ddl
    assert_ddl_round_trips(cur, t, uniq)
    (tmp_path / "wf1.txt").write_text("geese > gander\n")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'Geese on a Core 2 Duo', 'running in S02E02'), "
                f"(2, 'a goose', 'core duo 2, a;b and walked')")
    assert_ids_ram_and_flushed(cur, t, [
        ("geese", [1]), ("goose", [2]), ("gander", []),
        ("core 2 duo", [1]), ('"core 2 duo"', [1]), ("c2d", [1]), ("@title core 2 duo", [1]),
        ("@body core 2 duo", []), ("core duo", [2]), ("core (2 duo)", [2]), ("core -2 duo", []),
        ("s02e02", [1]), ('"season 2"', [1]), ("runs", [1]), ("sprint", [1]), ("run", [1]),
        ("walk", [2]), ("strolled", []), ("ab", [2]), ("a;b", [2]), ("core 2 duo*", [2]),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('(core 2 duo) | s02e02')")
    assert cur.fetchall() == ((1, "Geese on a <b>Core</b> <b>2</b> <b>Duo</b> | running in <b>S02E02</b>"),)
    # exact_phrase places: the phrase's words where the index has them (a
    # word form's words at their own positions)
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) wordforms_list='core 2 duo > c2d; s02e02 > season 2 episode 2'")
    cur.execute(f"INSERT INTO {u} VALUES (1, 'my core 2 duo cpu'), (2, 'watch s02e02 tonight'), "
                f"(3, 'the duo cpu and core 2 duo cpu')")
    for q, want in [
        ('"c2d cpu"', [(1, "my <b>core</b> <b>2</b> <b>duo</b> <b>cpu</b>"),
                       (3, "the duo cpu and <b>core</b> <b>2</b> <b>duo</b> <b>cpu</b>")]),
        ('"episode 2 tonight"', [(2, "watch <b>s02e02</b> <b>tonight</b>")]),
        ('"watch season"', [(2, "<b>watch</b> <b>s02e02</b> tonight")]),
    ]:
        cur.execute(f"SELECT id, HIGHLIGHT({{exact_phrase=1}}) FROM {u} WHERE MATCH('{q}') ORDER BY id ASC")
        assert list(cur.fetchall()) == want, q
    cur.execute(f"CALL KEYWORDS('Core 2 Duo runs s02e02', '{t}')")
    assert [(int(r[0]), r[1], r[2]) for r in cur.fetchall()] == [
        (1, "core 2 duo", "c2d"), (2, "runs", "sprint"), (3, "s02e02", "season"), (4, "s02e02", "2"),
        (5, "s02e02", "episode"), (6, "s02e02", "2")]
    # a table without word forms: none of it
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) wordforms_list='# nothing yet'")
    cur.execute(f"INSERT INTO {u} VALUES (1, 'geese')")
    assert match_ids(cur, u, "geese") == [1]


def test_wordforms_errors(cur, uniq, tmp_path):
    (tmp_path / "bad.txt").write_text("a > b\n\nc d\n")
    (tmp_path / "nul.txt").write_bytes(b"a > b\nc\x00d > e\n")
    (tmp_path / "utf8.txt").write_bytes(b"a > b\nc\xff > e\n")
    cases = [
        (f"wordforms='{tmp_path}/nul.txt'", rf"wordforms file '{tmp_path}/nul.txt' holds a NUL byte at byte 7"),
        (f"wordforms='{tmp_path}/utf8.txt'",
         rf"file '{tmp_path}/utf8.txt': wordforms rule 2 \(line 2, byte 6\): its source: invalid UTF-8 at byte 1"),
        (f"exceptions='{tmp_path}/utf8.txt'",
         rf"file '{tmp_path}/utf8.txt': exceptions rule 2 \(line 2, byte 6\): it is not valid UTF-8"),
        (f"wordforms='{tmp_path}/bad.txt'",
         rf"file '{tmp_path}/bad.txt': wordforms rule 2 \(line 3, byte 7\) 'c d': expected 'source > destination'"),
        ("wordforms='relative/wf.txt'", r"wordforms: 'relative/wf.txt' is not an absolute path"),
        (f"wordforms='{tmp_path}/none*'", rf"wordforms: no file matches '{tmp_path}/none\*'"),
        (f"wordforms='{tmp_path}'", rf"wordforms: '{tmp_path}' is not a file"),
        ("wordforms=''", r"wordforms: expected one or more absolute file paths"),
        ("wordforms_list='a > b; > c'", r"wordforms rule 2 \(line 1, byte 6\): its source has no word"),
        ("wordforms_list='a > b > c'", r"wordforms rule 1 \(line 1, byte 0\): more than one '>'"),
        ("wordforms_list='~a b > c'", r"its source has more than one word \(a '~' rule maps one word to one\)"),
    ]
    for opt, msg in cases:
        expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) {opt}", 1064, msg)


def test_wordforms_kept_across_restart(tmp_path):
    """The rules live in the table: its files may go, a restart keeps them."""
    data = tmp_path / "data"
    data.mkdir()
    wf = tmp_path / "wf.txt"
    wf.write_text("core 2 duo > c2d\n")
    s = LoupeServer(name="wordforms", data_dir=str(data))
    s.start()
    try:
        with pymysql_connect(s.mysql_port) as c, c.cursor() as cur:
            cur.execute(f"CREATE TABLE w (body TEXT) wordforms='{wf}'")
            cur.execute("INSERT INTO w VALUES (1, 'a Core 2 Duo')")
            cur.execute("FLUSH TABLE w")
            cur.execute("INSERT INTO w VALUES (2, 'another core 2 duo')")
        wf.unlink()
        s.restart()
        with pymysql_connect(s.mysql_port) as c, c.cursor() as cur:
            cur.execute("INSERT INTO w VALUES (3, 'core 2 duo too')")
            assert sorted(match_ids(cur, "w", "core 2 duo")) == [1, 2, 3]
            assert sorted(match_ids(cur, "w", "c2d")) == [1, 2, 3]
            assert match_ids(cur, "w", "core") == []
    finally:
        s.stop()


def test_ignore_chars(cur, uniq):
    """ignore_chars (Manticore's): the characters are taken out of the text
    before it is split, so the letters around one join; HIGHLIGHT marks the
    text as stored, word forms see the text without them."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) ignore_chars='U+AD, -' morphology='stem_en' "
                f"wordforms_list='co-op > cooperative'")
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "ignore_chars='U+AD, -'" in cur.fetchone()[1]
    cur.execute(f"INSERT INTO {t} VALUES (1, 'Send an e-mail to the co-op'), (2, 'emails and coops'), "
                f"(3, 'e mail, in\u00adformation')")
    assert_ids_ram_and_flushed(cur, t, [
        ("email", [1, 2]), ("e-mail", [1, 2]), ('"e-mail to"', [1]), ("e -mail", []), ("mail", [3]),
        # a destination is not stemmed (as in Manticore), the query's word is: "cooper"
        ("cooperative", []), ("coop", [1]), ("coops", [2]), ("co-op", [1]), ("information", [3]),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('email co-op') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "Send an <b>e-mail</b> to the <b>co-op</b>"),)
    cur.execute(f"CALL KEYWORDS('e-mails', '{t}')")
    assert [r[1:3] for r in cur.fetchall()] == [("emails", "email")]
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) ignore_chars='a->b'", 1064,
                 r"ignore_chars: 'a->b': maps a character: only characters and ranges are allowed here")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) ignore_chars='z..a'", 1064,
                 r"ignore_chars: 'z..a': a range must not end before it starts")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) ignore_chars='-' wordforms_list='- > x'", 1064,
                 r"wordforms rule 1 \(line 1, byte 0\): its source has no word")


def test_charset_table(cur, uniq):
    """charset_table (Manticore's): the characters it names are word
    characters, mapped as it says and not case-folded; its aliases take in
    the default letters and digits; the rest separates words. Both sides,
    word forms and HIGHLIGHT split text the table's way; ALTER changes it
    and indexes every row again."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) charset_table='non_cjk, +, #, U+2D, U+E9->e' "
                f"morphology='stem_en' wordforms_list='c++ > cpp'")
    assert_ddl_round_trips(cur, t, uniq)
    cur.execute(f"INSERT INTO {t} VALUES (1, 'Learning C++ and C#'), (2, 'plain C, an e-mail'), "
                f"(3, 'email the caf\u00e9'), (4, 'CPP tools')")
    assert_ids_ram_and_flushed(cur, t, [
        ("c++", [1, 4]), ("cpp", [1, 4]), ("C#", [1]), ("c", [2]), ("e-mail", [2]), ("email", [3]),
        ("mail", []), ("cafe", [3]), ("caf\u00e9", [3]), ('"c++ and c#"', [1]), ("c#*", [1]), ("learn", [1]),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('c# | e-mail') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "Learning C++ and <b>C#</b>"), (2, "plain C, an <b>e-mail</b>"))
    cur.execute(f"CALL KEYWORDS('C++ e-mails caf\u00e9s', '{t}')")
    assert [r[1:3] for r in cur.fetchall()] == [("c++", "cpp"), ("e-mails", "e-mail"), ("cafes", "cafe")]

    # named characters are not case-folded: 'A'..'Z' separate words here
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) charset_table='a..z, 0..9'")
    cur.execute(f"INSERT INTO {u} VALUES (1, 'The cat'), (2, 'he said')")
    assert_ids_ram_and_flushed(cur, u, [("he", [1, 2]), ("cat", [1]), ("the", [])])
    # ALTER: the rows are indexed again the new way
    cur.execute(f"ALTER TABLE {u} charset_table='english'")
    assert_ids_ram_and_flushed(cur, u, [("he", [2]), ("the", [1]), ("THE", [1])])
    cur.execute(f"SHOW TABLE {u} SETTINGS")
    assert "charset_table = english" in cur.fetchone()[1]

    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) charset_table='non_cjk, a->*'", 1064,
                 r"near ''non_cjk, a->\*'' at line 1 col \d+: charset_table: 'a->\*': '\*' cannot be a word "
                 r"character: it is the query language's prefix and wildcard operator")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) charset_table='A..Z->a..y'", 1064,
                 r"charset_table: 'A..Z->a..y': a range maps onto a range of as many characters")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) charset_table='latin'", 1064,
                 r"charset_table: 'latin': expected a character, U\+hex, a range such as a..z, .* or an alias: "
                 r"non_cjk, non_cont, cjk, cont, chinese, japanese, korean, english, russian")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) charset_table='non_cjk, .' index_sp='1'", 1064,
                 r"charset_table: '\.' cannot be a word character in a table with index_sp='1'")
    expect_error(cur, f"ALTER TABLE {u} charset_table='a,,b'", 1064,
                 r"charset_table: an empty item \(two commas in a row\)")
    # a word-forms rule is split as the table splits text: without '+' as a
    # word character, 'c++' is the word 'c'
    v = uniq()
    cur.execute(f"CREATE TABLE {v} (body TEXT) charset_table='non_cjk' wordforms_list='c++ > cpp'")
    cur.execute(f"INSERT INTO {v} VALUES (1, 'plain c'), (2, 'c++')")
    assert_ids_ram_and_flushed(cur, v, [("cpp", [1, 2]), ("c", [1, 2])])


def test_blend_chars(cur, uniq):
    """blend_chars and blend_mode (Manticore's): a token with blend
    characters is indexed as its words and, at the first one's position, as
    the whole token (or the variants blend_mode names); a query looks for
    the token, its words' positions passed over."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) blend_chars='&, U+2D' morphology='stem_en'")
    assert_ddl_round_trips(cur, t, uniq)
    cur.execute(f"INSERT INTO {t} VALUES (1, 'AT&T company runs'), (2, 'at t company'), "
                f"(3, 'an e-mail service'), (4, 'email me'), (5, 'salt & pepper')")
    assert_ids_ram_and_flushed(cur, t, [
        ("AT&T", [1]), ("at", [1, 2]), ('"AT&T company"', [1]), ('"at t company"', [1, 2]),
        ("e-mail", [3]), ("mail", [3]), ("email", [4]), ("at&*", [1]), ('"salt & pepper"', [5]),
        ('"salt pepper"', []),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('AT&T | e-mail') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>AT&T</b> company runs"), (3, "an <b>e-mail</b> service"))
    # anchored at the field's end, a token ends where its last part does
    # (its forms stand at its first part's position), as in Sphinx
    cur.execute(f"INSERT INTO {t} VALUES (6, 'call AT&T'), (7, 'AT&T-mobile'), (8, 'AT&T x'), (9, 'at t')")
    assert_ids_ram_and_flushed(cur, t, [
        ("at&t$", [6]), ("^at&t$", []), ("at&t-mobile$", [7]), ("^at&t-mobile$", [7]), ("mobile$", [7]),
        ('"call at&t$"', [6]), ("t$", [6, 9]), ("call << at&t$", [6]), ("at&t$ | x$", [6, 8]),
        ("call NEAR/2 at&t$", [6]), ("call NEAR/2 at&t-mobile$", []),
    ])
    cur.execute(f"CALL KEYWORDS('AT&T e-mails', '{t}')")
    assert [r[1:3] for r in cur.fetchall()] == [("at&t", "at&t"), ("e-mails", "e-mail")]

    # blend_mode: the variants indexed; skip_pure drops tokens of blend
    # characters only, so a phrase reads across them
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) blend_chars='@, !' "
                f"blend_mode='trim_head, trim_tail, skip_pure'")
    cur.execute(f"INSERT INTO {u} VALUES (1, 'hi @dude! one @@@ two'), (2, 'dude one two')")
    assert_ids_ram_and_flushed(cur, u, [
        ("dude!", [1]), ("\\@dude", [1]), ("dude", [1, 2]), ('"one two"', [1, 2]),
    ])
    cur.execute(f"ALTER TABLE {u} blend_mode='trim_none'")
    assert_ids_ram_and_flushed(cur, u, [("dude!", []), ('"one two"', [2]), ('"one @@@ two"', [1])])
    # as Sphinx: without skip_pure a token of blend characters only is a
    # word as written in every mode; a query looks for a token as written
    # where a variant keeps it so (trim_tail's '\@dude'), else its first
    cur.execute(f"ALTER TABLE {u} blend_mode='trim_head, trim_tail'")
    cur.execute(f"INSERT INTO {u} VALUES (3, '@dude rocks'), (4, 'dude rocks')")
    assert_ids_ram_and_flushed(cur, u, [
        ('"one two"', [2]), ('"one @@@ two"', [1]), ("\\@dude", [1, 3]),
        ("\\@dude!", [1]), ("dude", [1, 2, 3, 4]),
    ])
    # HIGHLIGHT() marks a token found through any of its forms or parts
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {u} WHERE MATCH('\\\\@dude') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "hi <b>@dude!</b> one @@@ two"), (3, "<b>@dude</b> rocks"))

    # word forms, as Sphinx applies them: one word to one takes a blend
    # token's variant or part too, several words take plain words only
    w = uniq()
    cur.execute(f"CREATE TABLE {w} (body TEXT) blend_chars='&' "
                f"wordforms_list='at&t > telco; t mobile > cell'")
    cur.execute(f"INSERT INTO {w} VALUES (1, 'at&t mobile'), (2, 'telco'), (3, 'x t mobile')")
    assert_ids_ram_and_flushed(cur, w, [
        ("at&t", [1, 2]), ("telco", [1, 2]), ("cell", [3]), ("t mobile", [3]), ('"at&t mobile"', [1]),
        ("mobile", [1]),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {w} WHERE MATCH('telco | cell') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>at&t</b> mobile"), (2, "<b>telco</b>"), (3, "x <b>t</b> <b>mobile</b>"))

    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) blend_chars='non_cjk'", 1064,
                 r"blend_chars: 'non_cjk': expected a character, U\+hex, a range such as a..z, a mapping such as "
                 r"@->_ or a range of pairs")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) blend_chars='&' blend_mode='trim_some'", 1064,
                 r"near ''trim_some'' at line 1 col \d+: blend_mode: 'trim_some': expected trim_none, trim_head, "
                 r"trim_tail, trim_both, trim_all or skip_pure")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) blend_chars='.' index_sp='1'", 1064,
                 r"blend_chars: '\.' cannot be a word character in a table with index_sp='1'")


def test_ngram_chars(cur, uniq):
    """ngram_len='1' and ngram_chars (Manticore's way to index CJK text):
    each such character is a word of its own, in documents and queries, so
    a CJK word is a phrase of its characters; Manticore's DDL for Chinese
    (charset_table='non_cont' ngram_len='1' ngram_chars='cont') works."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) charset_table='non_cont' ngram_len='1' ngram_chars='cont'")
    assert_ddl_round_trips(cur, t, uniq)
    cur.execute(f"INSERT INTO {t} VALUES (1, '\u6771\u4eac tower'), (2, '\u4eac\u90fd'), (3, 'tokyo')")
    assert_ids_ram_and_flushed(cur, t, [
        ("\u6771\u4eac", [1]), ("\u4eac", [1, 2]), ("\u6771\u4eac tower", [1]), ("tokyo", [3]),
    ])
    cur.execute(f"CALL KEYWORDS('\u6771\u4eac', '{t}')")
    assert [r[1] for r in cur.fetchall()] == ["\u6771", "\u4eac"]
    # without ngram_chars, charset_table='non_cont' drops CJK letters
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) charset_table='non_cont'")
    cur.execute(f"INSERT INTO {u} VALUES (1, '\u6771\u4eac tower')")
    assert_ids_ram_and_flushed(cur, u, [("\u4eac", []), ("tower", [1])])
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) ngram_chars='cont'", 1064,
                 r"ngram_chars needs ngram_len='1'")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) ngram_len='2'", 1064,
                 r"option 'ngram_len' expects an integer from 0 to 1")


def test_exceptions(cur, uniq, tmp_path):
    """Exceptions (Manticore's exceptions files and exceptions_list): exact,
    case-sensitive runs of the raw text read as one keyword, on both sides;
    white space in a source matches any amount; kept in the table."""
    (tmp_path / "exc.txt").write_text("C++ => cplusplus\nc++ => cplusplus\nC# => csharp\n")
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) morphology='stem_en' exceptions='{tmp_path}/exc.txt' "
                f"exceptions_list='AT & T => AT&T; .NET => dotnet'")
    cur.execute(f"SHOW CREATE TABLE {t}")
    ddl = cur.fetchone()[1]
    assert ("exceptions_list='C++ => cplusplus\nc++ => cplusplus\nC# => csharp\n"
            "AT & T => AT&T; .NET => dotnet\n'") in ddl, ddl
    assert_ddl_round_trips(cur, t, uniq)
    cur.execute(f"INSERT INTO {t} VALUES (1, 'I write C++ and C#'), (2, 'AT  &  T runs .NET'), "
                f"(3, 'plain C, c# and at&t')")
    assert_ids_ram_and_flushed(cur, t, [
        ("C++", [1]), ("c++", [1]), ("cplusplus", [1]), ("C#", [1]), ("csharp", [1]),
        ("AT & T", [2]), ('"AT & T runs"', [2]), ("AT&T", [3]), (".NET", [2]), ("dotnet", [2]),
        ("C", [3]), ("c#", [3]), ("at t", [3]), ("run", [2]),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('C++ | (AT & T)') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "I write <b>C++</b> and C#"), (2, "<b>AT  &  T</b> runs .NET"))
    cur.execute(f"CALL KEYWORDS('AT & T loves C#', '{t}')")
    assert [(int(r[0]), r[2]) for r in cur.fetchall()] == [(1, "AT&T"), (2, "love"), (3, "csharp")]
    for opt, msg in [
        ("exceptions_list='C++ => '", r"exceptions rule 1 \(line 1, byte 0\): its destination is empty"),
        ("exceptions_list='a => =b'", r"its destination starts with '=', which the index keeps for terms of its own"),
        (f"exceptions='{tmp_path}/none.txt'", rf"exceptions: no file matches '{tmp_path}/none.txt'"),
    ]:
        expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) {opt}", 1064, msg)


def test_stopwords_files_and_list(cur, uniq, tmp_path):
    """stopwords takes files by absolute path beside language codes, and
    stopwords_list the words themselves (Manticore's): their words are
    split and normalised as the text is, kept in the table (SHOW CREATE
    TABLE: the codes in stopwords, the words in stopwords_list)."""
    (tmp_path / "stop.txt").write_text("Foo bar\nBaz;\n")
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) stopwords='en, {tmp_path}/stop.txt' stopwords_list='qux; Quux'")
    cur.execute(f"SHOW CREATE TABLE {t}")
    ddl = cur.fetchone()[1]
    assert "stopwords='en'" in ddl and "stopwords_list='Foo bar\nBaz\\\\;\nqux; Quux\n'" in ddl, ddl
    assert_ddl_round_trips(cur, t, uniq)
    cur.execute(f"INSERT INTO {t} VALUES (1, 'the foo and a bar'), (2, 'baz qux quux corge'), (3, 'foo corge')")
    assert_ids_ram_and_flushed(cur, t, [
        # a stop word in a phrase keeps its place: any word there matches
        ("foo", []), ("the", []), ("baz | qux", []), ("corge", [2, 3]), ('"foo corge"', [2, 3]),
    ])
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) stopwords='{tmp_path}/stop.txt'")
    cur.execute(f"SHOW CREATE TABLE {u}")
    ddl = cur.fetchone()[1]
    assert "stopwords=" not in ddl.replace("stopwords_list=", ""), ddl
    cur.execute(f"INSERT INTO {u} VALUES (1, 'the foo')")
    assert match_ids(cur, u, "the") == [1] and match_ids(cur, u, "foo") == []
    for opt, msg in [
        (f"stopwords='{tmp_path}/none.txt'", rf"stopwords: no file matches '{tmp_path}/none.txt'"),
        ("stopwords='en, xx'", r"unknown stop-word list 'xx'"),
        ("stopwords_list='a; abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz'",
         r"stop word 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz' is longer than 48 bytes"),
    ]:
        expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) {opt}", 1064, msg)


def _levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            row.append(min(prev[j - 1] + (ca != cb), prev[j] + 1, row[j - 1] + 1))
        prev = row
    return prev[-1]


def _same_rows_in_parts(cur, name, schema, rows):
    """A table `name` holding rows (id -> field values) in three segments:
    the first third and the second sealed, the rest in RAM."""
    cur.execute(f"CREATE TABLE {name} {schema}")
    ids = sorted(rows)
    for k, i in enumerate(ids):
        cur.execute(f"INSERT INTO {name} VALUES (%s{', %s' * len(rows[i])})", (i,) + tuple(rows[i]))
        if k + 1 in (len(ids) // 3, 2 * len(ids) // 3):
            cur.execute(f"FLUSH TABLE {name}")
    cur.execute(f"SHOW TABLE {name} STATUS LIKE 'disk_chunks'")
    assert cur.fetchone()[1] == "2"
    return name


def test_call_suggest_against_reference(cur, uniq):
    """CALL SUGGEST / QSUGGEST (Manticore's): the table's words within
    max_edits Levenshtein edits and delta_len characters of the text's
    first / last word, nearest first, then by documents, then by term;
    checked against a reference computed here from the rows inserted."""
    rnd = random.Random(20261205)
    vocab = ["crossbody", "bag", "bags", "tassel", "microfiber", "sheet", "set", "pet", "hair", "remover",
             "glove", "gloves", "tassels", "mister", "master", "muster", "café", "naïve", "x2", "sheets",
             "ключ", "ключи", "клюв"]
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT)")
    docs = {}
    for i in range(1, 41):
        title = " ".join(rnd.choice(vocab) for _ in range(rnd.randint(1, 4)))
        body = " ".join(rnd.choice(vocab) for _ in range(rnd.randint(0, 6)))
        docs[i] = (title, body)
        cur.execute(f"INSERT INTO {t} VALUES (%s, %s, %s)", (i, title, body))
    # the words as the table folds them (accents go, remove_diacritics)
    fold = {"café": "cafe", "naïve": "naive"}
    df = collections.Counter()
    for title, body in docs.values():
        for w in set((title + " " + body).split()):
            df[fold.get(w, w)] += 1

    def reference(word, max_edits=4, delta_len=3, limit=5, non_char=0):
        out = []
        for w, n in df.items():
            if abs(len(w) - len(word)) >= delta_len or (not non_char and not w.isalpha()):
                continue
            d = _levenshtein(word, w)
            if d <= max_edits:
                out.append((w, d, n))
        out.sort(key=lambda x: (x[1], -x[2], x[0].encode()))
        return out[:limit]

    # the same rows in two sealed segments and the RAM segment: each read
    # on its own (fts_scan_skipping), a word several hold counted once
    parts = _same_rows_in_parts(cur, uniq(), "(title TEXT, body TEXT)", docs)
    for step, t in (("ram", t), ("flush", t), ("parts", parts)):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for word in ["crossbudy", "bagg", "tasel", "glve", "mistr", "cafe", "nave", "sheat", "x3", "zzzz", "клоч"]:
            cur.execute(f"CALL SUGGEST('{word} ignored words', '{t}')")
            assert [(r[0], int(r[1]), int(r[2])) for r in cur.fetchall()] == reference(word), (step, word)
            cur.execute(f"CALL QSUGGEST('first {word}', '{t}', 2 AS max_edits, 2 AS delta_len, 3 AS limit, "
                        f"1 AS non_char)")
            assert [(r[0], int(r[1]), int(r[2])) for r in cur.fetchall()] == \
                reference(word, max_edits=2, delta_len=2, limit=3, non_char=1), (step, word)
            # a far reach: many candidates, the limit cutting through a
            # distance (those at it ordered by their documents)
            for limit in (1, 2, 4, 9):
                cur.execute(f"CALL SUGGEST('{word}', '{t}', {limit} AS limit, 7 AS max_edits, 8 AS delta_len)")
                assert [(r[0], int(r[1]), int(r[2])) for r in cur.fetchall()] == \
                    reference(word, max_edits=7, delta_len=8, limit=limit), (step, word, limit)
    cur.execute(f"CALL QSUGGEST('a bagg', '{t}', 1 AS sentence, 0 AS result_stats, 1 AS limit)")
    assert cur.fetchall() == (("a " + reference("bagg", limit=1)[0][0],),)
    cur.execute(f"CALL SUGGEST('tasel', '{t}', 1 AS result_line, 2 AS limit)")
    ref = reference("tasel", limit=2)
    assert cur.fetchall() == (("suggests", ",".join(r[0] for r in ref)),
                              ("distance", ",".join(str(r[1]) for r in ref)),
                              ("docs", ",".join(str(r[2]) for r in ref)))
    expect_error(cur, f"CALL SUGGEST('x', '{t}', 5 AS nope)", 1064, r"unknown CALL SUGGEST option")
    expect_error(cur, f"CALL QSUGGEST('x', '{t}', 99 AS max_edits)", 1064, r"expected an integer from 0 to 32 \(max_edits\)")
    expect_error(cur, "CALL SUGGEST('x')", 1064, r"CALL SUGGEST takes \(text, table")


def _autocomplete_reference(docs, text, fuzziness=2, preserve=0, append=1, prepend=0, expansion_len=10,
                            force_bigrams=0):
    """CALL AUTOCOMPLETE as docs/sql.md describes it, computed from the rows
    (docs: id -> list of the words of its fields)."""
    df = collections.Counter()
    for words in docs.values():
        df.update(set(words))
    words = text.lower().split()
    max_count = 50 if len(text) < 2 else 25 if len(text) < 5 else 10

    def edits(w):
        d = 2 if len(w) > (3 if force_bigrams else 6) else 1 if len(w) > 2 else 0
        return min(d, fuzziness)

    def part_distance(w, t, mode):
        parts = [t[i:k] for i in range(len(t) + 1) for k in range(i, len(t) + 1)
                 if (mode != "prefix" or i == 0) and (mode != "suffix" or k == len(t))]
        return min(_levenshtein(w, x) for x in parts)

    def choices(w, last):
        d = edits(w)
        out = []
        for t, n in df.items():
            if last and (append or prepend):
                mode = "infix" if append and prepend else "prefix" if append else "suffix"
                if len(t) > len(w) + expansion_len:
                    continue
                dist = part_distance(w, t, mode)
            else:
                if abs(len(t) - len(w)) >= 3 or not t.isalpha():
                    continue
                dist = _levenshtein(w, t)
            if dist <= d:
                # a completion longer than a spelling as near goes after it
                out.append((t, dist, n, _levenshtein(w, t) > dist))
        out.sort(key=lambda x: (x[1], x[3], -x[2], x[0].encode()))
        keep = (4 * max_count if len(words) > 1 else max_count) if last and (append or prepend) else 3
        return [x[:3] for x in out[:keep]]

    combos = [((), 0, None)]
    for i, w in enumerate(words):
        ch = choices(w, i == len(words) - 1)
        if preserve and w not in [c[0] for c in ch]:
            ch.append((w, -1, 0))
        if not ch:
            continue
        nxt = []
        for ws, dist, dmin in combos:
            for t, d, n in ch:
                fewest = n if dmin is None else (dmin if d < 0 else min(n, dmin))
                nxt.append((ws + ((t, d),), dist + max(d, 0), fewest))
        nxt.sort(key=lambda c: (c[1], -c[2], [t.encode() for t, _ in c[0]]))
        combos = nxt[:4 * max_count]
    if combos == [((), 0, None)]:
        return []

    def as_typed(ws):
        return len(ws) == len(words) and all(d < 0 or t == w for (t, d), w in zip(ws, words))

    def together(ws):
        known = [t for t, d in ws if d >= 0]
        return bool(known) and any(all(t in set(v) for t in known) for v in docs.values())

    out = []
    for first in (True, False):
        for ws, _, _ in combos:
            if len(out) < max_count and as_typed(ws) == first and together(ws):
                out.append(" ".join(t for t, _ in ws))
    return out


def test_call_autocomplete(cur, uniq):
    """CALL AUTOCOMPLETE (Manticore's, its Buddy's built in): each word but
    the last its nearest spellings, the last its completions (append,
    prepend), every combination some document holds, fewest edits and most
    documents first; checked against a reference computed here from the
    rows, in RAM and sealed, with every option; and its errors."""
    rnd = random.Random(20261207)
    vocab = ["hello", "help", "helmet", "helicopter", "hell", "shell", "nushell", "world", "word", "work",
             "worker", "wonder", "well", "water", "wanted", "peace", "piece", "pie", "x2", "help2"]
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT) min_infix_len='2'")
    docs, rows = {}, {}
    for i in range(1, 61):
        title = " ".join(rnd.choice(vocab) for _ in range(rnd.randint(1, 3)))
        body = " ".join(rnd.choice(vocab) for _ in range(rnd.randint(0, 4)))
        docs[i] = (title + " " + body).split()
        rows[i] = (title, body)
        cur.execute(f"INSERT INTO {t} VALUES (%s, %s, %s)", (i, title, body))
    texts = ["h", "he", "hel", "helo", "hello", "helo wor", "hello wrld", "wrld hel", "peace wond",
             "pice", "xyzzy", "hello xyzzy", "shel", "wor wat", "help", "x", "wonder peace pie"]
    options = [{}, {"fuzziness": 0}, {"fuzziness": 1}, {"preserve": 1}, {"append": 0}, {"prepend": 1},
               {"prepend": 1, "append": 0}, {"expansion_len": 1}, {"force_bigrams": 1}, {"append": 0, "preserve": 1}]
    parts = _same_rows_in_parts(cur, uniq(), "(title TEXT, body TEXT) min_infix_len='2'", rows)
    for step, t in (("ram", t), ("flush", t), ("parts", parts)):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for text in texts:
            for opts in options:
                tail = "".join(f", {v} AS {k}" for k, v in opts.items())
                cur.execute(f"CALL AUTOCOMPLETE('{text}', '{t}'{tail})")
                assert [d[0] for d in cur.description] == ["query"]
                got = [r[0] for r in cur.fetchall()]
                assert got == _autocomplete_reference(docs, text, **opts), (step, text, opts)
    # the user's view: a typo in the first word, the second being typed
    cur.execute(f"CALL AUTOCOMPLETE('helo wo', '{t}')")
    assert all(r[0].split()[0] in ("hello", "help", "hell", "helmet") for r in cur.fetchall())
    cur.execute(f"CALL AUTOCOMPLETE('hel', '{t}', '' AS layouts)")
    assert len(cur.fetchall()) > 3
    expect_error(cur, f"CALL AUTOCOMPLETE('x', '{t}', 3 AS fuzziness)", 1064,
                 r"expected an integer from 0 to 2 \(fuzziness\)")
    expect_error(cur, f"CALL AUTOCOMPLETE('x', '{t}', 'us,ru' AS layouts)", 1064, r"no keyboard layouts")
    expect_error(cur, f"CALL AUTOCOMPLETE('x', '{t}', 1 AS nope)", 1064, r"unknown CALL AUTOCOMPLETE option")
    expect_error(cur, f"CALL AUTOCOMPLETE('x', '{t}', 1)", 1064, r"expected an option as 'value AS name'")
    expect_error(cur, f"CALL AUTOCOMPLETE('x' AS q, '{t}')", 1064, r"AS only on its options")
    expect_error(cur, "CALL AUTOCOMPLETE('x')", 1064, r"CALL AUTOCOMPLETE takes \(text, table")
    expect_error(cur, "CALL AUTOCOMPLETE('x', 'no_such_table')", 1146, r"no_such_table")
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (title TEXT)")
    expect_error(cur, f"CALL AUTOCOMPLETE('x', '{u}')", 1064, r"needs the table option min_infix_len")


def test_autocomplete_beside_writers(server, cur, uniq):
    """CALL AUTOCOMPLETE's count queries take the table's read lock while
    writers flush and insert: they must not wait behind a writer while
    holding the lock already (the lock prefers writers and is not
    recursive), which hung the table."""
    import threading
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT) min_infix_len='2'")
    for i in range(1, 41):
        cur.execute(f"INSERT INTO {t} VALUES ({i}, 'hello world help wanted {i}')")
    stop = threading.Event()
    errors = []

    def writer():
        try:
            w = pymysql_connect(server.mysql_port, read_timeout=30)
            c = w.cursor()
            i = 1000
            while not stop.is_set():
                i += 1
                c.execute(f"INSERT INTO {t} VALUES ({i}, 'hello world {i}')")
                if i % 5 == 0:
                    c.execute(f"FLUSH TABLE {t}")
            w.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    th = threading.Thread(target=writer)
    th.start()
    try:
        r = pymysql_connect(server.mysql_port, read_timeout=30)
        rc = r.cursor()
        deadline = time.time() + 4
        n = 0
        while time.time() < deadline:
            rc.execute(f"CALL AUTOCOMPLETE('helo wor', '{t}')")
            assert rc.fetchall()[0][0] == "hello world"
            n += 1
        r.close()
    finally:
        stop.set()
        th.join(60)
    assert not errors and not th.is_alive() and n > 5, (errors, n)


def test_autocomplete_over_http(http, cur, uniq):
    """POST /autocomplete (Manticore's): the same suggestions as CALL
    AUTOCOMPLETE, in /sql's raw answer; bad requests are 400s that say
    what is wrong."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT) min_infix_len='2'")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'hello world'), (2, 'help wanted'), (3, 'hello there'), (4, 'helmet')")

    def post(body):
        status, _, data = http("/autocomplete", json.dumps(body).encode() if not isinstance(body, bytes) else body)
        return status, json.loads(data)

    for opts, tail in (({}, ""), ({"fuzziness": 0, "append": True}, ", 0 AS fuzziness, 1 AS append"),
                       ({"preserve": 1, "append": False}, ", 1 AS preserve, 0 AS append")):
        for text in ("hel", "helo wor", "hello wrld"):
            status, ans = post({"table": t, "query": text, "options": opts})
            assert status == 200, ans
            cur.execute(f"CALL AUTOCOMPLETE('{text}', '{t}'{tail})")
            want = [r[0] for r in cur.fetchall()]
            assert ans[0]["columns"] == [{"query": {"type": "string"}}]
            assert [d["query"] for d in ans[0]["data"]] == want and ans[0]["total"] == len(want), (text, opts)
    status, ans = post({"table": t, "query": "hel"})
    # the most frequent first, ties in term order
    assert [d["query"] for d in ans[0]["data"]][:3] == ["hello", "helmet", "help"] and ans[0]["error"] == ""
    for body, msg in (({"table": t}, "needs \"query\""), ({"query": "x"}, "needs \"table\""),
                      ({"table": t, "query": "x", "options": {"distance": 1}}, "unknown option 'distance'"),
                      ({"table": t, "query": "x", "options": {"fuzziness": "2"}}, "must be an integer"),
                      (b"{not json", "not JSON"), (b"", "takes a JSON request")):
        status, ans = post(body)
        assert status == 400 and msg in ans["error"], (body, ans)
    # the options' values are the SQL layer's to judge
    status, ans = post({"table": t, "query": "x", "options": {"fuzziness": 7}})
    assert status == 400 and "expected an integer from 0 to 2 (fuzziness)" in ans["error"], ans
    status, ans = post({"table": "nope_" + t, "query": "x"})
    assert status == 400 and "does not exist" in ans["error"], ans


def test_prefix_and_wildcard_of_several_words(cur, uniq):
    """A prefix or a wildcard in which the table's analysis reads several
    words ('e-ma*', '*body-bag*', "what's?") is those words ANDed, the ones
    touching a wildcard character a prefix or a wildcard (as Manticore's
    tokenizer splits them), not an error; in a chain it stays one."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) min_infix_len='2'")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'send e-mail to him'), (2, 'e mail'), (3, 'mail only'), "
                f"(4, 'crossbody bag'), (5, 'what is this')")
    assert_ids_ram_and_flushed(cur, t, [
        ("e-ma*", [1, 2]), ('"e-ma*"', [1, 2]), ("him | e-ma*", [1, 2]), ("send -e-ma*", []),
        ("*body-bag*", [4]), ("cross*-bag", [4]), ("*ody-ba*", [4]), ("mail -e-mai*", [3]),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('e-ma*') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "send <b>e</b>-<b>mail</b> to him"), (2, "<b>e</b> <b>mail</b>"))
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('what''s?')", 1064,
                 r"wildcard 's\?' at offset 0: its longest part without a wildcard is shorter than min_infix_len=2")
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('send NEAR/2 e-ma*')", 1064, r"must be one word")
    # without min_infix_len '?' is no wildcard: it separates words there
    u = uniq()
    cur.execute(f"CREATE TABLE {u} (body TEXT) min_prefix_len='1'")
    cur.execute(f"INSERT INTO {u} VALUES (1, 'send e-mail to him'), (2, 'what is it')")
    assert_ids_ram_and_flushed(cur, u, [("e-ma*", [1]), ("what?i*", [2]), ("him?x*", [])])


def _crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_table_without_remove_diacritics_keeps_accents(tmp_path):
    """A table created before remove_diacritics existed has no such option
    in its manifest: it keeps analysing as it did (accents kept), across a
    restart and for new rows, and SHOW CREATE TABLE does not claim it."""
    data = tmp_path / "data"
    data.mkdir()
    s = LoupeServer(name="noaccentopt", data_dir=str(data))
    s.start()
    try:
        with pymysql_connect(s.mysql_port) as c, c.cursor() as cur:
            cur.execute("CREATE TABLE old (body TEXT)")
        s.proc.send_signal(signal.SIGTERM)
        s.proc.wait()
        # The manifest as an older server wrote it: no remove_diacritics.
        path = data / "tables" / "old" / "manifest"
        line = path.read_bytes().split(b"\n")[0]
        m = json.loads(line)
        opts = m["schema"]["options"]
        assert {"name": "remove_diacritics", "value": "1"} in opts
        m["schema"]["options"] = [o for o in opts if o["name"] != "remove_diacritics"]
        line = json.dumps(m, separators=(",", ":")).encode()
        path.write_bytes(line + b"\n" + b"crc32c %08x\n" % _crc32c(line))
        s.restart()
        with pymysql_connect(s.mysql_port) as c, c.cursor() as cur:
            cur.execute("SHOW CREATE TABLE old")
            assert "remove_diacritics" not in cur.fetchone()[1]
            cur.execute("INSERT INTO old VALUES (1, 'Café'), (2, 'cafe')")
            assert_ids_ram_and_flushed(cur, "old", [("cafe", [2]), ("café", [1])])
    finally:
        s.stop()


@pytest.mark.parametrize("raw, offset", [
    (b"abc \xff def", 4),
    (b"\xc3", 0),
    (b"fox | \xe6\x9d", 6),
    (b"\"lazy \xc0\xaf dog\"", 6),      # an overlong encoding of '/'
    (b"\xed\xa0\x80", 0),              # a UTF-16 surrogate
])
def test_invalid_utf8_in_match(cur, corpus, raw, offset):
    """The statement is sent as bytes, so the invalid sequence reaches the
    server as is. docs/sql.md's errors table files invalid UTF-8 under
    1366; the MATCH parser reports it as 1064: either is accepted here, the
    offset is what the spec asks for."""
    sql = f"SELECT id FROM {corpus} WHERE MATCH('".encode() + raw + b"')"
    msg = expect_error(cur, sql, {1064, 1366})
    assert re.search(rf"invalid UTF-8 at offset {offset}\b", msg), msg
    assert sorted(match_ids(cur, corpus, "fox")) == [1, 4, 6]       # the session goes on


def test_invalid_utf8_in_document(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT)")
    msg = expect_error(cur, f"INSERT INTO {t} VALUES (1, 'ab".encode() + b"\xffc')", 1366)
    assert re.search(r"byte 2\b", msg) and "body" in msg, msg
    assert rows(cur, f"SELECT COUNT(*) FROM {t} WHERE MATCH('')") == [(0,)]


# ---------------------------------------------------------------------------
# MATCH with the rest of the SELECT


def test_match_with_filters_order_limit_count(cur, corpus):
    query = "quick | fox"
    want = REF.weights([term("quick"), term("fox")])
    best = match_weights(cur, corpus, query)
    assert_weights(best, want)
    ids = ranked(want)
    assert [i for i, _ in best] == ids == [1, 4, 6, 7, 3]      # no ties: the order is the weights'
    assert match_weights(cur, corpus, query, "ORDER BY WEIGHT() DESC") == best
    assert match_weights(cur, corpus, query, "ORDER BY WEIGHT() ASC") == best[::-1]
    # Attribute filters keep the weights and the order.
    got = match_weights(cur, corpus, query, "AND cat = 1")
    assert got == [x for x in best if CORPUS[x[0]][2] == 1]
    assert match_ids(cur, corpus, query, "AND price > 35 AND price < 65") == [i for i in ids if i in (4, 6)]
    assert match_ids(cur, corpus, query, "AND id IN (3, 4, 5)") == [i for i in ids if i in (3, 4)]
    assert match_ids(cur, corpus, "fox", "AND id = 6") == [6]
    # ORDER BY attributes, several keys.
    assert match_ids(cur, corpus, query, "ORDER BY price DESC") == [7, 6, 4, 3, 1]
    cur.execute(f"SELECT id, cat FROM {corpus} WHERE MATCH(%s) ORDER BY cat ASC, WEIGHT() DESC",
                (query,))
    assert cur.fetchall() == tuple(sorted(((i, CORPUS[i][2]) for i in ids),
                                          key=lambda r: (r[1], -want[r[0]])))
    # LIMIT / offset cut the best-first list.
    for tail, cut in (("LIMIT 2", ids[:2]), ("LIMIT 1, 2", ids[1:3]), ("LIMIT 2 OFFSET 3", ids[3:5]),
                      ("LIMIT 4, 10", ids[4:]), ("LIMIT 100, 5", [])):
        cur.execute(f"SELECT id FROM {corpus} WHERE MATCH(%s) {tail}", (query,))
        assert [r[0] for r in cur.fetchall()] == cut, tail
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH(%s) ORDER BY WEIGHT() DESC LIMIT 1, 2", (query,))
    assert [r[0] for r in cur.fetchall()] == ids[1:3]
    # COUNT(*) counts exactly, filters included.
    for text, tail, n in (("quick | fox", "", 5), ("quick | fox", "AND price > 35", 3),
                          ("quick fox", "", 2), ('"lazy dog"', "", 2), ("", "AND cat = 2", 3),
                          ("absentword", "", 0)):
        cur.execute(f"SELECT COUNT(*) FROM {corpus} WHERE MATCH(%s) {tail}", (text,))
        assert cur.fetchall() == ((n,),), (text, tail)


@pytest.mark.parametrize("text", ["quick | fox | dog", "quick fox", '"lazy dog" | bear', "brown -fox",
                                  "quick*", "@title dog | @body fox", '"the dog"~2 | brown'])
def test_best_first_without_order_by(cur, corpus, text):
    got = match_weights(cur, corpus, text)
    assert len(got) >= 2, (text, got)
    # WEIGHT() descending, ties in ascending id (the corpus was inserted in id order)
    assert got == sorted(got, key=lambda x: (-x[1], x[0]))
    assert match_weights(cur, corpus, text, "ORDER BY WEIGHT() DESC") == got


def test_weight_without_match_and_ties(cur, corpus, tiny):
    # Without MATCH every row weighs 1.
    assert rows(cur, f"SELECT id, WEIGHT() FROM {corpus} WHERE cat = 3") == [(5, 1.0), (6, 1.0)]
    # Docs 4 and 5 of TINY are alike for this query (one word in a title of
    # 1 and a body of 2, df 1 in each field): they tie, the smaller id first.
    got = match_weights(cur, tiny, "owl | elk")
    assert [i for i, _ in got] == [4, 5] and got[0][1] == got[1][1], got
    assert match_weights(cur, tiny, "owl | elk", "ORDER BY WEIGHT() DESC") == got


def test_ties_go_to_the_smaller_id_whatever_the_insert_order(cur, uniq):
    # Rows inserted out of id order, all alike: equal weights come back in
    # id order (Manticore's), on every strategy, and a LIMIT keeps the
    # smallest ids even where pruning could skip rows that only tie.
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT)")
    ids = [30, 10, 20] + list(range(1000, 700, -1)) + [5]
    for i in ids:
        cur.execute(f"INSERT INTO {t} VALUES ({i}, 'same words here')")
    want = sorted(ids)
    for text, opts in [("same | words", ""), ("same words", ""), ('"same words"', ""),
                       ("same", ""), ("same", "OPTION ranker=none")]:
        got = match_weights(cur, t, text, opts)
        assert [i for i, _ in got] == want, (text, opts)
        assert len({w for _, w in got}) == 1, (text, opts)
        cur.execute(f"SELECT id FROM {t} WHERE MATCH(%s) LIMIT 3 {opts}", (text,))
        assert [r[0] for r in cur.fetchall()] == want[:3], (text, opts)


# ---------------------------------------------------------------------------
# Scoring

# A tiny table whose weights are written out by hand below. N = 10; every
# title is one word long (avgdl 1); body lengths 1, 2, 4, 2, 2, 3, 1, 1, 1, 1
# (avgdl 9/5).
TINY = {
    1: ("fox", "dog"),
    2: ("dog", "fox fox"),
    3: ("cat", "cat fox dog bird"),
    4: ("owl", "owl bat"),
    5: ("elk", "elk moose"),
    6: ("yak", "yak yak yak"),
    7: ("emu", "emu"),
    8: ("gnu", "gnu"),
    9: ("ape", "ape"),
    10: ("eel", "eel"),
}


@pytest.fixture(scope="module")
def tiny(server):
    return make_table(server, "fts_tiny", "(title TEXT, body TEXT)", TINY)


def tiny_expected(query, ranker="bm25f", k1=1.2, b=0.75, fw=(1.0, 1.0), tw=1.0):
    """TINY's WEIGHT()s for query by docs/sql.md's formulas; tw is the type
    weight of the query's clauses."""
    idf1 = math.log((10 - 1 + 0.5) / (1 + 0.5))         # df 1
    idf2 = math.log((10 - 2 + 0.5) / (2 + 0.5))         # df 2
    idf3 = math.log((10 - 3 + 0.5) / (3 + 0.5))         # df 3
    ft, fb = fw

    def title(tf):                  # tf normalised by length, for a title of 1 word
        return tf / (1 - b + b * 1 / 1)

    def body(tf, dl):
        return tf / (1 - b + b * dl / (9 / 5))

    def sat(x):
        return x * (k1 + 1) / (x + k1)

    def clause(idf, parts):
        """parts: (field_weight, normalised tf, the field's idf) per field
        the clause matches in; idf: the clause's (from the documents
        holding it in any field)."""
        if ranker == "bm25f":
            return tw * idf * sat(sum(w * t for w, t, _ in parts))
        return tw * sum(w * fidf * sat(t) for w, t, fidf in parts)
    # fox: title df 1 (doc 1), body df 2 (docs 2, 3), 3 documents in all;
    # dog: title df 1 (doc 2), body df 2 (docs 1, 3), 3 in all; cat: df 1
    # in both fields (doc 3), 1 in all.
    fox = {1: clause(idf3, [(ft, title(1), idf1)]),
           2: clause(idf3, [(fb, body(2, 2), idf2)]),
           3: clause(idf3, [(fb, body(1, 4), idf2)])}
    dog = {1: clause(idf3, [(fb, body(1, 1), idf2)]),
           2: clause(idf3, [(ft, title(1), idf1)]),
           3: clause(idf3, [(fb, body(1, 4), idf2)])}
    if query == "fox":
        return fox
    if query == "fox | dog":
        return {i: fox[i] + dog[i] for i in fox}
    if query == "cat":              # two fields: BM25F saturates their sum once
        return {3: clause(idf1, [(ft, title(1), idf1), (fb, body(1, 4), idf1)])}
    if query == '"fox fox"':        # one match, in doc 2's body; idf: fox's twice
        return {2: clause(2 * idf2, [(fb, body(1, 2), 2 * idf2)])}
    raise AssertionError(query)


@pytest.mark.parametrize("text, options, kw", [
    ("fox", "", {}),
    ("fox | dog", "", {}),
    ("cat", "", {}),
    ('"fox fox"', "", {}),
    ("fo*", "", {}),
    ("fox", "OPTION ranker=bm25", {"ranker": "bm25"}),
    ("fox | dog", "OPTION ranker=bm25", {"ranker": "bm25"}),
    ("cat", "OPTION ranker=bm25", {"ranker": "bm25"}),
    ('"fox fox"', "OPTION ranker=bm25", {"ranker": "bm25"}),
    ("fox", "OPTION field_weights=(title=2, body=0.5)", {"fw": (2.0, 0.5)}),
    ("cat", "OPTION field_weights=(title=2, body=0.5)", {"fw": (2.0, 0.5)}),
    ("fox | dog", "OPTION field_weights=(body=3)", {"fw": (1.0, 3.0)}),
    ("cat", "OPTION ranker=bm25, field_weights=(title=0.25)", {"ranker": "bm25", "fw": (0.25, 1.0)}),
    ("fox", "OPTION query_type_weights=(term=1.5)", {"tw": 1.5}),
    ("fox | dog", "OPTION query_type_weights=(term=0.5, phrase=9)", {"tw": 0.5}),
    ('"fox fox"', "OPTION query_type_weights=(phrase=2, term=5)", {"tw": 2.0}),
    ("fo*", "OPTION query_type_weights=(prefix=0.5, term=3)", {"tw": 0.5}),
    ("fox", "OPTION k1=2, b=0.3", {"k1": 2.0, "b": 0.3}),
    ("fox | dog", "OPTION b=0", {"b": 0.0}),
    ("cat", "OPTION k1=0", {"k1": 0.0}),
    ("fox | dog", "OPTION b=1, k1=0.5, field_weights=(title=4)", {"b": 1.0, "k1": 0.5, "fw": (4.0, 1.0)}),
    ("cat", "OPTION ranker=bm25, k1=3, b=1", {"ranker": "bm25", "k1": 3.0, "b": 1.0}),
])
def test_weights_by_hand(cur, tiny, text, options, kw):
    want = tiny_expected("fox" if text == "fo*" else text, **kw)
    assert_weights(match_weights(cur, tiny, text, options), want, rel=1e-6)


def test_clause_df_in_ram_sealed_and_merged(server, cur):
    """A word in the title of some rows and the body of others counts each
    row once in its clause's df, wherever the rows are: the RAM segment,
    the segment FLUSH seals it into, and the segment OPTIMIZE writes without
    the deleted rows (which counts again over the rows kept) all weigh as
    the reference does, and the merged table as one that never held the
    deleted rows."""
    rng = random.Random(11)
    words = ["w%d" % i for i in range(30)]     # each in a fifth of the rows or so
    docs = {i: (" ".join(rng.choice(words[:15]) for _ in range(rng.randint(1, 3))),
                " ".join(rng.choice(words) for _ in range(rng.randint(2, 8))))
            for i in range(1, 61)}
    t = make_table(server, "fts_df_ram", "(title TEXT, body TEXT)", docs)
    queries = ["w0", "w1 | w2", "w3 | w4 | w17", "@title w0", "@body w1", "@(title,body) w2 | w4"]

    def weights(table):
        return {text: match_weights(cur, table, text) for text in queries}

    def expected(ref):
        out = {}
        for text in queries:
            scope = (0,) if text.startswith("@title") else (1,) if text.startswith("@body") else BOTH
            ws = [w for w in text.split() if w.startswith("w")]
            out[text] = ref.weights([term(w, scope) for w in ws])
        return out

    ram = weights(t)
    for text, want in expected(Reference(docs)).items():
        assert_weights(ram[text], want)
        assert all(w > 0.1 for w in want.values()), (text, want)   # no idf at its floor
    # The union is what the fields' largest df is not: a word in some
    # titles and other bodies.
    ref = Reference(docs)
    assert any(ref.clause_idf(term(w)) < ref.idf(max(ref.df[0][w], ref.df[1][w])) for w in words)
    cur.execute(f"FLUSH TABLE {t}")
    assert weights(t) == ram
    gone = [i for i in docs if i % 3 == 0]
    cur.execute(f"DELETE FROM {t} WHERE id IN ({', '.join(map(str, gone))})")
    cur.execute(f"OPTIMIZE TABLE {t} OPTION sync=1")
    kept = {i: d for i, d in docs.items() if i not in gone}
    merged = weights(t)
    for text, want in expected(Reference(kept)).items():
        assert_weights(merged[text], want)
    fresh = make_table(server, "fts_df_fresh", "(title TEXT, body TEXT)", kept)
    for text, got in weights(fresh).items():
        assert [i for i, _ in got] == [i for i, _ in merged[text]], text
        for (_, a), (_, b) in zip(got, merged[text]):
            assert a == pytest.approx(b, rel=1e-6), text


def test_bm25f_differs_from_bm25(cur, tiny):
    """The two rankers agree on a word found in one field only, and BM25F
    scores a clause found in two fields lower (one saturation, not two)."""
    bat = match_weights(cur, tiny, "bat")
    assert bat[0][0] == 4 and bat[0][1] == pytest.approx(match_weights(cur, tiny, "bat", "OPTION ranker=bm25")[0][1],
                                                         rel=1e-6)
    f, b = dict(match_weights(cur, tiny, "fox")), dict(match_weights(cur, tiny, "fox", "OPTION ranker=bm25"))
    assert f[2] < b[2]                  # body: BM25F takes the clause's idf (df 3), BM25 the body's (df 2)
    assert f[1] < b[1]                  # title: BM25F takes the clause's idf (df 3), BM25 the title's (df 1)
    assert dict(match_weights(cur, tiny, "cat"))[3] < dict(match_weights(cur, tiny, "cat",
                                                                          "OPTION ranker=bm25"))[3]
    assert match_weights(cur, tiny, "fox | dog", "OPTION ranker=bm25f") == match_weights(cur, tiny, "fox | dog")


# Queries on CORPUS with the clauses the reference scores: (MATCH text,
# OPTION clause, clauses, 'or' / 'and', NOT clauses, the reference's options)
CORPUS_QUERIES = [
    ("quick | fox", "", [term("quick"), term("fox")], "or", [], {}),
    ("quick fox", "", [term("quick"), term("fox")], "and", [], {}),
    ("quick | fox", "OPTION ranker=bm25", [term("quick"), term("fox")], "or", [], {"ranker": "bm25"}),
    ('"lazy dog" | quick*', "", [phrase("lazy dog")] + REF.expand("quick"), "or", [], {}),
    ("brown -fox | world", "OPTION field_weights=(title=2.5, body=0.5)", [term("brown")], "and",
     [term("fox"), term("world")], {"fw": {0: 2.5, 1: 0.5}}),
    ('"the dog" | qui*', "OPTION query_type_weights=(term=1.5, phrase=3, prefix=0.25), k1=2, b=0.3",
     [phrase("the dog")] + REF.expand("qui"), "or", [],
     {"tw": {"term": 1.5, "phrase": 3, "prefix": 0.25}, "k1": 2.0, "b": 0.3}),
    ("title:dog | fox | @body brown", "", [term("dog", (0,)), term("fox"), term("brown", (1,))], "or", [], {}),
    ('body:"lazy dog" | brown', "OPTION ranker=bm25, field_weights=(body=2), query_type_weights=(phrase=1.5)",
     [phrase("lazy dog", (1,)), term("brown")], "or", [],
     {"ranker": "bm25", "fw": {1: 2.0}, "tw": {"phrase": 1.5}}),
]


@pytest.mark.parametrize("text, options, clauses, mode, exclude, opts", CORPUS_QUERIES)
def test_weights_match_reference(cur, corpus, text, options, clauses, mode, exclude, opts):
    want = REF.weights(clauses, mode, exclude, **opts)
    assert len(want) >= 2
    got = match_weights(cur, corpus, text, options)
    assert_weights(got, want)
    assert [i for i, _ in got] == ranked(want)


def test_maybe_and_quorum_weights_add_up(cur, corpus):
    """MAYBE's optional side and a quorum's words each add the weight the
    word has alone; anchors, '<<' and NEAR score as one clause whose
    EXPLAIN_SCORE() adds up to WEIGHT()."""
    alone = {w: dict(match_weights(cur, corpus, w)) for w in ("fox", "quick", "dog")}
    got = dict(match_weights(cur, corpus, "fox MAYBE quick"))
    assert sorted(got) == [1, 4, 6]
    for i, w in got.items():
        assert w == pytest.approx(alone["fox"][i] + alone["quick"].get(i, 0), rel=1e-5)
    got = dict(match_weights(cur, corpus, '"quick fox dog"/2'))
    assert sorted(got) == [1, 4]
    for i, w in got.items():
        assert w == pytest.approx(sum(alone[x].get(i, 0) for x in alone), rel=1e-5)
    for text in ("fox MAYBE quick", '"quick fox dog"/2', "^the", '"lazy dog$"', "the << fox",
                 "dog NEAR/1 lazy", "quick (fox << dog) MAYBE bear"):
        scores = explain_scores(cur, corpus, text)
        assert scores, text
        for i, (w, e) in scores.items():
            assert e["weight"] == pytest.approx(w, rel=1e-5), (text, i)
            assert sum(m["contribution"] for m in e["matches"]) == pytest.approx(w, rel=1e-5)


def test_new_operators_plan_and_highlight(cur, corpus):
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ('"quick fox dog"/2',))
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "QUORUM at least 2 of 3" in plan
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ("fox NEAR/4 lazy",))
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'near "fox NEAR/4 lazy"' in plan and "strategy=phrase_topk" in plan
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ("fox NOTNEAR/2 dog",))
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'notnear "fox NOTNEAR/2 dog"' in plan, plan
    # NOTNEAR's second operand is not highlighted (nor a keyword)
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {corpus} WHERE MATCH(%s) ORDER BY id ASC",
                ("@body fox NOTNEAR/4 dog",))
    assert cur.fetchall()[0] == (1, "quick brown fox | the <b>fox</b> jumps over the lazy dog")
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ("fox MAYBE quick",))
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "MAYBE" in plan and "optional" in plan and "the query has MAYBE" in plan
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ('"^lazy dog$"',))
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'anchored "^lazy dog$"' in plan
    cur.execute(f"SELECT HIGHLIGHT() FROM {corpus} WHERE MATCH('fox MAYBE quick') AND id = 4")
    assert cur.fetchall() == (("red <b>fox</b> | foxes are red and <b>quick</b>",),)
    cur.execute(f"SELECT HIGHLIGHT() FROM {corpus} WHERE MATCH('fox << dog') AND id = 1")
    assert cur.fetchall() == (("quick brown <b>fox</b> | the <b>fox</b> jumps over the lazy <b>dog</b>",),)
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH('the << fox') ORDER BY WEIGHT() DESC LIMIT 1")
    assert meta(cur)["strategy"] == "phrase_topk"


def weights(cur, table, text, options=""):
    """{id: WEIGHT()} of every match."""
    return dict(select_match(cur, "id, WEIGHT()", table, text, options))


@pytest.mark.parametrize("ranker", ["bm25f", "bm25"])
def test_boost_weights(cur, corpus, ranker):
    """word^N multiplies the word's idf: BM25F and BM25 are linear in it,
    so each document's weight is N times the word's part plus the rest's,
    read from the same queries without the boost."""
    opt = f"OPTION ranker={ranker}"
    fox, dog = weights(cur, corpus, "fox", opt), weights(cur, corpus, "dog", opt)
    assert fox and dog
    for text, want in [("fox^3", {i: 3 * w for i, w in fox.items()}),
                       ("fox^0.25", {i: 0.25 * w for i, w in fox.items()}),
                       ("fox^3 | dog", {i: 3 * fox.get(i, 0) + dog.get(i, 0) for i in set(fox) | set(dog)}),
                       ("fox | dog^2.5", {i: fox.get(i, 0) + 2.5 * dog.get(i, 0) for i in set(fox) | set(dog)}),
                       ("fox^2 dog", {1: 2 * fox[1] + dog[1]}),
                       # a repeated word with another boost is a clause of its own
                       ("fox^2 | fox", {i: 3 * w for i, w in fox.items()}),
                       ("fox | fox", {i: 2 * w for i, w in fox.items()})]:
        got = weights(cur, corpus, text, opt)
        assert set(got) == set(want), text
        for i in want:
            assert got[i] == pytest.approx(want[i], rel=2e-6), (text, i)
    # the order follows: fox outweighs dog once boosted enough
    ids = match_ids(cur, corpus, "fox^50 | dog", opt)
    assert set(ids[:3]) == {1, 4, 6}


def test_explain_names_fields(cur, corpus):
    """EXPLAIN says "field title:" / "field body:", EXPLAIN_SCORE() gives
    each field's name beside its number, in clauses and in factors, also
    with ranker=none."""
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ('(@title quick) | "lazy dog"',))
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert re.search(r'term "quick".*\n\s+field title: df=', plan), plan
    assert re.search(r'phrase "lazy dog".*\n\s+field title: idf=.*\n\s+field body: idf=', plan), plan
    assert not re.search(r"field \d", plan), plan
    for opts in ("", "OPTION ranker=sph04", "OPTION ranker=none"):
        got = explain_scores(cur, corpus, "quick | fox", opts)
        fields = [x for _, e in got.values() for m in e["matches"] for x in m["fields"]]
        fields += [x for _, e in got.values() for x in e.get("factors", [])]
        assert {(x["field"], x["field_name"]) for x in fields} == {(0, "title"), (1, "body")}, (opts, fields)
        if "sph04" in opts:
            assert any(e.get("factors") for _, e in got.values())


def test_boost_plan_and_explain_score(cur, corpus):
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ("fox^3 | dog",))
    plan = "\n".join(r[0] for r in cur.fetchall())
    m = re.search(r'term "fox" idf=(\S+) boost=3 ', plan)
    assert m, plan
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ("fox | dog",))
    plain = "\n".join(r[0] for r in cur.fetchall())
    m0 = re.search(r'term "fox" idf=(\S+) type_weight', plain)
    assert float(m.group(1)) == pytest.approx(3 * float(m0.group(1)), rel=1e-3)
    assert "boost" not in plain
    sc = explain_scores(cur, corpus, "fox^3 | dog")
    plain = explain_scores(cur, corpus, "fox | dog")
    fox = [c for c in sc[1][1]["matches"] if c["terms"] == "fox"][0]
    fox0 = [c for c in plain[1][1]["matches"] if c["terms"] == "fox"][0]
    assert fox["boost"] == 3 and "boost" not in fox0
    assert fox["idf"] == pytest.approx(3 * fox0["idf"], rel=1e-5)
    assert sum(c["contribution"] for c in sc[1][1]["matches"]) == pytest.approx(sc[1][0], rel=1e-5)
    cur.execute(f"SELECT id, WEIGHT() FROM {corpus} WHERE MATCH(%s) OPTION ranker=sph04", ("fox^3 | dog",))
    assert len(cur.fetchall()) == 5


def test_phrase_star_highlight_and_keywords(cur, corpus):
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {corpus} WHERE MATCH(%s)", ('"the * jumps"',))
    assert cur.fetchall() == ((1, "quick brown fox | <b>the</b> fox <b>jumps</b> over <b>the</b> lazy dog"),)
    # CALL KEYWORDS numbers the words as the query does: a star takes a place
    cur.execute(f"CALL KEYWORDS('quick * * fox', '{corpus}')")
    assert [tuple(r) for r in cur.fetchall()] == [("1", "quick", "quick"), ("4", "fox", "fox")]
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH(%s)", ('"quick * fox"',))
    cur.execute("SHOW META")
    m = {r[0]: r[1] for r in cur.fetchall()}
    assert m.get("keyword[0]") == "quick" and m.get("keyword[1]") == "fox", m


def test_position_limit_weights_plan_and_meta(cur, corpus):
    """@field[N]: a word keeps its idf and counts only its occurrences
    before the limit; EXPLAIN and EXPLAIN_SCORE() say so."""
    fox = dict(match_weights(cur, corpus, "fox"))
    got = dict(match_weights(cur, corpus, "@(title,body)[3] fox"))
    assert sorted(got) == [1, 4]  # 6 holds fox in body at position 6 only
    for i, w in got.items():
        assert w == pytest.approx(fox[i], rel=1e-6)
    # "the" is at 0 and 4 in body 1: under [3] it counts once
    scores = explain_scores(cur, corpus, "@body[3] the")
    assert sorted(scores) == [1, 2, 6]
    (w, e), = [scores[1]]
    (m,) = e["matches"]
    assert m["fields"][0]["tf"] == 1 and m["fields"][0]["first_positions"] == 3
    assert e["weight"] == pytest.approx(w, rel=1e-5)
    full = explain_scores(cur, corpus, "@body the")
    assert full[1][1]["matches"][0]["fields"][0]["tf"] == 2
    assert full[1][1]["matches"][0]["idf"] == pytest.approx(m["idf"], rel=1e-6)
    assert w < full[1][0]
    # every limited clause adds up in EXPLAIN_SCORE()
    for text in ("@body[5] quick* | fox", '@body[7] "lazy dog" | quick', "@body[4] fox NEAR/3 @body the",
                 '@body[4] "quick fox the"/2'):
        scores = explain_scores(cur, corpus, text)
        assert scores, text
        for i, (w, e) in scores.items():
            assert sum(x["contribution"] for x in e["matches"]) == pytest.approx(w, rel=1e-5), (text, i)
    chain = explain_scores(cur, corpus, "@body[4] fox NEAR/3 @body the")
    assert chain[1][1]["matches"][0]["fields"][0]["first_positions"] == [4, 0]
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH(%s)", ("@body[5] quick",))
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "first_positions=5" in plan and "strategy=phrase_topk" in plan
    assert "position limit" in plan  # why maxscore was not used
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH('@body[5] quick') ORDER BY WEIGHT() DESC LIMIT 1")
    assert cur.fetchall() == ((4,),)  # tf 1 in both 4 and 7; body 4 is shorter
    assert meta(cur)["strategy"] == "phrase_topk"


# Per field, for "quick | brown | fox" on CORPUS (title, body):
# (lcs, hit_count, word_count, min_hit_pos, exact_hit); None: no keyword there.
QBF_FACTORS = {
    1: ((3, 3, 3, 1, 1), (1, 1, 1, 2, 0)),   # title "quick brown fox" is the query
    3: ((1, 1, 1, 1, 0), (1, 2, 2, 4, 0)),
    4: ((1, 1, 1, 2, 0), (1, 1, 1, 5, 0)),
    6: (None, (1, 1, 1, 7, 0)),
    7: (None, (1, 1, 1, 5, 0)),               # "quickly" is another word
    8: (None, (1, 1, 1, 5, 0)),
}


def qbf_expected(ranker, w_bm25f, fw=(1.0, 1.0)):
    """Manticore's formulas over QBF_FACTORS (max_lcs: three words times
    the two fields' weights summed, the most sum(lcs * w) can be)."""
    max_lcs = 3 * sum(fw)
    out = {}
    for i, fields in QBF_FACTORS.items():
        s = mask = 0
        for f, x in enumerate(fields):
            if x is None:
                continue
            lcs, hits, words, minpos, exact = x
            s += fw[f] * {"proximity_bm25": lcs, "proximity": lcs, "wordcount": hits,
                          "sph04": 4 * lcs + 2 * (minpos == 1) + exact,
                          "matchany": words + (lcs - 1) * max_lcs, "fieldmask": 0}[ranker]
            mask |= 1 << f
        bm25 = 999 * w_bm25f[i] / (w_bm25f[i] + 1)
        out[i] = (mask if ranker == "fieldmask" else 1000 * s + bm25 if ranker in ("proximity_bm25", "sph04")
                  else s)
    return out


@pytest.mark.parametrize("ranker", ["proximity_bm25", "sph04", "proximity", "wordcount", "matchany",
                                    "fieldmask"])
def test_proximity_rankers(cur, corpus, ranker):
    """Manticore's proximity rankers, by hand: the weights of the best-first
    list, of the every-match path (ORDER BY id) and of a rank profile, and
    EXPLAIN_SCORE()'s factors."""
    text = "quick | brown | fox"
    w = dict(match_weights(cur, corpus, text))
    for fw, opt in (((1.0, 1.0), ""), ((2.0, 1.0), ", field_weights=(title=2)")):
        want = qbf_expected(ranker, dict(match_weights(cur, corpus, text, "OPTION " + opt.lstrip(", ")))
                            if opt else w, fw)
        got = match_weights(cur, corpus, text, f"OPTION ranker={ranker}{opt}")
        assert sorted(i for i, _ in got) == sorted(want)
        for i, x in got:
            assert x == pytest.approx(want[i], rel=1e-6), (ranker, opt, i)
        # best first, ties to the smaller id
        assert [i for i, _ in got] == sorted(want, key=lambda i: (-want[i], i))
        cur.execute(f"SELECT id, WEIGHT() FROM {corpus} WHERE MATCH(%s) ORDER BY id ASC LIMIT 100 "
                    f"OPTION ranker={ranker}{opt}", (text,))
        assert [(i, pytest.approx(want[i], rel=1e-6)) for i in sorted(want)] == list(cur.fetchall())
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH(%s) LIMIT 3 OPTION ranker={ranker}", (text,))
    cur.fetchall()
    m = meta(cur)
    assert m["strategy"] == "bool_fallback"
    scores = explain_scores(cur, corpus, text, f"OPTION ranker={ranker}")
    for i, (weight, e) in scores.items():
        assert e["ranker"] == ranker and e["weight"] == pytest.approx(weight, rel=1e-5)
        assert e["max_lcs"] == 6  # three words, two fields weighing 1
        assert e["bm25f"] == pytest.approx(w[i], rel=1e-5)
    for i, (weight, e) in explain_scores(cur, corpus, text,
                                         f"OPTION ranker={ranker}, field_weights=(title=2)").items():
        assert e["max_lcs"] == 9
        got = {x["field"]: (x["lcs"], x["hit_count"], x["word_count"], x["min_hit_pos"], x["exact_hit"])
               for x in e["factors"]}
        assert got == {f: x for f, x in enumerate(QBF_FACTORS[i]) if x is not None}, i


def test_proximity_ranker_details(cur, corpus, uniq):
    """Phrases and chains give their words' query positions; NOT adds no
    keyword; a position limit drops occurrences; profiles hold the ranker."""
    def weights(text, ranker="proximity"):
        return dict(match_weights(cur, corpus, text, "OPTION ranker=" + ranker))
    # the, lazy, dog at query positions 0, 1, 2: body 1 holds them verbatim
    # (lcs 3); title 2 "lazy dog" runs 2, body 2 "the dog" skips lazy (1)
    assert weights("the lazy dog") == {1: 3, 2: 3}
    # lazy 0, dog 1 (the phrase), the 2: body 1 runs "lazy dog" (2); title 2
    # the same, body 2's "the dog" is the at 2 before dog at 1 (1)
    assert weights('"lazy dog" the') == {1: 2, 2: 3}
    # a NOT's word is no keyword: the title of 1 is the whole query, so
    # sph04's exact_hit holds, and max_lcs counts three words (in each of
    # two fields)
    (w, e), = explain_scores(cur, corpus, "quick brown fox -bear", "OPTION ranker=sph04").values()
    assert e["max_lcs"] == 6
    assert [(x["field"], x["lcs"], x["exact_hit"]) for x in e["factors"]] == [(0, 3, 1), (1, 1, 0)]
    assert w == pytest.approx(1000 * (4 * 3 + 2 + 1 + 4 * 1) + e["bm25"], rel=1e-6)
    # the limit: body 1's fox (position 1) counts, body 6's (position 6) does not
    assert weights("@body[3] fox") == {1: 1}
    assert weights("@body[3] the", "wordcount") == {1: 1, 2: 1, 6: 1}
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT) rank_profile='prox: ranker=sph04'")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'a b', 'x'), (2, 'b a', 'x')")
    got = dict(match_weights(cur, t, "a b", "OPTION rank_profile='prox'"))
    # title 1 is the query: 4*2 + 2 + 1; title 2 reversed: 4*1 + 2 + 0
    assert 11000 < got[1] < 12000 and 6000 < got[2] < 7000
    # a word the query repeats is one word to word_count and
    # doc_word_count (Manticore's "unique keywords"); a prefix is another
    # word than the same letters written out
    cur.execute(f"INSERT INTO {t} VALUES (3, 'cat dog', 'cat')")
    expr = "OPTION ranker=expr('sum(word_count)*100 + doc_word_count*10 + query_word_count')"
    assert dict(match_weights(cur, t, "cat cat dog", expr)) == {3: 2 * 100 + 1 * 100 + 2 * 10 + 2}
    assert dict(match_weights(cur, t, "ca* cat", expr)) == {3: 2 * 100 + 2 * 100 + 2 * 10 + 2}
    # max_lcs: the keywords (each place) times the fields' weights summed
    (w, e), = explain_scores(cur, t, "cat cat dog", "OPTION ranker=matchany, field_weights=(title=3)").values()
    assert e["max_lcs"] == 3 * (3 + 1)
    # title: 2 words, lcs 2 ('cat dog' is the query's last two); body: 1 word, lcs 1
    assert w == 3 * (2 + (2 - 1) * 12) + 1 * (1 + 0)
    # an exact phrase's words count where it matches; a chain's in the
    # fields it holds in (as Sphinx's operators pass on what they matched)
    cur.execute(f"INSERT INTO {t} VALUES (4, 'hen cat', 'cat'), (5, 'x hen cat y hen', 'dog'), "
                "(6, 'cat hen x cat', 'hen')")
    fm, hc = "OPTION ranker=expr('field_mask')", "OPTION ranker=expr('sum(hit_count)')"
    assert dict(match_weights(cur, t, '"hen cat"', fm)) == {4: 1, 5: 1}
    assert dict(match_weights(cur, t, '"hen cat"', hc)) == {4: 2, 5: 2}
    # a word that is also plain counts everywhere
    assert dict(match_weights(cur, t, '"hen cat" cat', fm)) == {4: 3, 5: 1}
    assert dict(match_weights(cur, t, 'hen NEAR/2 cat', fm)) == {4: 1, 5: 1, 6: 1}
    assert dict(match_weights(cur, t, 'hen NEAR/2 cat', hc)) == {4: 2, 5: 3, 6: 3}
    # an anchored word counts where it is anchored: hen first in title 4
    # and body 6, not title 5's two nor title 6's (Sphinx gives the same)
    assert dict(match_weights(cur, t, 'dog | ^hen', hc)) == {3: 1, 4: 1, 5: 1, 6: 1}
    assert dict(match_weights(cur, t, 'dog | cat$', hc)) == {3: 1 + 1, 4: 2, 5: 1, 6: 1}
    # an AND (or MAYBE) that is a part of an OR, or a MAYBE's optional
    # part, counts where it holds: a clause that does not match passes on
    # nothing (as Sphinx's AND; Sphinx's AND NOT passes on row 5's hens)
    assert dict(match_weights(cur, t, 'dog | (hen y)', hc)) == {3: 1, 5: 1 + 2 + 1}
    assert dict(match_weights(cur, t, 'dog | (hen -y)', hc)) == {3: 1, 4: 1, 5: 1, 6: 2}
    assert dict(match_weights(cur, t, 'x MAYBE (hen y)', hc)) == {1: 1, 2: 1, 5: 1 + 2 + 1, 6: 1}
    assert dict(match_weights(cur, t, 'x MAYBE (hen | y)', hc)) == {1: 1, 2: 1, 5: 1 + 2 + 1, 6: 1 + 2}


def explain_scores(cur, table, text, options=""):
    """{id: (WEIGHT(), parsed EXPLAIN_SCORE())}."""
    cur.execute(f"SELECT id, WEIGHT(), EXPLAIN_SCORE() FROM {table} WHERE MATCH(%s) LIMIT 1000 {options}",
                (text,))
    return {i: (w, json.loads(e)) for i, w, e in cur.fetchall()}


@pytest.mark.parametrize("text, options, clauses, mode, exclude, opts", CORPUS_QUERIES)
def test_explain_score_matches_weight(cur, corpus, text, options, clauses, mode, exclude, opts):
    """EXPLAIN_SCORE()'s numbers add up to WEIGHT() by the formulas, and
    each is the reference's."""
    ranker, k1, b = opts.get("ranker", "bm25f"), opts.get("k1", 1.2), opts.get("b", 0.75)
    fw, tw = dict(opts.get("fw", {})), dict(opts.get("tw", {}))

    def sat(x):
        return x * (k1 + 1) / (x + k1)
    got = explain_scores(cur, corpus, text, options)
    assert sorted(got) == sorted(REF.weights(clauses, mode, exclude, **opts))
    for i, (w, e) in got.items():
        assert (e["ranker"], e["k1"], e["b"]) == (ranker, k1, b), e
        assert e["weight"] == pytest.approx(w, rel=1e-5), (i, e)
        want = {(c[0], " ".join(c[1])): c for c in clauses if REF.hits(i, c)}
        assert sorted((m["type"], m["terms"]) for m in e["matches"]) == sorted(want), (i, e)
        total = 0.0
        for m in e["matches"]:
            c = want[(m["type"], m["terms"])]
            assert [(x["field"], x["tf"], x["dl"]) for x in m["fields"]] == REF.hits(i, c), (i, m)
            s = 0.0
            for x in m["fields"]:
                f = x["field"]
                assert x["field_name"] == ("title", "body")[f], x
                assert x["avgdl"] == pytest.approx(REF.avgdl[f], rel=1e-3), x
                assert x["field_weight"] == fw.get(f, 1.0), x
                ntf = x["tf"] / REF.norm(f, x["dl"], b)
                if ranker == "bm25f":
                    assert x["weighted_norm_tf"] == pytest.approx(x["field_weight"] * ntf, rel=1e-5), x
                    s += x["weighted_norm_tf"]
                else:
                    assert x["idf"] == pytest.approx(REF.field_idf(f, c[1]), rel=1e-5), x
                    assert x["bm25"] == pytest.approx(x["field_weight"] * x["idf"] * sat(ntf), rel=1e-5), x
                    s += x["bm25"]
            if ranker == "bm25f":
                assert m["idf"] == pytest.approx(REF.clause_idf(c), rel=1e-5), m
                assert m["bm25f"] == pytest.approx(m["idf"] * sat(s), rel=1e-5), m
                s = m["bm25f"]
            assert m["type_weight"] == tw.get(c[0], 1.0), m
            assert m["contribution"] == pytest.approx(m["type_weight"] * s, rel=1e-5), m
            assert m["contribution"] == pytest.approx(REF.clause_score(i, c, **opts), rel=1e-5), m
            total += m["contribution"]
        assert total == pytest.approx(w, rel=1e-5), (i, e)


def test_explain_score_by_hand(cur, corpus):
    e = explain_scores(cur, corpus, 'body:"lazy dog" | quick*',
                       "OPTION field_weights=(body=2), query_type_weights=(phrase=1.5, prefix=0.5)")[1][1]
    # doc 1: body "the fox jumps over the lazy dog" (7 words; 48 over 8 bodies),
    # title "quick brown fox" (3 words; 17 over 8 titles). quick* expands to
    # quick and quickly; only quick is in doc 1.
    ph, pre = e["matches"]
    x = 2 * 1 / (0.25 + 0.75 * 7 / 6)
    idf = math.log((8 - 1 + 0.5) / 1.5) + math.log((8 - 3 + 0.5) / 3.5)       # body df: lazy 1, dog 3
    assert (ph["type"], ph["terms"], ph["type_weight"]) == ("phrase", "lazy dog", 1.5)
    [f] = ph["fields"]
    assert (f["field"], f["tf"], f["dl"], f["field_weight"]) == (1, 1, 7, 2) and f["avgdl"] == 6
    assert f["weighted_norm_tf"] == pytest.approx(x, rel=1e-5)
    assert ph["idf"] == pytest.approx(idf, rel=1e-5)
    assert ph["bm25f"] == pytest.approx(idf * x * 2.2 / (x + 1.2), rel=1e-5)
    assert ph["contribution"] == pytest.approx(1.5 * idf * x * 2.2 / (x + 1.2), rel=1e-5)
    x = 1 / (0.25 + 0.75 * 3 / 2.125)
    idf = 1e-6          # quick: title df 1, body df 3, in 4 of 8 documents: floored
    assert (pre["type"], pre["terms"], pre["type_weight"]) == ("prefix", "quick", 0.5)
    [f] = pre["fields"]
    assert (f["field"], f["tf"], f["dl"], f["field_weight"]) == (0, 1, 3, 1)
    assert f["avgdl"] == pytest.approx(2.125, rel=1e-3)
    assert pre["idf"] == pytest.approx(idf, rel=1e-5)
    assert pre["contribution"] == pytest.approx(0.5 * idf * x * 2.2 / (x + 1.2), rel=1e-5)
    assert e["weight"] == pytest.approx(ph["contribution"] + pre["contribution"], rel=1e-5)
    assert (e["ranker"], e["k1"], e["b"]) == ("bm25f", 1.2, 0.75)
    # MATCH('') matches everything with weight 1, and no clause.
    got = explain_scores(cur, corpus, "", "")
    assert sorted(got) == list(CORPUS) and all(w == 1 and e["matches"] == [] and e["weight"] == 1
                                               for w, e in got.values())
    expect_error(cur, f"SELECT id, EXPLAIN_SCORE() FROM {corpus} WHERE id = 1", 1064, r"MATCH")


def test_explain_score_with_ranker_none(cur, corpus):
    got = explain_scores(cur, corpus, "fox", "OPTION ranker=none")
    assert sorted(got) == [1, 4, 6]
    for w, e in got.values():
        assert w == 1.0 and e["ranker"] == "none", e
        assert e["weight"] == w, e
        # Where it matched, without scores.
        assert e["matches"] and all(m["terms"] == "fox" and "contribution" not in m and
                                    all(f["tf"] >= 1 for f in m["fields"]) and m["fields"]
                                    for m in e["matches"]), e


def test_ranker_none(cur, tiny, corpus):
    # No scores: WEIGHT() is 1, matches in index (insertion) order.
    assert match_weights(cur, tiny, "fox | dog", "OPTION ranker=none") == [(1, 1.0), (2, 1.0), (3, 1.0)]
    assert match_weights(cur, corpus, "quick | fox", "OPTION ranker=none") == \
        [(i, 1.0) for i in (1, 3, 4, 6, 7)]
    m = meta(cur)
    assert m["strategy"] == "no_ranking" and m["total_relation"] == "eq" and m["total_found"] == "5", m
    # With a LIMIT: the first matches in index order.
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH('quick | fox') LIMIT 2 OPTION ranker=none")
    assert cur.fetchall() == ((1,), (3,))


@pytest.mark.parametrize("options, pattern", [
    ("OPTION field_weights=(nope=2)", r"'nope' is not a full-text field"),
    ("OPTION field_weights=(cat=2)", r"'cat' is not a full-text field"),
    ("OPTION field_weights=(title=-1)", r"title"),
    ("OPTION query_type_weights=(bogus=1)", r"query type"),
    ("OPTION query_type_weights=(term=-1)", r"'term' expects a number from 0"),
    ("OPTION ranker=bogus", r"ranker 'bogus' is not supported: use bm25f, bm25, none, proximity_bm25, "
                            r"sph04, proximity, wordcount, matchany, fieldmask or expr\('\.\.\.'\)"),
    ("OPTION ranker=expr", r"ranker 'expr' is not supported"),
    ("OPTION ranker=expr(1)", r"ranker=expr\(\) takes one string: the expression"),
    ("OPTION ranker=expr('sum(lcs', 'x')", r"ranker=expr\(\) takes one string"),
    ("OPTION ranker=expr('sum(lcs')", r"ranker expression: unexpected end at offset 7: expected ',' or "
                                      r"'\)' in the arguments of sum\(\)"),
    ("OPTION ranker=expr('lcs*1000')", r"near 'lcs\*1000' at offset 0: lcs is a per-field factor: use it "
                                       r"inside sum\(\) or top\(\)"),
    ("OPTION ranker=expr('bm25 + min_gap')", r"at offset 7: unknown factor 'min_gap'"),
    ("OPTION ranker=expr('bm25 + atc')", r"at offset 7: atc is a per-field factor"),
    ("OPTION ranker=expr('bm25 + tf_idf')", r"at offset 7: tf_idf is a per-field factor"),
    ("OPTION ranker=export(1)", r"ranker=export\(\) takes one string: the expression"),
    ("OPTION k1=-1", r"'k1' expects a number from 0"),
    ("OPTION b=2", r"'b' expects a number from 0 to 1"),
    ("OPTION expansion_limit=0", r"expansion_limit"),
    ("OPTION rank_profile='nope'", r"rank_profile 'nope'"),
    ("OPTION max_query_time=-1", r"'max_query_time' expects a number from 0"),
    ("OPTION max_query_time='x'", r"max_query_time"),
    ("OPTION not_terms_only_allowed=2", r"not_terms_only_allowed expects 0 or 1"),
    ("OPTION boolean_simplify='yes'", r"boolean_simplify expects 0 or 1"),
    ("OPTION low_priority=2", r"low_priority expects 0 or 1"),
    ("OPTION sort_method=fast", r"sort_method expects pq or kbuffer"),
    ("OPTION threads=0", r"threads expects a positive integer"),
    ("OPTION comment=1", r"comment expects a string"),
])
def test_bad_rank_options(cur, corpus, options, pattern):
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('fox') {options}", 1064, pattern)


def test_manticore_hints(cur, corpus):
    """Manticore's options that change no result are accepted, with MATCH
    and without, and the rows are those of the query without them."""
    hints = ("OPTION sort_method=kbuffer, threads=4, low_priority=1, comment='from the app', max_matches=100, "
             "boolean_simplify=1")
    for where in ("MATCH('dog | fox')", "id > 2"):
        plain = rows(cur, f"SELECT id FROM {corpus} WHERE {where}")
        assert rows(cur, f"SELECT id FROM {corpus} WHERE {where} {hints}") == plain
    assert rows(cur, f"SELECT id FROM {corpus} WHERE MATCH('dog') OPTION boolean_simplify=1, sort_method=pq") == \
        rows(cur, f"SELECT id FROM {corpus} WHERE MATCH('dog')")


def test_not_terms_only_allowed(cur, corpus):
    """A query of only negations is an error that names the option, and
    with OPTION not_terms_only_allowed=1 (Manticore's) it matches every
    row that holds none of them, each weighing 1 as in a full scan."""
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('-fox')", 1064,
                 r"only negated terms .*OPTION not_terms_only_allowed=1")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('-fox') OPTION not_terms_only_allowed=0", 1064,
                 r"only negated terms")
    opt = "OPTION not_terms_only_allowed=1"

    def idq(sql):
        return sorted(r[0] for r in rows(cur, sql))
    without = lambda *ws: sorted(i for i, (t, b, _, _) in CORPUS.items()
                                 if not any(w in (t + " " + b).split() for w in ws))
    got = rows(cur, f"SELECT id, WEIGHT() FROM {corpus} WHERE MATCH('-fox') {opt}")
    assert sorted(i for i, _ in got) == without("fox") and all(w == 1 for _, w in got), got
    assert idq(f"SELECT id FROM {corpus} WHERE MATCH('-fox !dog') {opt}") == without("fox", "dog")
    assert idq(f"SELECT id FROM {corpus} WHERE MATCH('-\"lazy dog\" -nothere') {opt}") == \
        sorted(i for i, (t, b, _, _) in CORPUS.items() if "lazy dog" not in t and "lazy dog" not in b)
    assert idq(f"SELECT id FROM {corpus} WHERE MATCH('-@title fox') {opt}") == \
        sorted(i for i, (t, _, _, _) in CORPUS.items() if "fox" not in t.split())
    assert idq(f"SELECT id FROM {corpus} WHERE MATCH('-nothere') {opt}") == sorted(CORPUS)
    # with attribute filters, COUNT(*), ORDER BY, EXPLAIN_SCORE(), EXPLAIN
    n = rows(cur, f"SELECT COUNT(*) FROM {corpus} WHERE MATCH('-fox') {opt}")[0][0]
    assert n == len(without("fox"))
    assert idq(f"SELECT id FROM {corpus} WHERE MATCH('-fox') AND id > 5 {opt}") == \
        [i for i in without("fox") if i > 5]
    got = rows(cur, f"SELECT id, EXPLAIN_SCORE() FROM {corpus} WHERE MATCH('-fox') {opt}")
    assert all('"weight":1}' in e for _, e in got), got
    plan = [r[0] for r in rows(cur, f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH('-fox') {opt}")]
    assert plan[0] == "fulltext: strategy=full_scan" and "  all documents" in plan and "  NOT" in plan, plan
    # a query with something positive is as it was
    assert idq(f"SELECT id FROM {corpus} WHERE MATCH('dog -lazy') {opt}") == \
        idq(f"SELECT id FROM {corpus} WHERE MATCH('dog -lazy')")
    # boolean_simplify: accepted (a hint), the same rows
    assert idq(f"SELECT id FROM {corpus} WHERE MATCH('dog -lazy') OPTION boolean_simplify=1") == \
        idq(f"SELECT id FROM {corpus} WHERE MATCH('dog -lazy')")


def test_rank_profiles(cur, uniq):
    t = uniq()
    profiles = "titles: field_weights=(title=3), k1=1.0; flat: ranker=none; plain: ranker=bm25"
    docs = {1: ("fox", "dog"), 2: ("dog", "fox fox"), 3: ("cat", "cat")}
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT) rank_profile='{profiles}'")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'fox', 'dog'), (2, 'dog', 'fox fox'), (3, 'cat', 'cat')")
    ref = Reference(docs)

    def w(opts):
        return match_weights(cur, t, "fox", opts)

    def want(**opts):
        return ref.weights([term("fox")], **opts)
    plain = w("")
    assert_weights(plain, want())
    assert [i for i, _ in plain] == [2, 1]
    titles = w("OPTION rank_profile='titles'")
    assert_weights(titles, want(fw={0: 3.0}, k1=1.0))
    assert [i for i, _ in titles] == [1, 2]
    assert w("OPTION rank_profile='plain'") == w("OPTION ranker=bm25")
    assert_weights(w("OPTION rank_profile='plain'"), want(ranker="bm25"))
    # The query's own options apply after the profile, whatever their order.
    over = want(fw={0: 3.0}, k1=1.7)
    assert over[2] != pytest.approx(dict(titles)[2], rel=1e-3)
    assert_weights(w("OPTION rank_profile='titles', k1=1.7"), over)
    assert_weights(w("OPTION k1=1.7, rank_profile='titles'"), over)
    assert w("OPTION rank_profile='flat'") == [(1, 1.0), (2, 1.0)]
    assert w("OPTION rank_profile='flat', ranker=bm25f") == plain
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('fox') OPTION rank_profile='nope'", 1064,
                 r"rank_profile 'nope'")


# Each built-in proximity ranker as a ranking expression (docs/sql.md)
RANKER_FORMULAS = [
    ("proximity_bm25", "sum(lcs*user_weight)*1000+bm25"),
    ("sph04", "sum((4*lcs+2*(min_hit_pos==1)+exact_hit)*user_weight)*1000+bm25"),
    ("proximity", "sum(lcs*user_weight)"),
    ("wordcount", "sum(hit_count*user_weight)"),
    ("matchany", "sum((word_count+(lcs-1)*max_lcs)*user_weight)"),
    ("fieldmask", "field_mask"),
    ("bm25f", "bm25f"),
]


@pytest.mark.parametrize("ranker, formula", RANKER_FORMULAS)
def test_ranker_expressions_match_the_builtin_rankers(cur, corpus, ranker, formula):
    for text in ["quick fox", "fox | dog | bear", '"lazy dog" quick', "brown << dog", "the fox"]:
        for fw in ["", ", field_weights=(title=3, body=0.5)"]:
            want = weights(cur, corpus, text, f"OPTION ranker={ranker}{fw}")
            got = weights(cur, corpus, text, f"OPTION ranker=expr('{formula}'){fw}")
            assert set(got) == set(want), (text, fw)
            for i in want:
                assert got[i] == pytest.approx(want[i], rel=1e-6), (text, fw, i)


def test_ranker_expression_by_hand(cur, corpus):
    """Factors read from EXPLAIN_SCORE() give each weight by hand; the order
    follows the expression; a stored profile may hold one."""
    expr = "top(hit_count) * 10 + if(sum(exact_hit) > 0, 1000, 0) - max_lcs"
    sc = explain_scores(cur, corpus, "quick fox", f"OPTION ranker=expr('{expr}')")
    assert set(sc) == {1, 4}
    for i, (w, e) in sc.items():
        assert e["ranker"] == "expr"
        f = e["factors"]
        want = max(x["hit_count"] for x in f) * 10 + (1000 if any(x["exact_hit"] for x in f) else 0) - e["max_lcs"]
        assert w == pytest.approx(want), (i, e)
    ids = match_ids(cur, corpus, "fox", "OPTION ranker=expr('sum(min_hit_pos)')")
    cur.execute(f"SELECT id, EXPLAIN_SCORE() FROM {corpus} WHERE MATCH('fox') OPTION ranker=sph04")
    first = {i: sum(x["min_hit_pos"] for x in json.loads(e)["factors"]) for i, e in cur.fetchall()}
    assert ids == sorted(first, key=lambda i: (-first[i], i))
    assert weights(cur, corpus, "fox", "OPTION ranker=expr('1/0 + ln(0)')") == {1: 0.0, 4: 0.0, 6: 0.0}
    # the idf factors and doc_word_count, as EXPLAIN_SCORE() shows them
    expr = "sum(tf_idf) + 10*top(max_idf) + 100*sum(min_idf) + 1000*sum(sum_idf) + 1e4*doc_word_count"
    sc = explain_scores(cur, corpus, "fox | lazy | nothere", f"OPTION ranker=expr('{expr}')")
    assert set(sc) == {1, 2, 4, 6}
    for i, (w, e) in sc.items():
        f = e["factors"]
        want = (sum(x["tf_idf"] for x in f) + 10 * max(x["max_idf"] for x in f) +
                100 * sum(x["min_idf"] for x in f) + 1000 * sum(x["sum_idf"] for x in f) +
                1e4 * e["doc_word_count"])
        assert w == pytest.approx(want, rel=1e-5), (i, e)
    # by hand: doc 1 holds fox in both fields (title once, body once) and
    # lazy in the body: 2 keywords; in the title only fox
    e = sc[1][1]
    assert e["doc_word_count"] == 2
    title = [x for x in e["factors"] if x["field"] == 0][0]
    assert title["sum_idf"] == title["min_idf"] == title["max_idf"] == pytest.approx(title["tf_idf"])
    body = [x for x in e["factors"] if x["field"] == 1][0]
    assert body["sum_idf"] == pytest.approx(body["min_idf"] + body["max_idf"], rel=1e-5)
    assert body["tf_idf"] == pytest.approx(body["sum_idf"], rel=1e-5)


def test_ranker_expression_span_factors(cur, uniq):
    """lccs, wlccs, min_best_span_pos, exact_order and query_word_count,
    by hand on documents made for them."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT)")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'one two three', 'three two one'), (2, 'one hundred two', 'x'), "
                f"(3, 'two one', 'one two three four'), (4, 'x', 'four one two three')")
    expr = "sum(lccs*10 + exact_order*100 + min_best_span_pos) + top(wlccs) + query_word_count*1000"
    sc = explain_scores(cur, t, "one | two | three", f"OPTION ranker=expr('{expr}')")
    assert set(sc) == {1, 2, 3, 4}
    # per document and field: lccs, exact_order, min_best_span_pos
    want = {1: {0: (3, 1, 1), 1: (1, 0, 1)}, 2: {0: (1, 0, 1)}, 3: {0: (1, 0, 1), 1: (3, 1, 1)},
            4: {1: (3, 1, 2)}}
    for i, (w, e) in sc.items():
        f = {x["field"]: x for x in e["factors"]}
        assert {k: (x["lccs"], x["exact_order"], x["min_best_span_pos"]) for k, x in f.items()} == want[i], i
        assert e["query_word_count"] == 3
        top = max(x["wlccs"] for x in f.values())
        assert w == pytest.approx(sum(x["lccs"] * 10 + x["exact_order"] * 100 + x["min_best_span_pos"]
                                      for x in f.values()) + top + 3000, rel=1e-6), i
    # a whole run weighs its words' idfs; a run of one, its word's
    title = {x["field"]: x for x in sc[1][1]["factors"]}[0]
    body = {x["field"]: x for x in sc[1][1]["factors"]}[1]
    assert title["wlccs"] == pytest.approx(title["sum_idf"], rel=1e-5)
    assert body["wlccs"] == pytest.approx(body["max_idf"], rel=1e-5)
    # as far apart in the query as in the field counts for lcs; for lccs
    # only next to each other: 'one x two' against 'one hundred two' (doc 2's
    # title, lcs 2, lccs 1; its body 'x' 1 and 1) and 'four one two three'
    # (doc 4's body, 1 and 1; its title 'x' 1 and 1)
    assert weights(cur, t, "one hundred two", "OPTION ranker=expr('sum(lccs)*10 + sum(lcs)')") == {2: 33.0}
    assert weights(cur, t, "one x two", "OPTION ranker=expr('sum(lccs)*10 + sum(lcs)')") == \
        {2: 23.0, 4: 22.0}
    # atc, on a table where the three words are rare (one idf each, i): in
    # doc 1's title 'alpha beta gamma' alpha sees beta at 1 and gamma at 2,
    # beta both at 1, gamma beta at 1 and alpha at 2; doc 2's 'delta x x x
    # epsilon' one pair at 4, seen from both ends
    t2 = uniq()
    cur.execute(f"CREATE TABLE {t2} (title TEXT)")
    cur.execute(f"INSERT INTO {t2} VALUES (1, 'alpha beta gamma'), (2, 'delta x x x epsilon'), (3, 'x'), "
                f"(4, 'y'), (5, 'z'), (6, 'w'), (7, 'v')")
    sc2 = explain_scores(cur, t2, "alpha | beta | gamma | delta | epsilon", "OPTION ranker=expr('top(atc)')")
    f1 = sc2[1][1]["factors"][0]
    i = f1["max_idf"]
    assert f1["min_idf"] == pytest.approx(i, rel=1e-5)
    assert f1["atc"] == pytest.approx(math.log(1 + i * i * (2 * (1 + 2 ** -1.75) + 2)), rel=1e-5)
    assert sc2[1][0] == pytest.approx(f1["atc"], rel=1e-5)
    f2 = sc2[2][1]["factors"][0]
    assert f2["max_idf"] == pytest.approx(i, rel=1e-5) and f2["min_idf"] == pytest.approx(i, rel=1e-5)
    assert f2["atc"] == pytest.approx(math.log(1 + 2 * i * i * 4 ** -1.75), rel=1e-5)
    # min_gaps, Manticore's own examples for 'big wolf'
    t3 = uniq()
    cur.execute(f"CREATE TABLE {t3} (body TEXT)")
    cur.execute(f"INSERT INTO {t3} VALUES (1, 'big bad wolf'), (2, 'big bad hairy wolf'), "
                f"(3, 'the wolf was scary and big'), (4, 'i heard a wolf howl'), (5, 'big wolf and a big bad wolf')")
    assert weights(cur, t3, "big | wolf", "OPTION ranker=expr('sum(min_gaps)')") == \
        {1: 1.0, 2: 2.0, 3: 3.0, 4: 0.0, 5: 0.0}
    # query_word_count: distinct keywords, not those under NOT, found or not
    assert weights(cur, t, "one | two | one", "OPTION ranker=expr('query_word_count')") == \
        {1: 2.0, 2: 2.0, 3: 2.0, 4: 2.0}
    assert weights(cur, t, "one -hundred", "OPTION ranker=expr('query_word_count')") == {1: 1.0, 3: 1.0, 4: 1.0}
    assert weights(cur, t, "one | nothere", "OPTION ranker=expr('query_word_count')") == \
        {1: 2.0, 2: 2.0, 3: 2.0, 4: 2.0}


def packed(z):
    """PACKEDFACTORS() text as a dict: 'fieldN' and 'wordN' map to dicts."""
    out, i = {}, 0
    for m in re.finditer(r"(\w+)=(\(([^)]*)\)|[^,]+)(, |$)", z):
        if m.group(3) is not None:
            out[m.group(1)] = {k: float(v) for k, v in (kv.split("=") for kv in m.group(3).split(", "))}
        else:
            out[m.group(1)] = float(m.group(2))
        i = m.end()
    assert i == len(z), z
    return out


def test_packed_factors(cur, uniq):
    """PACKEDFACTORS() (Manticore's text form) under ranker=expr or export:
    the document's factors, those of each field it matches and of each
    keyword it holds, by hand; max_window_hits over the window of the
    expression's max_window_hits(n), 1 without one, as in Manticore;
    {no_atc=1} reports atc 0. export() ranks as expr() does. The errors
    Manticore gives."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT)")
    # body positions: big 0, wolf 1, ... big 10 (a window of 10 holds two
    # of the three hits at most); filler documents give the words an idf
    cur.execute(f"INSERT INTO {t} VALUES (1, 'big bad wolf', 'big wolf a b c d e f g h big'), "
                f"(2, 'x', 'wolf'), (3, 'wolf', 'z'), " + ", ".join(f"({i}, 'y', 'z')" for i in range(4, 12)))
    cur.execute(f"SELECT id, PACKEDFACTORS(), WEIGHT() FROM {t} WHERE MATCH('big wolf') "
                f"OPTION ranker=export('sum(lcs)*1000+bm25')")
    rows_ = cur.fetchall()
    assert [r[0] for r in rows_] == [1]
    f = packed(rows_[0][1])
    assert f["field_mask"] == 3 and f["doc_word_count"] == 2
    assert 0 < f["bm25"] < 1000 and f["bm25"] == int(f["bm25"]) and f["bm25a"] > 0
    t0, b0 = f["field0"], f["field1"]
    assert (t0["lcs"], t0["hit_count"], t0["word_count"], t0["min_hit_pos"], t0["exact_hit"]) == (1, 2, 2, 1, 0)
    assert (t0["max_window_hits"], t0["min_gaps"], t0["exact_order"], t0["lccs"]) == (1, 1, 1, 1)
    assert (b0["lcs"], b0["hit_count"], b0["word_count"], b0["min_hit_pos"], b0["min_best_span_pos"]) == \
        (2, 3, 2, 1, 1)
    assert (b0["max_window_hits"], b0["min_gaps"], b0["exact_order"], b0["lccs"]) == (1, 0, 1, 2)
    assert t0["atc"] > 0 and b0["atc"] > 0
    # 'big' is in one title and one body of 11 documents, 'wolf' in two of
    # each: big's idf is larger
    assert f["word0"]["tf"] == 3 and f["word1"]["tf"] == 2
    assert f["word0"]["idf"] > f["word1"]["idf"] > 0
    assert b0["tf_idf"] == pytest.approx(2 * f["word0"]["idf"] + f["word1"]["idf"], rel=1e-6)
    assert b0["sum_idf"] == pytest.approx(f["word0"]["idf"] + f["word1"]["idf"], rel=1e-6)
    # the weight is the expression's, as under expr()
    assert rows_[0][2] == pytest.approx(3000 + f["bm25"], abs=1)
    assert weights(cur, t, "big wolf", "OPTION ranker=expr('sum(lcs)*1000+bm25')") == {1: rows_[0][2]}
    # max_window_hits(n): body 'big wolf ... big' holds two keywords in 10
    # positions running, three in 11; the title two in either
    for n, want in ((10, (2, 2)), (11, (2, 3)), (1, (1, 1))):
        cur.execute(f"SELECT PACKEDFACTORS(), WEIGHT() FROM {t} WHERE MATCH('big wolf') "
                    f"OPTION ranker=expr('sum(max_window_hits({n}))')")
        z, w = cur.fetchone()
        g = packed(z)
        assert (g["field0"]["max_window_hits"], g["field1"]["max_window_hits"]) == want, n
        assert w == sum(want), n
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('big') OPTION ranker=expr('max_window_hits(3)')", 1064,
                 r"max_window_hits\(\) is a per-field factor")
    # no_atc: the same, atc 0
    cur.execute(f"SELECT PACKEDFACTORS({{no_atc=1}}) FROM {t} WHERE MATCH('big wolf') OPTION ranker=expr('1')")
    g = packed(cur.fetchone()[0])
    assert g["field0"]["atc"] == 0 and g["field1"]["atc"] == 0
    assert {k: v for k, v in g["field1"].items() if k != "atc"} == {k: v for k, v in b0.items() if k != "atc"}
    # a field the document does not match is not listed; a keyword it lacks neither
    cur.execute(f"SELECT id, PACKEDFACTORS() FROM {t} WHERE MATCH('wolf | nothere') ORDER BY id ASC "
                f"OPTION ranker=expr('1')")
    r = cur.fetchall()
    assert [x[0] for x in r] == [1, 2, 3]
    g = packed(r[1][1])
    assert g["field_mask"] == 2 and "field0" not in g and "field1" in g and "word1" not in g
    assert g["word0"]["tf"] == 1
    for sql, pat in [
        (f"SELECT PACKEDFACTORS() FROM {t} WHERE MATCH('wolf')", r"needs OPTION ranker=expr"),
        (f"SELECT PACKEDFACTORS() FROM {t} WHERE MATCH('wolf') OPTION ranker=sph04", r"needs OPTION ranker=expr"),
        (f"SELECT PACKEDFACTORS() FROM {t}", r"needs a MATCH\(\)"),
        (f"SELECT PACKEDFACTORS({{x=1}}) FROM {t} WHERE MATCH('a') OPTION ranker=expr('1')", r"expected no_atc"),
        (f"SELECT PACKEDFACTORS({{no_atc=2}}) FROM {t} WHERE MATCH('a') OPTION ranker=expr('1')", r"0 or 1"),
        (f"SELECT PACKEDFACTORS(1) FROM {t} WHERE MATCH('a') OPTION ranker=expr('1')", r"no argument, or"),
        (f"SELECT id FROM {t} WHERE MATCH('a') ORDER BY PACKEDFACTORS() OPTION ranker=expr('1')",
         r"only be used in the select list"),
    ]:
        expect_error(cur, sql, 1064, pat)


def test_ranker_expression_bm25_functions(cur, corpus):
    """bm25a(k1, b) weighs as ranker=bm25 with that k1 and b; bm25f(k1, b,
    {field=weight}) as the default BM25F with those weights, whatever the
    query's own k1, b and field_weights."""
    for text in ["quick fox", "fox | dog | bear", '"lazy dog" quick']:
        want = weights(cur, corpus, text, "OPTION ranker=bm25, k1=0.9, b=0.4")
        got = weights(cur, corpus, text, "OPTION ranker=expr('bm25a(0.9, 0.4)'), k1=2, b=0.1, "
                                         "field_weights=(title=5)")
        assert set(got) == set(want) and want, text
        for i in want:
            assert got[i] == pytest.approx(want[i], rel=1e-9), (text, i)
        want = weights(cur, corpus, text, "OPTION k1=1.5, b=0.3, field_weights=(title=3)")
        got = weights(cur, corpus, text, "OPTION ranker=expr('bm25f(1.5, 0.3, {TITLE=3})')")
        assert set(got) == set(want)
        for i in want:
            assert got[i] == pytest.approx(want[i], rel=1e-9), (text, i)
    # with the other factors: 1000 * the lcs sum + bm25a, by hand from EXPLAIN_SCORE()
    sc = explain_scores(cur, corpus, "quick fox", "OPTION ranker=expr('sum(lcs)*1000 + bm25a(1.2, 0.75)')")
    plain = weights(cur, corpus, "quick fox", "OPTION ranker=bm25")
    for i, (w, e) in sc.items():
        assert w == pytest.approx(1000 * sum(x["lcs"] for x in e["factors"]) + plain[i], rel=1e-6), i
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('fox') OPTION ranker=expr('bm25f(1, 0.5, {{nope=2}})')",
                 1064, r"bm25f\(\): 'nope' is not a full-text field \(the table's: title, body\)")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('fox') OPTION ranker=expr('bm25a(2, 3)')",
                 1064, r"near '3\)' at offset 9: b in bm25a\(\) is a number from 0 to 1")


def test_ranker_expression_profiles(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT) "
                f"rank_profile='e: ranker=expr(\\'sum(lcs*user_weight)*1000+bm25\\'), field_weights=(title=2)'")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'quick fox', 'the fox'), (2, 'fox', 'quick red fox')")
    assert weights(cur, t, "quick fox", "OPTION rank_profile='e'") == \
        weights(cur, t, "quick fox", "OPTION ranker=proximity_bm25, field_weights=(title=2)")
    expect_error(cur, f"CREATE TABLE {uniq()} (title TEXT) rank_profile='b: ranker=expr(\\'lcs\\')'", 1064,
                 r"rank_profile 'b': ranker expression: near 'lcs' at offset 0: lcs is a per-field factor")


def test_prefix_expansion_cap(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT)")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'alpha alpine'), (2, 'alps altitude'), "
                "(3, 'also alto'), (4, 'beta')")
    assert sorted(match_ids(cur, t, "al*")) == [1, 2, 3]
    m = meta(cur)
    assert m["prefix_expansions"] == "6" and "prefix_expansion_capped" not in m, m
    capped = match_ids(cur, t, "al*", "OPTION expansion_limit=2")
    m = meta(cur)
    assert m["prefix_expansions"] == "2", m
    assert m.get("prefix_expansion_capped", "").startswith("yes"), m
    assert capped and set(capped) < {1, 2, 3}
    match_ids(cur, t, "al*", "OPTION expansion_limit=6")
    assert "prefix_expansion_capped" not in meta(cur)


# ---------------------------------------------------------------------------
# SHOW META and EXPLAIN

META_TIMES = ("time_parse_us", "time_plan_us", "time_match_us", "time_rank_us", "time_materialize_us")


def test_show_meta_maxscore(cur, corpus):
    got = match_ids(cur, corpus, "quick | fox")
    m = meta(cur)
    assert "fast_path_skipped" not in m
    # fewer matches than the limit: none passed over, the count is exact
    assert m["strategy"] == "maxscore" and m["total_relation"] == "eq", m
    assert int(m["total"]) == len(got) == int(m["returned"]) == int(m["total_found"]) == 5, m
    assert int(m["postings_read"]) > 0 and int(m["candidates"]) >= 5
    for k in META_TIMES + ("time", "plan", "rows_examined"):
        assert k in m, (k, m)
    # a full top 2 may have passed some over: a lower bound
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH('quick | fox') LIMIT 2")
    assert len(cur.fetchall()) == 2
    m = meta(cur)
    assert m["strategy"] == "maxscore" and m["total_relation"] == "gte", m
    assert 2 <= int(m["total_found"]) <= 5, m
    # a top k as large as the table: nothing can have been passed over
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH('quick | fox | hello | dog') LIMIT {len(CORPUS)}")
    got = cur.fetchall()
    m = meta(cur)
    assert m["strategy"] == "maxscore" and m["total_relation"] == "eq", m
    assert int(m["total_found"]) == len(got) == len(CORPUS), m


@pytest.mark.parametrize("text, tail, strategy, why", [
    ('"lazy dog"', "", "phrase_topk", "phrase"),
    ('"the dog"~2 | fox', "", "bool_fallback", "phrase"),
    ("quick -fox", "", "bool_fallback", "NOT"),
    ("quick fox", "", {"and_intersect", "bool_fallback"}, "AND"),
    ("(quick brown) << fox", "", "bool_fallback", "'<<' over a group"),
    ("quick | fox", "ORDER BY price ASC", "bool_fallback", "ORDER BY"),
    ("quick | fox", "ORDER BY WEIGHT() DESC, id ASC", "bool_fallback", "ORDER BY"),
])
def test_show_meta_other_strategies(cur, corpus, text, tail, strategy, why):
    got = match_ids(cur, corpus, text, tail)
    m = meta(cur)
    want = strategy if isinstance(strategy, set) else {strategy}
    assert m["strategy"] in want, m
    assert why in m.get("fast_path_skipped", ""), m
    assert m["total_relation"] == "eq" and int(m["total_found"]) == len(got), m


def test_relaxed_missing_fields_left_out(cur, corpus):
    """Under @@relaxed, the words of a scope that names only fields the
    table lacks take no part in the query (as Sphinx and Manticore drop
    them): the same rows and weights as without them, not highlighted, not
    among SHOW META's keywords."""
    want = select_match(cur, "id, WEIGHT()", corpus, "quick")
    got = select_match(cur, "id, WEIGHT()", corpus, "@@relaxed quick @nope fox")
    assert got == want and len(got) == 4
    m = meta(cur)
    assert m["keyword[0]"] == "quick" and "keyword[1]" not in m, m
    rows = select_match(cur, "id, HIGHLIGHT()", corpus, "@@relaxed quick @(nope,other) fox", "AND id = 1")
    assert rows == [(1, "<b>quick</b> brown fox | the fox jumps over the lazy dog")], rows
    # an operator that scopes nothing is an error, as in Sphinx
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH(%s)", 1064,
                 r"expected a word, phrase or '\(' after the field operator at offset 6", args=("quick @title",))


def test_show_meta_keywords(cur, corpus, stemmed, uniq):
    """SHOW META lists each keyword of the last MATCH query once, in query
    order, with the documents holding it in its scope and its occurrences,
    as Manticore does."""
    match_ids(cur, corpus, 'fox | "lazy dog" -bear fox @title qu*')
    m = meta(cur)
    kws = [(m[f"keyword[{i}]"], int(m[f"docs[{i}]"]), int(m[f"hits[{i}]"]))
           for i in range(len([k for k in m if k.startswith("keyword[")]))]
    assert kws == [("fox", 3, 4), ("lazy", 2, 2), ("dog", 3, 5), ("bear", 1, 2), ("qu*", 2, 2)]
    # the analysed term, in the field scope given
    match_ids(cur, stemmed, "RUNNING the runner")
    m = meta(cur)
    assert (m["keyword[0]"], m["docs[0]"], m["hits[0]"]) == ("run", "3", "3")
    assert (m["keyword[1]"], m["docs[1]"]) == ("runner", "1") and "keyword[2]" not in m
    match_ids(cur, corpus, "@body dog")
    assert meta(cur)["docs[0]"] == "3" and meta(cur)["hits[0]"] == "3"
    cur.execute("SHOW META LIKE 'hits%'")
    assert cur.fetchall() == (("hits[0]", "3"),)
    # a query without MATCH has none; nor one whose table is gone
    cur.execute(f"SELECT id FROM {corpus} WHERE id = 1")
    assert not [k for k in meta(cur) if k.startswith("keyword")]
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT)")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'a b')")
    assert match_ids(cur, t, "a") == [1]
    assert meta(cur)["keyword[0]"] == "a"
    cur.execute(f"DROP TABLE {t}")
    assert not [k for k in meta(cur) if k.startswith("keyword")]


def test_max_query_time(cur, uniq):
    """OPTION max_query_time=N (milliseconds, 0: no limit) stops the
    full-text search N ms after the query starts: what was found by then is
    the answer, total_found a lower bound, with a warning. 2,000 documents
    of 600 words and a NEAR chain over all of them take tens of ms here;
    1 ms stops it early."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT)")
    text = " ".join(["a b"] * 300)
    for base in range(0, 2000, 500):
        cur.execute(f"INSERT INTO {t} VALUES " + ",".join(f"({base + i + 1}, '{text}')" for i in range(500)))
    q = "a NEAR/200 b NEAR/3 a"
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE MATCH(%s)", (q,))
    assert cur.fetchone()[0] == 2000
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE MATCH(%s) OPTION max_query_time=0", (q,))
    assert cur.fetchone()[0] == 2000
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE MATCH(%s) OPTION max_query_time=1", (q,))
    assert cur.fetchone()[0] < 2000
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == (("Warning", "1105", "query time exceeded max_query_time=1 ms: the results "
                               "are the matches found by then"),)
    cur.execute(f"SELECT id FROM {t} WHERE MATCH(%s) LIMIT 3 OPTION max_query_time=1", (q,))
    assert len(cur.fetchall()) == 3
    m = meta(cur)
    assert m["total_relation"] == "gte" and int(m["total_found"]) < 2000, m
    # a generous limit changes nothing, and no warning
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE MATCH(%s) OPTION max_query_time=600000", (q,))
    assert cur.fetchone()[0] == 2000
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == ()
    # a scan without MATCH takes it too (test_select.py tests that)
    cur.execute(f"SELECT COUNT(*) FROM {t} OPTION max_query_time=600000")
    assert cur.fetchone()[0] == 2000
    # the ranking options still need a MATCH
    expect_error(cur, f"SELECT id FROM {t} OPTION ranker=bm25", 1064, r"option 'ranker' needs a MATCH\(\) query")


def test_cutoff(cur, uniq):
    """OPTION cutoff=N stops the full-text search once N matches passed the
    filters: COUNT(*) says N, the rows are the best of those N (here the
    first N in id order), total_relation is gte; 0 means no limit."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT, n INT)")
    cur.execute(f"INSERT INTO {t} VALUES " + ",".join(f"({i}, 'a b', {i % 2})" for i in range(1, 201)))
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE MATCH('a') OPTION cutoff=10")
    assert cur.fetchone()[0] == 10
    assert meta(cur)["total_relation"] == "gte"
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('a') ORDER BY id DESC LIMIT 3 OPTION cutoff=10")
    assert cur.fetchall() == ((10,), (9,), (8,))
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('a') AND n = 1 ORDER BY id DESC LIMIT 2 OPTION cutoff=4")
    assert cur.fetchall() == ((7,), (5,))
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('a b') LIMIT 3 OPTION cutoff=5")
    assert cur.fetchall() == ((1,), (2,), (3,))
    m = meta(cur)
    assert m["total_found"] == "5" and m["total_relation"] == "gte", m
    cur.execute(f"SELECT COUNT(*) FROM {t} WHERE MATCH('a') OPTION cutoff=0")
    assert cur.fetchone()[0] == 200
    assert meta(cur)["total_relation"] == "eq"
    # The best row comes after the 10th. Top-k counts the rows it scores:
    # rows that cannot enter the top k (here: only tie the best so far) are
    # passed over uncounted, so it may stop past the 10th match, and the
    # row is the best of every match up to there: the first row, or row
    # 150 where the plan passed over the ties before it (the phrase's does,
    # reading the positions of no tying row).
    t2 = uniq()
    cur.execute(f"CREATE TABLE {t2} (body TEXT)")
    cur.execute(f"INSERT INTO {t2} VALUES " +
                ",".join(f"({i}, '{'a b' if i == 150 else 'a b c d e f g h'}')" for i in range(1, 301)))
    for q in ("a", "a | zz", '"a b"'):
        cur.execute(f"SELECT id FROM {t2} WHERE MATCH('{q}') LIMIT 1")
        assert cur.fetchall() == ((150,),), q
        cur.execute(f"SELECT id FROM {t2} WHERE MATCH('{q}') LIMIT 1 OPTION cutoff=10")
        got = cur.fetchall()
        assert got in (((1,),), ((150,),)), (q, got)
        m = meta(cur)  # at most the rows scored, a lower bound
        assert 1 <= int(m["total_found"]) <= 10 and m["total_relation"] == "gte", (q, m)
        cur.execute(f"SELECT id FROM {t2} WHERE MATCH('{q}') LIMIT 1 OPTION cutoff=150")
        assert cur.fetchall() == ((150,),), q
    cur.execute(f"SELECT id FROM {t2} WHERE MATCH('\"a b\"') LIMIT 1 OPTION cutoff=10")
    assert cur.fetchall() == ((150,),)
    # COUNT(*) counts every match: it stops at exactly the 10th
    cur.execute(f"SELECT COUNT(*) FROM {t2} WHERE MATCH('\"a b\"') OPTION cutoff=10")
    assert cur.fetchall() == ((10,),)
    for bad in ("-1", "1.5", "'x'"):
        expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('a') OPTION cutoff={bad}", 1064,
                     r"cutoff expects an integer from 0")
    # a scan without MATCH stops at it too (test_select.py)
    cur.execute(f"SELECT id FROM {t} OPTION cutoff=3")
    assert cur.fetchall() == ((1,), (2,), (3,))


def test_show_meta_and_intersect(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT)")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'a b c'), (2, 'a b'), (3, 'b c'), (4, 'c')")
    assert sorted(match_ids(cur, t, "a b")) == [1, 2]
    m = meta(cur)
    assert m["strategy"] == "and_intersect" and m["total_relation"] == "eq", m
    assert sorted(match_ids(cur, t, "")) == [1, 2, 3, 4]
    assert meta(cur)["strategy"] == "full_scan"
    assert match_ids(cur, t, "zzz") == []
    assert meta(cur)["strategy"] == "empty"


def test_explain_select(cur, corpus):
    match_ids(cur, corpus, "quick | fox")         # EXPLAIN runs nothing: SHOW META keeps this
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH('quick | fox') OPTION field_weights=(body=2)")
    assert col_names(cur) == ["plan"]
    plan = [r[0] for r in cur.fetchall()]
    assert plan[:2] == ["fulltext: strategy=maxscore", "OR"], plan
    # each clause with its idf, then per field its df, idf and weight:
    # "quick" is in 1 title and 3 bodies, 4 documents of 8
    at = plan.index('  term "quick" idf=%.4g type_weight=1' % REF.idf(4))
    for ln, (field, df, weight) in zip(plan[at + 1:at + 3], (("title", 1, 1), ("body", 3, 2))):
        want = "    field %s: df=%d idf=%.4g weight=%d" % (field, df, REF.idf(df), weight)
        assert ln == want, plan
    assert meta(cur)["strategy"] == "maxscore"
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH('\"lazy dog\" -fox') AND cat = 1 "
                "ORDER BY price DESC")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "strategy=bool_fallback" in plan and 'phrase "lazy dog"' in plan and "NOT" in plan, plan
    assert "filter" in plan and "order" in plan, plan
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH('quic*')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'prefix "quick"' in plan and 'prefix "quickly"' in plan, plan
    cur.execute(f"EXPLAIN SELECT id FROM {corpus} WHERE MATCH('\"the dog\"~2')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'proximity "the dog"~2' in plan, plan



def test_show_plan_and_profile(cur, corpus, connect):
    """SET profiling=1, then SHOW PLAN and SHOW PROFILE describe the last
    SELECT, as in Manticore: the plan EXPLAIN prints (one value, its lines
    joined) and each stage's seconds and share; without profiling, or
    before any SELECT, both are empty and SHOW WARNINGS says why."""
    def warnings():
        cur.execute("SHOW WARNINGS")
        return [r[2] for r in cur.fetchall()]

    cur.execute("SELECT @@profiling")
    assert cur.fetchall() == ((0,),)
    match_ids(cur, corpus, "quick | fox")
    for stmt, cols in (("SHOW PLAN", ["Variable", "Value"]),
                       ("SHOW PROFILE", ["Status", "Duration", "Switches", "Percent"])):
        cur.execute(stmt)
        assert col_names(cur) == cols and cur.fetchall() == (), stmt
        assert warnings() == ["profiling is off: SET profiling=1, then run the SELECT"], stmt
    cur.execute("SET profiling=1")
    try:
        cur.execute("SELECT @@profiling")
        assert cur.fetchall() == ((1,),)
        cur.execute("SHOW PLAN")
        assert cur.fetchall() == ()
        assert warnings() == ["no SELECT has run since SET profiling=1"]
        q = f"SELECT id FROM {corpus} WHERE MATCH('quick | fox') OPTION field_weights=(body=2)"
        cur.execute(q)
        found = cur.fetchall()
        cur.execute("EXPLAIN " + q)
        explain = "\n".join(r[0] for r in cur.fetchall())
        cur.execute("SHOW PLAN")
        assert cur.fetchall() == (("transformed_tree", explain),)
        assert explain.startswith("fulltext: strategy=maxscore\nOR\n"), explain
        cur.execute("SHOW PROFILE")
        rows = cur.fetchall()
        assert [r[0] for r in rows] == ["parse", "plan", "match", "rank", "materialize", "unknown", "total"]
        dur = {r[0]: float(r[1]) for r in rows}
        assert all(v >= 0 for v in dur.values()) and dur["total"] > 0, rows
        assert abs(sum(v for k, v in dur.items() if k != "total") - dur["total"]) < 2e-6 * len(rows), rows
        assert abs(sum(float(r[3]) for r in rows[:-1]) - 100) < 0.1 and rows[-1][2:] == ("6", "100.00"), rows
        # SHOW META still answers about the same SELECT
        assert meta(cur)["total_found"] == str(len(found))
        # a scan: its plan, and a failed SELECT leaves nothing to show
        cur.execute(f"SELECT id FROM {corpus} WHERE cat = 1")
        cur.execute("SHOW PLAN")
        plan = cur.fetchall()[0][1]
        assert plan.startswith("full_scan"), plan
        expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('\"open')", 1064, r"MATCH")
        cur.execute("SHOW PROFILE")
        assert cur.fetchall() == ()
        # another session is not profiled
        other = connect().cursor()
        other.execute(f"SELECT id FROM {corpus} WHERE MATCH('fox')")
        other.execute("SHOW PLAN")
        assert other.fetchall() == ()
        expect_error(other, "SET GLOBAL profiling=1", 1228, r"'profiling' is a SESSION variable")
        expect_error(other, "SET profiling=2", 1231, r"can't be set to the value of '2'")
    finally:
        cur.execute("SET profiling=0")
    cur.execute(f"SELECT id FROM {corpus} WHERE MATCH('fox')")
    cur.execute("SHOW PLAN")
    assert cur.fetchall() == ()


# ---------------------------------------------------------------------------
# Highlighting

def test_highlight_defaults_and_options(cur, corpus):
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {corpus} WHERE MATCH('fox') ORDER BY id ASC")
    assert cur.fetchall() == (
        (1, "quick brown <b>fox</b> | the <b>fox</b> jumps over the lazy dog"),
        (4, "red <b>fox</b> | foxes are red and quick"),
        (6, "world news | news about the world and the <b>fox</b>"))
    cur.execute(f"SELECT HIGHLIGHT({{before_match='[', after_match=']', field_separator=' // '}}) "
                f"FROM {corpus} WHERE MATCH('fox | lazy') AND id = 1")
    assert cur.fetchall() == (("quick brown [fox] // the [fox] jumps over the [lazy] dog",),)
    # a field list, then a query of its own
    cur.execute(f"SELECT HIGHLIGHT({{}}, 'body') FROM {corpus} WHERE MATCH('fox') AND id = 1")
    assert cur.fetchall() == (("the <b>fox</b> jumps over the lazy dog",),)
    cur.execute(f"SELECT HIGHLIGHT({{before_match='<em>', after_match='</em>'}}, 'title', 'quick | brown') "
                f"FROM {corpus} WHERE MATCH('dog') AND id = 1")
    assert cur.fetchall() == (("<em>quick</em> <em>brown</em> fox",),)
    cur.execute(f"SELECT HIGHLIGHT({{}}, 'title', 'fox') FROM {corpus} WHERE id = 4")
    assert cur.fetchall() == (("red <b>fox</b>",),)
    # NOT: what the query excludes is not marked (field scope and prefixes: at the
    # end of the file)
    cur.execute(f"SELECT HIGHLIGHT() FROM {corpus} WHERE MATCH('dog -fox') AND id = 2")
    assert cur.fetchall() == (("lazy <b>dog</b> | the <b>dog</b> sleeps all day",),)



def test_highlight_words_and_passage_ids(cur, corpus):
    """Manticore's limit_words, force_passages (force_snippets) and
    start_passage_id (start_snippet_id) with %PASSAGE_ID% (%SNIPPET_ID%) in
    the tags, through HIGHLIGHT(), SNIPPET() and CALL SNIPPETS: the number
    goes on across a row's fields, so each mark in the row has its own;
    and QUERY(), the MATCH text, for SNIPPET(field, QUERY())."""
    cur.execute(f"SELECT HIGHLIGHT({{before_match='<a id=m%PASSAGE_ID%>', after_match='</a>'}}) "
                f"FROM {corpus} WHERE MATCH('fox | lazy') AND id = 1")
    assert cur.fetchall() == (("quick brown <a id=m1>fox</a> | the <a id=m2>fox</a> jumps over the "
                               "<a id=m3>lazy</a> dog",),)
    cur.execute(f"SELECT HIGHLIGHT({{start_snippet_id=10, before_match='[%SNIPPET_ID%:', after_match=']'}}, "
                f"'body') FROM {corpus} WHERE MATCH('fox | lazy') AND id = 1")
    assert cur.fetchall() == (("the [10:fox] jumps over the [11:lazy] dog",),)
    cur.execute(f"SELECT HIGHLIGHT({{limit_words=3, around=1}}, 'body') FROM {corpus} "
                f"WHERE MATCH('lazy') AND id = 1")
    assert cur.fetchall() == ((" ... the <b>lazy</b> dog",),)
    cur.execute(f"SELECT HIGHLIGHT({{force_snippets=1, around=1}}, 'body') FROM {corpus} "
                f"WHERE MATCH('jumps') AND id = 1")
    assert cur.fetchall() == ((" ... fox <b>jumps</b> over ... ",),)
    assert snippet(cur, corpus, LONG, "fox", "limit=0", "limit_words=3", "around=1") == \
        " ... thirteen <b>fox</b> fourteen ... "
    assert snippet(cur, corpus, LONG, "fox", "limit_words=2", "before_match=<%PASSAGE_ID%>",
                   "start_passage_id=5") == " ... <5>fox</b> fourteen ... "
    cur.execute(f"CALL SNIPPETS(('one two fox three', 'fox four fox'), '{corpus}', 'fox', "
                "'<%PASSAGE_ID%>' AS before_match, 3 AS start_passage_id, 2 AS limit_words)")
    # each document of CALL SNIPPETS counts from start_passage_id
    assert cur.fetchall() == ((" ... <3>fox</b> three",), ("<3>fox</b> four ... ",))
    # QUERY(): the MATCH text, as Manticore's SNIPPET(field, QUERY()) uses it
    cur.execute(f"SELECT id, QUERY(), SNIPPET(body, QUERY()) FROM {corpus} WHERE MATCH('fox | lazy') AND id = 1")
    assert cur.fetchall() == ((1, "fox | lazy", "the <b>fox</b> jumps over the <b>lazy</b> dog"),)
    cur.execute(f"SELECT QUERY() FROM {corpus} WHERE id = 1")
    assert cur.fetchall() == (("",),)
    expect_error(cur, f"SELECT QUERY(1) FROM {corpus} WHERE MATCH('fox')", 1064, r"query\(\) takes no arguments")
    for bad in ("limit_words=-1", "start_passage_id=x"):
        expect_error(cur, f"SELECT SNIPPET(body, 'fox', '{bad}') FROM {corpus} WHERE id = 1", 1064,
                     r"expected a number")


def test_highlight_exact_phrase(server, cur, uniq):
    """exact_phrase (Manticore's option): the words of an exact phrase are
    marked only where the phrase matches, in HIGHLIGHT(), SNIPPET() and
    CALL SNIPPETS; off (the default), each word wherever it is."""
    text = "apple one two banana then apple banana cherry and more apple"
    t = make_table(server, uniq(), "(title TEXT)", {1: (text,)})
    marked = "apple one two banana then <b>apple</b> <b>banana</b> cherry and more apple"
    cur.execute(f"SELECT HIGHLIGHT() FROM {t} WHERE MATCH('\"apple banana\"')")
    assert cur.fetchall() == ((text.replace("apple", "<b>apple</b>").replace("banana", "<b>banana</b>"),),)
    cur.execute(f"SELECT HIGHLIGHT({{exact_phrase=1}}) FROM {t} WHERE MATCH('\"apple banana\"')")
    assert cur.fetchall() == ((marked,),)
    # the word asked for alone too is marked everywhere
    cur.execute(f"SELECT HIGHLIGHT({{exact_phrase=1}}) FROM {t} WHERE MATCH('\"apple banana\" | cherry | more')")
    assert cur.fetchall() == ((marked.replace("cherry", "<b>cherry</b>").replace("more", "<b>more</b>"),),)
    cur.execute(f"SELECT HIGHLIGHT({{exact_phrase=1}}, 'title', 'apple \"apple banana\"') FROM {t}")
    assert cur.fetchall() == ((marked.replace("apple one", "<b>apple</b> one")
                               .replace("more apple", "more <b>apple</b>"),),)
    assert snippet(cur, t, text, '"apple banana"', "exact_phrase=1") == marked
    assert snippet(cur, t, text, '"apple banana"', "exact_phrase=0").count("<b>") == 5
    cur.execute(f"CALL SNIPPETS(%s, '{t}', '\"apple banana\"', 1 AS exact_phrase)", (text,))
    assert cur.fetchall() == ((marked,),)
    expect_error(cur, f"SELECT HIGHLIGHT({{exact_phrase='x'}}) FROM {t} WHERE MATCH('apple')", 1064,
                 r"exact_phrase")


def test_highlight_boundaries_zones_and_markup(server, cur, uniq):
    """Manticore's passage_boundary (snippet_boundary), emit_zones,
    html_strip_mode and limits_per_field, answered as Sphinx 2.2.11's
    CALL SNIPPETS answers them where it does (probed side by side)."""
    t = make_table(server, uniq(), "(title TEXT, body TEXT) html_strip='1' index_sp='1' index_zones='h*, p, b'",
                   {1: ("alpha beta gamma delta alpha",
                        "<h1>One two three five</h1><p>four five six <b>seven five</b> eight</p> nine ten")})
    sents = "One two three five. Four five six. Seven five eight. Nine ten eleven five."

    def snip(text, query, *opts):
        cur.execute(f"CALL SNIPPETS(%s, '{t}', %s" + "".join(f", {o}" for o in opts) + ")", (text, query))
        return cur.fetchall()[0][0]

    # a passage stays within its sentence, and ends after its terminator;
    # with a boundary set, a text with a match is always cut to passages
    assert snip(sents, "five", "'sentence' AS passage_boundary", "1 AS around") == \
        " ... three <b>five</b>. ... Four <b>five</b> six. ... Seven <b>five</b> eight. ... eleven <b>five</b>."
    assert snip(sents, "five", "'sentence' AS snippet_boundary", "3 AS around") == \
        "One two three <b>five</b>. ... Four <b>five</b> six. ... Seven <b>five</b> eight. ... Nine ten eleven <b>five</b>."
    assert snip("One two. Four five six seven eight. Nine ten.", "five", "'sentence' AS passage_boundary") == \
        " ... Four <b>five</b> six seven eight. ... "
    # nothing marked: the text as without a boundary
    assert snip(sents, "zebra", "'sentence' AS passage_boundary") == sents
    # paragraphs: html_strip's block tags end them, sentences do not
    assert snip("<p>One five. Two.</p><p>Three five four</p>", "five", "'paragraph' AS passage_boundary",
                "5 AS around") == "\n\nOne <b>five</b>. Two. ... Three <b>five</b> four\n\n"
    # with index_sp a ZONE: limit's words are found where the index has
    # them (sentences take positions of their own)
    assert snip("<p>One. Two five three. Six.</p><h1>four five</h1>", "ZONE:h1 five") == \
        "\n\nOne. Two five three. Six.\n\n\n\nfour <b>five</b>\n\n"
    # zones: a passage stays within a span; emit_zones names the innermost
    zoned = "<h1>One two three five</h1><p>four five six <b>seven five</b> eight</p> nine ten eleven five."
    assert snip(zoned, "five", "'zone' AS passage_boundary", "1 AS around") == \
        " ... three <b>five</b> ... four <b>five</b> six ... seven <b>five</b> ... eleven <b>five</b>."
    assert snip(zoned, "five", "'zone' AS passage_boundary", "1 AS emit_zones", "1 AS around", "10 AS limit") == \
        " ... <h1>three <b>five</b> ... "
    cur.execute(f"SELECT HIGHLIGHT({{passage_boundary='zone', emit_zones=1, around=1}}, 'body') FROM {t} "
                "WHERE MATCH('five')")
    assert cur.fetchall() == ((" ... <h1>three <b>five</b> ... <p>four <b>five</b> six ... <b>seven <b>five</b> ... ",),)
    # html_strip_mode: none shows (and reads) the markup; retain reads the
    # text stripped and shows it as stored, markup never marked
    html = "<h1>One two</h1><p>four <i>fi</i>ve six s&eacute;ven <img alt=\"five\" src=x> eight</p>"
    assert snip(html, "five | seven", "'none' AS html_strip_mode") == html.replace('"five"', '"<b>five</b>"')
    assert snip(html, "six", "'none' AS html_strip_mode") == html.replace("six", "<b>six</b>")
    assert snip(html, "five | seven", "'retain' AS html_strip_mode", "0 AS limit") == \
        "<h1>One two</h1><p>four <i><b>fi</b></i><b>ve</b> six <b>s&eacute;ven</b> <img alt=\"five\" src=x> eight</p>"
    assert snip(html, "five", "'strip' AS html_strip_mode") == "\n\nOne two\n\n\n\nfour <b>five</b> six s\u00e9ven  eight\n\n"
    cur.execute(f"SELECT SNIPPET(body, 'five', 'limit=0', 'html_strip_mode=retain') FROM {t} WHERE id = 1")
    assert cur.fetchall() == (("<h1>One two three <b>five</b></h1><p>four <b>five</b> six <b>seven <b>five</b></b> "
                               "eight</p> nine ten",),)
    # limits_per_field=0: the fields share the limits, their passages
    # ranked together (Manticore's); only the first passage chosen may cut
    # a word in two
    cur.execute(f"SELECT HIGHLIGHT({{limit=40, limits_per_field=0}}) FROM {t} WHERE MATCH('alpha | four')")
    assert cur.fetchall() == (("<b>alpha</b> beta gamma delta <b>alpha</b> |  ... <b>four</b> five ... ",),)
    cur.execute(f"SELECT HIGHLIGHT({{limit=30, limits_per_field=0}}) FROM {t} WHERE MATCH('alpha | four')")
    assert cur.fetchall() == (("<b>alpha</b> beta gamma delta <b>alpha</b>",),)
    cur.execute(f"SELECT HIGHLIGHT({{limit_words=7, limits_per_field=0}}) FROM {t} WHERE MATCH('alpha | four')")
    assert cur.fetchall() == (("<b>alpha</b> beta gamma delta <b>alpha</b> |  ... <b>four</b> five ... ",),)
    shared = make_table(server, uniq(), "(title TEXT, body TEXT, note TEXT)",
                        {1: ("alpha beta gamma", "x alpha omega y", "key"),
                         2: ("one two three", "four five six", "key")})
    cur.execute(f"SELECT id, HIGHLIGHT({{limit=16, limits_per_field=0}}, 'title,body') FROM {shared} "
                "WHERE MATCH('alpha | omega | @note key') ORDER BY id ASC")
    # the body's passage holds both words: it wins the limit over the title's
    assert cur.fetchall() == ((1, "x <b>alpha</b> <b>omega</b> y"), (2, "one two three"))
    cur.execute(f"SELECT HIGHLIGHT({{limit=31, limits_per_field=0, before_match='[%PASSAGE_ID%]', "
                f"after_match=''}}, 'title,body') FROM {shared} WHERE MATCH('alpha | omega') AND id = 1")
    assert cur.fetchall() == (("[1]alpha beta gamma | x [2]alpha [3]omega y",),)
    cur.execute(f"SELECT HIGHLIGHT({{limit=16, limits_per_field=1}}, 'title,body') FROM {shared} "
                "WHERE MATCH('alpha | omega') AND id = 1")
    assert cur.fetchall() == (("<b>alpha</b> beta gamma | x <b>alpha</b> <b>omega</b> y",),)
    cur.execute(f"SELECT HIGHLIGHT({{limit=30, limits_per_field=1}}) FROM {t} WHERE MATCH('alpha | four')")
    assert cur.fetchall() == (("<b>alpha</b> beta gamma delta <b>alpha</b> |  ... three five\n\n\n\n<b>four</b> "
                               "five six ... ",),)
    # snippet_separator: Manticore's name for chunk_separator
    cur.execute(f"SELECT HIGHLIGHT({{snippet_separator=' // ', limit=20}}, 'body') FROM {t} WHERE MATCH('eight')")
    assert cur.fetchall() == ((" // five <b>eight</b>\n\n nine // ",),)

    # each option that cannot be honoured is an error naming it
    plain = make_table(server, uniq(), "(body TEXT)", {1: ("one five",)})
    for sql, why in [
            (f"CALL SNIPPETS('x', '{plain}', 'five', 'sentence' AS passage_boundary)", r"index_sp='1'"),
            (f"CALL SNIPPETS('x', '{plain}', 'five', 'zone' AS passage_boundary)", r"index_zones"),
            (f"CALL SNIPPETS('x', '{t}', 'five', 1 AS emit_zones)", r"emit_zones needs passage_boundary='zone'"),
            (f"CALL SNIPPETS('x', '{t}', 'five', 'verse' AS passage_boundary)", r"expected 'sentence', 'paragraph' or 'zone'"),
            (f"CALL SNIPPETS('x', '{t}', 'five', 'keep' AS html_strip_mode)", r"expected 'index', 'none', 'strip' or 'retain'"),
            (f"CALL SNIPPETS('x', '{t}', 'five', 'retain' AS html_strip_mode)", r"limit, limit_words and limit_passages be 0"),
            (f"CALL SNIPPETS('x', '{t}', 'five', 'retain' AS html_strip_mode, 0 AS limit, 1 AS escape_html)",
             r"escape_html be 0"),
            (f"CALL SNIPPETS('x', '{t}', 'ZONE:h1 five', 'none' AS html_strip_mode)", r"ZONE: limits need them"),
            (f"SELECT HIGHLIGHT({{passage_boundary='sentence'}}) FROM {plain} WHERE MATCH('five')", r"index_sp"),
            (f"SELECT SNIPPET(body, 'five', 'html_strip_mode=retain') FROM {plain} WHERE id = 1", r"retain"),
            (f"SELECT HIGHLIGHT({{passage_boundary=1}}) FROM {plain} WHERE MATCH('five')", r"expected 'sentence'"),
            (f"CALL SNIPPETS('x', '{t}', 'five', 'sentence' AS passage_boundary, 0 AS around)",
             r"needs around above 0"),
    ]:
        expect_error(cur, sql, 1064, why)


def test_phrase_boundary(server, cur, uniq):
    """Manticore's phrase_boundary and phrase_boundary_step: a boundary
    character followed by a separator spreads the positions of the words
    after it, so proximity stays within a phrase; HIGHLIGHT's
    use_boundaries cuts passages there. Answers as Sphinx 2.2.11 gives
    them for the same table and queries (probed side by side)."""
    t = make_table(server, uniq(), "(body TEXT) phrase_boundary='U+2C, ?' phrase_boundary_step='100'",
                   {1: ("one two three, four five",), 2: ("one two three four five",),
                    3: ("S.T.A.L.K.E.R game, x,y z",)})

    def ids(query):
        cur.execute(f"SELECT id FROM {t} WHERE MATCH(%s) ORDER BY id ASC", (query,))
        return [r[0] for r in cur.fetchall()]

    assert ids('"three four"') == [2]
    assert ids('"three, four"') == [2]          # queries are read without boundaries
    assert ids('"three four"~99') == [2]
    assert ids('"three four"~101') == [1, 2]
    assert ids('"game x"') == []
    assert ids('"x y"') == [3]                  # ',' before a letter is no boundary
    assert ids('"r game"') == [3]               # nor '.' (not listed)
    # the steps are not words: the field's length (dl) leaves them out
    cur.execute(f"SELECT EXPLAIN_SCORE() FROM {t} WHERE MATCH('one') AND id = 1")
    assert '"dl":5' in cur.fetchone()[0]
    cur.execute(f"SHOW CREATE TABLE {t}")
    ddl = cur.fetchone()[1]
    assert "phrase_boundary='U+2C, ?'" in ddl and "phrase_boundary_step='100'" in ddl
    # ALTER reads every row again with the new step
    cur.execute(f"ALTER TABLE {t} phrase_boundary_step='10'")
    assert ids('"three four"~11') == [1, 2]
    assert ids('"three four"~10') == [2]

    def snip(text, query, *opts):
        cur.execute(f"CALL SNIPPETS(%s, '{t}', %s" + "".join(f", {o}" for o in opts) + ")", (text, query))
        return cur.fetchall()[0][0]

    text = "One two three, four five six seven eight, nine ten eleven."
    assert snip(text, "five", "1 AS use_boundaries", "20 AS limit") == " ... four <b>five</b> six seven ... "
    assert snip(text, "five", "1 AS use_boundaries", "5 AS around", "30 AS limit") == \
        " ... four <b>five</b> six seven eight, ... "
    assert snip(text, "five", "0 AS use_boundaries", "5 AS around", "30 AS limit") == \
        " ... two three, four <b>five</b> six seven ... "
    # within the limits the text is still shown whole
    assert snip(text, "five", "1 AS use_boundaries", "1 AS around") == text.replace("five", "<b>five</b>")
    assert snip("One two three, four five, six seven eight, nine ten eleven.", "five | nine",
                "1 AS use_boundaries", "5 AS around", "30 AS limit") == " ... four <b>five</b>, ... <b>nine</b> ten eleven."

    plain = make_table(server, uniq(), "(body TEXT)", {1: ("one",)})
    both = make_table(server, uniq(), "(body TEXT) index_sp='1' phrase_boundary='U+2C'", {})
    for sql, why in [
            (f"CALL SNIPPETS('x', '{both}', 'one', 1 AS use_boundaries, 'sentence' AS passage_boundary)",
             r"cannot be combined"),
            (f"CREATE TABLE {uniq()} (body TEXT) phrase_boundary='a'", r"U\+0061 is a character of words"),
            (f"CREATE TABLE {uniq()} (body TEXT) phrase_boundary='&' blend_chars='&'", r"blend character"),
            (f"CREATE TABLE {uniq()} (body TEXT) phrase_boundary='U+2D' charset_table='non_cjk, U+2D'",
             r"character of words \(charset_table\)"),
            (f"CREATE TABLE {uniq()} (body TEXT) phrase_boundary='U+2C..'", r"expected a character"),
            (f"CREATE TABLE {uniq()} (body TEXT) phrase_boundary_step='1001'", r"from 0 to 1000"),
            (f"CALL SNIPPETS('x', '{plain}', 'one', 1 AS use_boundaries)", r"use_boundaries needs a table with phrase_boundary"),
    ]:
        expect_error(cur, sql, 1064, why)


def test_highlight_errors(cur, corpus):
    expect_error(cur, f"SELECT HIGHLIGHT({{bogus=1}}) FROM {corpus} WHERE MATCH('fox')", 1064,
                 r"unknown highlighting option 'bogus'")
    expect_error(cur, f"SELECT HIGHLIGHT({{}}, 'nope') FROM {corpus} WHERE MATCH('fox')", 1064, r"'nope'")
    expect_error(cur, f"SELECT HIGHLIGHT() FROM {corpus} WHERE id = 1", 1064, r"MATCH")
    expect_error(cur, f"SELECT SNIPPET(body, 'fox', 'bogus=1') FROM {corpus} WHERE id = 1", 1064,
                 r"unknown highlighting option 'bogus'")


LONG = ("one two three four five six seven eight nine ten eleven twelve thirteen fox "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone twentytwo "
        "twentythree twentyfour twentyfive twentysix twentyseven twentyeight fox end")


def snippet(cur, table, text, query, *opts):
    args = ", ".join(["%s"] * (2 + len(opts)))
    cur.execute(f"SELECT SNIPPET({args}) FROM {table} WHERE id = 1", (text, query) + opts)
    return cur.fetchone()[0]


def test_snippet_passages_and_options(cur, corpus):
    # short text: whole, marked
    assert snippet(cur, corpus, "the quick brown fox", "fox") == "the quick brown <b>fox</b>"
    assert snippet(cur, corpus, "the quick brown fox", "fox", "before_match=<i>",
                   "after_match=</i>") == "the quick brown <i>fox</i>"
    assert snippet(cur, corpus, LONG, "fox", "limit=0") == LONG.replace("fox", "<b>fox</b>")
    # long text: passages of `around` words, joined by chunk_separator
    got = snippet(cur, corpus, LONG, "fox", "limit=60", "around=1")
    assert got == " ... thirteen <b>fox</b> fourteen ... twentyeight <b>fox</b> end", got
    got = snippet(cur, corpus, LONG, "fox", "limit=60", "around=1", "chunk_separator= ~ ")
    assert got == " ~ thirteen <b>fox</b> fourteen ~ twentyeight <b>fox</b> end", got
    got = snippet(cur, corpus, LONG, "fox", "limit=60", "around=1", "limit_passages=1")
    assert got.count("<b>fox</b>") == 1 and got.startswith(" ... "), got
    got = snippet(cur, corpus, LONG, "fox", "limit=30")
    assert "<b>fox</b>" in got and len(got.replace("<b>", "").replace("</b>", "")) <= 30 + 2 * 5, got
    # nothing matches: the start of the text, or "" with allow_empty
    assert snippet(cur, corpus, "abc def", "zzz") == "abc def"
    assert snippet(cur, corpus, "abc def", "zzz", "allow_empty=1") == ""
    assert snippet(cur, corpus, "a <b> & fox", "fox", "escape_html=1") == "a &lt;b&gt; &amp; <b>fox</b>"
    # SNIPPET over a column, with the MATCH query unrelated
    cur.execute(f"SELECT id, SNIPPET(body, 'dog') FROM {corpus} WHERE MATCH('lazy') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "the fox jumps over the lazy <b>dog</b>"), (2, "the <b>dog</b> sleeps all day"))


# ---------------------------------------------------------------------------
# The index follows the writes


@pytest.fixture
def wtable(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT, n INT)")
    cur.execute(f"INSERT INTO {t} VALUES (1, 'apple pie', 1), (2, 'banana split', 2), (3, 'apple tart', 3)")
    return t


def test_index_follows_insert_replace_delete(cur, wtable):
    t = wtable
    assert sorted(match_ids(cur, t, "apple")) == [1, 3]
    cur.execute(f"INSERT INTO {t} VALUES (4, 'Apple crumble', 4), (5, 'cherry pie', 5)")
    assert sorted(match_ids(cur, t, "apple")) == [1, 3, 4]
    assert sorted(match_ids(cur, t, "pie")) == [1, 5]
    # REPLACE: the old text no longer matches, the new one does
    assert cur.execute(f"REPLACE INTO {t} VALUES (1, 'cherry cake', 10)") == 1
    assert sorted(match_ids(cur, t, "apple")) == [3, 4]
    assert sorted(match_ids(cur, t, "pie")) == [5]
    assert sorted(match_ids(cur, t, "cherry")) == [1, 5]
    assert rows(cur, f"SELECT id, n, body FROM {t} WHERE MATCH('cake')") == [(1, 10, "cherry cake")]
    # DELETE, by id and by a best-first (maxscore) query afterwards
    assert cur.execute(f"DELETE FROM {t} WHERE id = 3") == 1
    assert match_ids(cur, t, "apple | tart") == [4]
    assert 3 not in match_ids(cur, t, "apple | tart | cherry")
    assert rows(cur, f"SELECT COUNT(*) FROM {t} WHERE MATCH('apple | tart')") == [(1,)]
    # an id reused after DELETE carries only its new text
    cur.execute(f"INSERT INTO {t} VALUES (3, 'plum', 3)")
    assert match_ids(cur, t, "tart") == [] and match_ids(cur, t, "plum") == [3]


def test_index_follows_update_and_writes_by_match(cur, wtable):
    t = wtable
    before = match_weights(cur, t, "apple")
    assert cur.execute(f"UPDATE {t} SET n = 99 WHERE id = 1") == 1
    assert match_weights(cur, t, "apple") == before               # text and weights unchanged
    assert sorted(match_ids(cur, t, "apple")) == [1, 3]
    # UPDATE / DELETE ... WHERE MATCH(...)
    assert cur.execute(f"UPDATE {t} SET n = 7 WHERE MATCH('apple') AND n < 50") == 1
    assert rows(cur, f"SELECT id, n FROM {t} ORDER BY id ASC") == [(1, 99), (2, 2), (3, 7)]
    assert cur.execute(f"UPDATE {t} SET n = 0 WHERE MATCH('apple')") == 2
    assert cur.execute(f"DELETE FROM {t} WHERE MATCH('banana | nothing')") == 1
    assert rows(cur, f"SELECT id FROM {t} ORDER BY id ASC") == [(1,), (3,)]
    assert cur.execute(f"DELETE FROM {t} WHERE MATCH('zzz')") == 0
    expect_error(cur, f"DELETE FROM {t} WHERE MATCH('apple') OR n = 1", 1064, r"MATCH")
    assert cur.execute(f"DELETE FROM {t} WHERE MATCH('\"apple tart\"')") == 1
    assert match_ids(cur, t, "apple") == [1]


def test_index_follows_truncate(cur, wtable):
    t = wtable
    cur.execute(f"TRUNCATE TABLE {t}")
    assert match_ids(cur, t, "apple") == [] and match_ids(cur, t, "") == []
    assert rows(cur, f"SELECT COUNT(*) FROM {t} WHERE MATCH('')") == [(0,)]
    cur.execute(f"INSERT INTO {t} VALUES (1, 'pear pie', 1)")
    assert match_ids(cur, t, "pie") == [1]
    assert match_ids(cur, t, "apple") == []


def test_transaction_then_match(connect, cur, wtable):
    t = wtable
    other = connect().cursor()
    cur.execute("BEGIN")
    cur.execute(f"INSERT INTO {t} VALUES (10, 'grape juice', 10), (11, 'apple juice', 11)")
    # invisible until COMMIT, to this session too
    assert match_ids(cur, t, "juice") == [] and match_ids(other, t, "juice") == []
    cur.execute("COMMIT")
    assert sorted(match_ids(cur, t, "juice")) == [10, 11]
    assert sorted(match_ids(other, t, "apple")) == [1, 3, 11]
    cur.execute("BEGIN")
    cur.execute(f"INSERT INTO {t} VALUES (12, 'lemon juice', 12)")
    cur.execute("ROLLBACK")
    assert match_ids(cur, t, "lemon") == []
    assert sorted(match_ids(other, t, "juice")) == [10, 11]


# ---------------------------------------------------------------------------
# Errors


def test_match_placement_errors(cur, corpus, uniq):
    for where in ("MATCH('fox') OR cat = 1", "cat = 1 OR MATCH('fox')", "NOT MATCH('fox')",
                  "MATCH('fox') AND MATCH('dog')", "(cat = 1 OR cat = 2) AND (MATCH('fox') OR id = 1)"):
        expect_error(cur, f"SELECT id FROM {corpus} WHERE {where}", 1064, r"MATCH")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE WEIGHT() > 1", 1064, r"(?i)weight")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('fox') AND WEIGHT() > 1", 1064, r"(?i)weight")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH(5)", 1064, r"MATCH")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('fox', 'dog')", 1064, r"MATCH")
    nt = uniq()
    cur.execute(f"CREATE TABLE {nt} (n INT, tag STRING)")
    expect_error(cur, f"SELECT id FROM {nt} WHERE MATCH('x')", 1064, rf"MATCH.*'{nt}'.*(TEXT|full-text)")
    st = uniq()
    cur.execute(f"CREATE TABLE {st} (body TEXT stored)")
    expect_error(cur, f"SELECT id FROM {st} WHERE MATCH('x')", 1064, rf"'{st}'")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('@nope fox')", 1064, r"unknown field 'nope'")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('@cat fox')", 1064, r"unknown field 'cat'")
    expect_error(cur, f"SELECT id FROM {corpus} WHERE MATCH('fox') OPTION field_weights=(nope=1)", 1064,
                 r"'nope' is not a full-text field of table 'fts_corpus'")
    # the session still works
    assert sorted(match_ids(cur, corpus, "fox")) == [1, 4, 6]


# ---------------------------------------------------------------------------
# Other clients


def test_mariadb_client(mariadb, corpus):
    r = mariadb(f"SELECT id, HIGHLIGHT() FROM {corpus} WHERE MATCH('fox') AND id IN (1, 4) ORDER BY id ASC; "
                "SHOW META LIKE 'strategy'", "--batch")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    first, second = out.split("Variable_name")
    header, data = parse_batch(first.encode())
    assert header == ["id", "HIGHLIGHT()"]
    assert data == [["1", "quick brown <b>fox</b> | the <b>fox</b> jumps over the lazy dog"],
                    ["4", "red <b>fox</b> | foxes are red and quick"]]
    assert "strategy\tbool_fallback" in second
    r = mariadb(f"SELECT id FROM {corpus} WHERE MATCH('fox |')", "--batch")
    assert r.returncode != 0
    assert b"ERROR 1064" in r.stderr and b"MATCH: unexpected end of query at offset 5" in r.stderr


def test_http_sql(http, cur, corpus):
    stmt = f"SELECT id, WEIGHT() FROM {corpus} WHERE MATCH('quick | fox') LIMIT 3"
    status, _, raw = http("/sql", stmt.encode(), content_type="text/plain")
    assert status == 200
    doc = json.loads(raw)
    want = REF.weights([term("quick"), term("fox")])
    assert [d["id"] for d in doc[0]["data"]] == ranked(want)[:3]
    for d in doc[0]["data"]:
        assert d["WEIGHT()"] == pytest.approx(want[d["id"]], rel=1e-5)
    body = urllib.parse.urlencode({"query": f"SELECT id FROM {corpus} WHERE MATCH('(fox')"}).encode()
    status, _, raw = http("/sql", body, content_type="application/x-www-form-urlencoded")
    assert status == 400
    err = json.loads(raw)
    assert err["code"] == 1064 and "offset 4" in err["error"], err


# ---------------------------------------------------------------------------
# A larger randomized check against the reference


def same_ranking(got, want, score):
    """got equals want, except that documents whose reference scores are
    equal up to rounding (sums of the same terms in another order differ in
    the last bit) may come in either order."""
    if got == want:
        return True
    return (len(got) == len(want) and len(set(got)) == len(got) and
            all(g in score and math.isclose(score[g], score[w], rel_tol=1e-9) for g, w in zip(got, want)))


# Extra queries (beyond the 100 with default parameters): options that
# change the per-clause score bounds maxscore prunes with, the other ranker,
# and LIMIT offsets.
RANDOM_VARIANTS = [
    ("OPTION field_weights=(title=3, body=0.5)", {"fw": {0: 3.0, 1: 0.5}}),
    ("OPTION field_weights=(title=0.2, body=4)", {"fw": {0: 0.2, 1: 4.0}}),
    ("OPTION k1=2, b=0.3", {"k1": 2.0, "b": 0.3}),
    ("OPTION b=1", {"b": 1.0}),
    ("OPTION k1=0.5, b=0", {"k1": 0.5, "b": 0.0}),
    ("OPTION ranker=bm25", {"ranker": "bm25"}),
    ("OPTION ranker=bm25, field_weights=(title=3), k1=2", {"ranker": "bm25", "fw": {0: 3.0}, "k1": 2.0}),
]


def test_random_bag_of_words_against_reference(cur, uniq):
    rng = random.Random(20261201)
    vocab = set()
    while len(vocab) < 60:
        vocab.add("".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou")
                          for _ in range(rng.randint(2, 3))))
    vocab = sorted(vocab)
    zipf = [1.0 / (r + 1) for r in range(len(vocab))]
    n = 2000
    texts, grp = {}, {}
    for i in range(1, n + 1):
        texts[i] = (" ".join(rng.choices(vocab, zipf, k=rng.randint(1, 6))),
                    " ".join(rng.choices(vocab, zipf, k=rng.randint(3, 40))))
        grp[i] = rng.randint(0, 3)
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT, grp INT)")
    for start in range(1, n + 1, 250):
        cur.execute(f"INSERT INTO {t} (id, title, body, grp) VALUES " + ", ".join(
            f"({i}, '{texts[i][0]}', '{texts[i][1]}', {grp[i]})" for i in range(start, start + 250)))
    ref = Reference(texts)

    problems, ties, pruned = [], 0, 0
    for k in range(100):
        words = rng.sample(vocab, rng.randint(1, 5))
        text = " | ".join(words)
        filtered = k % 4 == 3              # every fourth query also filters on an attribute
        where = "MATCH(%s)" + (" AND grp = 1" if filtered else "")
        shown = where.replace("%s", repr(text))
        score = ref.weights([term(w) for w in words], accept=(lambda i: grp[i] == 1) if filtered else None)
        order = ranked(score)
        want = order[:10]
        ties += any(score[a] == score[b] for a, b in zip(order, order[1:11]))
        cur.execute(f"SELECT id, WEIGHT() FROM {t} WHERE {where} ORDER BY WEIGHT() DESC, id ASC LIMIT 10",
                    (text,))
        got = cur.fetchall()
        if not same_ranking([i for i, _ in got], want, score):
            problems.append(f"{shown} ORDER BY: got {[i for i, _ in got]}, want {want}")
        for i, w in got:
            if i in score and w != pytest.approx(score[i], rel=1e-5):
                problems.append(f"{shown}: WEIGHT() of {i} is {w}, reference {score[i]}")
        # best first without ORDER BY (the maxscore path)
        cur.execute(f"SELECT id FROM {t} WHERE {where} LIMIT 10", (text,))
        got = [r[0] for r in cur.fetchall()]
        if not same_ranking(got, want, score):
            problems.append(f"{shown} best-first: got {got}, want {want}")
        pruned += int(meta(cur)["candidates"]) < len(score)
        cur.execute(f"SELECT COUNT(*) FROM {t} WHERE {where}", (text,))
        cnt = cur.fetchone()[0]
        if cnt != len(score):
            problems.append(f"{shown}: COUNT(*) {cnt}, reference {len(score)}")
    for k in range(35):
        words = rng.sample(vocab, rng.randint(1, 8))
        text = " | ".join(words)
        opts, kw = RANDOM_VARIANTS[k % len(RANDOM_VARIANTS)]
        offset, count = rng.choice([0, 3, 12]), rng.choice([1, 10, 40])
        score = ref.weights([term(w) for w in words], **kw)
        want = ranked(score)[offset:offset + count]
        cur.execute(f"SELECT id FROM {t} WHERE MATCH(%s) LIMIT {offset}, {count} {opts}", (text,))
        got = [r[0] for r in cur.fetchall()]
        if not same_ranking(got, want, score):
            problems.append(f"MATCH({text!r}) LIMIT {offset}, {count} {opts}: got {got}, want {want}")
    assert not problems, "\n".join(problems[:20])
    # The check means something: ties occurred, and maxscore skipped documents.
    assert ties >= 5 and pruned >= 20, (ties, pruned)


# ---------------------------------------------------------------------------
# Last in the file because it crashes a sanitizer build of the server, which
# then restarts empty, without this module's tables: for a field in which the
# query has no whole term (a prefix only, or terms scoped to other fields)
# highlight.c's term_find calls bsearch(key, NULL, 0, ...) (UBSan: "null
# pointer passed as argument 2"). It passes on a release build.


def test_highlight_field_scope_and_prefix(cur, corpus):
    """Only what the query matches in a field is marked there: with
    '@title fox' the body's "fox" stays plain; a prefix marks each word it
    expands to."""
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {corpus} WHERE MATCH('@title fox') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "quick brown <b>fox</b> | the fox jumps over the lazy dog"),
                              (4, "red <b>fox</b> | foxes are red and quick"))
    cur.execute(f"SELECT HIGHLIGHT() FROM {corpus} WHERE MATCH('quick*') AND id = 7")
    assert cur.fetchall() == (("<b>quickly</b> done | done <b>quickly</b> by a <b>quick</b> worker",),)


def test_html_index_attrs(server, cur, uniq):
    """html_index_attrs='img=alt,title; a=title' (with html_strip) indexes
    those attributes' values as words of their own; others stay out."""
    page = ('<p>See <a href="http://example.com/secret" title="Home &amp; garden">our'
            '</a><img src="logo.png" alt="Company logo" title="Big">site</p>')
    t = make_table(server, uniq(), "(body TEXT) html_strip='1' html_index_attrs='img=alt,title; a=title'",
                   {1: (page,), 2: ("<img alt=cat>dog",)})
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for text, want in [("garden", [1]), ("company logo", [1]), ("big", [1]), ("oursite", []),
                           ("our site", [1]), ("secret | png | example", []), ("cat", [2]),
                           ("dog", [2]), ("catdog", []), ('"home garden our"', [1])]:
            assert sorted(match_ids(cur, t, text)) == want, (step, text)
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "html_index_attrs='img=alt,title; a=title'" in cur.fetchone()[1]
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) html_strip='1' html_index_attrs='img'", 1064,
                 r"html_index_attrs: 'img' is not element=attribute\[,attribute\]")


def test_min_word_len(server, cur, uniq):
    """min_word_len='3' (Manticore's option): shorter words are neither
    indexed nor searched, as stop words; their positions still count."""
    t = make_table(server, uniq(), "(body TEXT) min_word_len='3'",
                   {1: ("an ox ran far",), 2: ("the ox is big",), 3: ("ran to sea",)})
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for text, want in [("ran", [1, 3]), ("ox ran", [1, 3]), ("the", [2]), ("far | sea", [1, 3]),
                           ('"ran far"', [1]), ('"ox ran"', [1, 3]), ('"ran sea"', []), ("ox", [])]:
            assert sorted(match_ids(cur, t, text)) == want, (step, text)
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "min_word_len='3'" in cur.fetchone()[1]
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) min_word_len='65'", 1064, r"min_word_len")


def test_stopword_and_overshort_step(cur, uniq):
    """stopword_step='0' and overshort_step='0' (Manticore's options): a
    dropped stop word, or a word under min_word_len, takes no position, in
    documents and queries alike, so a phrase matches across it; with the
    default 1 it does not. HIGHLIGHT() marks the phrase across the word;
    SHOW CREATE TABLE keeps the options; a bad value is refused."""
    docs = "(1, 'in the office'), (2, 'in office'), (3, 'in a big office'), (4, 'office in x the town')"
    tables = {}
    for opts in ("", "stopword_step='0'", "overshort_step='0'", "stopword_step='0' overshort_step='0'"):
        t = uniq()
        cur.execute(f"CREATE TABLE {t} (body TEXT) stopwords_list='the' min_word_len='2' {opts}")
        cur.execute(f"INSERT INTO {t} VALUES {docs}")
        tables[opts] = t
    cases = {
        "": [('"in office"', [2]), ('"in the office"', [1]), ('"office in town"', []),
             ('"in big office"', []), ('"in a big office"', [3]), ('"in x town"', []),
             ('"in x the town"', [4])],
        "stopword_step='0'": [('"in office"', [1, 2]), ('"in the office"', [1, 2]),
                              ('"in x town"', [4]), ('"in big office"', []), ('"office in town"', [])],
        "overshort_step='0'": [('"in office"', [2]), ('"in big office"', [3]),
                               ('"in a big office"', [3]), ('"in town"', []), ('"in the town"', [4])],
        "stopword_step='0' overshort_step='0'": [('"in office"', [1, 2]), ('"in big office"', [3]),
                                                 ('"office in town"', [4]), ('"in x the town"', [4])],
    }
    for opts, want in cases.items():
        assert_ids_ram_and_flushed(cur, tables[opts], want)
        cur.execute(f"SHOW CREATE TABLE {tables[opts]}")
        ddl = cur.fetchone()[1]
        for o in opts.split():
            assert o in ddl, (o, ddl)
    # exact_phrase marks a phrase's words only where the phrase matches:
    # across the stop word with step 0, not with the default
    for opts, want in (("stopword_step='0'", ((1, "<b>in</b> the <b>office</b>"), (2, "<b>in</b> <b>office</b>"))),
                       ("", ((1, "in the office"), (2, "<b>in</b> <b>office</b>")))):
        cur.execute(f"SELECT id, HIGHLIGHT({{exact_phrase=1}}) FROM {tables[opts]} "
                    f"WHERE MATCH('\"in office\"') ORDER BY id ASC")
        assert cur.fetchall() == tuple(r for r in want if "<b>" in r[1]), opts
        # HIGHLIGHT with a query of its own, on rows MATCH did not pick
        cur.execute(f"SELECT id, HIGHLIGHT({{exact_phrase=1}}, 'body', '\"in office\"') FROM {tables[opts]} "
                    f"WHERE id IN (1, 2) ORDER BY id ASC")
        assert cur.fetchall() == want, opts
    for bad in ("stopword_step='2'", "overshort_step='-1'", "stopword_step='yes'"):
        expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) {bad}", 1064,
                     r"option '(stopword|overshort)_step' expects an integer from 0 to 1")


def test_stopwords_unstemmed(cur, uniq):
    """stopwords_unstemmed='0' (Manticore's default; loupe's default is 1,
    the stop words as written, as tables before the option were built):
    the stop words are stemmed and a word is dropped where its stem is one
    of them, in documents and queries; HIGHLIGHT's prefixes know it; ALTER
    switches it and indexes the rows again."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT) morphology='stem_en' stopwords='en' stopwords_unstemmed='0' "
                f"min_prefix_len='2'")
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "stopwords_unstemmed='0'" in cur.fetchone()[1]
    cur.execute(f"INSERT INTO {t} VALUES (1, 'the others ran'), (2, 'other havens'), (3, 'haves and have-nots')")
    assert_ids_ram_and_flushed(cur, t, [
        ("others", []), ("other", []), ("haves", []), ("ran", [1]), ("havens", [2]), ("nots", []),
        ('"others ran"', [1]), ('"ran others"', [1]),
    ])
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {t} WHERE MATCH('hav*') ORDER BY id ASC")
    assert cur.fetchall() == ((2, "other <b>havens</b>"),)
    cur.execute(f"ALTER TABLE {t} stopwords_unstemmed='1'")
    assert_ids_ram_and_flushed(cur, t, [("others", [1]), ("other", []), ("haves", [3]), ("havens", [2])])
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) stopwords_unstemmed='2'", 1064,
                 r"option 'stopwords_unstemmed' expects an integer from 0 to 1")


def test_wildcards_with_min_infix_len(server, cur, uniq):
    """min_infix_len='2' (Manticore's option) lets '*' stand before and
    inside a word: '*cat*', '*ing', 'ab*cd'. Each '*' is any run of
    characters (none too); the matches are those of the table's terms that
    fit, checked here against Python's fnmatch over every word, in the RAM
    segment and in a sealed one. A stemmed table with min_infix_len indexes
    each word's exact form too (as Manticore forces index_exact_words), and
    its patterns match the words as written: the same check holds."""
    import fnmatch
    import random
    rng = random.Random(7)
    syll = ["ca", "t", "do", "g", "bo", "b", "an", "ing", "re", "la", "x", "ion"]
    vocab = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(1, 4))) for _ in range(300)})
    docs = {i: (" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 3))),
                " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12)))) for i in range(1, 401)}
    patterns = ["*cat*", "*ing", "ca*", "*ion*", "do*g", "*an*ing", "re*la*", "*bo*b*", "*ing*ca*",
                "*xx*", "ca*t*do", "*ta*", "la*ion", "bob*", "ing*"]
    plain = make_table(server, uniq(), "(title TEXT, body TEXT) min_infix_len='2'", docs)
    stemmed = make_table(server, uniq(), "(title TEXT, body TEXT) min_infix_len='2' morphology='stem_en'", docs)
    for t in (plain, stemmed):
        for step in ("ram", "flush"):
            if step == "flush":
                cur.execute(f"FLUSH TABLE {t}")
            for p in patterns:
                want = sorted(i for i, (a, b) in docs.items()
                              if any(fnmatch.fnmatchcase(w, p) for w in (a + " " + b).split()))
                got = sorted(match_ids(cur, t, p))
                assert got == want, (t, step, p)
                want_title = sorted(i for i, (a, b) in docs.items() if any(fnmatch.fnmatchcase(w, p) for w in a.split()))
                assert sorted(match_ids(cur, t, "@title " + p)) == want_title, (step, p)
            # combined with other operators, and negated
            want = sorted(i for i, (a, b) in docs.items()
                          if any(fnmatch.fnmatchcase(w, "*ing") for w in (a + " " + b).split())
                          and not any(fnmatch.fnmatchcase(w, "ca*") for w in (a + " " + b).split()))
            assert sorted(match_ids(cur, t, "*ing -ca*")) == want, step
    # the words a wildcard found are highlighted; SHOW META counts them
    u = make_table(server, uniq(), "(body TEXT) min_infix_len='3' morphology='stem_en'",
                   {1: ("the cat sat",), 2: ("Concatenate strings",), 3: ("bobcats everywhere",),
                    4: ("dogs only",)})
    assert sorted(match_ids(cur, u, "*CAT*")) == [1, 2, 3]
    # stemmed, but min_infix_len indexes exact forms: a pattern matches the
    # words as written ("bobcats" does not end in "cat")
    assert sorted(match_ids(cur, u, "*cat")) == [1]
    assert sorted(match_ids(cur, u, "*cats")) == [3]
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {u} WHERE MATCH('*cat*') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "the <b>cat</b> sat"), (2, "<b>Concatenate</b> strings"),
                              (3, "<b>bobcats</b> everywhere"))
    m = meta(cur)
    assert m["keyword[0]"] == "*cat*" and m["docs[0]"] == "3", m
    assert m["prefix_expansions"] == "3", m
    cur.execute(f"EXPLAIN SELECT id FROM {u} WHERE MATCH('*cat*')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert 'wildcard "=bobcats"' in plan and 'wildcard "=cat"' in plan, plan
    cur.execute(f"SELECT EXPLAIN_SCORE() FROM {u} WHERE MATCH('*cat*') AND id = 3 "
                f"OPTION query_type_weights=(prefix=2)")
    score = json.loads(cur.fetchone()[0])
    assert score["matches"][0]["type"] == "wildcard" and score["matches"][0]["type_weight"] == 2, score
    cur.execute(f"SELECT id FROM {u} WHERE MATCH('*cat*') OPTION expansion_limit=2")
    assert len(cur.fetchall()) == 2
    assert meta(cur).get("prefix_expansion_capped", "").startswith("yes")
    cur.execute(f"SHOW CREATE TABLE {u}")
    assert "min_infix_len='3'" in cur.fetchone()[1]
    # errors: no min_infix_len, parts too short, a part of two words
    v = make_table(server, uniq(), "(body TEXT)", {1: ("cat",)})
    expect_error(cur, f"SELECT id FROM {v} WHERE MATCH('dog | *at')", 1064,
                 r"wildcard '\*at' at offset 6: a '\*' before or inside a word \(infix search\) "
                 r"needs the table option min_infix_len")
    expect_error(cur, f"SELECT id FROM {u} WHERE MATCH('*ca*')", 1064,
                 r"wildcard '\*ca\*' at offset 0: its longest part without a wildcard is shorter than "
                 r"min_infix_len=3")
    # a pattern of two words is split into them (as Manticore's tokenizer
    # does); in a chain it stays one, and is refused
    assert sorted(match_ids(cur, u, "*cat-dog*")) == sorted(match_ids(cur, u, "*cat dog*"))
    expect_error(cur, f"SELECT id FROM {u} WHERE MATCH('dog NEAR/3 *cat-dog*')", 1064,
                 r"each part between wildcards \('\*', '\?', '%'\) must be one word")
    # an anchored wildcard: that word first in a field (as Sphinx reads it)
    assert sorted(match_ids(cur, u, "^*cat")) == sorted(match_ids(cur, u, '"^*cat"'))
    # a phrase of one wildcard word is the wildcard
    assert sorted(match_ids(cur, u, '"*cat*"')) == sorted(match_ids(cur, u, "*cat*"))
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) min_infix_len='65'", 1064, r"min_infix_len")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) min_infix_len='x'", 1064, r"min_infix_len")


def test_expansions_of_many_terms_run_term_at_a_time(server, cur, uniq):
    """A prefix or a wildcard that expands to 64 terms or more runs term at
    a time (strategy taat, docs/sql.md "Top-k"): its top k is the best of
    every match's weight (ties by id), its total_found is exact, a filter
    and LIMIT/OFFSET apply, in the RAM segment and after FLUSH (where a
    wildcard also reads only the dictionary blocks its parts allow); a
    few words with the same prefix stay on maxscore."""
    rng = random.Random(5)
    vocab = ["pre%03dfix" % i for i in range(150)] + ["other%d" % i for i in range(20)]
    docs = {i: (" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 6))), i % 7)
            for i in range(1, 1201)}
    t = make_table(server, uniq(), "(body TEXT, g INT) min_infix_len='3'", docs)
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for p, where in (("pre*", ""), ("*fix", ""), ("*e0*fix", ""), ("pre*", " AND g = 3"),
                         ("*0*fix", " AND g < 5")):
            cur.execute(f"SELECT id, WEIGHT() FROM {t} WHERE MATCH('{p}'){where} ORDER BY id ASC LIMIT 100000")
            every = cur.fetchall()
            assert len(every) > 50, (step, p)
            best = sorted(every, key=lambda r: (-r[1], r[0]))
            cur.execute(f"SELECT id, WEIGHT() FROM {t} WHERE MATCH('{p}'){where} LIMIT 20")
            got = cur.fetchall()
            m = meta(cur)
            assert m["strategy"] == "taat", (step, p, m)
            assert m["total_found"] == str(len(every)) and m["total_relation"] == "eq", (step, p, m)
            assert [r[0] for r in got] == [r[0] for r in best[:20]], (step, p)
            assert all(abs(a[1] - b[1]) <= 1e-4 * abs(b[1]) for a, b in zip(got, best)), (step, p)
            cur.execute(f"SELECT id FROM {t} WHERE MATCH('{p}'){where} LIMIT 10, 5")
            assert [r[0] for r in cur.fetchall()] == [r[0] for r in best[10:15]], (step, p)
        cur.execute(f"SELECT id FROM {t} WHERE MATCH('other1*') LIMIT 5")
        cur.fetchall()
        assert meta(cur)["strategy"] == "maxscore", step
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('pre*')")
    assert "strategy=taat" in "\n".join(r[0] for r in cur.fetchall())


def test_infix_filter_stored_in_segments(tmp_path):
    """A table with min_infix_len stores each sealed segment's infix filter
    in the segment file (loupe-inspect fts-info lists it; a table without
    the option stores none), from a flush and from a merge, and its
    wildcards find the same rows before and after a restart."""
    import fnmatch
    import glob
    import os
    import subprocess
    from helpers import LOUPE_BIN
    inspect = os.path.join(os.path.dirname(LOUPE_BIN), "loupe-inspect")
    rng = random.Random(21)
    syll = ["ka", "n", "ase", "pro", "te", "in", "ox", "id", "ation", "mi"]
    vocab = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(1, 4))) for _ in range(400)})
    docs = {i: " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 10))) for i in range(1, 601)}
    patterns = ["*kin*", "*ase", "*prot*", "pro*in", "*ation*", "*oxid*", "*zzz*", "*ase*ation*"]
    data = tmp_path / "data"
    data.mkdir()
    s = LoupeServer(name="infixstore", data_dir=str(data))
    s.start()

    def infix_lines(table):
        out = []
        for f in sorted(glob.glob(str(data / "tables" / table / "**" / "*fts*"), recursive=True)):
            r = subprocess.run([inspect, "fts-info", f], capture_output=True, text=True, timeout=60)
            assert r.returncode == 0 and "check           ok" in r.stdout, (f, r.stdout, r.stderr)
            out.append([ln for ln in r.stdout.splitlines() if ln.strip().startswith("infix")])
        return out

    try:
        conn = lambda: pymysql_connect(s.mysql_port)  # noqa: E731
        with conn() as c, c.cursor() as cur:
            cur.execute("CREATE TABLE wi (body TEXT) min_infix_len='3'")
            cur.execute("CREATE TABLE wp (body TEXT)")
            for t in ("wi", "wp"):
                for lo in (1, 301):
                    vals = ",".join(f"({i}, {q(docs[i])})" for i in range(lo, lo + 300))
                    cur.execute(f"INSERT INTO {t} (id, body) VALUES {vals}")
                    cur.execute(f"FLUSH TABLE {t}")
            stored = infix_lines("wi")
            assert len(stored) == 2 and all(len(x) == 1 for x in stored), stored
            assert infix_lines("wp") == [[], []]
            before = {p: sorted(match_ids(cur, "wi", p)) for p in patterns}
            for p in patterns:
                assert before[p] == sorted(i for i, d in docs.items()
                                           if any(fnmatch.fnmatchcase(w, p) for w in d.split())), p
            cur.execute("OPTIMIZE TABLE wi OPTION sync=1")
            merged = infix_lines("wi")
            assert len(merged) == 1 and len(merged[0]) == 1, merged
        s.restart()
        with conn() as c, c.cursor() as cur:
            for p in patterns:
                assert sorted(match_ids(cur, "wi", p)) == before[p], p
    finally:
        s.stop()


def test_wildcards_from_many_connections_at_once(server, cur, uniq):
    """A sealed segment builds its infix filter on the first wildcard that
    needs it: eight connections sending wildcards at once to a freshly
    flushed table (so that several ask for the filter together) each get
    what one connection alone gets afterwards."""
    import threading
    rng = random.Random(9)
    syll = ["ka", "lo", "min", "tre", "su", "vex", "dor", "pa", "qui", "zen"]
    vocab = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(400)})
    docs = {i: (" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 8))),) for i in range(1, 801)}
    t = make_table(server, uniq(), "(body TEXT) min_infix_len='3'", docs)
    cur.execute(f"FLUSH TABLE {t}")
    patterns = ["*%s*" % s for s in syll if len(s) >= 3] + ["*%s%s" % (a, b) for a in syll[:4] for b in syll[4:8]]
    got, errors = {}, []

    def worker(k):
        try:
            c = pymysql_connect(server.mysql_port)
            with c.cursor() as wc:
                for p in patterns[k % len(patterns):] + patterns[:k % len(patterns)]:
                    wc.execute(f"SELECT id FROM {t} WHERE MATCH('{p}') ORDER BY id ASC LIMIT 1000")
                    got.setdefault(p, []).append([r[0] for r in wc.fetchall()])
            c.close()
        except Exception as e:  # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for p in patterns:
        cur.execute(f"SELECT id FROM {t} WHERE MATCH('{p}') ORDER BY id ASC LIMIT 1000")
        want = [r[0] for r in cur.fetchall()]
        assert got[p] == [want] * 8, p
    assert sum(1 for p in patterns if got[p][0]) > len(patterns) // 2


def test_ram_wildcards_while_writing(server, cur, uniq):
    """The RAM segment indexes its terms by trigram once it has served a few
    wildcards, and each later wildcard adds the terms written since: eight
    connections sending wildcards while another inserts rows of new words
    each see at least the rows there before the writes began and at most
    those there after they ended (fnmatch over every word), and once the
    writes stop every connection gets exactly the reference."""
    import fnmatch
    import threading
    rng = random.Random(19)
    syll = ["ka", "lo", "min", "tre", "su", "vex", "dor", "pa", "qui", "zen"]
    vocab = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(400)})
    docs = {i: " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 8))) for i in range(1, 601)}
    t = make_table(server, uniq(), "(body TEXT) min_infix_len='3'", {i: (d,) for i, d in docs.items()})
    more = {i: " ".join(rng.choice(syll) + rng.choice(syll) + "x%d" % i for _ in range(3)) for i in range(601, 801)}
    patterns = ["*%s*" % x for x in syll if len(x) >= 3] + ["*%s%s*" % (a, b) for a in syll[:3] for b in syll[3:6]]

    def ref(ds, p):
        return sorted(i for i, d in ds.items() if any(fnmatch.fnmatchcase(w, p) for w in d.split()))
    before = {p: ref(docs, p) for p in patterns}
    after_docs = {**docs, **more}
    after = {p: ref(after_docs, p) for p in patterns}
    errors, done = [], threading.Event()

    def writer():
        try:
            c = pymysql_connect(server.mysql_port)
            with c.cursor() as wc:
                for i, d in more.items():
                    wc.execute(f"INSERT INTO {t} (id, body) VALUES (%s, %s)", (i, d))
            c.close()
        except Exception as e:  # reported below
            errors.append(repr(e))
        finally:
            done.set()

    def reader(k):
        try:
            c = pymysql_connect(server.mysql_port)
            with c.cursor() as wc:
                n = 0
                while not done.is_set() or n < len(patterns):
                    p = patterns[(k + n) % len(patterns)]
                    n += 1
                    wc.execute(f"SELECT id FROM {t} WHERE MATCH('{p}') ORDER BY id ASC LIMIT 1000")
                    got = set(r[0] for r in wc.fetchall())
                    if not (set(before[p]) <= got <= set(after[p])):
                        errors.append((p, sorted(got - set(after[p])), sorted(set(before[p]) - got)))
            c.close()
        except Exception as e:  # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:5]
    for p in patterns:
        assert sorted(match_ids(cur, t, p)) == after[p], p
    assert any(after[p] != before[p] for p in patterns)


def test_zone_limits(server, cur, uniq):
    """index_zones='h*, th' (with html_strip='1', Manticore's options)
    indexes where those elements' spans are, and ZONE:(h1,th) in MATCH
    limits the rest of its group to words inside them (each word in any
    span of any of the zones, a phrase's words too); ZONESPAN:(…) also
    puts the scope's words (its AND) and a phrase's in one span. Checked
    against a reference over random HTML, in the RAM segment and in a
    sealed one: a span is the words between an opening tag and its closing
    tag (paired per name, innermost first; a stray closing tag ignored, an
    unclosed one closed by the field's end), spans of one name that overlap
    are one, and so are those of the zones a query names."""
    rng = random.Random(11)
    vocab = ["ant", "bee", "cat", "cow", "dog", "eel", "elk", "fox", "gnu", "hen"]
    zones = ["h1", "h2", "th"]

    def merge(iv):
        out = []
        for lo, hi in sorted(iv):
            if out and lo <= out[-1][1]:
                out[-1][1] = max(out[-1][1], hi)
            else:
                out.append([lo, hi])
        return out

    def make_doc():
        parts, words, stacks, spans = [], [], {z: [] for z in zones}, {z: [] for z in zones}
        for _ in range(rng.randint(1, 25)):
            r = rng.random()
            if r < 0.15:
                z = rng.choice(zones + ["p", "b"])  # p: block, b: inline; neither a zone
                parts.append(f"<{z.upper() if rng.random() < 0.2 else z}>")
                if z in stacks:
                    stacks[z].append(len(words))
            elif r < 0.27:
                z = rng.choice(zones + ["p"])
                parts.append(f"</{z}>")
                if z in stacks and stacks[z]:
                    lo = stacks[z].pop()
                    if lo < len(words):
                        spans[z].append((lo, len(words) - 1))
            else:
                w = rng.choice(vocab)
                parts.append(w)
                words.append(w)
        for z in zones:
            spans[z] += [(lo, len(words) - 1) for lo in stacks[z] if lo < len(words)]
            spans[z] = merge(spans[z])
        return " ".join(parts), (words, spans)

    docs, ref = {}, {}
    for i in range(1, 301):
        docs[i], ref[i] = make_doc()
    t = make_table(server, uniq(), "(body TEXT) html_strip='1' index_zones='h*, th'",
                   {i: (d,) for i, d in docs.items()})

    def places(i, test, zs):
        """Span indexes (of the zones zs, merged) holding a match of test (at
        word k, test.length words long, all in the span); None for one
        outside every span; zs None: every match."""
        words, spans = ref[i]
        iv = merge([s for z in (zs or ()) for s in spans[z]])
        n = getattr(test, "length", 1)
        out = set()
        for k, w in enumerate(words):
            if test(k, words):
                where = [j for j, (lo, hi) in enumerate(iv) if lo <= k and k + n - 1 <= hi]
                out.add(where[0] if where else None)
        if zs is None:
            return {None} if out else set()
        out.discard(None)
        return out

    def word(w):
        return lambda k, ws: ws[k] == w

    def pair(w1, w2):  # "w1 w2" at word k
        def test(k, ws):
            return k + 1 < len(ws) and ws[k] == w1 and ws[k + 1] == w2
        test.length = 2
        return test

    def has(i, w, zs):
        return bool(places(i, word(w), zs))

    def has_phrase(i, w1, w2, zs, one_span):
        words, spans = ref[i]
        iv = merge([s for z in zs for s in spans[z]])
        for k in range(len(words) - 1):
            if words[k] == w1 and words[k + 1] == w2:
                a = [j for j, (lo, hi) in enumerate(iv) if lo <= k <= hi]
                b = [j for j, (lo, hi) in enumerate(iv) if lo <= k + 1 <= hi]
                if a and b and (not one_span or a == b):
                    return True
        return False

    def has_prefix(i, pre, zs):
        return bool(places(i, lambda k, ws: ws[k].startswith(pre), zs))

    def together(i, zs, *tests):
        sets = [places(i, f, zs) for f in tests]
        return bool(set.intersection(*sets))

    cases = []
    for _ in range(40):
        zs = tuple(sorted(rng.sample(zones, rng.randint(1, 3))))
        names = "(" + ",".join(zs) + ")" if len(zs) > 1 or rng.random() < 0.5 else zs[0]
        spec, span = "ZONE:" + names, "ZONESPAN:" + names
        w1, w2, w3 = rng.sample(vocab, 3)
        cases += [
            (f"{spec} {w1}", lambda i, zs=zs, w1=w1: has(i, w1, zs)),
            (f"{spec} {w1} {w2}", lambda i, zs=zs, w1=w1, w2=w2: has(i, w1, zs) and has(i, w2, zs)),
            (f"{spec} {w1} | {w2}", lambda i, zs=zs, w1=w1, w2=w2: has(i, w1, zs) or has(i, w2, zs)),
            (f"{w1} {spec} {w2}", lambda i, zs=zs, w1=w1, w2=w2: has(i, w1, None) and has(i, w2, zs)),
            (f"{spec} {w1} -{w2}", lambda i, zs=zs, w1=w1, w2=w2: has(i, w1, zs) and not has(i, w2, zs)),
            (f'{spec} "{w1} {w2}"', lambda i, zs=zs, w1=w1, w2=w2: has_phrase(i, w1, w2, zs, False)),
            (f"{spec} {w1[:2]}*", lambda i, zs=zs, p=w1[:2]: has_prefix(i, p, zs)),
            (f"({spec} {w1}) | {w2}", lambda i, zs=zs, w1=w1, w2=w2: has(i, w1, zs) or has(i, w2, None)),
            (f"{spec} {w1} @body {w2}", lambda i, zs=zs, w1=w1, w2=w2: has(i, w1, zs) and has(i, w2, None)),
            # ZONESPAN: the scope's words in one span
            (f"{span} {w1} {w2}", lambda i, zs=zs, w1=w1, w2=w2: together(i, zs, word(w1), word(w2))),
            (f"{span} {w1} {w2} {w3}",
             lambda i, zs=zs, w1=w1, w2=w2, w3=w3: together(i, zs, word(w1), word(w2), word(w3))),
            (f"{w3} {span} {w1} {w2}",
             lambda i, zs=zs, w1=w1, w2=w2, w3=w3: has(i, w3, None) and together(i, zs, word(w1), word(w2))),
            (f"{span} {w1} | {w2}", lambda i, zs=zs, w1=w1, w2=w2: has(i, w1, zs) or has(i, w2, zs)),
            (f"{span} {w1} ({w2} | {w3})",
             lambda i, zs=zs, w1=w1, w2=w2, w3=w3: together(i, zs, word(w1), lambda k, ws: ws[k] in (w2, w3))),
            (f"{span} {w1} -{w2}", lambda i, zs=zs, w1=w1, w2=w2: has(i, w1, zs) and not has(i, w2, zs)),
            (f'{span} "{w1} {w2}"', lambda i, zs=zs, w1=w1, w2=w2: has_phrase(i, w1, w2, zs, True)),
            (f'{span} "{w1} {w2}" {w3}',
             lambda i, zs=zs, w1=w1, w2=w2, w3=w3: together(i, zs, pair(w1, w2), word(w3))),
            (f"{span} {w1} {w2[:2]}*",
             lambda i, zs=zs, w1=w1, p=w2[:2]: together(i, zs, word(w1), lambda k, ws: ws[k].startswith(p))),
        ]
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for text, pred in cases:
            want = sorted(i for i in docs if pred(i))
            assert sorted(match_ids(cur, t, text)) == want, (step, text)
    # HIGHLIGHT() marks a zone-limited word inside its zones' spans only,
    # an unlimited one everywhere (the text shown has no markup)
    for n in range(40):
        zs = tuple(sorted(rng.sample(zones, rng.randint(1, 2))))
        w1, w2 = rng.sample(vocab, 2)
        if n % 4 == 3:
            w2 = w1  # limited and unlimited at once: everywhere
        p1 = w1[:2] + "*" if n % 2 else w1
        q = f"(ZONE:({','.join(zs)}) {p1}) | {w2}"
        cur.execute(f"SELECT id, HIGHLIGHT({{limit=0}}) FROM {t} WHERE MATCH(%s) LIMIT 1000", (q,))
        rows = cur.fetchall()
        assert rows, q
        for i, text in rows:
            words, spans = ref[i]
            iv = merge([sp for z in zs for sp in spans[z]])
            got = [(m, a or b) for a, b, m in
                   ((a, b, bool(a)) for a, b in re.findall(r"<b>(\w+)</b>|(\w+)", text))]
            assert [w for _, w in got] == words, (q, i, text)
            want = [w == w2 or ((w.startswith(w1[:2]) if n % 2 else w == w1) and any(lo <= k <= hi for lo, hi in iv))
                    for k, w in enumerate(words)]
            assert [m for m, _ in got] == want, (q, i, text)
    # under ZONESPAN:, a group's words are marked only inside the spans
    # (of its zones, overlapping ones joined) where the whole group holds;
    # a word outside the group, everywhere
    nspan = 0
    for n in range(60):
        zs = tuple(sorted(rng.sample(zones, rng.randint(1, 2))))
        names = "(" + ",".join(zs) + ")"
        w1, w2, w3 = rng.sample(vocab, 3)
        p = w2[:2]
        kind = n % 4
        q = {0: f"ZONESPAN:{names} {w1} {w2}", 1: f"{w3} ZONESPAN:{names} {w1} {w2}",
             2: f"ZONESPAN:{names} {w1} ({w2} | {w3})", 3: f"ZONESPAN:{names} {w1} {p}*"}[kind]

        def grouped(w):  # is w one of the group's words?
            return w == w1 or (w.startswith(p) if kind == 3 else w == w2 or (kind == 2 and w == w3))

        def holds(ws):  # does the group hold in a span of these words?
            if kind == 2:
                return w1 in ws and (w2 in ws or w3 in ws)
            if kind == 3:
                return w1 in ws and any(w.startswith(p) for w in ws)
            return w1 in ws and w2 in ws

        cur.execute(f"SELECT id, HIGHLIGHT({{limit=0}}) FROM {t} WHERE MATCH(%s) LIMIT 1000", (q,))
        for i, text in cur.fetchall():
            words, spans = ref[i]
            held = [(lo, hi) for lo, hi in merge([sp for z in zs for sp in spans[z]])
                    if holds(words[lo:hi + 1])]
            assert held, (q, i)
            got = [bool(a) for a, b in re.findall(r"<b>(\w+)</b>|(\w+)", text)]
            want = [(kind == 1 and w == w3) or (grouped(w) and any(lo <= k <= hi for lo, hi in held))
                    for k, w in enumerate(words)]
            assert got == want, (q, i, text, held)
            nspan += any(grouped(w) and not any(lo <= k <= hi for lo, hi in held)
                         and any(lo <= k <= hi for lo, hi in merge([sp for z in zs for sp in spans[z]]))
                         for k, w in enumerate(words))
    assert nspan > 0  # some group word inside a span where the group does not hold was left unmarked
    # the proximity rankers' factors see a limited word's occurrences inside
    # its zones' spans only (under ZONESPAN: inside the joined spans that
    # hold the whole group), an unlimited one's everywhere: hit_count,
    # min_hit_pos and lcs against the reference
    expr = "ranker=expr('sum(hit_count)*1000000+sum(min_hit_pos)*100+sum(lcs)')"
    nOutside = 0  # ZONESPAN rows with a word in a span where the group fails
    for n in range(60):
        zs = tuple(sorted(rng.sample(zones, rng.randint(1, 2))))
        names = "(" + ",".join(zs) + ")"
        w1, w2 = rng.sample(vocab, 2)
        kind = n % 5 if n < 30 else 2
        q = {0: f"ZONE:{names} {w1} {w2}", 1: f"ZONE:{names} {w1} | {w2}", 2: f"ZONESPAN:{names} {w1} {w2}",
             3: f"(ZONE:{names} {w1}) | {w2}", 4: f"ZONE:{names} {w1[:2]}*"}[kind]
        cur.execute(f"SELECT id, WEIGHT() FROM {t} WHERE MATCH(%s) LIMIT 1000 OPTION {expr}", (q,))
        rows = cur.fetchall()
        assert rows or kind in (0, 2), q
        for i, weight in rows:
            words, spans = ref[i]
            iv = merge([sp for z in zs for sp in spans[z]])

            def inside(k):
                return any(lo <= k <= hi for lo, hi in iv)

            def held(k):  # in a joined span that holds both words
                return any(lo <= k <= hi and {w1, w2} <= set(words[lo:hi + 1]) for lo, hi in iv)

            def hit(k):  # is word k a keyword occurrence the factors count?
                w = words[k]
                if kind == 4:
                    return w.startswith(w1[:2]) and inside(k)
                if kind == 3 and w == w2:
                    return True
                if kind == 2:
                    return w in (w1, w2) and held(k)
                return w in (w1, w2) and inside(k)
            hits = [k for k in range(len(words)) if hit(k)]
            if kind == 2:
                nOutside += any(w in (w1, w2) and inside(k) and not held(k) for k, w in enumerate(words))
            if kind == 4:
                lcs = 1 if hits else 0
            else:
                lcs = 2 if any(words[k] == w1 and words[k + 1] == w2 and hit(k) and hit(k + 1)
                               for k in range(len(words) - 1)) else 1 if hits else 0
            want = len(hits) * 1000000 + (hits[0] + 1 if hits else 0) * 100 + lcs
            assert weight == want, (q, i, words, iv, weight, want)
    assert nOutside > 0  # the test tells the group's spans from any span
    # a weight counts the words inside the zones only
    u = make_table(server, uniq(), "(body TEXT) html_strip='1' index_zones='th'",
                   {1: ("<th>cat</th> cat cat dog",), 2: ("<th>cat</th> dog dog dog",),
                    3: ("eel eel eel eel",), 4: ("eel eel eel eel",), 5: ("eel eel eel eel",)})
    w = dict(match_weights(cur, u, "ZONE:th cat"))
    assert w[1] == w[2] > 0, w  # one cat in a zone each, in fields of one length
    assert dict(match_weights(cur, u, "cat"))[1] > w[1]
    # EXPLAIN names the zones; SHOW CREATE TABLE keeps the option
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('ZONE:(h1,th) cat')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "zones=h1,th" in plan, plan
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert "index_zones='h*, th'" in cur.fetchone()[1]
    # zone terms are no words: a wildcard over every term does not see them
    v = make_table(server, uniq(), "(body TEXT) html_strip='1' index_zones='h1' min_infix_len='2'",
                   {1: ("<h1>x</h1>",), 2: ("h1",)})
    assert sorted(match_ids(cur, v, "*h1*")) == [2]
    # errors: a table without zones, a zone it does not index, the option without html_strip
    expect_error(cur, f"SELECT id FROM {v} WHERE MATCH('a ZONE:(h1,h2) b')", 1064,
                 r"zone 'h2' of the ZONE: at offset 2 is not one of the table's index_zones")
    n = make_table(server, uniq(), "(body TEXT)", {1: ("cat",)})
    expect_error(cur, f"SELECT id FROM {n} WHERE MATCH('ZONE:th cat')", 1064,
                 r"ZONE: at offset 0 needs the table option index_zones \(with html_strip='1'\)")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) index_zones='h1'", 1064,
                 r"index_zones needs html_strip='1'")
    expect_error(cur, f"CREATE TABLE {uniq()} (body TEXT) html_strip='1' index_zones='h1, 2x'", 1064,
                 r"index_zones: '2x' is not an element name")
    expect_error(cur, f"SELECT id FROM {n} WHERE MATCH('cat ZONESPAN:th cat')", 1064,
                 r"ZONESPAN: at offset 4 needs the table option index_zones")
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('cat | ZONESPAN:th dog')", 1064,
                 r"ZONESPAN: starts an item of its group")
    cur.execute(f"EXPLAIN SELECT id FROM {t} WHERE MATCH('ZONESPAN:(th,h1) cat dog')")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "AND zonespan=th,h1" in plan, plan
    # a chain's operands share one limit
    w = make_table(server, uniq(), "(body TEXT) html_strip='1' index_zones='th'",
                   {1: ("<th>cat dog</th>",), 2: ("<th>cat</th> dog",), 3: ("cat <th>dog</th>",)})
    assert sorted(match_ids(cur, w, "ZONE:th cat << dog")) == [1]
    assert sorted(match_ids(cur, w, "ZONE:th cat NEAR/2 dog")) == [1]
    # NOTNEAR inside one span: a word outside the zones does not exist there,
    # and a word absent everywhere is far
    assert sorted(match_ids(cur, w, "ZONESPAN:th cat NOTNEAR/1 dog")) == [2]
    assert sorted(match_ids(cur, w, "ZONESPAN:th cat NOTNEAR/1 eel")) == [1, 2]
    expect_error(cur, f"SELECT id FROM {w} WHERE MATCH('cat << ZONE:th dog')", 1064,
                 r"the operands of '<<', NEAR, NOTNEAR, SENTENCE and PARAGRAPH take one ZONE limit: "
                 r"the operand at offset 15 has another")


def test_inline_wildcards_question_mark_and_percent(server, cur, uniq):
    """On a table with min_infix_len (as in Manticore), '?' in a word is any
    one character and '%' any one or none, with '*' too; checked against a
    regular expression over every word, before and after FLUSH. '\\?' is a
    separator, a '?' alone is nothing, and a table without min_infix_len
    reads '?' as a separator, as before."""
    rng = random.Random(3)
    alphabet = ["a", "b", "c", "é"]
    vocab = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5))) for _ in range(200)})
    docs = {i: (" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 6))),) for i in range(1, 301)}
    t = make_table(server, uniq(), "(body TEXT) min_infix_len='1'", docs)

    def to_re(p):
        return re.compile("".join(".*" if c == "*" else "." if c == "?" else ".?" if c == "%" else re.escape(c)
                                  for c in p) + r"\Z")

    patterns = ["ab?", "a?c", "ab%", "a%c", "?ab", "%ab", "ab??", "ab*c?", "?bc*", "a?b%c", "*é?", "ca%%",
                "ab%*", "é?a"]
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        for p in patterns:
            rx = to_re(p)
            want = sorted(i for i, (b,) in docs.items() if any(rx.match(w) for w in b.split()))
            assert sorted(match_ids(cur, t, p)) == want, (step, p)
    u = make_table(server, uniq(), "(body TEXT) min_infix_len='2'",
                   {1: ("test",), 2: ("teast",), 3: ("tes",), 4: ("testing",), 5: ("this is it",)})
    assert sorted(match_ids(cur, u, "t?st")) == [1]
    assert sorted(match_ids(cur, u, "tes%")) == [1, 3]
    assert sorted(match_ids(cur, u, "t??st")) == [2]
    assert sorted(match_ids(cur, u, "te?t*")) == [1, 4]
    assert sorted(match_ids(cur, u, "this?")) == []          # Manticore's reading: one more character
    assert sorted(match_ids(cur, u, r"this\? is")) == [5]     # escaped: a separator
    assert sorted(match_ids(cur, u, "is ?")) == [5]           # alone: nothing
    cur.execute(f"SELECT id, HIGHLIGHT() FROM {u} WHERE MATCH('tes%') ORDER BY id ASC")
    assert cur.fetchall() == ((1, "<b>test</b>"), (3, "<b>tes</b>"))
    m = meta(cur)
    assert m["keyword[0]"] == "tes%" and m["docs[0]"] == "2", m
    expect_error(cur, f"SELECT id FROM {u} WHERE MATCH('t?s')", 1064,
                 r"wildcard 't\?s' at offset 0: its longest part without a wildcard is shorter than "
                 r"min_infix_len=2")
    # without min_infix_len, '?' and '%' separate words
    v = make_table(server, uniq(), "(body TEXT)", {1: ("what is this",), 2: ("100% cotton",)})
    assert sorted(match_ids(cur, v, "this?")) == [1]
    assert sorted(match_ids(cur, v, "100% cotton")) == [2]


def test_string_attribute_indexed_is_field_and_attribute(tmp_path):
    """Manticore's `string attribute indexed` (also written `text attribute
    indexed`): one column that is a full-text field, searched with MATCH
    and highlighted, and a string attribute of the same name, filtered,
    sorted and returned like any string. Other spellings of the properties,
    the errors, and the schema and rows after a restart and an ALTER."""
    data = tmp_path / "data"
    data.mkdir()
    s = LoupeServer(name="strfield", data_dir=str(data))
    s.start()
    try:
        conn = lambda: pymysql_connect(s.mysql_port)  # noqa: E731
        with conn() as c, c.cursor() as cur:
            cur.execute("CREATE TABLE p (title string attribute indexed, body text, price int) "
                        "morphology='stem_en'")
            cur.execute("INSERT INTO p VALUES (1, 'Leather bag', 'a bag for travel', 10), "
                        "(2, 'Travel mug', 'keeps coffee hot', 5), (3, 'Bags of tea', 'green tea', 7)")
            cur.execute("FLUSH TABLE p")
            cur.execute("INSERT INTO p VALUES (4, 'Cup', 'a travel cup', 1)")  # in the log only

            def check(cur):
                assert rows(cur, "DESC p")[1] == ("title", "string", "attribute indexed")
                # a field: MATCH, field scopes, weights, HIGHLIGHT()
                assert rows(cur, "SELECT id, title FROM p WHERE MATCH('bag') ORDER BY title ASC") == [
                    (3, "Bags of tea"), (1, "Leather bag")]
                assert sorted(match_ids(cur, "p", "@title travel")) == [2]
                assert sorted(match_ids(cur, "p", "@body travel")) == [1, 4]
                assert rows(cur, "SELECT id, HIGHLIGHT() FROM p WHERE MATCH('bag') ORDER BY id ASC") == [
                    (1, "Leather <b>bag</b> | a <b>bag</b> for travel"), (3, "<b>Bags</b> of tea | green tea")]
                w = dict(match_weights(cur, "p", "@title bag", "OPTION field_weights=(title=5)"))
                assert set(w) == {1, 3}
                # an attribute: filters, ORDER BY, returned by SELECT *
                assert rows(cur, "SELECT id FROM p WHERE title = 'Travel mug'") == [(2,)]
                assert rows(cur, "SELECT id FROM p WHERE MATCH('travel') AND title != 'Travel mug' "
                                 "ORDER BY id ASC") == [(1,), (4,)]
                assert rows(cur, "SELECT id FROM p WHERE title > 'C' ORDER BY title DESC") == [
                    (2,), (1,), (4,)]
                assert rows(cur, "SELECT * FROM p WHERE id = 3")[0][:4] == (3, "Bags of tea", "green tea", 7)
            check(cur)
            expect_error(cur, "UPDATE p SET title = 'x' WHERE id = 1", 1366,
                         "full-text field 'title' cannot be updated: use REPLACE")
            expect_error(cur, "SELECT id FROM p WHERE body = 'x'", 1235,
                         r"column 'body' is a full-text field: it cannot be filtered or sorted on; search it "
                         r"with MATCH\('@body \.\.\.'\), or declare it 'string attribute indexed'")
            expect_error(cur, "CREATE TABLE e1 (a text stored attribute)", 1064,
                         "a column is stored \\(in the document store\\) or an attribute, not both")
            expect_error(cur, "CREATE TABLE e2 (a int indexed)", 1064, "unknown flag 'indexed' for a int column")
            expect_error(cur, "CREATE TABLE e3 (a string attribute fast)", 1064,
                         "unknown flag 'fast' for a string column: expected indexed, stored or attribute")
            # the other spellings: with properties, text and string are one type
            cur.execute("CREATE TABLE sp (a text attribute indexed, b text attribute, c string indexed, "
                        "d string stored, e string indexed stored, f string attribute, g text)")
            assert [r[1:] for r in rows(cur, "DESC sp")[1:]] == [
                ("string", "attribute indexed"), ("string", ""), ("text", "indexed"), ("text", "stored"),
                ("text", "indexed stored"), ("string", ""), ("text", "indexed stored")]
            assert "a string attribute indexed," in rows(cur, "SHOW CREATE TABLE sp")[0][1]
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait()
        s.restart()
        with conn() as c, c.cursor() as cur:
            check(cur)
            # a new field of this kind indexes the rows it gets; the others keep theirs
            cur.execute("ALTER TABLE p ADD COLUMN sub string attribute indexed")
            cur.execute("INSERT INTO p (id, title, body, price, sub) VALUES (5, 'Bat', 'a bat', 2, 'leather trim')")
            assert sorted(match_ids(cur, "p", "@sub leather")) == [5]
            assert sorted(match_ids(cur, "p", "leather")) == [1, 5]
            check(cur)
    finally:
        s.stop()


def test_scalar_functions_blend_relevance_and_attributes(server, cur, uniq):
    """Manticore's scalar functions over a real connection: a score made of
    WEIGHT() and IF() over an attribute orders the matches; RAND(seed)
    orders the same way each time; functions filter in WHERE beside MATCH."""
    t = make_table(server, uniq(), "(title TEXT, stock INT, price FLOAT)",
                   {1: ("red bag red bag", 0, 10.0), 2: ("red bag", 3, 25.0), 3: ("blue bag", 1, 7.5),
                    4: ("green hat", 5, 3.0)})
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        plain = [r[0] for r in rows(cur, f"SELECT id FROM {t} WHERE MATCH('red | bag') ORDER BY WEIGHT() DESC")]
        assert plain[0] == 1, plain  # the most of both words
        got = rows(cur, f"SELECT id, WEIGHT() + IF(stock > 0, 100, 0) AS score FROM {t} "
                        "WHERE MATCH('red | bag') ORDER BY score DESC")
        assert [r[0] for r in got] == [2, 3, 1] and got[0][1] > 100 > got[2][1], (step, got)
        assert rows(cur, f"SELECT id, CEIL(price), IF(price > 9, 'dear', 'cheap') FROM {t} "
                         "WHERE MATCH('bag') AND IN(stock, 0, 1) ORDER BY id ASC") == [
            (1, 10, "dear"), (3, 8, "cheap")]
        shuffled = rows(cur, f"SELECT id FROM {t} ORDER BY RAND(42)")
        assert sorted(shuffled) == [(1,), (2,), (3,), (4,)]
        assert rows(cur, f"SELECT id FROM {t} ORDER BY RAND(42)") == shuffled
    expect_error(cur, f"SELECT id FROM {t} WHERE MATCH('bag') AND IF(WEIGHT() > 1, 1, 0)", 1064,
                 "weight\\(\\) can only be used in the select list and ORDER BY")
    expect_error(cur, f"SELECT SQRT(title) FROM {t}", 1064,
                 "sqrt\\(\\) takes numbers: argument 1 is")


def test_group_by_over_matches(server, cur, uniq):
    """GROUP BY over a MATCH's rows, as Manticore: one row per key, COUNT(*)
    and the aggregates over the group's matches, other columns from its best
    match; ORDER BY over the groups, LIMIT and OFFSET over them, SHOW META's
    total_found the number of groups. RAM and flushed alike."""
    t = make_table(server, uniq(), "(title TEXT, brand STRING, price INT, rating FLOAT)",
                   {1: ("red leather bag", "Acme", 100, 4.5), 2: ("red bag", "acme", 50, 3.0),
                    3: ("blue bag", "Zeta", 70, 5.0), 4: ("red hat", "Zeta", 20, 2.0),
                    5: ("green bag bag bag", "Omni", 10, 1.0), 6: ("red shoe", None, 30, 4.0)})
    for step in ("ram", "flush"):
        if step == "flush":
            cur.execute(f"FLUSH TABLE {t}")
        got = rows(cur, f"SELECT brand, COUNT(*), SUM(price), AVG(rating), MIN(price), MAX(price) FROM {t} "
                        "WHERE MATCH('bag') GROUP BY brand ORDER BY brand ASC")
        # the key shown is the best match's spelling: row 2, "red bag", outranks row 1
        assert got == [("acme", 2, 150, 3.75, 50, 100), ("Omni", 1, 10, 1.0, 10, 10), ("Zeta", 1, 70, 5.0, 70, 70)], step
        # the group's other columns come from its best match
        best = {r[0]: r[1] for r in rows(cur, f"SELECT id, brand FROM {t} WHERE MATCH('red | bag') LIMIT 100")}
        order = [i for i in best]  # best first
        got = rows(cur, f"SELECT id, brand, COUNT(*) c FROM {t} WHERE MATCH('red | bag') GROUP BY brand "
                        "ORDER BY c DESC, id ASC")
        firsts = {}
        for i in order:
            firsts.setdefault((best[i] or "").lower(), i)
        assert sorted(r[0] for r in got) == sorted(firsts.values()), (step, got, order)
        assert [r[2] for r in got] == sorted([r[2] for r in got], reverse=True)
        assert rows(cur, f"SELECT brand, COUNT(*) FROM {t} WHERE MATCH('red | bag') AND price > 15 "
                         "GROUP BY brand ORDER BY COUNT(*) DESC, brand ASC LIMIT 1, 2") == [("Zeta", 2), (None, 1)]
        cur.execute("SHOW META")
        m = dict(cur.fetchall())
        assert m["total_found"] == "3" and m["total"] == "2", m
    # aggregates without GROUP BY: one group of every match, as MySQL's and
    # Manticore's; one row of no match too (COUNT 0, the others NULL)
    assert rows(cur, f"SELECT SUM(price), COUNT(*), MIN(price), COUNT(DISTINCT brand) FROM {t} "
                     "WHERE MATCH('bag')") == [(230, 4, 10, 3)]
    assert rows(cur, f"SELECT SUM(price), COUNT(*), AVG(rating), GROUP_CONCAT(id) FROM {t} "
                     "WHERE MATCH('nosuchword')") == [(None, 0, None, None)]


def test_group_by_streams_rows_and_keeps_each_groups_best(server, cur, uniq):
    """A grouped scan or MATCH hands its rows over in no set order (none is
    kept), so each group keeps the best row it sees: its columns and
    WEIGHT() are those of its best match (its smallest id without MATCH),
    and without ORDER BY the groups come in the order of those rows. Checked
    against the ungrouped query on random rows spread over a flushed
    segment, replaced rows (slots out of id order) and the RAM segment."""
    rnd = random.Random(7)
    words = ["red", "bag", "hat", "shoe", "blue"]
    def doc(i):
        return (" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 6))),
                "k" + str(rnd.randint(0, 9)) * rnd.randint(1, 30), rnd.randint(0, 6))
    t = make_table(server, uniq(), "(title TEXT, tag STRING, grp INT)", {i: doc(i) for i in range(1, 301)})
    cur.execute(f"FLUSH TABLE {t}")
    for i in rnd.sample(range(1, 301), 60):  # new slots for old ids
        title, tag, grp = doc(i)
        cur.execute(f"REPLACE INTO {t} (id, title, tag, grp) VALUES ({i}, {q(title)}, {q(tag)}, {grp})")
    cur.execute(f"INSERT INTO {t} (id, title, tag, grp) VALUES " +
                ", ".join(f"({i}, {q(a)}, {q(b)}, {c})" for i, (a, b, c) in ((i, doc(i)) for i in range(301, 401))))
    for where, order in (("MATCH('red | bag | hat')", "WEIGHT() DESC, id ASC"), ("MATCH('red bag')", "WEIGHT() DESC, id ASC"),
                         ("grp > 1", "id ASC"), ("1 = 1", "id ASC")):
        flat = rows(cur, f"SELECT id, tag, grp, WEIGHT() FROM {t} WHERE {where} ORDER BY {order} LIMIT 1000")
        best, count = {}, {}
        for r in flat:
            best.setdefault(r[2], r)
            count[r[2]] = count.get(r[2], 0) + 1
        want = [best[g] + (count[g],) for g in sorted(best, key=lambda g: flat.index(best[g]))]
        got = rows(cur, f"SELECT id, tag, grp, WEIGHT(), COUNT(*) FROM {t} WHERE {where} GROUP BY grp LIMIT 100")
        assert got == want, where
        # by a string key: groups fold ASCII case, the key shown is the best row's
        got = rows(cur, f"SELECT tag, id, COUNT(*) FROM {t} WHERE {where} GROUP BY tag LIMIT 1000")
        first = {}
        for r in flat:
            first.setdefault(r[1].lower(), r)
        assert got == [(r[1], r[0], sum(1 for x in flat if x[1].lower() == k)) for k, r in first.items()], where


def test_group_n_by_within_group_order_and_group_concat(server, cur, uniq):
    """Manticore's GROUP N BY (a group's best N rows, LIMIT and total_found
    counting rows), WITHIN GROUP ORDER BY (which rows are a group's best:
    its keys, then the query's order), and GROUP_CONCAT(x) (the group's
    non-NULL values, comma-separated), against Python over random rows in a
    flushed and a RAM segment; an aggregate named again by alias or position
    in ORDER BY or HAVING is counted once."""
    rnd = random.Random(11)
    words = ["red", "bag", "hat", "shoe"]
    def doc():
        return (" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 5))), rnd.randint(0, 4),
                rnd.choice([None, 1, 2, 3, 5, 8]), rnd.choice(["x", "y", "z", "X"]))
    t = make_table(server, uniq(), "(title TEXT, grp INT, price INT, tag STRING)", {i: doc() for i in range(1, 121)})
    cur.execute(f"FLUSH TABLE {t}")
    cur.execute(f"INSERT INTO {t} (id, title, grp, price, tag) VALUES " + ", ".join(
        "({}, {}, {}, {}, {})".format(i, q(a), g, "NULL" if p is None else p, q(tg))
        for i, (a, g, p, tg) in ((i, doc()) for i in range(121, 201))))
    for where, qorder in (("MATCH('red | bag')", lambda r: (-r[4], r[0])), ("grp < 4", lambda r: (r[0],))):
        flat = rows(cur, f"SELECT id, grp, price, tag, WEIGHT() FROM {t} WHERE {where} LIMIT 1000")
        groups = collections.defaultdict(list)
        for r in flat:
            groups[r[1]].append(r)
        for n in (1, 2, 3):
            # WITHIN GROUP ORDER BY price DESC (NULL last in DESC: it sorts first ascending), then the query's order
            def within(r):
                return (0 if r[2] is None else 1, r[2] or 0)
            want = []
            for g in sorted(groups):
                best = sorted(groups[g], key=qorder)
                best = sorted(best, key=within, reverse=True)  # stable: ties keep the query's order
                want += [(g, r[0], r[2], len(groups[g])) for r in best[:n]]
            got = rows(cur, f"SELECT grp, id, price, COUNT(*) FROM {t} WHERE {where} GROUP {n} BY grp "
                            "WITHIN GROUP ORDER BY price DESC ORDER BY grp ASC LIMIT 1000")
            assert got == want, (where, n)
            cur.execute("SHOW META")
            assert dict(cur.fetchall())["total_found"] == str(len(want))
            # LIMIT and OFFSET count rows
            assert rows(cur, f"SELECT grp, id, price, COUNT(*) FROM {t} WHERE {where} GROUP {n} BY grp "
                             "WITHIN GROUP ORDER BY price DESC ORDER BY grp ASC LIMIT 3, 4") == want[3:7]
        # GROUP_CONCAT: every non-NULL value of the group, once each
        got = rows(cur, f"SELECT grp, GROUP_CONCAT(price), GROUP_CONCAT(tag), SUM(price) s, COUNT(*) FROM {t} "
                        f"WHERE {where} GROUP BY grp HAVING s > 0 AND COUNT(*) > 1 ORDER BY s DESC, 1 ASC")
        want = []
        for g, rs in groups.items():
            prices = [r[2] for r in rs if r[2] is not None]
            if sum(prices) > 0 and len(rs) > 1:
                want.append((g, sorted(prices), sorted(r[3] for r in rs), sum(prices), len(rs)))
        want.sort(key=lambda w: (-w[3], w[0]))
        assert [(g, sorted(int(x) for x in a.split(",")) if a else [], sorted(b.split(",")), s_, c)
                for g, a, b, s_, c in got] == want, where
    expect_error(cur, f"SELECT grp FROM {t} GROUP BY grp WITHIN GROUP ORDER BY COUNT(*) DESC", 1064,
                 "WITHIN GROUP ORDER BY orders a group's rows: it takes no aggregate")
    expect_error(cur, f"SELECT grp FROM {t} GROUP 0 BY grp", 1064, "GROUP N BY takes N from 1 to 1000")
    expect_error(cur, f"SELECT grp FROM {t} GROUP BY grp WITHIN ORDER BY id", 1064, "expected GROUP")
    all_prices = sorted(r[0] for r in rows(cur, f"SELECT price FROM {t} WHERE price IS NOT NULL LIMIT 100000"))
    (cat,), = rows(cur, f"SELECT GROUP_CONCAT(price) FROM {t}")
    assert sorted(int(x) for x in cat.split(",")) == all_prices


def test_facets_are_more_result_sets(server, cur, uniq):
    """FACET (Manticore's faceted search): after the SELECT's own rows, one
    result set per FACET, the same matching rows grouped by the facet's
    expression with COUNT(*), each with its ORDER BY (FACET() its value)
    and LIMIT (20 by default). Over the MySQL protocol each result set but
    the last says another follows; over HTTP /sql they are one array."""
    t = make_table(server, uniq(), "(title TEXT, brand STRING, price INT)",
                   {i: (("red " if i % 2 else "blue ") + "bag", ["Acme", "Zeta", "Omni"][i % 3], i * 10)
                    for i in range(1, 31)})
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('red') ORDER BY id ASC LIMIT 3 "
                "FACET brand ORDER BY COUNT(*) DESC, FACET() ASC FACET price > 100 AS dear LIMIT 1 FACET brand LIMIT 1, 1")
    sets = []
    while True:
        sets.append(([d[0] for d in cur.description], [tuple(r) for r in cur.fetchall()]))
        if not cur.nextset():
            break
    cur.execute("SHOW META")  # the main query's
    assert dict(cur.fetchall())["total_found"] == "15"
    assert sets[0] == (["id"], [(1,), (3,), (5,)])
    want = sorted(rows(cur, f"SELECT brand, COUNT(*) FROM {t} WHERE MATCH('red') GROUP BY brand LIMIT 100"),
                  key=lambda r: (-r[1], r[0].lower()))
    assert sets[1] == (["brand", "count(*)"], want)
    assert sets[2][0] == ["dear", "count(*)"] and len(sets[2][1]) == 1
    firsts = rows(cur, f"SELECT brand, COUNT(*) FROM {t} WHERE MATCH('red') GROUP BY brand LIMIT 100")
    assert sets[3] == (["brand", "count(*)"], firsts[1:2])
    assert len(sets) == 4
    # an error in a facet is the statement's; the connection goes on
    expect_error(cur, f"SELECT id FROM {t} FACET nope", 1054, "unknown column 'nope'")
    assert rows(cur, "SELECT 1") == [(1,)]
    # over HTTP: one array of result sets
    status, _, body = http_request(server.http_port, "/sql", f"SELECT id FROM {t} LIMIT 1 FACET brand".encode(),
                                   content_type="text/plain")
    doc = json.loads(body)
    assert status == 200 and len(doc) == 2 and doc[1]["total"] == 3 and doc[0]["data"] == [{"id": 1}]


def test_facet_over_several_expressions_by_and_distinct(server, cur, uniq):
    """FACET a, b (grouped by both), FACET a BY b (a shown, grouped by b, a
    from each group's best match), FACET a DISTINCT c (COUNT(DISTINCT c)
    before COUNT(*)), each the GROUP BY query it stands for; FACET() orders
    by the first expression."""
    rnd = random.Random(5)
    t = make_table(server, uniq(), "(title TEXT, brand STRING, brand_id INT, color STRING, price INT)",
                   {i: (rnd.choice(["red bag", "red hat", "bag"]), "Brand %d" % (b := rnd.randint(1, 4)), b,
                        rnd.choice(["blue", "green", "black"]), rnd.randint(1, 9)) for i in range(1, 81)})
    cur.execute(f"FLUSH TABLE {t}")
    cur.execute(f"INSERT INTO {t} (id, title, brand, brand_id, color, price) VALUES "
                "(81, 'red bag', 'Brand 9', 9, 'blue', 3), (82, 'red', 'Brand 9', 9, 'red', 4)")
    cur.execute(f"SELECT id FROM {t} WHERE MATCH('red') LIMIT 2 "
                "FACET brand, color ORDER BY COUNT(*) DESC, FACET() ASC, color ASC "
                "FACET brand BY brand_id ORDER BY FACET() DESC "
                "FACET brand_id AS b DISTINCT color ORDER BY b ASC LIMIT 3")
    sets = []
    while True:
        sets.append(([d[0] for d in cur.description], [tuple(r) for r in cur.fetchall()]))
        if not cur.nextset():
            break
    assert len(sets) == 4
    assert sets[1] == (["brand", "color", "count(*)"],
                       rows(cur, f"SELECT brand, color, COUNT(*) FROM {t} WHERE MATCH('red') GROUP BY brand, color "
                                 "ORDER BY COUNT(*) DESC, brand ASC, color ASC LIMIT 20"))
    assert sets[2] == (["brand", "count(*)"],
                       rows(cur, f"SELECT brand, COUNT(*) FROM {t} WHERE MATCH('red') GROUP BY brand_id "
                                 "ORDER BY brand DESC LIMIT 20"))
    assert sets[3] == (["b", "count(distinct color)", "count(*)"],
                       rows(cur, f"SELECT brand_id b, COUNT(DISTINCT color), COUNT(*) FROM {t} WHERE MATCH('red') "
                                 "GROUP BY brand_id ORDER BY b ASC LIMIT 3"))
    # and against Python
    flat = rows(cur, f"SELECT brand_id, color FROM {t} WHERE MATCH('red') LIMIT 1000")
    per = collections.defaultdict(list)
    for b, c in flat:
        per[b].append(c)
    assert [(b, d, n) for b, d, n in sets[3][1]] == [(b, len(set(per[b])), len(per[b])) for b in sorted(per)][:3]
    expect_error(cur, f"SELECT id FROM {t} FACET brand DISTINCT", 1064, "expected a column name after DISTINCT")
    expect_error(cur, f"SELECT id FROM {t} FACET brand BY", 1064, "expected an expression")
    expect_error(cur, f"SELECT id FROM {t} FACET brand DISTINCT nope", 1054, "unknown column 'nope'")
