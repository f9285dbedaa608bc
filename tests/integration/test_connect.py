"""Connecting: what stock clients send on connect, protocol commands, many
clients at once, slow clients, authentication."""

import os
import re
import select
import socket
import struct
import subprocess
import threading
import time

import pymysql
import pytest

from conftest import AUTH_PASSWORD, AUTH_USER, SHA1_PASSWORD, SHA1_USER, pymysql_connect
from helpers import (COM_QUIT, Err, RawClient, col_names, expect_error, mariadb_argv,
                     parse_batch, raw_login, rows, run_mariadb, server_error)


def test_version_comment_and_version(conn, cur):
    cur.execute("select @@version_comment limit 1")
    assert col_names(cur) == ["@@version_comment"]
    got = cur.fetchall()
    assert len(got) == 1 and isinstance(got[0][0], str) and got[0][0]
    # VERSION() is the version the greeting announced.
    assert rows(cur, "SELECT VERSION()") == [(conn.get_server_info(),)]


def test_connection_id_matches_greeting(connect):
    a, b = connect(), connect()
    ids = []
    for c in (a, b):
        with c.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            (cid,), = cur.fetchall()
            assert cid == c.thread_id()
            ids.append(cid)
    assert ids[0] != ids[1]


def test_user_functions(cur):
    (u, cu), = rows(cur, "SELECT USER(), CURRENT_USER()")
    assert u.startswith("root") and cu.startswith("root")


def test_database_use_and_init_db(connect):
    c = connect()
    with c.cursor() as cur:
        cur.execute("SELECT DATABASE()")
        assert len(cur.fetchall()) == 1
        c.select_db("firstdb")                      # COM_INIT_DB
        assert rows(cur, "SELECT DATABASE()") == [("firstdb",)]
        cur.execute("USE seconddb")
        assert cur.description is None
        assert rows(cur, "SELECT DATABASE()") == [("seconddb",)]
    c2 = connect(database="fromhandshake")          # CLIENT_CONNECT_WITH_DB
    with c2.cursor() as cur:
        assert rows(cur, "SELECT DATABASE()") == [("fromhandshake",)]


def test_set_names(cur):
    for sql in ("SET NAMES utf8mb4", "SET NAMES 'utf8mb4' COLLATE 'utf8mb4_general_ci'",
                "SET NAMES utf8", "set names 'utf8mb4'"):
        assert cur.execute(sql) == 0, sql
        assert cur.description is None, sql


def test_set_autocommit_updates_status_and_variable(conn, cur):
    assert conn.get_autocommit() is True            # status bit of the last OK
    cur.execute("SET autocommit=0")
    assert conn.get_autocommit() is False
    assert str(rows(cur, "SELECT @@autocommit")[0][0]) == "0"
    cur.execute("SET autocommit=1")
    assert conn.get_autocommit() is True
    assert str(rows(cur, "SELECT @@autocommit")[0][0]) == "1"
    cur.execute("SET SESSION autocommit = 0")
    assert conn.get_autocommit() is False
    cur.execute("SET @@autocommit = 1")
    assert conn.get_autocommit() is True


def test_set_unknown_variable_is_1193(cur):
    expect_error(cur, "SET no_such_variable_xyz = 1", 1193, match="no_such_variable_xyz")
    expect_error(cur, "SET @@session.no_such_variable_xyz = 1", 1193)


def test_show_variables(cur):
    cur.execute("SHOW VARIABLES")
    assert col_names(cur) == ["Variable_name", "Value"]
    allv = dict(cur.fetchall())
    assert "max_allowed_packet" in allv and int(allv["max_allowed_packet"]) > 0
    assert rows(cur, "SHOW VARIABLES LIKE 'max_allowed_packet'") == [
        ("max_allowed_packet", allv["max_allowed_packet"])]
    some = rows(cur, "SHOW VARIABLES LIKE 'max%'")
    assert some and all(n.startswith("max") for n, _ in some)
    assert len(some) < len(allv)
    assert rows(cur, "SHOW VARIABLES LIKE 'no_such_var_%'") == []
    assert rows(cur, "SHOW SESSION VARIABLES LIKE 'max_allowed_packet'")
    assert rows(cur, "SHOW GLOBAL VARIABLES LIKE 'max_allowed_packet'")
    (v,), = rows(cur, "SELECT @@max_allowed_packet")
    assert str(v) == allv["max_allowed_packet"]


def test_show_status(cur):
    cur.execute("SHOW STATUS")
    assert col_names(cur) == ["Counter", "Value"]
    st = cur.fetchall()
    assert st
    name = st[0][0]
    assert [r[0] for r in rows(cur, "SHOW STATUS LIKE %s", (name,))] == [name]
    assert rows(cur, "SHOW STATUS LIKE 'zz_no_such_counter%'") == []


def test_show_databases(cur):
    cur.execute("SHOW DATABASES")
    assert len(cur.description) == 1
    assert len(cur.fetchall()) >= 1


def test_show_warnings_after_clean_statement(cur):
    cur.execute("SELECT 1")
    cur.execute("SHOW WARNINGS")
    assert col_names(cur) == ["Level", "Code", "Message"]
    assert cur.fetchall() == ()


def test_ping_and_quit(connect, server):
    c = connect()
    c.ping(reconnect=False)                         # COM_PING
    c.close()                                       # COM_QUIT
    with raw_login(server.mysql_port) as raw:
        raw.command(COM_QUIT)
        assert raw.closed_by_server(), "server kept the connection after COM_QUIT"


def test_field_list(cur, uniq, server):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, tag STRING, n INT, f FLOAT)")
    with raw_login(server.mysql_port, db="loupe") as raw:
        cols = raw.field_list(t)
        assert [c.name for c in cols] == ["id", "title", "tag", "n", "f"]
        assert (cols[0].type, cols[3].type, cols[4].type) == (8, 3, 4)   # LONGLONG LONG FLOAT
        with pytest.raises(Err) as ei:
            raw.field_list(t + "_missing")
        assert ei.value.errno == 1146
        # The connection is still usable afterwards.
        assert raw.query("SELECT 1")[1] == [[b"1"]]


def test_multi_statement_refused_trailing_semicolon_fine(cur):
    server_error(cur, "SELECT 1; SELECT 2")
    assert rows(cur, "SELECT 1;") == [(1,)]
    assert rows(cur, "SELECT 3 ;  ") == [(3,)]


def test_any_user_empty_password_on_loopback(connect):
    c = connect(user="somebody")
    with c.cursor() as cur:
        assert rows(cur, "SELECT 1") == [(1,)]
        (u,), = rows(cur, "SELECT USER()")
        assert u.startswith("somebody")


# ---------------------------------------------------------------------------
# The mariadb command-line client

def test_mariadb_cli_batch(mariadb):
    r = mariadb("select @@version_comment limit 1; select 40+2 as answer", "--batch")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode().split("\n")
    assert out[0] == "@@version_comment" and out[1]
    assert out[2:4] == ["answer", "42"]


def test_mariadb_cli_statements_from_stdin(mariadb, uniq):
    t = uniq()
    script = (f"CREATE TABLE {t} (tag STRING, n INT);\n"
              f"INSERT INTO {t} (id, tag, n) VALUES (1, 'a', 10), (2, 'b', 20);\n"
              f"SELECT id, tag, n FROM {t} ORDER BY id;\n").encode()
    r = mariadb(None, "--batch", input=script)
    assert r.returncode == 0, r.stderr
    header, got = parse_batch(r.stdout)
    assert header == ["id", "tag", "n"] and got == [["1", "a", "10"], ["2", "b", "20"]]


def test_mariadb_cli_error_exit(mariadb):
    r = mariadb("SELECT * FORM nowhere", "--batch")
    assert r.returncode == 1
    assert re.search(r"^ERROR 1064 \(42000\)( at line 1)?: near 'FORM nowhere' at line 1 col 10",
                     r.stderr.decode(), re.M), r.stderr


def test_mariadb_cli_interactive(server, cur, uniq, tmp_path):
    """The interactive client sends `select @@version_comment limit 1`,
    and with a database given it builds its completion list with SHOW TABLES
    and COM_FIELD_LIST for every table."""
    cur.execute(f"CREATE TABLE {uniq()} (title TEXT, n INT)")
    comment = rows(cur, "select @@version_comment limit 1")[0][0]
    master, slave = os.openpty()
    env = dict(os.environ, TERM="dumb", HOME=str(tmp_path), MYSQL_HISTFILE="/dev/null")
    argv = mariadb_argv(server.mysql_port, database="loupe")
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                         start_new_session=True)
    os.close(slave)
    out, sent = b"", False
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 0.2)
            if r:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    break
                if not data:
                    break
                out += data
            if not sent and b"]> " in out:
                os.write(master, b"select 40+2 as answer;\nquit\n")
                sent = True
            if p.poll() is not None and not r:
                break
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
        os.close(master)
    text = out.decode("utf-8", "replace")
    assert "Welcome to the MariaDB monitor" in text, text
    assert comment in text, text
    assert sent, f"no prompt:\n{text}"
    assert "answer" in text and "42" in text, text
    assert "ERROR" not in text, text
    assert p.returncode == 0, text


# ---------------------------------------------------------------------------
# Many clients, slow clients

def test_256_concurrent_connections(server, cur, uniq):
    n = 256
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n BIGINT)")
    cur.execute(f"INSERT INTO {t} (id, n) VALUES " +
                ",".join(f"({i}, {i * 1000 + 7})" for i in range(1, n + 1)))
    barrier = threading.Barrier(n)
    errors, conn_ids, answers = [], [None] * n, [None] * n

    def client(i):
        c = None
        try:
            c = pymysql_connect(server.mysql_port, connect_timeout=60, read_timeout=120)
            barrier.wait(timeout=120)               # all 256 are open now
            with c.cursor() as k:
                k.execute("SELECT CONNECTION_ID()")
                conn_ids[i] = k.fetchone()[0]
                k.execute(f"SELECT id, n FROM {t} WHERE id = %s", (i + 1,))
                answers[i] = k.fetchall()
            barrier.wait(timeout=120)               # still all open
        except Exception as e:                      # reported below, per client
            errors.append((i, repr(e)))
            barrier.abort()
        finally:
            if c is not None:
                c.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    real = [e for e in errors if "BrokenBarrierError" not in e[1]]
    assert not real and not errors, (real or errors)[:5]
    assert len(set(conn_ids)) == n
    for i in range(n):
        assert answers[i] == ((i + 1, (i + 1) * 1000 + 7),), (i, answers[i])


def test_slow_clients_do_not_block_others(server):
    """More stalled clients than worker threads (the server runs with
    --threads 4): silent after the greeting, half a handshake response, half
    a command. A new client must still be served promptly."""
    stalled = []
    try:
        for _ in range(8):                          # never answer the greeting
            stalled.append(socket.create_connection(("127.0.0.1", server.mysql_port)))
        for _ in range(8):                          # half a handshake response
            raw = RawClient(server.mysql_port)
            raw.read_greeting()
            body = raw.handshake_response()
            raw.sock.sendall(struct.pack("<I", len(body))[:3] + b"\x01" + body[:10])
            stalled.append(raw.sock)
        for _ in range(8):                          # half a COM_QUERY
            raw = raw_login(server.mysql_port)
            raw.sock.sendall(struct.pack("<I", 100)[:3] + b"\x00" + b"\x03SELE")
            stalled.append(raw.sock)
        t0 = time.monotonic()
        c = pymysql_connect(server.mysql_port, connect_timeout=10, read_timeout=10)
        with c.cursor() as cur:
            for i in range(20):
                assert rows(cur, f"SELECT {i} + 1") == [(i + 1,)]
        c.close()
        assert time.monotonic() - t0 < 10
        r = run_mariadb(server.mysql_port, "SELECT 7*6", "--batch", "-N", timeout=20)
        assert r.returncode == 0 and r.stdout.strip() == b"42", r.stderr
    finally:
        for s in stalled:
            s.close()
    c = pymysql_connect(server.mysql_port)
    with c.cursor() as cur:
        assert rows(cur, "SELECT 1") == [(1,)]
    c.close()


# ---------------------------------------------------------------------------
# Authentication (second server, configured with a user and password)

def test_auth_right_password(auth_server):
    c = pymysql_connect(auth_server.mysql_port, user=AUTH_USER, password=AUTH_PASSWORD)
    with c.cursor() as cur:
        (u,), = rows(cur, "SELECT USER()")
        assert u.startswith(AUTH_USER)
        assert rows(cur, "SELECT 1") == [(1,)]
    c.close()


@pytest.mark.parametrize("user,password", [
    (AUTH_USER, "wrong"),
    (AUTH_USER, ""),
    (AUTH_USER, AUTH_PASSWORD + "x"),
    ("mallory", AUTH_PASSWORD),
    ("root", ""),
])
def test_auth_refused(auth_server, user, password):
    with pytest.raises(pymysql.err.OperationalError) as ei:
        pymysql_connect(auth_server.mysql_port, user=user, password=password)
    assert ei.value.args[0] == 1045, ei.value.args
    # A refusal leaves the server serving the right user.
    c = pymysql_connect(auth_server.mysql_port, user=AUTH_USER, password=AUTH_PASSWORD)
    c.close()


def test_auth_refusal_sqlstate(auth_server):
    with RawClient(auth_server.mysql_port) as raw:
        with pytest.raises(Err) as ei:
            raw.login(user=AUTH_USER, password="wrong")
        assert (ei.value.errno, ei.value.sqlstate) == (1045, "28000")
        assert AUTH_USER in ei.value.message


def test_auth_mariadb_cli_with_password(auth_server):
    ok = run_mariadb(auth_server.mysql_port, "SELECT 1+1", "--batch", "-N",
                     user=AUTH_USER, password=AUTH_PASSWORD)
    assert ok.returncode == 0 and ok.stdout.strip() == b"2", ok.stderr
    bad = run_mariadb(auth_server.mysql_port, "SELECT 1", "--batch",
                      user=AUTH_USER, password="wrong")
    assert bad.returncode == 1
    assert re.search(r"^ERROR 1045 \(28000\)", bad.stderr.decode(), re.M), bad.stderr


def test_max_connections(auth_server):
    """max_connections = 8: eight clients are served, the ninth gets 1040,
    and a slot freed is usable again."""
    held = []
    try:
        for _ in range(8):
            held.append(pymysql_connect(auth_server.mysql_port, user=AUTH_USER,
                                        password=AUTH_PASSWORD))
        with pytest.raises(pymysql.err.OperationalError) as ei:
            pymysql_connect(auth_server.mysql_port, user=AUTH_USER, password=AUTH_PASSWORD,
                            retry_1040=False)
        assert ei.value.args[0] == 1040
        held.pop().close()
        c = pymysql_connect(auth_server.mysql_port, user=AUTH_USER, password=AUTH_PASSWORD)
        held.append(c)
        with c.cursor() as cur:
            assert rows(cur, "SELECT 1") == [(1,)]
    finally:
        for c in held:
            c.close()


def test_password_sha1_config(sha1_server):
    c = pymysql_connect(sha1_server.mysql_port, user=SHA1_USER, password=SHA1_PASSWORD)
    with c.cursor() as cur:
        assert rows(cur, "SELECT 1") == [(1,)]
    c.close()
    with pytest.raises(pymysql.err.OperationalError) as ei:
        pymysql_connect(sha1_server.mysql_port, user=SHA1_USER, password=SHA1_PASSWORD + "!")
    assert ei.value.args[0] == 1045


def test_connect_timeout_drops_silent_clients(sha1_server):
    """connect_timeout = 1: a client that never finishes the handshake is
    disconnected, and others are served meanwhile."""
    silent = RawClient(sha1_server.mysql_port)
    silent.read_greeting()
    half = RawClient(sha1_server.mysql_port)
    half.read_greeting()
    body = half.handshake_response(SHA1_USER, SHA1_PASSWORD)
    half.sock.sendall(struct.pack("<I", len(body))[:3] + b"\x01" + body[:5])
    t0 = time.monotonic()
    c = pymysql_connect(sha1_server.mysql_port, user=SHA1_USER, password=SHA1_PASSWORD)
    c.close()
    assert silent.closed_by_server(8) and half.closed_by_server(8)
    assert 0.5 < time.monotonic() - t0 < 8
    silent.close()
    half.close()
