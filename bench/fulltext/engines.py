"""The four engines behind one interface.

Every engine indexes the same documents (engine id i + 1 = document i, two
text fields title and body), uses English stemming and no stop words, ranks
by BM25, and answers a workload.Query with the ids of its top k documents,
best first. The interface:

    e = ENGINES[name](workdir, args)
    e.start()                   server up / database created
    e.prepare(collection)       untimed: statements and rows built
    e.load()                    timed: every document indexed, on disk and
                                searchable (the engine's finishing step
                                included; see SETTINGS)
    e.size_bytes()              index on disk, or None when not known
    c = e.compile(query, k)     untimed: the SQL text / match string /
                                xapian.Query (None: nothing to search)
    e.run(c)                    timed: run it, fetch all rows; [id, ...]
    e.server_pid                the server process, or None in process
    e.close()                   stop / close; returns a complaint or None

How each one is set up and queried is spelled out in SETTINGS (printed in
the report) and in the compile() methods; `match_text()` shows exactly
what loupe is sent.
"""

import os
import shutil
import sqlite3

import pymysql

from common import BenchError, LoupeServer, SphinxServer, connect

TABLE = "c"
LOUPE_DDL = "CREATE TABLE c (title TEXT, body TEXT) morphology='stem_en'"
# Rows per multi-row INSERT and a cap on the statement size (loupe's default
# max_packet_size is 16M, the generated sphinx.conf's 32M).
INSERT_ROWS = 1000
INSERT_BYTES = 4 << 20

SETTINGS = {
    "loupe": [
        "`%s`; no stop words (the table has no `stopwords` option); accents folded "
        "(`remove_diacritics`, on by default, as FTS5's `unicode61` does)." % LOUPE_DDL,
        "Load: multi-row `INSERT INTO c (id, title, body) VALUES ...` (up to %d rows, "
        "%d MiB a statement) over one pymysql connection, then `FLUSH TABLE c` (the RAM "
        "segment sealed to disk)." % (INSERT_ROWS, INSERT_BYTES >> 20),
        "Query: `SELECT id, WEIGHT() FROM c WHERE MATCH('<q>') ORDER BY WEIGHT() DESC LIMIT k`; "
        "`<q>` is `w1 | w2 | ...` (OR), `w1 w2` (AND), `w`, `\"w1 w2\"`, `pre*`.",
        "In process: `loupe-inspect fts-build docs.jsonl seg --fields title,text "
        "--morphology stem_en` writes the sealed segment (the same analysis and index as the "
        "server's; JSON parsed before timing; documents taken as the load's INSERTs of "
        "%d rows and analysed as the server analyses them: on one thread per CPU, or on one "
        "when an INSERT holds under 64 KiB of text, and no thread started when every INSERT "
        "does; added in order); `loupe-inspect "
        "fts-bench` runs the MATCH texts above on it (parse, plan, "
        "top k with the default BM25F, k1 = 1.2, b = 0.75, field weights 1)." % INSERT_ROWS,
        "Size: the segment file (`SHOW TABLE c STATUS`'s `fts_bytes` is in fulltext.json "
        "when the server reports it).",
    ],
    "fts5": [
        "SQLite FTS5 in process (Python sqlite3 module): `CREATE VIRTUAL TABLE c USING "
        "fts5(title, body, tokenize='porter unicode61', content='')`: Porter stemmer, "
        "Unicode case folding and diacritics removal, no stop words (FTS5 has none); "
        "contentless, so the file holds the index only (the others store no text either).",
        "Load: `executemany` INSERT in one transaction, then `INSERT INTO c(c) "
        "VALUES('optimize')` (merges the index into one b-tree segment), commit.",
        "Query: `SELECT rowid FROM c WHERE c MATCH ? ORDER BY rank LIMIT k` (rank = "
        "bm25(c): k1 = 1.2, b = 0.75, column weights 1; a document's length is all its "
        "tokens); `\"w1\" OR \"w2\" ...`, `\"w1\" AND \"w2\"`, `\"w\"`, `\"w1 w2\"`, `\"pre\"*`.",
        "In process: `fts5q.c` (SQLite C API) prepares the query once and binds the MATCH "
        "text per query, stepping every row.",
        "Size: the database file.",
    ],
    "xapian": [
        "Xapian in process (python3-xapian): TermGenerator with Stem('english') "
        "(STEM_SOME: unstemmed terms with positions plus Z-prefixed stems), no stopper; "
        "title indexed with prefix S, body with XB, then both again unprefixed (a "
        "100-position gap between them) for the all-fields search.",
        "Load: `replace_document(id, doc)` for each document, `commit()`, then "
        "`Database.compact()` into a fresh folder (as xapian-compact; the copy is searched).",
        "Query: Enquire with `BM25Weight()` (Xapian's defaults k1 = 1, k2 = 0, k3 = 1, "
        "b = 0.5, min_normlen = 0.5), `get_mset(0, k)`; OP_OR / OP_AND of `Z<stem>` terms, "
        "the `Z<stem>` term alone, OP_PHRASE of the unstemmed words, OP_WILDCARD (combined "
        "with OP_SYNONYM) on unstemmed terms.",
        "In process: `xapq.cc` (Xapian C++ API) builds the same queries (stems by "
        "Stem('english')) and runs them with the same weighting.",
        "Size: the database folder.",
    ],
    "sphinx": [
        "searchd 2.2.11, one RT index: `rt_field = title`, `rt_field = body`, `morphology = "
        "stem_en`, `min_prefix_len = 1` (needed for `pre*` with the default `dict = keywords`; "
        "expansion happens at query time, the index holds no prefixes), default "
        "`charset_table` (ASCII letters, digits, `_` and Cyrillic; other characters separate "
        "words), no stop words, `rt_attr_uint = pad` (an RT index must have an attribute; "
        "always 0), `rt_mem_limit = 1024M`.",
        "Load: the same multi-row INSERTs as loupe over one pymysql connection, then `FLUSH "
        "RAMCHUNK c` (the RAM chunk written as one disk chunk, the form Sphinx keeps a "
        "finished index in).",
        "Query: `SELECT id, WEIGHT() FROM c WHERE MATCH('<q>') LIMIT k OPTION ranker=bm25` "
        "(default order: weight desc, id asc); `<q>` as for loupe, words first split the way "
        "Sphinx's charset_table splits them. What `ranker=bm25` computes: see below.",
        "Size: the index files (`data/c.*`) after the flush.",
    ],
}


def match_text(q, split=None):
    """The Manticore/Sphinx MATCH text for a query (loupe's and Sphinx's
    language). `split(word)` returns the pieces a word is indexed as (for
    Sphinx's charset); None keeps words whole. Returns None when no word is
    left."""
    words = q.words
    if split is not None and q.kind in ("or", "and", "term"):
        words = [p for w in words for p in split(w)]
    if not words:
        return None
    if q.kind == "or":
        return " | ".join(words)
    if q.kind in ("and", "term"):
        return " ".join(words)
    if q.kind == "phrase":
        return '"%s"' % " ".join(words)
    if q.kind == "prefix":
        return words[0] + "*"
    raise ValueError("unknown query kind %r" % q.kind)


def insert_statements(docs):
    """Multi-row INSERTs of (id, title, body), ids 1..n, for loupe and Sphinx."""
    esc = pymysql.converters.escape_string
    head = "INSERT INTO %s (id, title, body) VALUES " % TABLE
    out, parts, size = [], [], 0
    for i, (title, body) in enumerate(docs, 1):
        part = "(%d, '%s', '%s')" % (i, esc(title), esc(body))
        if parts and (len(parts) >= INSERT_ROWS or size + len(part) > INSERT_BYTES):
            out.append(head + ", ".join(parts))
            parts, size = [], 0
        parts.append(part)
        size += len(part) + 2
    if parts:
        out.append(head + ", ".join(parts))
    return out


def dir_bytes(path, name_prefix=""):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            if f.startswith(name_prefix):
                total += os.path.getsize(os.path.join(root, f))
    return total


class Engine:
    name = "?"
    transport = "?"
    server = None

    def __init__(self, workdir, args):
        self.workdir = workdir
        self.args = args
        self.notes = []         # caveats of this run, printed in the report

    @property
    def server_pid(self):
        return self.server.pid if self.server is not None else None

    def close(self):
        return None


class _SqlEngine(Engine):
    """An engine behind a MySQL-protocol server, one pymysql connection."""

    transport = "MySQL protocol, pymysql, 1 connection"

    def __init__(self, workdir, args):
        super().__init__(workdir, args)
        self.conn = None
        self.statements = []

    def _connect(self):
        self.conn = connect(self.server.port)

    def execute(self, sql):
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql)
                return cur.fetchall()
        except pymysql.err.MySQLError as e:
            self.server.check_alive()
            raise BenchError("%s: %s\n  statement: %s" % (self.name, e, sql[:300]))

    def prepare(self, coll):
        self.statements = insert_statements(coll.docs)

    def run(self, sql):
        if sql is None:
            return []
        return [int(r[0]) for r in self.execute(sql)]

    def floor_sql(self):
        """A statement with the same round trip but no search: what the
        client, the protocol and statement dispatch cost alone."""
        return "SELECT 1"

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except pymysql.err.MySQLError:
                pass
            self.conn = None
        return self.server.stop() if self.server is not None else None


class LoupeEngine(_SqlEngine):
    name = "loupe"

    def start(self):
        self.server = LoupeServer(self.workdir, self.args.loupe_bin)
        self.server.start()
        self._connect()
        self.execute(LOUPE_DDL)

    def load(self):
        for sql in self.statements:
            self.execute(sql)
        # The finished form of the index, as Sphinx's FLUSH RAMCHUNK and
        # FTS5's optimize: a sealed segment on disk. Only a loupe that does
        # not know the statement yet (parse error 1064) is let through, and
        # the report says so.
        try:
            with self.conn.cursor() as cur:
                cur.execute("FLUSH TABLE %s" % TABLE)
        except pymysql.err.MySQLError as e:
            if not (e.args and e.args[0] == 1064):
                self.server.check_alive()
                raise BenchError("loupe: FLUSH TABLE %s: %s" % (TABLE, e))
            self.notes.append("loupe does not take `FLUSH TABLE c` (%s): its index was measured "
                              "as the INSERTs left it" % e.args[0])

    def status(self):
        """SHOW TABLE c STATUS as a dict (Variable_name -> Value)."""
        return {str(k): v for k, v in self.execute("SHOW TABLE %s STATUS" % TABLE)}

    def size_bytes(self):
        v = self.status().get("fts_bytes")
        return int(v) if v is not None else None

    def compile(self, q, k):
        m = match_text(q)
        return None if m is None else (
            "SELECT id, WEIGHT() FROM %s WHERE MATCH('%s') ORDER BY WEIGHT() DESC LIMIT %d"
            % (TABLE, pymysql.converters.escape_string(m), k))

    def version(self):
        return self.server.version() if self.server else "?"


SPHINX_INDEX = """\
# Generated by bench/fulltext/run.py for one benchmark run.
index c
{{
    type            = rt
    path            = {dir}/data/c
    rt_mem_limit    = 1024M
    rt_field        = title
    rt_field        = body
    # An RT index must have an attribute; never set, always 0.
    rt_attr_uint    = pad
    morphology      = stem_en
    # Wildcards with the default dict = keywords: expanded at query time.
    min_prefix_len  = 1
}}
"""


def _sphinx_pieces(word):
    """How the default charset_table splits a lower-case word: runs of ASCII
    letters, digits, '_' and Cyrillic; anything else separates."""
    out, cur = [], []
    for ch in word:
        if ("a" <= ch <= "z") or ("0" <= ch <= "9") or ch == "_" or ("\u0430" <= ch <= "\u044f") or ch == "\u0451":
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


class SphinxEngine(_SqlEngine):
    name = "sphinx"

    def start(self):
        self.server = SphinxServer(self.workdir, self.args.searchd, "sphinx", SPHINX_INDEX)
        self.server.start()
        self._connect()

    def load(self):
        for sql in self.statements:
            self.execute(sql)
        self.execute("FLUSH RAMCHUNK %s" % TABLE)

    def size_bytes(self):
        return dir_bytes(self.server.data_dir, TABLE + ".")

    def compile(self, q, k):
        m = match_text(q, split=_sphinx_pieces)
        return None if m is None else (
            "SELECT id, WEIGHT() FROM %s WHERE MATCH('%s') LIMIT %d OPTION ranker=bm25"
            % (TABLE, pymysql.converters.escape_string(m), k))

    def version(self):
        return self.server.version() if self.server else "?"


def _fts5_phrase(w):
    return '"%s"' % w.replace('"', '""')


class Fts5Engine(Engine):
    name = "fts5"
    transport = "in process: loading and quality by Python's sqlite3, speed by fts5q.c"

    def start(self):
        self.path = os.path.join(self.workdir, "fts5.db")
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("CREATE VIRTUAL TABLE c USING fts5(title, body, "
                        "tokenize='porter unicode61', content='')")

    def prepare(self, coll):
        self.rows = [(i, t, b) for i, (t, b) in enumerate(coll.docs, 1)]

    def load(self):
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO c(rowid, title, body) VALUES (?, ?, ?)", self.rows)
        self.db.execute("INSERT INTO c(c) VALUES('optimize')")
        self.db.execute("COMMIT")

    def size_bytes(self):
        return os.path.getsize(self.path)

    def compile(self, q, k):
        if q.kind == "or":
            m = " OR ".join(_fts5_phrase(w) for w in q.words)
        elif q.kind in ("and", "term"):
            m = " AND ".join(_fts5_phrase(w) for w in q.words)
        elif q.kind == "phrase":
            m = _fts5_phrase(" ".join(q.words))
        elif q.kind == "prefix":
            m = _fts5_phrase(q.words[0]) + "*"
        else:
            raise ValueError(q.kind)
        return ("SELECT rowid FROM c WHERE c MATCH ? ORDER BY rank LIMIT %d" % k, (m,))

    def run(self, c):
        return [r[0] for r in self.db.execute(c[0], c[1]).fetchall()]

    def version(self):
        return "SQLite %s" % sqlite3.sqlite_version

    def close(self):
        self.db.close()


class XapianEngine(Engine):
    name = "xapian"
    transport = "in process: loading and quality by python3-xapian, speed by xapq.cc"

    def start(self):
        import xapian
        self.x = xapian
        self.path = os.path.join(self.workdir, "xapian")
        self.stem = xapian.Stem("english")
        self.db = None

    def prepare(self, coll):
        self.docs = coll.docs

    def load(self):
        x = self.x
        wdb = x.WritableDatabase(self.path, x.DB_CREATE_OR_OVERWRITE)
        tg = x.TermGenerator()
        tg.set_stemmer(self.stem)
        tg.set_stemming_strategy(x.TermGenerator.STEM_SOME)
        for i, (title, body) in enumerate(self.docs, 1):
            doc = x.Document()
            tg.set_document(doc)
            tg.index_text(title, 1, "S")
            tg.index_text(body, 1, "XB")
            tg.index_text(title)
            tg.increase_termpos()
            tg.index_text(body)
            wdb.replace_document(i, doc)
        wdb.commit()
        wdb.close()
        # The bulk build leaves its B-trees' blocks part-filled; compacting
        # (what xapian-compact does) rewrites them full, typically at a
        # third of the size, and the compacted copy is the one searched.
        x.Database(self.path).compact(self.path + ".c")
        shutil.rmtree(self.path)
        os.rename(self.path + ".c", self.path)
        self.db = x.Database(self.path)
        self.weight = x.BM25Weight()

    def size_bytes(self):
        return dir_bytes(self.path)

    def _z(self, w):
        return "Z" + self.stem(w).decode("utf-8")

    def compile(self, q, k):
        x = self.x
        Q = x.Query
        if q.kind == "or":
            query = Q(Q.OP_OR, [Q(self._z(w)) for w in q.words])
        elif q.kind == "and":
            query = Q(Q.OP_AND, [Q(self._z(w)) for w in q.words])
        elif q.kind == "term":
            query = Q(self._z(q.words[0]))
        elif q.kind == "phrase":
            query = Q(Q.OP_PHRASE, list(q.words))
        elif q.kind == "prefix":
            query = Q(Q.OP_WILDCARD, q.words[0], 0, Q.WILDCARD_LIMIT_ERROR, Q.OP_SYNONYM)
        else:
            raise ValueError(q.kind)
        return (query, k)

    def run(self, c):
        enq = self.x.Enquire(self.db)
        enq.set_weighting_scheme(self.weight)
        enq.set_query(c[0])
        return [m.docid for m in enq.get_mset(0, c[1])]

    def version(self):
        return "Xapian %s" % self.x.version_string()

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None


ENGINES = {"loupe": LoupeEngine, "fts5": Fts5Engine, "xapian": XapianEngine, "sphinx": SphinxEngine}
ORDER = ("loupe", "fts5", "xapian", "sphinx")
