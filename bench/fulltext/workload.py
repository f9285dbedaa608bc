"""The collections and the queries every engine runs.

A collection folder holds docs.jsonl ({"id", "title", "text"}),
queries.jsonl ({"id", "text"}) and qrels.tsv (query_id, doc_id, grade), as
described in ../shared/data/README.md. Engines never see the collection's
own document ids: document i of docs.jsonl (0-based) is indexed as id i + 1
everywhere (small dense integers; Sphinx needs ids > 0), and rankings are
mapped back to the collection's ids before scoring.

Query words: `\\w+` (Python, Unicode) over the query text, lower-cased,
nothing dropped (no stop words, duplicates kept). Lower-casing changes no
engine's matching (all fold case) but keeps upper-case words such as
NPL's and TIME's from reading as operators (Sphinx's MAYBE, NEAR,
SENTENCE; FTS5's AND/OR/NOT/NEAR are quoted anyway).

Speed queries, derived from queries.jsonl deterministically (same seed,
same queries) and capped at `cap` per type by a seeded sample:
- or:     the bag-of-words query itself (as in the quality run).
- term:   each distinct query word that occurs in some document.
- and:    per query, its 2 or 3 (alternating by query position) longest
          distinct words of 3+ ASCII letters that occur in the documents,
          kept only if some document contains all of them (exact words);
          else the 2 longest if those co-occur; else the query gives none.
- phrase: per query, the adjacent pair of ASCII-letter words with the most
          letters that also occurs adjacent in some document field.
- prefix: per query, its longest ASCII-letter word of 5+ letters that
          occurs in the documents, cut to max(4, ceil(len / 2)) letters,
          plus `*`.
"Occurs in the documents" is checked on exact lower-cased `\\w+` tokens of
title and text, before stemming, so every engine has something to find.
"""

import json
import os
import random
import re

WORD = re.compile(r"\w+")
TYPES = ("term", "and", "or", "phrase", "prefix")

# What each folder's README says about its defects, as far as they bear on
# the numbers (the report prints these next to the collection).
DATA_NOTES = {
    "cranfield": "graded judgments 1-4 (nDCG uses the grades); documents 471 and 995 are "
                 "empty; 1396 abstracts begin with a copy of their title, so most documents "
                 "match a title word in both fields",
    "cisi": "36 of 112 queries have no judgments (skipped); documents 234 = 1440 and "
            "1084 = 1447 are duplicates; some queries are long (up to 335 words)",
    "med": "no titles (title field empty); small and easy",
    "npl": "no titles; very short documents (about 41 words); 14 groups of duplicate documents",
    "time": "no titles; long documents (about 600 words); qrels.tsv has 250 rows over 78 "
            "queries (the README says 253 over 79), 5 of 83 queries are unjudged",
    "adi": "82 documents: a smoke test, too small to separate engines",
    "scifact": "BEIR SciFact train split; about 1.1 relevant documents per query, so "
               "MRR and nDCG move in big steps per query",
}


class Query:
    """One query: kind is "or", "and", "term", "phrase" or "prefix"; words
    the lower-cased words (for prefix: the one prefix, without '*')."""

    __slots__ = ("kind", "words", "qid")

    def __init__(self, kind, words, qid=None):
        self.kind = kind
        self.words = list(words)
        self.qid = qid

    def key(self):
        return (self.kind, tuple(self.words))

    def __repr__(self):
        return "Query(%s %s)" % (self.kind, " ".join(self.words))


class Collection:
    """docs[i] = (title, text) for engine id i + 1; doc_ids[i] its own id;
    queries = [Query("or", words, qid)]; qrels = {qid: {doc_id: grade}}."""

    def __init__(self, name, path):
        self.name = name
        self.path = path
        self.docs = []
        self.doc_ids = []
        self.queries = []
        self.qrels = {}
        self.notes = []

    @property
    def judged(self):
        return sum(1 for q in self.queries if any(g > 0 for g in self.qrels.get(q.qid, {}).values()))


def load_collection(name, path):
    """Reads one collection folder. Raises ValueError on inconsistent data
    (duplicate ids, judgments naming unknown documents or queries)."""
    c = Collection(name, path)
    with open(os.path.join(path, "docs.jsonl"), encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            c.doc_ids.append(str(d["id"]))
            c.docs.append((d.get("title") or "", d.get("text") or ""))
    if len(set(c.doc_ids)) != len(c.doc_ids):
        raise ValueError("%s: duplicate document ids in docs.jsonl" % name)
    with open(os.path.join(path, "queries.jsonl"), encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            q = json.loads(line)
            words = [w.lower() for w in WORD.findall(q["text"])]
            if words:
                c.queries.append(Query("or", words, str(q["id"])))
            else:
                c.notes.append("query %s has no words; skipped" % q["id"])
    known_docs, known_queries = set(c.doc_ids), {q.qid for q in c.queries}
    with open(os.path.join(path, "qrels.tsv"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                raise ValueError("%s: qrels.tsv line %d: expected 3 tab-separated fields" % (name, n))
            qid, did, grade = parts[0], parts[1], int(parts[2])
            if did not in known_docs or qid not in known_queries:
                raise ValueError("%s: qrels.tsv line %d names an unknown %s" % (
                    name, n, "document" if did not in known_docs else "query"))
            c.qrels.setdefault(qid, {})[did] = grade
    return c


def discover(data_dir):
    """Names of the folders under data_dir that are IR collections."""
    names = []
    for name in sorted(os.listdir(data_dir)):
        p = os.path.join(data_dir, name)
        if all(os.path.isfile(os.path.join(p, f)) for f in ("docs.jsonl", "queries.jsonl", "qrels.tsv")):
            names.append(name)
    return names


def _is_plain(w):
    return w.isascii() and w.isalpha()


def _sample(items, cap, rng):
    """Distinct queries, at most cap of them, in a seeded random order."""
    seen, out = set(), []
    for q in items:
        if q.key() not in seen:
            seen.add(q.key())
            out.append(q)
    return rng.sample(out, min(cap, len(out)))


def speed_queries(c, cap, seed):
    """{type: [Query]} for the five speed query types (see the module doc)."""
    postings, bigrams = {}, set()
    for i, (title, text) in enumerate(c.docs):
        for field in (title, text):
            toks = [w.lower() for w in WORD.findall(field)]
            for t in toks:
                postings.setdefault(t, set()).add(i)
            bigrams.update(zip(toks, toks[1:]))

    def longest_first(words):
        order = {w: k for k, w in reversed(list(enumerate(words)))}
        return sorted(order, key=lambda w: (-len(w), order[w]))

    out = {t: [] for t in TYPES}
    for pos, q in enumerate(c.queries):
        out["or"].append(q)
        for w in q.words:
            if w in postings:
                out["term"].append(Query("term", [w]))
        cands = [w for w in longest_first(q.words) if len(w) >= 3 and _is_plain(w) and w in postings]
        for k in (2 + pos % 2, 2):
            pick = cands[:k]
            if len(pick) == k and set.intersection(*(postings[w] for w in pick)):
                out["and"].append(Query("and", pick))
                break
        pairs = [(a, b) for a, b in zip(q.words, q.words[1:])
                 if _is_plain(a) and _is_plain(b) and (a, b) in bigrams]
        if pairs:
            best = max(pairs, key=lambda p: len(p[0]) + len(p[1]))   # first of the longest
            out["phrase"].append(Query("phrase", best))
        long_words = [w for w in longest_first(q.words) if len(w) >= 5 and _is_plain(w) and w in postings]
        if long_words:
            w = long_words[0]
            out["prefix"].append(Query("prefix", [w[:max(4, (len(w) + 1) // 2)]]))
    rng = random.Random(seed)
    return {t: _sample(out[t], cap, rng) for t in TYPES}
