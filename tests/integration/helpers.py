"""Helpers for loupe's integration tests: start and stop a real server, talk
to it over the MySQL protocol by hand (raw sockets), through the stock
`mariadb` command-line client and over HTTP.

Nothing here imitates the server: every helper opens a real socket or runs
a real client against a real `loupe serve` process.

Server lifecycle (LoupeServer):
  - the binary is $LOUPE_BIN (default: <repo>/build/loupe);
  - it is started with port 0 for both listeners and its stderr goes to a
    file; the bound ports are parsed from the lines
        mysql listening on 127.0.0.1:41234
        http listening on 127.0.0.1:41235
    and the server is ready once a TCP client receives the MySQL greeting;
  - stop() sends SIGTERM and returns the problems found: a non-zero exit, a
    hang, or a sanitizer report in stderr.
"""

import hashlib
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pymysql
import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LOUPE_BIN = os.environ.get("LOUPE_BIN") or os.path.join(REPO, "build", "loupe")
MARIADB = "mariadb"

# Sanitizer builds are 2-3x slower; every timeout below leaves room for that.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
# A server whose resident memory passes this is killed (a runaway loop must
# not take the test machine down with it); the test then reports its death.
MAX_RSS_MB = int(os.environ.get("LOUPE_TEST_MAX_RSS_MB", "3072"))

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "LeakSanitizer", "runtime error:",
                     "ERROR: ThreadSanitizer", "WARNING: ThreadSanitizer")

LISTEN_RE = {
    "mysql": re.compile(r"mysql listening on ([0-9.]+):(\d+)"),
    "http": re.compile(r"http listening on ([0-9.]+):(\d+)"),
}


def sanitizer_env():
    """Environment for the server: sanitizer reports go to stderr, with
    stack traces, and make the process exit non-zero."""
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    return env


class ServerError(Exception):
    pass


class LoupeServer:
    """One `loupe serve` process on free ports with its own data folder."""

    def __init__(self, data_dir=None, config=None, extra_args=(), name="loupe"):
        self.tmp = tempfile.mkdtemp(prefix=f"{name}-it-")
        self.data_dir = data_dir or os.path.join(self.tmp, "data")
        os.makedirs(self.data_dir, exist_ok=True)
        self.config_path = None
        if config is not None:
            self.config_path = os.path.join(self.tmp, "loupe.conf")
            with open(self.config_path, "w") as f:
                for k, v in config.items():
                    f.write(f"{k} = {v}\n")
        self.extra_args = list(extra_args)
        self.log_path = os.path.join(self.tmp, "stderr.log")
        self.nstart = 0
        self.killed_why = None      # set by the memory watchdog
        self.proc = None
        self.host = "127.0.0.1"
        self.mysql_port = None
        self.http_port = None
        self.stopped = False

    # -- start / stop ---------------------------------------------------
    def argv(self):
        a = [LOUPE_BIN, "serve", "--data", self.data_dir,
             "--mysql", "127.0.0.1:0", "--http", "127.0.0.1:0"]
        if self.config_path:
            a += ["--config", self.config_path]
        return a + self.extra_args

    def env(self):
        """The server's environment (a subclass may add to it)."""
        return sanitizer_env()

    def start(self):
        if not os.access(LOUPE_BIN, os.X_OK):
            raise ServerError(f"server binary {LOUPE_BIN} not found (set LOUPE_BIN)")
        self.nstart += 1
        self.log_path = os.path.join(self.tmp, f"stderr-{self.nstart}.log")
        self._log = open(self.log_path, "wb")
        self.stopped = False
        self.killed_why = None
        self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=self._log,
                                     env=self.env())
        threading.Thread(target=self._watch, args=(self.proc,), daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT
        ports = {}
        while time.monotonic() < deadline:
            text = self.log_text()
            for k, rx in LISTEN_RE.items():
                m = rx.search(text)
                if m:
                    ports[k] = int(m.group(2))
            if len(ports) == 2:
                break
            if self.proc.poll() is not None:
                raise ServerError(f"server exited with {self.proc.returncode} while "
                                  f"starting:\n{self.log_tail()}")
            time.sleep(0.05)
        else:
            self.kill()
            raise ServerError(f"server did not log its ports within {START_TIMEOUT}s:\n"
                              f"{self.log_tail()}")
        self.mysql_port, self.http_port = ports["mysql"], ports["http"]
        # Ready once a client gets the protocol greeting.
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((self.host, self.mysql_port), timeout=5) as s:
                    hdr = recv_exact(s, 4)
                    if hdr:
                        return self
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.kill()
        raise ServerError(f"server never sent a greeting:\n{self.log_tail()}")

    def _watch(self, proc):
        """Kills proc when its resident memory passes MAX_RSS_MB."""
        path = f"/proc/{proc.pid}/status"
        while proc.poll() is None:
            try:
                with open(path) as f:
                    rss = next((int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:")), 0)
            except (OSError, ValueError):
                rss = 0
            if rss > MAX_RSS_MB * 1024:
                self.killed_why = f"killed by the test watchdog: resident memory {rss // 1024} MB"
                proc.kill()
                return
            time.sleep(0.2)

    def restart(self):
        """Starts a fresh process on the same data folder after a death."""
        self.kill()
        try:
            self._log.close()
        except OSError:
            pass
        return self.start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, n=60):
        tail = "\n".join(self.log_text().splitlines()[-n:])
        return f"{self.killed_why}\n{tail}" if self.killed_why else tail

    def sanitizer_report(self):
        text = self.log_text()
        for m in SANITIZER_MARKERS:
            i = text.find(m)
            if i >= 0:
                return text[max(0, i - 200):i + 4000]
        return None

    def signal_stop(self, sig=signal.SIGTERM, timeout=STOP_TIMEOUT):
        """Sends sig and waits; returns the exit code or None on a hang
        (the process is then killed)."""
        self.stopped = True
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        finally:
            self._log.close()

    def stop(self):
        """SIGTERM, then the list of problems found (empty when clean)."""
        if self.proc is None or self.stopped:
            return []
        was_alive = self.proc.poll() is None
        rc = self.signal_stop()
        problems = []
        if not was_alive:
            problems.append(f"server died before the end of the tests (exit {self.proc.returncode})")
        elif rc is None:
            problems.append(f"server did not exit within {STOP_TIMEOUT}s of SIGTERM")
        elif rc != 0:
            problems.append(f"server exited with {rc} after SIGTERM")
        rep = self.sanitizer_report()
        if rep:
            problems.append("sanitizer report in server stderr:\n" + rep)
        elif problems:
            problems.append("server stderr (tail):\n" + self.log_tail())
        if problems:
            problems.append(f"(server files kept in {self.tmp})")
        else:
            self.cleanup()
        return problems

    def cleanup(self):
        """Removes the temporary folder (data, config, logs)."""
        shutil.rmtree(self.tmp, ignore_errors=True)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# ---------------------------------------------------------------------------
# Raw MySQL protocol

CLIENT_LONG_PASSWORD = 0x1
CLIENT_LONG_FLAG = 0x4
CLIENT_CONNECT_WITH_DB = 0x8
CLIENT_PROTOCOL_41 = 0x200
CLIENT_TRANSACTIONS = 0x2000
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_MULTI_RESULTS = 0x20000
CLIENT_PLUGIN_AUTH = 0x80000

BASE_CAPS = (CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 |
             CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION |
             CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH)

COM_QUIT, COM_QUERY, COM_FIELD_LIST, COM_PING = 0x01, 0x03, 0x04, 0x0e


def recv_exact(sock, n):
    """n bytes, or fewer when the peer closed first."""
    buf = b""
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except ConnectionResetError:
            break
        if not chunk:
            break
        buf += chunk
    return buf


def native_password_scramble(password, salt):
    """mysql_native_password: SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw)))."""
    if not password:
        return b""
    p = password.encode() if isinstance(password, str) else password
    h1 = hashlib.sha1(p).digest()
    h2 = hashlib.sha1(h1).digest()
    h3 = hashlib.sha1(salt + h2).digest()
    return bytes(a ^ b for a, b in zip(h1, h3))


def lenenc_int(data, pos):
    """(value, new pos) of a length-encoded integer; value None for 0xfb."""
    b = data[pos]
    if b < 0xfb:
        return b, pos + 1
    if b == 0xfb:
        return None, pos + 1
    if b == 0xfc:
        return struct.unpack_from("<H", data, pos + 1)[0], pos + 3
    if b == 0xfd:
        return int.from_bytes(data[pos + 1:pos + 4], "little"), pos + 4
    return struct.unpack_from("<Q", data, pos + 1)[0], pos + 9


def lenenc_str(data, pos):
    n, pos = lenenc_int(data, pos)
    if n is None:
        return None, pos
    return data[pos:pos + n], pos + n


class Err(Exception):
    """An ERR packet from the server."""

    def __init__(self, errno, sqlstate, message):
        super().__init__(errno, message)
        self.errno, self.sqlstate, self.message = errno, sqlstate, message


def parse_err(payload):
    errno = struct.unpack_from("<H", payload, 1)[0]
    if payload[3:4] == b"#":
        return Err(errno, payload[4:9].decode("ascii", "replace"),
                   payload[9:].decode("utf-8", "replace"))
    return Err(errno, "", payload[3:].decode("utf-8", "replace"))


class Ok:
    def __init__(self, payload):
        self.affected, p = lenenc_int(payload, 1)
        self.last_insert_id, p = lenenc_int(payload, p)
        self.status, self.warnings = struct.unpack_from("<HH", payload, p)


class Column:
    def __init__(self, payload):
        p = 0
        fields = []
        for _ in range(6):          # catalog, schema, table, org_table, name, org_name
            s, p = lenenc_str(payload, p)
            fields.append(s)
        self.name = fields[4].decode()
        _, p = lenenc_int(payload, p)   # length of fixed fields (0x0c)
        (self.charset, self.length, self.type, self.flags,
         self.decimals) = struct.unpack_from("<HIBHB", payload, p)


class RawClient:
    """A hand-driven MySQL protocol client for malformed-input tests."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.seq = 0
        self.greeting = None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    # -- packets ---------------------------------------------------------
    def send_packet(self, payload, seq=None):
        if seq is None:
            seq = self.seq
        self.sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([seq & 0xff]) + payload)
        self.seq = (seq + 1) & 0xff

    def read_packet(self):
        """The next payload, or None when the server closed the connection."""
        hdr = recv_exact(self.sock, 4)
        if len(hdr) < 4:
            return None
        n = int.from_bytes(hdr[:3], "little")
        self.seq = (hdr[3] + 1) & 0xff
        payload = recv_exact(self.sock, n)
        if len(payload) < n:
            return None
        return payload

    def closed_by_server(self, timeout=10.0):
        """True when the server closes the connection (EOF or reset) within
        timeout, discarding anything it sends first."""
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    # -- handshake ---------------------------------------------------------
    def read_greeting(self):
        p = self.read_packet()
        if p is None:
            raise ConnectionError("no greeting")
        if p[0] == 0xff:
            raise parse_err(p)
        assert p[0] == 10, f"protocol version {p[0]}"
        end = p.index(b"\0", 1)
        version = p[1:end].decode()
        pos = end + 1
        conn_id = struct.unpack_from("<I", p, pos)[0]
        salt1 = p[pos + 4:pos + 12]
        pos += 13
        cap_lo = struct.unpack_from("<H", p, pos)[0]
        charset = p[pos + 2]
        status = struct.unpack_from("<H", p, pos + 3)[0]
        cap_hi = struct.unpack_from("<H", p, pos + 5)[0]
        auth_len = p[pos + 7]
        pos += 18
        n2 = max(13, auth_len - 8)
        salt2 = p[pos:pos + n2].rstrip(b"\0")
        pos += n2
        plugin = p[pos:].split(b"\0")[0].decode() if pos < len(p) else ""
        self.greeting = dict(version=version, conn_id=conn_id, salt=salt1 + salt2,
                             caps=cap_lo | (cap_hi << 16), charset=charset,
                             status=status, plugin=plugin)
        return self.greeting

    def handshake_response(self, user="root", password="", db=None, caps=BASE_CAPS):
        salt = self.greeting["salt"]
        auth = native_password_scramble(password, salt)
        if db is not None:
            caps |= CLIENT_CONNECT_WITH_DB
        body = struct.pack("<IIB23x", caps, 16 * 1024 * 1024, 45)
        body += user.encode() + b"\0" + bytes([len(auth)]) + auth
        if db is not None:
            body += db.encode() + b"\0"
        body += b"mysql_native_password\0"
        return body

    def login(self, user="root", password="", db=None):
        """Full handshake; returns the OK, raises Err on refusal."""
        self.read_greeting()
        self.send_packet(self.handshake_response(user, password, db), seq=1)
        p = self.read_packet()
        if p is None:
            raise ConnectionError("closed during authentication")
        if p[0] == 0xfe:        # auth switch request: plugin name, then salt
            name_end = p.index(b"\0", 1)
            salt = p[name_end + 1:].rstrip(b"\0")
            self.send_packet(native_password_scramble(password, salt))
            p = self.read_packet()
            if p is None:
                raise ConnectionError("closed during authentication")
        if p[0] == 0xff:
            raise parse_err(p)
        assert p[0] == 0x00, f"unexpected auth reply {p[:16]!r}"
        return Ok(p)

    # -- commands ------------------------------------------------------------
    def command(self, cmd, arg=b""):
        if isinstance(arg, str):
            arg = arg.encode()
        self.send_packet(bytes([cmd]) + arg, seq=0)

    def read_reply(self):
        """OK, a (columns, rows) result set, or raises Err. Rows are lists of
        bytes/None. Raises ConnectionError when the server closes."""
        p = self.read_packet()
        if p is None:
            raise ConnectionError("server closed the connection")
        if p[0] == 0xff:
            raise parse_err(p)
        if p[0] == 0x00:
            return Ok(p)
        ncol, _ = lenenc_int(p, 0)
        cols = []
        for _ in range(ncol):
            c = self.read_packet()
            if c is None:
                raise ConnectionError("closed in column definitions")
            cols.append(Column(c))
        eof = self.read_packet()
        if eof is None or eof[0] != 0xfe:
            raise AssertionError(f"expected EOF after columns, got {eof!r}")
        rows = []
        while True:
            r = self.read_packet()
            if r is None:
                raise ConnectionError("closed in rows")
            if r[0] == 0xfe and len(r) < 9:
                break
            if r[0] == 0xff:
                raise parse_err(r)
            row, pos = [], 0
            for _ in range(ncol):
                v, pos = lenenc_str(r, pos)
                row.append(v)
            rows.append(row)
        return cols, rows

    def query(self, sql):
        self.command(COM_QUERY, sql)
        return self.read_reply()

    def field_list(self, table, wildcard=b""):
        """COM_FIELD_LIST: the column definitions, up to the closing EOF."""
        self.command(COM_FIELD_LIST, table.encode() + b"\0" + wildcard)
        cols = []
        while True:
            p = self.read_packet()
            if p is None:
                raise ConnectionError("server closed the connection")
            if p[0] == 0xff:
                raise parse_err(p)
            if p[0] == 0xfe and len(p) < 9:
                return cols
            cols.append(Column(p))


def raw_login(port, **kw):
    c = RawClient(port)
    c.login(**kw)
    return c


# ---------------------------------------------------------------------------
# HTTP

def http_request(port, path, body=None, method=None, content_type=None, timeout=20):
    """(status, headers, body bytes); HTTP errors are returned, not raised."""
    url = f"http://127.0.0.1:{port}{path}"
    req = urllib.request.Request(url, data=body, method=method)
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


# ---------------------------------------------------------------------------
# The mariadb command-line client

def mariadb_argv(port, *args, user="root", password=None, database=None):
    a = [MARIADB, "--no-defaults", "--protocol=TCP", "-h127.0.0.1", f"-P{port}",
         f"-u{user}", "--connect-timeout=20", "--default-character-set=utf8mb4"]
    if password is not None:
        a.append(f"-p{password}")
    if database is not None:
        a.append(f"-D{database}")
    return a + list(args)


def run_mariadb(port, sql=None, *args, user="root", password=None, database=None,
                input=None, timeout=60):
    """Runs `mariadb ... [-e sql]`; returns CompletedProcess with bytes output."""
    argv = mariadb_argv(port, *args, user=user, password=password, database=database)
    if sql is not None:
        argv += ["-e", sql]
    return subprocess.run(argv, input=input, capture_output=True, timeout=timeout)


def unescape_batch(field):
    """Undoes the mariadb client's batch-mode escaping (\\0 \\t \\n \\\\)."""
    out, i = [], 0
    while i < len(field):
        ch = field[i]
        if ch == "\\" and i + 1 < len(field):
            nxt = field[i + 1]
            out.append({"0": "\0", "t": "\t", "n": "\n", "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def parse_batch(stdout):
    """Header and rows of the client's --batch output (escaped mode).
    NULL is returned as None."""
    lines = stdout.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return [], []
    header = lines[0].split("\t")
    rows = []
    for ln in lines[1:]:
        rows.append([None if f == "NULL" else unescape_batch(f) for f in ln.split("\t")])
    return header, rows


# ---------------------------------------------------------------------------
# Assertions over pymysql

def expect_error(cur, sql, errno, match=None, args=None):
    """Runs sql, which must fail with MySQL error `errno` (an int or a set);
    `match` is a regex searched in the message. Returns the message."""
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(sql, args)
    code = ei.value.args[0]
    msg = ei.value.args[1] if len(ei.value.args) > 1 else ""
    want = set(errno) if isinstance(errno, (set, frozenset, tuple, list)) else {errno}
    assert code in want, f"{sql!r}: got error {code} {msg!r}, want {sorted(want)}"
    if match is not None:
        assert re.search(match, msg), f"{sql!r}: message {msg!r} does not match {match!r}"
    return msg


def server_error(cur, sql, args=None):
    """Runs sql, which must fail with a server-side error (errno 1000-1999,
    never a client-side 2xxx such as a lost connection). Returns (errno, msg)."""
    with pytest.raises(pymysql.err.MySQLError) as ei:
        cur.execute(sql, args)
    code = ei.value.args[0]
    assert isinstance(code, int) and 1000 <= code < 2000, \
        f"{sql!r}: expected a server error, got {ei.value!r}"
    return code, ei.value.args[1]


def rows(cur, sql, args=None):
    """All rows of sql as a list of tuples."""
    cur.execute(sql, args)
    return [tuple(r) for r in cur.fetchall()]


def col_names(cur):
    return [d[0] for d in cur.description]
