"""Fixtures for loupe's integration tests.

  server        one `loupe serve` for the whole session (temp data folder,
                port 0, --threads 4 so that a handful of stalled clients
                outnumber the workers); stopped with SIGTERM at the end, and
                the session fails if it does not exit 0 or if its stderr holds
                a sanitizer report.
  auth_server   a second server, started on first use, with a config file:
                a user and password, small packet / body / connection limits.
  sha1_server   a third one: password_sha1 and a 1 s connect_timeout.
  connect       connect(**kw) -> pymysql connection (autocommit) to `server`.
  mariadb       mariadb(sql, *args, **kw) -> CompletedProcess of the real
                `mariadb` client run against `server`.
  http          http(path, body=None, ...) -> (status, headers, body).
  uniq          uniq(prefix) -> a table name no other test uses.

After every test the servers started so far must still be running: a test
during which one died fails, with the server's stderr, and the server is
restarted (empty) for the tests after it. A server whose memory runs away
is killed by a watchdog (helpers.MAX_RSS_MB) and counts as dead.
"""

import hashlib
import itertools
import re
import time

import pymysql
import pytest

from helpers import LoupeServer, ServerError, http_request, run_mariadb

AUTH_USER = "alice"
AUTH_PASSWORD = "s3cret!pw"
SHA1_USER = "bob"
SHA1_PASSWORD = "another pw"
AUTH_LIMITS = {"max_packet_size": "64K", "max_connections": 8, "http_max_body": "64K"}

_running = []           # servers whose death after a test is a failure
_names = itertools.count(1)


def _start(**kw):
    try:
        s = LoupeServer(**kw).start()
    except ServerError as e:
        pytest.fail(str(e), pytrace=False)
    _running.append(s)
    return s


def _finish(s):
    _running.remove(s)
    problems = s.stop()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture(scope="session")
def server():
    s = _start(name="main", extra_args=["--threads", "4"])
    yield s
    _finish(s)


@pytest.fixture(scope="session")
def auth_server():
    cfg = {"user": AUTH_USER, "password": AUTH_PASSWORD, "threads": 2}
    cfg.update(AUTH_LIMITS)
    s = _start(name="auth", config=cfg)
    yield s
    _finish(s)


@pytest.fixture(scope="session")
def sha1_server():
    """A third server: the password given as password_sha1 (hex of
    SHA1(SHA1(password))), and a 1-second connect_timeout."""
    digest = hashlib.sha1(hashlib.sha1(SHA1_PASSWORD.encode()).digest()).hexdigest().upper()
    s = _start(name="sha1", config={"user": SHA1_USER, "password_sha1": digest,
                                    "connect_timeout": 1, "threads": 2})
    yield s
    _finish(s)


@pytest.fixture(autouse=True)
def _servers_survive(request):
    """Fails the test during which a server died, then restarts that server
    (empty: data lives in memory) so that the tests after it still run."""
    yield
    for s in list(_running):
        if not s.alive():
            rep = s.sanitizer_report() or s.log_tail()
            msg = f"the server died during {request.node.nodeid} (exit {s.proc.returncode}):\n{rep}"
            try:
                s.restart()
            except ServerError as e:
                _running.remove(s)
                msg += f"\nand could not be restarted: {e}"
            pytest.fail(msg, pytrace=False)


def pymysql_connect(port, user="root", password="", retry_1040=True, **kw):
    """A pymysql connection with autocommit on. A 1040 (too many
    connections) is retried for a moment: connections closed by an earlier
    test may not have been reaped by the server yet."""
    args = dict(host="127.0.0.1", port=port, user=user, password=password,
                autocommit=True, charset="utf8mb4", connect_timeout=20,
                read_timeout=60, write_timeout=60)
    args.update(kw)
    deadline = time.monotonic() + 3
    while True:
        try:
            return pymysql.connect(**args)
        except pymysql.err.OperationalError as e:
            if not (retry_1040 and e.args[0] == 1040 and time.monotonic() < deadline):
                raise
            time.sleep(0.05)


@pytest.fixture
def connect(server):
    opened = []

    def _connect(**kw):
        c = pymysql_connect(server.mysql_port, **kw)
        opened.append(c)
        return c

    yield _connect
    for c in opened:
        try:
            c.close()
        except Exception:
            pass


@pytest.fixture
def conn(connect):
    """One autocommit connection to the main server."""
    return connect()


@pytest.fixture
def cur(conn):
    with conn.cursor() as c:
        yield c


@pytest.fixture
def mariadb(server):
    def _mariadb(sql=None, *args, **kw):
        return run_mariadb(server.mysql_port, sql, *args, **kw)
    return _mariadb


@pytest.fixture
def http(server):
    def _http(path, body=None, **kw):
        return http_request(server.http_port, path, body, **kw)
    return _http


@pytest.fixture
def uniq(request):
    """uniq(prefix='t') -> a fresh, lower-case table name."""
    base = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower()).strip("_")[:40]

    def _uniq(prefix="t"):
        return f"{prefix}_{base}_{next(_names)}"
    return _uniq
