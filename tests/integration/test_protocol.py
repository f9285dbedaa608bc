"""The MySQL wire protocol driven by hand over raw sockets: the greeting,
OK / ERR / result-set packets, and malformed, truncated and oversized
packets. After every abuse the server must still serve a new client."""

import os
import random
import struct
import time

import pytest

from conftest import AUTH_PASSWORD, AUTH_USER, pymysql_connect
from helpers import (BASE_CAPS, COM_PING, COM_QUERY, Err, Ok, RawClient,
                     raw_login, rows)

NOT_NULL_FLAG, PRI_KEY_FLAG = 0x1, 0x2
SERVER_STATUS_AUTOCOMMIT = 0x2
BINARY_CHARSET = 63


def assert_serves(port, **login):
    """A brand-new client logs in and gets a right answer."""
    with raw_login(port, **login) as c:
        cols, got = c.query("SELECT 6*7")
        assert got == [[b"42"]]


def reply_or_close(raw, timeout=10.0):
    """The next packet, or None when the server closed the connection."""
    raw.sock.settimeout(timeout)
    return raw.read_packet()


def test_greeting(server, conn):
    with RawClient(server.mysql_port) as raw:
        g = raw.read_greeting()
    assert g["version"] == conn.get_server_info()
    assert len(g["salt"]) == 20 and b"\0" not in g["salt"]
    assert g["plugin"] == "mysql_native_password"
    assert g["caps"] & 0x200 and g["caps"] & 0x8000       # PROTOCOL_41, SECURE_CONNECTION
    assert g["status"] & SERVER_STATUS_AUTOCOMMIT
    with RawClient(server.mysql_port) as raw2:
        assert raw2.read_greeting()["salt"] != g["salt"]       # a fresh salt per client


def test_ok_packet(server, cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT, s STRING)")
    with raw_login(server.mysql_port) as raw:
        ok = raw.query(f"INSERT INTO {t} (n) VALUES (1), (2)")
        assert isinstance(ok, Ok)
        assert (ok.affected, ok.last_insert_id) == (2, 1)
        assert ok.status & SERVER_STATUS_AUTOCOMMIT
        ok = raw.query(f"DELETE FROM {t} WHERE id IN (1, 2, 3)")
        assert ok.affected == 2
        cols, got = raw.query(f"SELECT id, n, s FROM {t}")
        assert [c.name for c in cols] == ["id", "n", "s"] and got == []


def test_column_definitions(server, cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT, s STRING)")
    cur.execute(f"INSERT INTO {t} (id, n, s) VALUES (1, NULL, 'x')")
    with raw_login(server.mysql_port) as raw:
        cols, got = raw.query(f"SELECT id, n, s FROM {t}")
    assert got == [[b"1", None, b"x"]]
    cid, cn, cs = cols
    assert (cid.type, cn.type, cs.type) == (8, 3, 253)
    assert cid.flags & NOT_NULL_FLAG and cid.flags & PRI_KEY_FLAG
    assert not cn.flags & NOT_NULL_FLAG
    assert cid.charset == BINARY_CHARSET and cn.charset == BINARY_CHARSET
    assert cs.charset != BINARY_CHARSET


ERRNO_SQLSTATE = [
    ("SELECT * FORM x", 1064, "42000"),
    ("SELECT * FROM {t}_missing", 1146, "42S02"),
    ("DROP TABLE {t}_missing", 1051, "42S02"),
    ("CREATE TABLE {t} (n INT)", 1050, "42S01"),
    ("SELECT nosuch FROM {t}", 1054, "42S22"),
    ("CREATE TABLE {t}_dup (a INT, a INT)", 1060, "42S21"),
    ("INSERT INTO {t} (id, n) VALUES (1, 1)", 1062, "23000"),
    ("INSERT INTO {t} (id, n) VALUES (2)", 1136, "21S01"),
    ("INSERT INTO {t} (id, n) VALUES (2, 2147483648)", 1264, "22003"),
    ("INSERT INTO {t} (id, n) VALUES (2, 'abc')", 1366, "HY000"),
    ("SET no_such_variable_q = 1", 1193, "HY000"),
]


def test_error_packets_errno_and_sqlstate(server, cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT)")
    cur.execute(f"INSERT INTO {t} (id, n) VALUES (1, 1)")
    with raw_login(server.mysql_port) as raw:
        for sql, errno, state in ERRNO_SQLSTATE:
            with pytest.raises(Err) as ei:
                raw.query(sql.format(t=t))
            assert (ei.value.errno, ei.value.sqlstate) == (errno, state), (sql, ei.value.message)
        assert raw.query("SELECT 1")[1] == [[b"1"]]


# ---------------------------------------------------------------------------
# Malformed input before authentication

def test_garbage_instead_of_handshake_response(server):
    rng = random.Random(7)
    for n in (1, 5, 40, 300):
        with RawClient(server.mysql_port) as raw:
            raw.read_greeting()
            raw.send_packet(bytes(rng.randrange(256) for _ in range(n)), seq=1)
            p = reply_or_close(raw)
            assert p is None or p[0] == 0xff, f"garbage of {n} bytes accepted: {p!r}"
            assert raw.closed_by_server(10)
    # Unframed garbage (a header promising who knows what), then hang up.
    with RawClient(server.mysql_port) as raw:
        raw.read_greeting()
        raw.sock.sendall(os.urandom(64))
    assert_serves(server.mysql_port)


@pytest.mark.parametrize("cut", [0, 1, 4, 8, 9, 20, 31, 32, 34])
def test_truncated_handshake_response(server, cut):
    """The response cut short inside a well-framed packet: the fixed part
    (32 bytes) or the user name ends early. Never a login."""
    with RawClient(server.mysql_port) as raw:
        raw.read_greeting()
        body = raw.handshake_response()
        raw.send_packet(body[:cut], seq=1)
        p = reply_or_close(raw)
        assert p is None or p[0] == 0xff, f"truncated response ({cut} bytes) accepted: {p!r}"
    assert_serves(server.mysql_port)


def test_header_promises_more_then_close(server):
    with RawClient(server.mysql_port) as raw:
        raw.read_greeting()
        body = raw.handshake_response()
        raw.sock.sendall(struct.pack("<I", len(body) + 50)[:3] + b"\x01" + body)
    with raw_login(server.mysql_port) as raw:
        raw.sock.sendall(struct.pack("<I", 1000)[:3] + b"\x00" + b"\x03SELECT 1")
    with raw_login(server.mysql_port) as raw:
        raw.sock.sendall(b"\x10\x00")                      # half a header
    assert_serves(server.mysql_port)


def test_handshake_wrong_sequence_id(server):
    with RawClient(server.mysql_port) as raw:
        raw.read_greeting()
        raw.send_packet(raw.handshake_response(), seq=5)
        p = reply_or_close(raw)
        assert p is None or p[0] == 0xff, f"out-of-order response accepted: {p!r}"
    assert_serves(server.mysql_port)


def test_handshake_response_with_bad_lengths(server):
    """Length fields pointing past the end of the packet."""
    with RawClient(server.mysql_port) as raw:
        raw.read_greeting()
        body = struct.pack("<IIB23x", BASE_CAPS, 1 << 24, 45) + b"root\0" + b"\xff" + b"abc"
        raw.send_packet(body, seq=1)
        p = reply_or_close(raw)
        assert p is None or p[0] == 0xff, p
    with RawClient(server.mysql_port) as raw:
        raw.read_greeting()
        # No NUL after the user name, no plugin name.
        body = struct.pack("<IIB23x", BASE_CAPS, 1 << 24, 45) + b"r" * 200
        raw.send_packet(body, seq=1)
        p = reply_or_close(raw)
        assert p is None or p[0] == 0xff, p
    assert_serves(server.mysql_port)


# ---------------------------------------------------------------------------
# Malformed input after authentication

def test_command_wrong_sequence_id(server):
    with raw_login(server.mysql_port) as raw:
        raw.send_packet(bytes([COM_QUERY]) + b"SELECT 1", seq=3)
        p = reply_or_close(raw)
        assert p is None or p[0] == 0xff, f"out-of-order command answered: {p!r}"
    assert_serves(server.mysql_port)


def test_zero_length_packet(server):
    with raw_login(server.mysql_port) as raw:
        raw.send_packet(b"", seq=0)
        p = reply_or_close(raw)
        assert p is None or p[0] == 0xff, f"empty command answered: {p!r}"
    assert_serves(server.mysql_port)


@pytest.mark.parametrize("cmd", [0x00, 0x0f, 0x40, 0x7f, 0xee, 0xff])
def test_unknown_command_1047(server, cmd):
    with raw_login(server.mysql_port) as raw:
        raw.command(cmd, b"whatever")
        with pytest.raises(Err) as ei:
            raw.read_reply()
        assert ei.value.errno == 1047, ei.value.message
        # The connection stays usable, as with MySQL.
        raw.command(COM_PING)
        assert isinstance(raw.read_reply(), Ok)
    assert_serves(server.mysql_port)


def test_empty_query(server):
    with raw_login(server.mysql_port) as raw:
        raw.command(COM_QUERY, b"")
        with pytest.raises(Err):
            raw.read_reply()
        raw.command(COM_QUERY, b"   ")
        with pytest.raises(Err):
            raw.read_reply()
        assert raw.query("SELECT 1")[1] == [[b"1"]]


def test_many_bad_connections_then_service(server):
    """A burst of connections that die in every state."""
    for i in range(40):
        raw = RawClient(server.mysql_port)
        stage = i % 4
        if stage >= 1:
            raw.read_greeting()
        if stage >= 2:
            raw.send_packet(raw.handshake_response(), seq=1)
        if stage == 3:
            raw.read_packet()
            raw.send_packet(bytes([COM_QUERY]) + b"SELECT * FROM nowhere WHERE", seq=0)
        raw.close()
    assert_serves(server.mysql_port)


# ---------------------------------------------------------------------------
# Oversized packets (the auth server has max_packet_size = 64K)

def auth_login(port):
    return raw_login(port, user=AUTH_USER, password=AUTH_PASSWORD)


def test_max_allowed_packet_reported(auth_server):
    c = pymysql_connect(auth_server.mysql_port, user=AUTH_USER, password=AUTH_PASSWORD)
    with c.cursor() as cur:
        assert rows(cur, "SELECT @@max_allowed_packet") in ([(65536,)], [("65536",)])
    c.close()


def test_oversized_packet_refused_without_reading_it(auth_server):
    port = auth_server.mysql_port
    for declared in (65537, 1 << 20, 0xFFFFFE):
        with auth_login(port) as raw:
            t0 = time.monotonic()
            # Only the header: a server that tried to read the payload would
            # wait for bytes that never come.
            raw.sock.sendall(struct.pack("<I", declared)[:3] + b"\x00")
            p = reply_or_close(raw, timeout=10)
            assert p is not None and p[0] == 0xff, f"no ERR for a {declared}-byte packet"
            assert struct.unpack_from("<H", p, 1)[0] == 1153
            assert p[3:9] == b"#08S01"
            assert raw.closed_by_server(10)
            assert time.monotonic() - t0 < 10
    assert_serves(port, user=AUTH_USER, password=AUTH_PASSWORD)


def test_oversized_handshake_response_refused(auth_server):
    with RawClient(auth_server.mysql_port) as raw:
        raw.read_greeting()
        raw.sock.sendall(struct.pack("<I", 0xFFFFF0)[:3] + b"\x01")
        p = reply_or_close(raw)
        assert p is None or p[0] == 0xff, p
    assert_serves(auth_server.mysql_port, user=AUTH_USER, password=AUTH_PASSWORD)


def test_packet_just_under_limit_served(auth_server):
    with auth_login(auth_server.mysql_port) as raw:
        sql = "SELECT '" + "x" * 65000 + "'"
        cols, got = raw.query(sql)
        assert got == [[b"x" * 65000]]


def test_large_values_main_server(cur, uniq):
    """Values of several megabytes travel in one packet each way."""
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (body TEXT, s STRING)")
    big = ("abcdefghij" * 300_000) + "😀"
    cur.execute(f"INSERT INTO {t} (id, body, s) VALUES (1, %s, %s)", (big, big[:100_000]))
    assert rows(cur, f"SELECT body, s FROM {t}") == [(big, big[:100_000])]
