"""INSERT / REPLACE / UPDATE / DELETE, value conversion errors and
transactions."""

import re

import pytest

from helpers import expect_error, rows, server_error

SERVER_STATUS_IN_TRANS = 0x0001


@pytest.fixture
def table(cur, uniq):
    """A fresh table (tag STRING, n INT, f FLOAT, body TEXT)."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (tag STRING, n INT, f FLOAT, body TEXT)")
    return t


def ids(cur, t):
    return [r[0] for r in rows(cur, f"SELECT id FROM {t} ORDER BY id ASC LIMIT 1000")]


def test_insert_with_and_without_column_list(cur, table):
    assert cur.execute(f"INSERT INTO {table} VALUES (1, 'a', 10, 0.5, 'text one')") == 1
    assert cur.execute(f"INSERT INTO {table} (n, tag, id) VALUES (20, 'b', 2)") == 1
    assert cur.execute(f"INSERT INTO {table} (id, tag) VALUES (3, 'c')") == 1
    assert rows(cur, f"SELECT id, tag, n, f, body FROM {table}") == [
        (1, "a", 10, 0.5, "text one"),
        (2, "b", 20, None, None),
        (3, "c", None, None, None),
    ]


def test_many_rows_per_statement(cur, table):
    n = 1000
    values = ",".join(f"({i}, 'tag{i}', {i * 3}, {i}.25, 'body {i}')" for i in range(1, n + 1))
    assert cur.execute(f"INSERT INTO {table} (id, tag, n, f, body) VALUES {values}") == n
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(n,)]
    assert rows(cur, f"SELECT id, tag, n, f, body FROM {table} WHERE id = 777") == [
        (777, "tag777", 2331, 777.25, "body 777")]


def test_auto_ids_and_last_insert_id(connect, conn, cur, table):
    assert cur.execute(f"INSERT INTO {table} (tag) VALUES ('a'), ('b'), ('c')") == 3
    assert cur.lastrowid == 1
    assert rows(cur, "SELECT LAST_INSERT_ID()") == [(1,)]
    assert rows(cur, f"SELECT id, tag FROM {table}") == [(1, "a"), (2, "b"), (3, "c")]
    cur.execute(f"INSERT INTO {table} (id, tag) VALUES (0, 'zero')")
    assert cur.lastrowid == 4
    cur.execute(f"INSERT INTO {table} (id, tag) VALUES (NULL, 'null')")
    assert cur.lastrowid == 5
    cur.execute(f"INSERT INTO {table} VALUES (0, 'nolist', 1, 1.0, 'x')")
    assert cur.lastrowid == 6
    cur.execute(f"INSERT INTO {table} (id, tag) VALUES (100, 'explicit')")
    cur.execute(f"INSERT INTO {table} (tag) VALUES ('after100'), ('after101')")
    assert cur.lastrowid == 101
    assert rows(cur, "SELECT LAST_INSERT_ID()") == [(101,)]
    # "One more than the largest id the table has ever held": deleting the
    # largest does not make its id reusable.
    cur.execute(f"DELETE FROM {table} WHERE id IN (101, 102)")
    cur.execute(f"INSERT INTO {table} (tag) VALUES ('after-delete')")
    assert cur.lastrowid == 103
    assert ids(cur, table) == [1, 2, 3, 4, 5, 6, 100, 103]
    # LAST_INSERT_ID() belongs to the session.
    with connect().cursor() as other:
        assert rows(other, "SELECT LAST_INSERT_ID()") == [(0,)]


def test_max_id(cur, table):
    top = 9223372036854775807
    cur.execute(f"INSERT INTO {table} (id, tag) VALUES ({top}, 'top')")
    assert rows(cur, f"SELECT id, tag FROM {table} WHERE id = {top}") == [(top, "top")]
    assert rows(cur, f"SELECT id FROM {table} WHERE id IN ({top}, 1)") == [(top,)]
    # No id is left to assign: refused, never wrapped to a negative or zero id.
    server_error(cur, f"INSERT INTO {table} (tag) VALUES ('overflow')")
    assert ids(cur, table) == [top]
    expect_error(cur, f"INSERT INTO {table} (id, tag) VALUES (9223372036854775808, 'x')", 1264)
    expect_error(cur, f"INSERT INTO {table} (id, tag) VALUES (-5, 'x')", 1264)
    assert ids(cur, table) == [top]


def test_duplicate_id_1062_writes_nothing(cur, table):
    cur.execute(f"INSERT INTO {table} (id, tag) VALUES (5, 'five')")
    expect_error(cur, f"INSERT INTO {table} (id, tag) VALUES (6, 'x'), (5, 'y'), (7, 'z')",
                 1062, match=r"duplicate id '5'")
    expect_error(cur, f"INSERT INTO {table} (id, tag) VALUES (8, 'x'), (8, 'y')",
                 1062, match=r"duplicate id '8'")
    assert rows(cur, f"SELECT id, tag FROM {table}") == [(5, "five")]


def test_failed_row_writes_nothing(cur, table):
    expect_error(cur, f"INSERT INTO {table} (id, tag, n) VALUES (10, 'a', 1), (11, 'b', 'nan?')",
                 1366)
    expect_error(cur, f"INSERT INTO {table} (id, n) VALUES (12, 1), (13, 2147483648)", 1264)
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(0,)]


def test_replace(cur, table):
    cur.execute(f"INSERT INTO {table} (id, tag, n, f) VALUES (1, 'a', 1, 1.5), (2, 'b', 2, 2.5)")
    assert cur.execute(f"REPLACE INTO {table} (id, tag) VALUES (1, 'A')") == 1
    # The whole row is replaced: columns not listed become NULL.
    assert rows(cur, f"SELECT id, tag, n, f FROM {table} WHERE id = 1") == [(1, "A", None, None)]
    assert cur.execute(f"REPLACE INTO {table} VALUES (2, 'B', 22, 0.25, 'body'), "
                       "(3, 'C', 33, 0.5, 'new')") == 2
    assert rows(cur, f"SELECT id, tag, n, f, body FROM {table}") == [
        (1, "A", None, None, None), (2, "B", 22, 0.25, "body"), (3, "C", 33, 0.5, "new")]


def test_update(cur, table):
    cur.execute(f"INSERT INTO {table} (id, tag, n, f, body) VALUES "
                "(1, 'a', 10, 1.0, 't1'), (2, 'b', 20, 2.0, 't2'), (3, 'c', 30, 3.0, 't3'), "
                "(4, 'd', 40, 4.0, 't4'), (5, 'e', 50, 5.0, 't5')")
    assert cur.execute(f"UPDATE {table} SET n = 21 WHERE id = 2") == 1
    assert cur.execute(f"UPDATE {table} SET tag = 'z', f = 9.5 WHERE id IN (3, 4, 999)") == 2
    assert cur.execute(f"UPDATE {table} SET n = -1 WHERE tag = 'z' AND n > 35") == 1
    assert cur.execute(f"UPDATE {table} SET n = 0 WHERE id = 999") == 0
    assert rows(cur, f"SELECT id, tag, n, f, body FROM {table}") == [
        (1, "a", 10, 1.0, "t1"), (2, "b", 21, 2.0, "t2"), (3, "z", 30, 9.5, "t3"),
        (4, "z", -1, 9.5, "t4"), (5, "e", 50, 5.0, "t5")]
    assert cur.execute(f"UPDATE {table} SET f = 0.5") == 5
    assert {r[0] for r in rows(cur, f"SELECT f FROM {table}")} == {0.5}


def test_update_refusals(cur, table):
    cur.execute(f"INSERT INTO {table} (id, tag, n, body) VALUES (1, 'a', 1, 'text')")
    server_error(cur, f"UPDATE {table} SET body = 'new text' WHERE id = 1")
    server_error(cur, f"UPDATE {table} SET id = 2 WHERE id = 1")
    expect_error(cur, f"UPDATE {table} SET nosuchcol = 1 WHERE id = 1", 1054, match="nosuchcol")
    expect_error(cur, f"UPDATE {table} SET n = 'abc' WHERE id = 1", 1366)
    expect_error(cur, f"UPDATE {table} SET n = 2147483648 WHERE id = 1", 1264)
    expect_error(cur, f"UPDATE {table}_missing SET n = 1 WHERE id = 1", 1146)
    assert rows(cur, f"SELECT id, tag, n, body FROM {table}") == [(1, "a", 1, "text")]


def test_delete(cur, table):
    cur.execute(f"INSERT INTO {table} (id, tag, n) VALUES " +
                ",".join(f"({i}, 't{i}', {i * 10})" for i in range(1, 11)))
    assert cur.execute(f"DELETE FROM {table} WHERE id = 1") == 1
    assert cur.execute(f"DELETE FROM {table} WHERE id IN (2, 3, 999)") == 2
    assert cur.execute(f"DELETE FROM {table} WHERE n >= 80") == 3
    assert cur.execute(f"DELETE FROM {table} WHERE id = 1") == 0
    assert ids(cur, table) == [4, 5, 6, 7]
    server_error(cur, f"DELETE FROM {table}")
    assert ids(cur, table) == [4, 5, 6, 7]
    expect_error(cur, f"DELETE FROM {table}_missing WHERE id = 1", 1146)


@pytest.mark.parametrize("values", [
    "(id, tag) VALUES (1)",
    "(id, tag) VALUES (1, 'a', 5)",
    "VALUES (1, 'a')",
    "VALUES (1, 'a', 1, 1.0, 'b', 'extra')",
    "(id, tag) VALUES (1, 'a'), (2)",
])
def test_column_count_mismatch_1136(cur, table, values):
    expect_error(cur, f"INSERT INTO {table} {values}", 1136)
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(0,)]


def test_unknown_column_1054(cur, table):
    cur.execute(f"INSERT INTO {table} (id, n) VALUES (1, 1)")
    for sql in (f"INSERT INTO {table} (id, nosuchcol) VALUES (2, 1)",
                f"SELECT nosuchcol FROM {table}",
                f"SELECT id FROM {table} WHERE nosuchcol = 1",
                f"SELECT id FROM {table} ORDER BY nosuchcol"):
        expect_error(cur, sql, 1054, match="nosuchcol")
    assert ids(cur, table) == [1]


@pytest.mark.parametrize("col,value,stored", [
    ("n", "'42'", 42),
    ("n", "3.0", 3),
    ("n", "-7", -7),
    ("f", "'2.5'", 2.5),
    ("f", "3", 3.0),
    ("tag", "42", "42"),
])
def test_strict_conversions_accepted(cur, table, col, value, stored):
    cur.execute(f"INSERT INTO {table} (id, {col}) VALUES (1, {value})")
    assert rows(cur, f"SELECT {col} FROM {table}") == [(stored,)]


@pytest.mark.parametrize("col,value", [
    ("n", "'abc'"),
    ("n", "1.5"),
    ("n", "'12abc'"),
    ("f", "'abc'"),
    ("f", "''"),
])
def test_type_errors_1366(cur, table, col, value):
    expect_error(cur, f"INSERT INTO {table} (id, {col}) VALUES (1, {value})", 1366)
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(0,)]


def test_invalid_utf8_1366_names_offset(cur, table):
    sql = f"INSERT INTO {table} (id, tag) VALUES (1, 'ab".encode() + b"\xff\xfe" + b"cd')"
    msg = expect_error(cur, sql, 1366, match=r"(?i)utf-?8")
    # The offset inside the value (2) or inside the statement.
    off = sql.index(b"\xff")
    assert re.search(rf"\b(2|{off})\b", msg), msg
    assert rows(cur, f"SELECT COUNT(*) FROM {table}") == [(0,)]


@pytest.mark.parametrize("coltype,value,ok", [
    ("INT", "2147483647", True),
    ("INT", "-2147483648", True),
    ("INT", "2147483648", False),
    ("INT", "-2147483649", False),
    ("INT", "9223372036854775807", False),
    ("BIGINT", "9223372036854775807", True),
    ("BIGINT", "-9223372036854775808", True),
    ("BIGINT", "9223372036854775808", False),
    ("BIGINT", "-9223372036854775809", False),
    ("FLOAT", "1e39", False),
    ("FLOAT", "-1e39", False),
    ("TIMESTAMP", "-1", False),
])
def test_range_1264(cur, uniq, coltype, value, ok):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (qty {coltype})")
    sql = f"INSERT INTO {t} (id, qty) VALUES (1, {value})"
    if ok:
        cur.execute(sql)
        assert str(rows(cur, f"SELECT qty FROM {t}")[0][0]) == value
    else:
        expect_error(cur, sql, 1264, match=r"qty|line \d+ col \d+")
        assert rows(cur, f"SELECT COUNT(*) FROM {t}") == [(0,)]


# ---------------------------------------------------------------------------
# Transactions

def test_begin_commit_visibility(connect, table):
    a, b = connect(), connect()
    ca, cb = a.cursor(), b.cursor()
    a.begin()
    assert a.server_status & SERVER_STATUS_IN_TRANS
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (1, 'x'), (2, 'y')")
    # Buffered until COMMIT, for everyone including this session.
    assert rows(ca, f"SELECT COUNT(*) FROM {table}") == [(0,)]
    assert rows(cb, f"SELECT COUNT(*) FROM {table}") == [(0,)]
    a.commit()
    assert not a.server_status & SERVER_STATUS_IN_TRANS
    assert rows(ca, f"SELECT id FROM {table}") == [(1,), (2,)]
    assert rows(cb, f"SELECT id FROM {table}") == [(1,), (2,)]


def test_rollback_discards(connect, table):
    a, b = connect(), connect()
    ca, cb = a.cursor(), b.cursor()
    ca.execute(f"INSERT INTO {table} (id, tag, n) VALUES (1, 'keep', 1)")
    ca.execute("START TRANSACTION")
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (2, 'gone')")
    ca.execute(f"UPDATE {table} SET n = 99 WHERE id = 1")
    ca.execute(f"DELETE FROM {table} WHERE id = 1")
    assert rows(cb, f"SELECT id, n FROM {table}") == [(1, 1)]
    a.rollback()
    assert rows(ca, f"SELECT id, tag, n FROM {table}") == [(1, "keep", 1)]
    assert rows(cb, f"SELECT id, tag, n FROM {table}") == [(1, "keep", 1)]


def test_autocommit_off(connect, table):
    a, b = connect(), connect()
    ca, cb = a.cursor(), b.cursor()
    ca.execute("SET autocommit=0")
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (1, 'one')")
    assert rows(cb, f"SELECT COUNT(*) FROM {table}") == [(0,)]
    ca.execute("COMMIT")
    assert rows(cb, f"SELECT id FROM {table}") == [(1,)]
    # Still autocommit=0: the next write opens a new transaction.
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (2, 'two')")
    assert rows(cb, f"SELECT id FROM {table}") == [(1,)]
    ca.execute("ROLLBACK")
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (3, 'three')")
    ca.execute("COMMIT")
    assert rows(cb, f"SELECT id FROM {table}") == [(1,), (3,)]


def test_transaction_writes_one_table_only(connect, table, uniq):
    other = uniq()
    a = connect()
    ca = a.cursor()
    ca.execute(f"CREATE TABLE {other} (tag STRING)")
    a.begin()
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (1, 'x')")
    server_error(ca, f"INSERT INTO {other} (id, tag) VALUES (1, 'y')")
    a.rollback()
    assert rows(ca, f"SELECT COUNT(*) FROM {other}") == [(0,)]
    assert rows(ca, f"SELECT COUNT(*) FROM {table}") == [(0,)]


def test_ddl_commits_open_transaction(connect, table, uniq):
    a, b = connect(), connect()
    ca, cb = a.cursor(), b.cursor()
    a.begin()
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (1, 'x')")
    assert rows(cb, f"SELECT COUNT(*) FROM {table}") == [(0,)]
    ca.execute(f"CREATE TABLE {uniq()} (n INT)")
    assert rows(cb, f"SELECT id FROM {table}") == [(1,)]
    ca.execute("ROLLBACK")                          # nothing left to roll back
    assert rows(cb, f"SELECT id FROM {table}") == [(1,)]


def test_commit_conflict_applies_nothing(connect, table):
    a, b = connect(), connect()
    ca, cb = a.cursor(), b.cursor()
    a.begin()
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (5, 'from a'), (6, 'from a')")
    cb.execute(f"INSERT INTO {table} (id, tag) VALUES (5, 'from b')")
    code, msg = server_error(ca, "COMMIT")
    assert code == 1062, (code, msg)
    assert rows(cb, f"SELECT id, tag FROM {table}") == [(5, "from b")]
    # The session is usable and out of the transaction.
    ca.execute(f"INSERT INTO {table} (id, tag) VALUES (7, 'later')")
    assert rows(cb, f"SELECT id FROM {table}") == [(5,), (7,)]
