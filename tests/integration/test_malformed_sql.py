"""1,000 malformed SQL statements generated from valid ones.

The generator (fixed seed) takes valid statements covering every statement
kind and mutates their tokens: delete, duplicate, swap, truncate, insert
punctuation or keywords, unbalance quotes and parentheses, splice in bytes
that are not valid UTF-8. Every statement must get a proper answer (a result
or an OK) or an error with a MySQL errno; never a dropped connection.
They run over one raw-protocol connection (which can send any bytes), the
valid-UTF-8 ones again over one pymysql connection, and a sample over HTTP.
"""

import json
import random
import re

import pymysql
import pytest

from conftest import pymysql_connect
from helpers import Err, Ok, expect_error, http_request, raw_login

SEED = 20240602
COUNT = 1000
A, B = "mal_a", "mal_b"

BASE = [
    f"SELECT * FROM {A}",
    f"SELECT id, tag, n FROM {A} WHERE n > 5 AND tag = 'x' ORDER BY n DESC, id ASC LIMIT 2, 10",
    f"SELECT COUNT(*) FROM {A} WHERE id IN (1, 2, 3) OR n BETWEEN 1 AND 10",
    f"SELECT tag AS t, n * 2 + 1 AS m FROM {A} WHERE NOT (n IS NULL) LIMIT 5 OFFSET 1",
    f"SELECT id FROM {A} WHERE f >= -1.5e3 AND f < 2.5 AND n NOT IN (7, 8)",
    f"SELECT id FROM {A} WHERE tag IN ('a', 'b', 'c') ORDER BY id LIMIT 3",
    f"SELECT * FROM {A} WHERE id = 9223372036854775807 AND tag IS NOT NULL",
    "SELECT @@version_comment LIMIT 1",
    "SELECT DATABASE(), USER(), VERSION(), CONNECTION_ID(), LAST_INSERT_ID()",
    "SELECT 1 + 2 * (3 - 4) / 5, 'str', \"dq\", -7, 1e10",
    f"INSERT INTO {A} (id, tag, n, f, body, j, v) VALUES "
    "(100, 'it''s', -5, 0.25, 'some text', '{\"k\": [1, 2]}', (0.5, 1.5))",
    f"INSERT INTO {A} VALUES (0, 'a', 1, 1.0, 'b', '[]', (1, 2)), (0, 'c', 2, 2.0, 'd', '{{}}', (3, 4))",
    f"INSERT INTO {A} (tag, n) VALUES ('back\\\\slash \\' quote', 3)",
    f"REPLACE INTO {A} (id, tag) VALUES (1, 'replaced')",
    f"UPDATE {A} SET n = 42, tag = 'upd' WHERE id = 2",
    f"UPDATE {A} SET f = 0.5 WHERE id IN (3, 4) AND n <> 0",
    f"DELETE FROM {A} WHERE id = 5",
    f"DELETE FROM {A} WHERE id IN (6, 7) OR n >= 100",
    f"CREATE TABLE IF NOT EXISTS {B} (title TEXT indexed stored, s STRING, n INT, big BIGINT, "
    "ok BOOL, ts TIMESTAMP, j JSON, v FLOAT_VECTOR knn_type='hnsw' knn_dims='3' "
    "hnsw_similarity='cosine') morphology='stem_en' min_prefix_len='2'",
    f"DROP TABLE IF EXISTS {B}",
    f"TRUNCATE TABLE {B}",
    "SHOW TABLES LIKE 'mal%'",
    f"DESCRIBE {A}",
    f"SHOW CREATE TABLE {A}",
    "SHOW VARIABLES LIKE 'max%'",
    "SHOW SESSION STATUS LIKE '%'",
    "SHOW META",
    "SHOW WARNINGS",
    "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
    "SET autocommit = 1",
    "SET @@session.autocommit = 1",
    "USE loupe",
    "START TRANSACTION",
    "COMMIT",
    "ROLLBACK",
]

KEYWORDS = ["SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "NULL", "IN", "BETWEEN", "IS",
            "LIMIT", "OFFSET", "ORDER", "BY", "ASC", "DESC", "VALUES", "INSERT", "INTO",
            "REPLACE", "UPDATE", "SET", "DELETE", "CREATE", "TABLE", "DROP", "IF", "EXISTS",
            "SHOW", "DESCRIBE", "OPTION", "COUNT", "AS", "TRUNCATE", "BEGIN", "COMMIT",
            "TEXT", "STRING", "INT", "BIGINT", "FLOAT", "BOOL", "TIMESTAMP", "JSON",
            "FLOAT_VECTOR", "MATCH", "GROUP", "@@", "@x", "LIKE", "TRUE", "FALSE"]
PUNCT = list("()',;\"`=<>*.@#$%^&|~?!-+/\\[]{}:") + ["<>", "!=", "<=", ">=", "--", "/*", "*/", "''"]
ODD = ["99999999999999999999999", "-9223372036854775809", "1e999", "-1e-999", "0x", "1.2.3",
       "'" + "q" * 300 + "'", "a" * 300, "@@", "@@nosuch.var", "((((", "))))", "NULL()",
       "COUNT(", "*)", "(SELECT 1)", ",,", "..", "\t\n", "é", "😀"]
BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf",
             b"\x00", b"\x80", b"\xf8\x88\x80\x80\x80", b"\xf4\x90\x80\x80", b"\x1b[0m"]

TOKEN_RE = re.compile(r"'(?:[^'\\]|''|\\.)*'|\"(?:[^\"\\]|\"\"|\\.)*\"|[A-Za-z_@][A-Za-z0-9_@.]*"
                      r"|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|<>|!=|<=|>=|\S")


def tokenize(sql):
    return TOKEN_RE.findall(sql)


def mutate_once(rng, toks):
    """Applies one token-level mutation; returns the new token list."""
    toks = list(toks)
    n = len(toks)
    i = rng.randrange(n) if n else 0
    op = rng.randrange(8)
    if op == 0 and n:                               # delete
        del toks[i]
    elif op == 1 and n:                             # duplicate
        toks.insert(i, toks[i])
    elif op == 2 and n > 1:                         # swap neighbours
        j = min(i + 1, n - 1)
        toks[i], toks[j] = toks[j], toks[i]
        if i == j:
            toks[0], toks[-1] = toks[-1], toks[0]
    elif op == 3:                                   # punctuation
        toks.insert(rng.randrange(n + 1), rng.choice(PUNCT))
    elif op == 4:                                   # keyword
        toks.insert(rng.randrange(n + 1), rng.choice(KEYWORDS))
    elif op == 5:                                   # odd token in place of one
        if n:
            toks[i] = rng.choice(ODD)
        else:
            toks.append(rng.choice(ODD))
    elif op == 6:                                   # unbalanced quote
        q = rng.choice(["'", '"', "`"])
        if n and rng.random() < 0.5:
            t = toks[i]
            k = rng.randrange(len(t) + 1)
            toks[i] = t[:k] + q + t[k:]
        else:
            toks.insert(rng.randrange(n + 1), q)
    else:                                           # unbalanced parenthesis
        toks.insert(rng.randrange(n + 1), rng.choice(["(", ")", "((", ")))"]))
    return toks


def generate(count=COUNT, seed=SEED):
    """[(kind, statement bytes)], deterministic for a seed."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        base = BASE[k % len(BASE)]
        kind = rng.choice(["tokens", "tokens", "tokens", "truncate", "bytes", "quote"])
        if kind == "truncate":
            cut = rng.randrange(1, len(base))
            sql = base[:cut].encode()
        elif kind == "quote":
            # Quotes made odd: an unterminated string, always an error.
            toks = tokenize(base)
            i = rng.randrange(len(toks) + 1)
            toks.insert(i, "'")
            sql = " ".join(toks).encode()
        else:
            toks = tokenize(base)
            for _ in range(rng.choice([1, 1, 2, 3])):
                toks = mutate_once(rng, toks)
            sql = " ".join(toks).encode()
            if kind == "bytes":
                pos = rng.randrange(len(sql) + 1)
                sql = sql[:pos] + rng.choice(BAD_BYTES) + sql[pos:]
        out.append((kind, sql))
    return out


def unterminated_quote(sql):
    """True when the statement has an odd number of single quotes and no
    other quoting or escaping that could pair them differently."""
    return sql.count(b"'") % 2 == 1 and b'"' not in sql and b"\\" not in sql and b"`" not in sql


NEAR_RE = re.compile(r"(?:near '(.*)'|unexpected end of statement) at line (\d+) col (\d+): \S",
                     re.S)


def check_syntax_message(sql, msg):
    """A 1064 message names the place: `near '<rest>' at line L col C: …`
    (or, where nothing but the end is left, `unexpected end of statement at
    line L col C: …`), and for an ASCII statement the quoted text is what
    stands at line L, column C (possibly cut, with "...")."""
    m = NEAR_RE.search(msg)
    assert m, f"{sql!r}: 1064 message without position: {msg!r}"
    near, line, col = m.group(1), int(m.group(2)), int(m.group(3))
    try:
        text = sql.decode("ascii")
    except UnicodeDecodeError:
        return
    if any(ord(c) < 32 and c not in "\n\t" for c in text):
        return
    lines = text.split("\n")
    assert 1 <= line <= len(lines), (sql, msg)
    off = sum(len(x) + 1 for x in lines[:line - 1]) + col - 1
    assert 0 <= off <= len(text), (sql, msg)
    rest = text[off:]
    if near is None:
        if not any(c in rest for c in ("--", "/*", "#")):
            assert rest.strip(" \t\n;") == "", f"{sql!r}: 'end of statement' but {rest!r} left"
        return
    if near.endswith("..."):
        near = near[:-3]
    assert rest.startswith(near), f"{sql!r}: near {near!r} is not the text at line {line} col {col}"
    assert len(near) >= min(len(rest.rstrip()), 8), f"{sql!r}: near text {near!r} too short"


@pytest.fixture(scope="module")
def corpus(server):
    c = pymysql_connect(server.mysql_port)
    with c.cursor() as cur:
        cur.execute(f"CREATE TABLE {A} (tag STRING, n INT, f FLOAT, body TEXT, j JSON, "
                    "v FLOAT_VECTOR knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
        cur.execute(f"INSERT INTO {A} (id, tag, n, f, body) VALUES (1, 'x', 6, 1.0, 'b'), "
                    "(2, 'a', 7, 2.0, 'c'), (3, 'b', 8, -3.0, 'd')")
    c.close()
    return generate()


def test_generator_is_deterministic_and_mostly_malformed(corpus):
    assert generate() == corpus
    assert len(corpus) == COUNT and len({s for _, s in corpus}) > COUNT * 0.9
    assert sum(1 for _, s in corpus if b"\xff" in s or b"\xc3" in s or b"\x80" in s) > 50


def test_malformed_over_raw_connection(server, corpus):
    raw = raw_login(server.mysql_port)
    dropped, bad_reply, errors, answered, syntax = [], [], 0, 0, 0
    try:
        for kind, sql in corpus:
            try:
                reply = raw.query(sql)
            except Err as e:
                errors += 1
                assert 1000 <= e.errno < 2000, (sql, e.errno, e.message)
                assert len(e.sqlstate) == 5, (sql, e.sqlstate)
                if e.errno == 1064:
                    syntax += 1
                    check_syntax_message(sql, e.message)
                if kind == "quote" and unterminated_quote(sql):
                    assert e.errno == 1064, (sql, e.errno, e.message)
                continue
            except (ConnectionError, OSError) as e:
                dropped.append((sql, repr(e)))
                assert server.alive(), f"server died on {sql!r}:\n{server.log_tail()}"
                raw.close()
                raw = raw_login(server.mysql_port)
                continue
            except AssertionError as e:             # a reply the protocol does not allow
                bad_reply.append((sql, str(e)))
                raw.close()
                raw = raw_login(server.mysql_port)
                continue
            answered += 1
            assert isinstance(reply, (Ok, tuple))
            if kind == "quote" and unterminated_quote(sql):
                pytest.fail(f"unterminated string accepted: {sql!r}")
    finally:
        raw.close()
    assert not dropped, f"{len(dropped)} statements dropped the connection, e.g. {dropped[:5]}"
    assert not bad_reply, f"malformed replies: {bad_reply[:5]}"
    assert errors + answered == COUNT
    assert errors >= COUNT * 0.6, f"only {errors} of {COUNT} were refused"
    assert syntax >= COUNT * 0.4, f"only {syntax} syntax errors"
    with raw_login(server.mysql_port) as fresh:
        assert fresh.query("SELECT 1")[1] == [[b"1"]]


def test_malformed_over_pymysql(server, corpus):
    conn = pymysql_connect(server.mysql_port)
    cur = conn.cursor()
    n = 0
    for kind, sql in corpus:
        try:
            text = sql.decode("utf-8")
        except UnicodeDecodeError:
            continue
        n += 1
        try:
            cur.execute(text)
            cur.fetchall()
        except pymysql.err.MySQLError as e:
            code = e.args[0]
            assert isinstance(code, int) and 1000 <= code < 2000, \
                f"{text!r}: {e!r} (connection lost?)"
    assert n > COUNT * 0.7
    cur.execute("SELECT 1")
    assert cur.fetchall() == ((1,),)
    conn.close()
    c2 = pymysql_connect(server.mysql_port)
    c2.ping(reconnect=False)
    c2.close()


def test_malformed_over_http(server, corpus):
    sample = corpus[::10]
    for kind, sql in sample:
        status, _, body = http_request(server.http_port, "/sql", sql, content_type="text/plain")
        assert status in (200, 400), (sql, status, body[:300])
        doc = json.loads(body.decode("utf-8"))          # valid UTF-8 JSON even for bad input
        if status == 400:
            assert isinstance(doc["error"], str) and doc["error"]
            assert 1000 <= doc["code"] < 2000 and len(doc["sqlstate"]) == 5, doc
        else:
            assert isinstance(doc, list) and doc and doc[0]["error"] == "", doc
    status, _, body = http_request(server.http_port, "/health")
    assert status == 200


# ---------------------------------------------------------------------------
# Hand-written syntax errors: code and message format

END = r"(?:near '' at|unexpected end of statement at)"
SYNTAX = [
    ("SELECT * FORM t", r"^near 'FORM t' at line 1 col 10: expected"),
    ("SELECT *\nFORM t", r"^near 'FORM t' at line 2 col 1: expected"),
    ("SELECT id FROM t WHERE", END + r" line 1 col 23: expected"),
    ("SELECT id FROM t WHERE n = 'abc", r" at line 1 col (28|32)\b"),
    ("SELEC 1", r"^near 'SELEC 1' at line 1 col 1: "),
    ("SELECT (1 + 2", END + r" line 1 col 14: expected"),
    ("SELECT 1 + 2)", r"^near '\)' at line 1 col 13: "),
    ("INSERT INTO t (id VALUES (1)", r"^near 'VALUES \(1\)' at line 1 col 19: expected"),
    ("CREATE TABLE t (a INT,)", r"^near '\)' at line 1 col 23: expected"),
    ("DELETE t WHERE id = 1", r"^near 't WHERE id = 1' at line 1 col 8: expected"),
    ("UPDATE t n = 1", r"^near 'n = 1' at line 1 col 10: expected"),
    ("SELECT 1 FROM t WHERE id = 1 " + "AND n = 1 " * 10 + "AND (",
     r"^(near '' at|unexpected end of statement at) line 1 col 135: expected"),
    ("SHOW TABLE t STATUS LIKE", END + r" line 1 col 25: expected"),
    ("SHOW TABLE t STATUS x", r"^near 'x' at line 1 col 21: expected LIKE or end of statement"),
    ("SELECT * FROM t LIMIT 1 " + "x" * 100,
     r"^near 'x{20,}(\.\.\.)?' at line 1 col 25: "),
]


@pytest.mark.parametrize("sql,pattern", SYNTAX, ids=[s[:40] for s, _ in SYNTAX])
def test_syntax_error_message(cur, sql, pattern):
    msg = expect_error(cur, sql, 1064)
    assert re.search(pattern, msg), f"{sql!r}: {msg!r} does not match {pattern!r}"


def test_syntax_error_names_expected_keyword(cur):
    msg = expect_error(cur, "SELECT * FORM t", 1064)
    assert re.search(r"expected .*\bFROM\b", msg, re.I), msg


EXTREME = [
    "SELECT " + "(" * 100_000 + "1" + ")" * 100_000,
    "SELECT " + "-" * 100_000 + "1",
    "SELECT " + "NOT " * 50_000 + "1",
    f"SELECT id FROM {A} WHERE " + "NOT " * 50_000 + "n = 1",
    f"SELECT id FROM {A} WHERE " + "(" * 100_000 + "n = 1",
    "SELECT 1" + " + 1" * 100_000,
    f"SELECT id FROM {A} WHERE id IN (" + ", ".join(["1"] * 100_000) + ")",
    "SELECT " + "a" * 100_000 + f" FROM {A}",
    "SELECT '" + "s" * 1_000_000 + "'",
    "SELECT " + ", ".join(["1"] * 20_000),
    "SELECT " + "'" * 100_001,
]


@pytest.mark.parametrize("sql", EXTREME, ids=[f"extreme{i}" for i in range(len(EXTREME))])
def test_extreme_statements(server, corpus, sql):
    """Deep nesting and huge lists are answered or refused, never a crash
    (a recursive-descent parser needs a depth limit)."""
    with raw_login(server.mysql_port) as raw:
        raw.sock.settimeout(60)
        try:
            raw.query(sql)
        except Err as e:
            assert 1000 <= e.errno < 2000
        assert raw.query("SELECT 1")[1] == [[b"1"]]
