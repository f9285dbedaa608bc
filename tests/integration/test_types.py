"""Type round trips through pymysql and through the mariadb client, and the
column types announced in result metadata."""

import calendar
import json
import math
import re
import struct

import pytest
from pymysql.constants import FIELD_TYPE as FT
from pymysql.converters import escape_string

from helpers import expect_error, parse_batch, rows, server_error

COLUMNS = ("title TEXT, s STRING, n INT, big BIGINT, f FLOAT, ok BOOL, ts TIMESTAMP, j JSON, "
           "v FLOAT_VECTOR knn_type='hnsw' knn_dims='3' hnsw_similarity='l2'")
NAMES = ["id", "title", "s", "n", "big", "f", "ok", "ts", "j", "v"]
STRING_TYPES = {FT.VAR_STRING, FT.STRING, FT.BLOB}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


@pytest.fixture
def table(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} ({COLUMNS})")
    return t


def cli_select(mariadb, sql):
    r = mariadb(sql, "--batch")
    assert r.returncode == 0, r.stderr
    return parse_batch(r.stdout)


# ---------------------------------------------------------------------------
# Metadata

def test_result_column_types(cur, table):
    cur.execute(f"INSERT INTO {table} VALUES (1, 't', 's', 1, 2, 0.5, 1, 1700000000, "
                "'{\"a\":1}', (0.1, 0.2, 0.3))")
    cur.execute(f"SELECT * FROM {table}")
    got = {d[0]: d[1] for d in cur.description}
    assert list(got) == NAMES
    assert got["id"] == FT.LONGLONG and got["big"] == FT.LONGLONG
    assert got["n"] == FT.LONG
    assert got["f"] == FT.FLOAT
    assert got["s"] == FT.VAR_STRING
    assert got["title"] in STRING_TYPES
    assert got["j"] in STRING_TYPES | {FT.JSON}
    assert got["v"] in STRING_TYPES
    assert got["ok"] in (FT.TINY, FT.LONG)
    assert got["ts"] in (FT.LONG, FT.LONGLONG)    # shown as an integer
    row = cur.fetchone()
    assert row[NAMES.index("ts")] == 1700000000 and row[NAMES.index("ok")] == 1
    # Strings come back as text, not as binary (charset 63) bytes.
    assert row[NAMES.index("s")] == "s" and row[NAMES.index("title")] == "t"


def test_result_column_types_seen_by_cli(mariadb, cur, table):
    cur.execute(f"INSERT INTO {table} (id, n) VALUES (1, 1)")
    r = mariadb(f"SELECT id, n, big, f, s FROM {table}", "--table", "--column-type-info")
    assert r.returncode == 0, r.stderr
    types = re.findall(r"^Type:\s+(\w+)", r.stdout.decode(), re.M)
    assert types == ["LONGLONG", "LONG", "LONGLONG", "FLOAT", "VAR_STRING"], r.stdout


def test_computed_column_types(cur):
    cur.execute("SELECT 1, 1.5, 'x', 7/2")
    t = [d[1] for d in cur.description]
    assert t[0] == FT.LONGLONG
    assert t[1] in (FT.DOUBLE, FT.FLOAT, FT.NEWDECIMAL)
    assert t[2] in STRING_TYPES
    assert t[3] in (FT.DOUBLE, FT.NEWDECIMAL)


# ---------------------------------------------------------------------------
# Numbers

INTS = [0, 1, -1, 42, -42, 2147483647, -2147483648, 65536, -65537]
BIGS = [0, -1, 2**31, -(2**31) - 1, 2**32, 2**53 + 1, 9223372036854775807, -9223372036854775808]
IDS = [1, 2**31, 2**32 + 1, 2**53 + 1, 2**62 + 3, 9223372036854775806, 9223372036854775807]


def test_integers_round_trip(cur, mariadb, table):
    pairs = list(zip(IDS, INTS, BIGS))
    for i, n, b in pairs:
        cur.execute(f"INSERT INTO {table} (id, n, big) VALUES (%s, %s, %s)", (i, n, b))
    assert rows(cur, f"SELECT id, n, big FROM {table}") == sorted(pairs)
    for i, n, b in pairs:
        assert rows(cur, f"SELECT n, big FROM {table} WHERE id = %s", (i,)) == [(n, b)]
    header, got = cli_select(mariadb, f"SELECT id, n, big FROM {table}")
    assert header == ["id", "n", "big"]
    assert [tuple(int(x) for x in r) for r in got] == sorted(pairs)
    # Written by the client, read by pymysql.
    r = mariadb(f"UPDATE {table} SET n = -2147483648, big = -9223372036854775808 "
                f"WHERE id = {IDS[-1]}")
    assert r.returncode == 0, r.stderr
    assert rows(cur, f"SELECT n, big FROM {table} WHERE id = {IDS[-1]}") == [
        (-2147483648, -9223372036854775808)]


FLOATS_EXACT = [0.0, 0.1, -1.5, 2.5, 100.25, -0.001, 3.4e38, -3.4e38, 1e-45, 1e-40, 123456.0,
                7e-10]
FLOATS_CLOSE = [math.pi, 1.17549435e-38, 16777217.0, 0.333333333]


def test_floats_round_trip(cur, mariadb, table):
    vals = FLOATS_EXACT + FLOATS_CLOSE
    for i, x in enumerate(vals, 1):
        cur.execute(f"INSERT INTO {table} (id, f) VALUES (%s, %s)", (i, x))
    got = rows(cur, f"SELECT f FROM {table} LIMIT 100")
    _, cli = cli_select(mariadb, f"SELECT f FROM {table} LIMIT 100")
    for i, x in enumerate(vals):
        for via, v in (("pymysql", got[i][0]), ("mariadb", float(cli[i][0]))):
            if x in FLOATS_EXACT:
                assert f32(v) == f32(x), (via, x, v)
            else:
                assert math.isclose(v, f32(x), rel_tol=1e-5), (via, x, v)
    # A float literal written the way the client would.
    r = mariadb(f"INSERT INTO {table} (id, f) VALUES (1000, -2.75e-3)")
    assert r.returncode == 0, r.stderr
    assert f32(rows(cur, f"SELECT f FROM {table} WHERE id = 1000")[0][0]) == f32(-2.75e-3)


@pytest.mark.parametrize("bad", ["'inf'", "'-inf'", "'nan'", "'NaN'", "'infinity'",
                                 "1e39", "-1e39"])
def test_float_inf_nan_refused(cur, table, bad):
    code, _ = server_error(cur, f"INSERT INTO {table} (id, f) VALUES (1, {bad})")
    assert code in (1264, 1366)
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(0,)]


# ---------------------------------------------------------------------------
# NULL

def test_null_in_every_type(cur, mariadb, table):
    cur.execute(f"INSERT INTO {table} (id) VALUES (1)")
    cur.execute(f"INSERT INTO {table} VALUES (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
    expected = [(1,) + (None,) * 9, (2,) + (None,) * 9]
    assert rows(cur, f"SELECT * FROM {table}") == expected
    header, got = cli_select(mariadb, f"SELECT * FROM {table}")
    assert header == NAMES
    assert [tuple(r) for r in got] == [("1",) + (None,) * 9, ("2",) + (None,) * 9]
    for col in ("s", "n", "big", "f", "ok", "ts"):
        assert rows(cur, f"SELECT COUNT(*) FROM {table} WHERE {col} IS NULL") == [(2,)], col


# ---------------------------------------------------------------------------
# Strings

STRINGS = [
    "plain",
    "",
    "it's",
    'say "hi"',
    "back\\slash",
    "C:\\path\\to\\x",
    "trailing backslash\\",
    "line1\nline2\n",
    "tab\there",
    "cr\rlf\r\n",
    "ctrl-z \x1a here",
    "emoji 😀🎉👍🏽",
    "中文字符 日本語 한국어",
    "ñ é ü ß Ω",
    "quote' \" \\ mix '' \"\"",
    "%s %d {} $1 ?",
    "-- not a comment",
    "/* nor this */",
    "x" * 5000,
]


def test_strings_round_trip_pymysql_and_cli(cur, mariadb, table):
    for i, s in enumerate(STRINGS, 1):
        cur.execute(f"INSERT INTO {table} (id, title, s) VALUES (%s, %s, %s)", (i, s, s))
    got = rows(cur, f"SELECT id, title, s FROM {table} LIMIT 100")
    assert got == [(i, s, s) for i, s in enumerate(STRINGS, 1)]
    for i, s in enumerate(STRINGS, 1):
        assert rows(cur, f"SELECT id FROM {table} WHERE s = %s", (s,)) == [(i,)], s
    _, cli = cli_select(mariadb, f"SELECT id, title, s FROM {table} LIMIT 100")
    assert [(int(r[0]), r[1], r[2]) for r in cli] == got


def test_strings_written_by_cli(cur, mariadb, table):
    values = ", ".join(f"({i}, '{escape_string(s)}', '{escape_string(s)}')"
                       for i, s in enumerate(STRINGS, 1))
    r = mariadb(f"INSERT INTO {table} (id, title, s) VALUES {values}")
    assert r.returncode == 0, r.stderr
    assert rows(cur, f"SELECT id, title, s FROM {table} LIMIT 100") == [
        (i, s, s) for i, s in enumerate(STRINGS, 1)]


def test_string_with_nul_byte(cur, table):
    s = "nul\x00inside"
    cur.execute(f"INSERT INTO {table} (id, s, title) VALUES (1, %s, %s)", (s, s))
    assert rows(cur, f"SELECT s, title FROM {table}") == [(s, s)]


@pytest.mark.parametrize("literal,value", [
    ("'it''s'", "it's"),
    ('"say ""hi"""', 'say "hi"'),
    ("'a\\'b'", "a'b"),
    ("'tab\\tnl\\n'", "tab\tnl\n"),
    ("'back\\\\slash'", "back\\slash"),
    ("'dq \" in sq'", 'dq " in sq'),
    ("\"sq ' in dq\"", "sq ' in dq"),
])
def test_string_literal_escapes(cur, table, literal, value):
    cur.execute(f"INSERT INTO {table} (id, s) VALUES (1, {literal})")
    assert rows(cur, f"SELECT s FROM {table}") == [(value,)]
    assert rows(cur, f"SELECT {literal}") == [(value,)]


def test_numbers_into_strings(cur, table):
    cur.execute(f"INSERT INTO {table} (id, s, title) VALUES (1, 42, -7)")
    assert rows(cur, f"SELECT s, title FROM {table}") == [("42", "-7")]


# ---------------------------------------------------------------------------
# JSON, vectors, bool, timestamp

def test_json_normalized_compact(cur, mariadb, table):
    doc = '{ "b" : [1, 2, {"c": null}],\n  "a": "x y",  "t": true, "f": false, "n": -3 }'
    cur.execute(f"INSERT INTO {table} (id, j) VALUES (1, %s), (2, %s)", (doc, "[1, 2 ,3]"))
    (j1,), (j2,) = rows(cur, f"SELECT j FROM {table}")
    assert json.loads(j1) == json.loads(doc)
    assert j1 == json.dumps(json.loads(j1), separators=(",", ":"))   # compact
    assert j2 == "[1,2,3]"
    _, cli = cli_select(mariadb, f"SELECT j FROM {table} WHERE id = 1")
    assert cli == [[j1]]


@pytest.mark.parametrize("bad", ['{"a": }', "{a:1}", "[1, 2", '{"a":1} x', "", "nul"])
def test_json_invalid_1366(cur, table, bad):
    expect_error(cur, f"INSERT INTO {table} (id, j) VALUES (1, %s)", 1366, args=(bad,))
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(0,)]


def test_vectors(cur, mariadb, table):
    vecs = {1: (0.1, 0.2, 0.3), 2: (-1.5, 0.0, 3.4e38), 3: (1, 2, 3)}
    for i, v in vecs.items():
        cur.execute(f"INSERT INTO {table} (id, v) VALUES ({i}, ({', '.join(map(str, v))}))")
    got = rows(cur, f"SELECT id, v FROM {table}")
    _, cli = cli_select(mariadb, f"SELECT id, v FROM {table}")
    assert [int(r[0]) for r in cli] == [1, 2, 3]
    for (i, text), (_, cli_text) in zip(got, cli):
        assert cli_text == text
        parts = [float(p) for p in text.split(",")]
        assert [f32(p) for p in parts] == [f32(x) for x in vecs[i]], text
    for bad in ("(0.1, 0.2)", "(0.1, 0.2, 0.3, 0.4)", "('a', 'b', 'c')"):
        server_error(cur, f"INSERT INTO {table} (id, v) VALUES (9, {bad})")
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(3,)]


def test_bool(cur, table):
    cur.execute(f"INSERT INTO {table} (id, ok) VALUES (1, TRUE), (2, FALSE), (3, 1), (4, 0), "
                "(5, true), (6, false)")
    assert rows(cur, f"SELECT id, ok FROM {table}") == [(1, 1), (2, 0), (3, 1), (4, 0), (5, 1), (6, 0)]
    assert [r[0] for r in rows(cur, f"SELECT id FROM {table} WHERE ok = 1")] == [1, 3, 5]
    for bad in ("2", "-1", "'maybe'"):
        server_error(cur, f"INSERT INTO {table} (id, ok) VALUES (9, {bad})")
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(6,)]


def test_timestamp(cur, mariadb, table):
    cases = {
        1: ("1700000000", 1700000000),
        2: ("0", 0),
        3: ("'2024-01-02 03:04:05'", calendar.timegm((2024, 1, 2, 3, 4, 5))),
        4: ("'2024-01-02'", calendar.timegm((2024, 1, 2, 0, 0, 0))),
        5: ("'1970-01-01 00:00:00'", 0),
        6: ("'2038-01-19 03:14:08'", 2**31),
        7: ("4102444800", 4102444800),
    }
    for i, (lit, _) in cases.items():
        cur.execute(f"INSERT INTO {table} (id, ts) VALUES ({i}, {lit})")
    assert rows(cur, f"SELECT id, ts FROM {table}") == [(i, v) for i, (_, v) in cases.items()]
    _, cli = cli_select(mariadb, f"SELECT ts FROM {table}")
    assert [int(r[0]) for r in cli] == [v for _, v in cases.values()]
    assert [r[0] for r in rows(cur, f"SELECT id FROM {table} WHERE ts > 1700000000")] == [3, 4, 6, 7]
    for bad in ("'garbage'", "'2024-13-01'", "'2024-01-02 25:00:00'", "'2024-02-30'"):
        expect_error(cur, f"INSERT INTO {table} (id, ts) VALUES (99, {bad})", 1366)
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(len(cases),)]


def test_many_types_in_one_row_via_cli_then_pymysql(cur, mariadb, table):
    sql = (f"INSERT INTO {table} VALUES (9223372036854775807, 'Grüße 👋', 'it\\'s', -123, "
           "-9000000000, -0.25, 1, '2001-09-09 01:46:40', '{\"k\": [1]}', (1.5, -2, 0))")
    r = mariadb(sql)
    assert r.returncode == 0, r.stderr
    (row,) = rows(cur, f"SELECT * FROM {table}")
    assert row[:-1] == (9223372036854775807, "Grüße 👋", "it's", -123, -9000000000, -0.25, 1,
                        1000000000, '{"k":[1]}')
    assert [f32(float(x)) for x in row[-1].split(",")] == [1.5, -2.0, 0.0]
    expect_error(cur, f"INSERT INTO {table} (id) VALUES (9223372036854775807)", 1062)
