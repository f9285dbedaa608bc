"""tools/loupe-load against the real server: the rows it inserts (count,
ids, value ranges, vectors), determinism under --seed whatever the thread
count and batch size, the --json report (with the server's CPU measured
on the right process), --init and --drop, the <text> vocabulary's Zipf
shape, and the errors: bad patterns refused before connecting, a refused
statement reported with its number, --ignore-errors counting instead.

The binary is built next to the server: <dir of LOUPE_BIN>/loupe-load
(build/ or build-asan/)."""

import collections
import hashlib
import json
import os
import subprocess

import pytest

from helpers import LOUPE_BIN

LOAD = os.path.join(os.path.dirname(LOUPE_BIN), "loupe-load")
DIMS = 4

CREATE = ("CREATE TABLE {t} (title TEXT, s STRING, n INT, price FLOAT, "
          f"v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='{DIMS}' HNSW_SIMILARITY='l2')")
INSERT = ("INSERT INTO {t} (id, title, s, n, price, v) VALUES (<increment>, <text/3/12>, "
          f"'<string/4/9>', <int/-50/50>, <float/1.5/9.5>, <array_float/{DIMS}/-1/1>)")


@pytest.fixture
def load(server):
    """load(*args) -> CompletedProcess of loupe-load against the test server."""
    if not os.access(LOAD, os.X_OK):
        pytest.fail(f"{LOAD} not built (cmake --build <dir> --target loupe-load)", pytrace=False)

    def _load(*args, timeout=120):
        argv = [LOAD, "--host=127.0.0.1", f"--port={server.mysql_port}", *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    return _load


def fill(load, t, total, threads=1, batch=1, seed=None, *extra):
    args = ["--drop", "--init=" + CREATE.format(t=t), "--load=" + INSERT.format(t=t),
            f"--total={total}", f"--threads={threads}", f"--batch-size={batch}", "--quiet"]
    if seed is not None:
        args.append(f"--seed={seed}")
    r = load(*args, *extra)
    assert r.returncode == 0, r.stderr
    return r


def all_rows(cur, t):
    cur.execute(f"SELECT id, title, s, n, price, v FROM {t} ORDER BY id ASC LIMIT 100000")
    return [tuple(r) for r in cur.fetchall()]


def checksum(cur, t):
    return hashlib.sha256(repr(all_rows(cur, t)).encode()).hexdigest()


def test_binary_is_built():
    assert os.path.isfile(LOAD) and os.access(LOAD, os.X_OK), f"{LOAD} missing"


def test_inserts_exactly_total_rows(load, cur, uniq):
    t = uniq()
    r = fill(load, t, 1000, threads=2, batch=100, seed=5)
    assert "1000 rows in 10 statements" in r.stdout
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    assert cur.fetchone()[0] == 1000
    rows = all_rows(cur, t)
    assert [r[0] for r in rows] == list(range(1, 1001))
    for _id, title, s, n, price, v in rows:
        assert 3 <= len(title.split()) <= 12 and all(w.isalpha() and w.islower() for w in title.split())
        assert 4 <= len(s) <= 9 and s.isalpha()
        assert -50 <= n <= 50
        assert 1.5 <= price <= 9.5
        comps = [float(x) for x in v.split(",")]
        assert len(comps) == DIMS and all(-1 <= x <= 1 for x in comps)
    # Random, not constant: the generators really draw.
    assert len({r[3] for r in rows}) > 50 and len({r[2] for r in rows}) > 900
    assert len({r[5] for r in rows}) == 1000
    # The vectors are searchable like any inserted ones.
    cur.execute(f"SELECT id FROM {t} WHERE knn(v, 5, 1)")
    assert [r[0] for r in cur.fetchall()][0] == 1


def test_seed_gives_the_same_table_whatever_threads_and_batch(load, cur, uniq):
    t = uniq()
    sums = []
    for threads, batch in [(1, 1), (1, 1), (3, 7), (2, 100)]:
        fill(load, t, 400, threads=threads, batch=batch, seed=42)
        cur.execute(f"SELECT COUNT(*) FROM {t}")
        assert cur.fetchone()[0] == 400
        sums.append(checksum(cur, t))
    assert len(set(sums)) == 1, sums
    fill(load, t, 400, threads=2, batch=100, seed=43)
    assert checksum(cur, t) != sums[0]
    # Without --seed, one is chosen and reported; giving it back repeats the run.
    r = fill(load, t, 100, 2, 10, None, "--json")
    seed = json.loads(r.stdout)["seed"]
    first = checksum(cur, t)
    fill(load, t, 100, 1, 1, seed)
    assert checksum(cur, t) == first


def test_json_report(load, server, uniq):
    t = uniq()
    r = fill(load, t, 250, 2, 20, 1, "--json")
    out = json.loads(r.stdout)
    assert out["rows"] == 250 and out["total"] == 250 and out["errors"] == 0
    assert out["statements"] == 13 and out["batch_size"] == 20 and out["threads"] == 2
    assert out["seed"] == 1 and out["first_error"] is None and out["interrupted"] is False
    assert out["time_s"] > 0
    assert out["docs_per_s"] == pytest.approx(250 / out["time_s"], rel=1e-3)
    assert out["statements_per_s"] == pytest.approx(13 / out["time_s"], rel=1e-3)
    lat = out["latency_ms"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert lat["p50"] <= lat["max"] and 0 < lat["avg"] <= lat["max"]
    # The server's CPU is read from the process that listens on the port.
    cpu = out["server_cpu"]
    assert cpu is not None and cpu["pid"] == server.proc.pid
    assert cpu["cpu_s"] == pytest.approx(cpu["user_s"] + cpu["sys_s"], abs=0.011)
    assert cpu["avg_cores"] >= 0
    # --server-pid names it explicitly; a pid that is not there is n/a.
    r = fill(load, t, 10, 1, 1, 1, "--json", f"--server-pid={server.proc.pid}")
    assert json.loads(r.stdout)["server_cpu"]["pid"] == server.proc.pid
    r = fill(load, t, 10, 1, 1, 1, f"--server-pid={2**31 - 1}")
    assert "server cpu    n/a" in r.stdout


def test_human_report(load, uniq):
    r = fill(load, uniq(), 50, 1, 10, 3)
    for label in ("time", "docs/s", "statements/s", "latency ms", "p50", "p95", "p99", "server cpu", "errors"):
        assert label in r.stdout, r.stdout
    assert "progress" not in r.stderr and "\r" not in r.stderr   # stderr is not a terminal


def test_init_several_statements_and_drop(load, cur, uniq):
    a, b, c = uniq("a"), uniq("b"), uniq("c")
    init1 = f"CREATE TABLE {a} (x INT, s STRING); INSERT INTO {a} (id, x, s) VALUES (1, 2, 'semi;colon')"
    r = load(f"--init={init1}", f"--init=CREATE TABLE {b} (y INT);", "--quiet")
    assert r.returncode == 0, r.stderr
    cur.execute(f"SELECT s FROM {a}")
    assert cur.fetchall()[0][0] == "semi;colon"
    # Again: CREATE fails on the existing table...
    r = load(f"--init=CREATE TABLE {b} (y INT)")
    assert r.returncode == 1 and "--init statement 1 failed" in r.stderr and "1050" in r.stderr
    # ...unless --drop drops what --init creates and what --load writes to.
    r = load("--drop", f"--init=CREATE TABLE {a} (x INT); CREATE TABLE IF NOT EXISTS {b} (y INT)",
             f"--init=CREATE TABLE {c} (z INT)",
             f"--load=REPLACE INTO {c} (id, z) VALUES (<increment/10>, <int/7/7>)", "--total=5", "--quiet")
    assert r.returncode == 0, r.stderr
    cur.execute(f"SELECT COUNT(*) FROM {a}")
    assert cur.fetchone()[0] == 0
    cur.execute(f"SELECT id, z FROM {c} ORDER BY id ASC")
    assert [tuple(x) for x in cur.fetchall()] == [(i, 7) for i in range(10, 15)]


def test_quoting_of_string_patterns(load, cur, uniq):
    """<string> and <text> are quoted automatically outside quotes; inside
    the user's quotes they are emitted bare: same seed, same values."""
    t1, t2 = uniq(), uniq()
    for t, tmpl in ((t1, "(<increment>, '<string/3/6>', '<text/2/4>')"),
                    (t2, "(<increment>, <string/3/6>, <text/2/4>)")):
        r = load("--drop", f"--init=CREATE TABLE {t} (s STRING, title TEXT)",
                 f"--load=INSERT INTO {t} (id, s, title) VALUES {tmpl}", "--total=60", "--seed=9",
                 "--batch-size=7", "--quiet")
        assert r.returncode == 0, r.stderr
    got = []
    for t in (t1, t2):
        cur.execute(f"SELECT id, s, title FROM {t} ORDER BY id ASC LIMIT 100")
        got.append([tuple(x) for x in cur.fetchall()])
    assert got[0] == got[1] and len(got[0]) == 60
    # A literal '<' is written <<.
    t3 = uniq()
    r = load("--drop", f"--init=CREATE TABLE {t3} (s STRING)",
             f"--load=INSERT INTO {t3} (id, s) VALUES (<increment>, 'a<<b> <<int/1/2>')", "--total=2",
             "--quiet")
    assert r.returncode == 0, r.stderr
    cur.execute(f"SELECT s FROM {t3}")
    assert {x[0] for x in cur.fetchall()} == {"a<b> <int/1/2>"}


def test_text_follows_a_zipf_law(load, cur, uniq):
    t = uniq()
    r = load("--drop", f"--init=CREATE TABLE {t} (title TEXT)",
             f"--load=INSERT INTO {t} (id, title) VALUES (<increment>, <text/50/50>)", "--total=1000",
             "--batch-size=100", "--seed=3", "--quiet")
    assert r.returncode == 0, r.stderr
    cur.execute(f"SELECT title FROM {t} LIMIT 1000")
    words = [w for (title,) in cur.fetchall() for w in title.split()]
    assert len(words) == 50000
    freq = collections.Counter(words).most_common()
    assert [w for w, _ in freq[:3]] == ["the", "of", "and"], freq[:5]
    assert 0.04 < freq[0][1] / len(words) < 0.09
    # Rank x frequency roughly constant (Zipf, exponent 1) over the head.
    for rank in (10, 50, 100):
        assert 0.4 < (rank * freq[rank - 1][1]) / freq[0][1] < 2.5, (rank, freq[rank - 1])
    # A long tail: thousands of distinct words, beyond the embedded list.
    assert len(freq) > 5000


@pytest.mark.parametrize("tmpl, what", [
    ("INSERT INTO t (id) VALUES (<nope/1/2>)", r"unknown pattern '<nope/1/2>'"),
    ("INSERT INTO t (id, n) VALUES (<increment>, <int/9/1>)", "minimum is larger"),
    ("INSERT INTO t (id, n) VALUES (<increment>, <int/1>)", "has 1 argument"),
    ("INSERT INTO t (id, n) VALUES (<increment>, <int/a/b>)", "must be integers"),
    ("INSERT INTO t (id, n) VALUES (<increment>, <float/1/x>)", "finite numbers"),
    ("INSERT INTO t (id, v) VALUES (<increment>, <array_float/0/0/1>)", "DIM must be"),
    ("INSERT INTO t (id, n) VALUES (<increment>, <int/1/5)", "unterminated or malformed pattern"),
    ("INSERT INTO t (id) VALUES (1), (2)", "one tuple"),
    ("SELECT * FROM t", "expected INSERT or REPLACE"),
    ("INSERT INTO t (id) VALUES 1", "expected '\\('"),
])
def test_bad_template_is_refused_with_its_offset(load, tmpl, what):
    r = load(f"--load={tmpl}", "--total=10")
    assert r.returncode == 2
    import re
    assert re.search(what, r.stderr), r.stderr
    assert "at offset" in r.stderr and "^" in r.stderr
    # The offset points at the culprit.
    off = int(re.search(r"at offset (\d+)", r.stderr).group(1))
    if "pattern" in what:
        assert tmpl[off] == "<"


@pytest.mark.parametrize("args, what", [
    (["--total=10"], "--total needs --load"),
    (["--load=INSERT INTO t (id) VALUES (<increment>)"], "needs --total"),
    (["--load=INSERT INTO t (id) VALUES (<increment>)", "--total=0"], "--total=0"),
    (["--load=INSERT INTO t (id) VALUES (<increment>)", "--total=5", "--threads=x"], "--threads=x"),
    (["--frobnicate"], "unknown option"),
    ([], "nothing to do"),
])
def test_bad_arguments(load, args, what):
    r = load(*args)
    assert r.returncode == 2 and what in r.stderr, r.stderr


def test_server_error_stops_the_run(load, cur, uniq):
    t = uniq()
    fill(load, t, 100, 1, 10, 1)
    # Ids 91..100 exist already: statement 10 of 10 (rows 91-100) is refused.
    r = load(f"--load=INSERT INTO {t} (id, n) VALUES (<increment/91>, <int/1/2>)", "--total=30",
             "--batch-size=10", "--quiet")
    assert r.returncode == 1
    assert "statement 1 of 3 (rows 1-10) failed: ERROR 1062" in r.stderr, r.stderr
    assert "duplicate id" in r.stderr and f"INSERT INTO {t} (id, n) VALUES (91," in r.stderr
    # A value the column refuses.
    r = load(f"--load=INSERT INTO {t} (id, n) VALUES (<increment/1000>, '<string/3/3>')", "--total=5",
             "--quiet")
    assert r.returncode == 1 and "ERROR 1366" in r.stderr and "statement 1 of 5" in r.stderr, r.stderr
    # A table that does not exist.
    r = load(f"--load=INSERT INTO {t}_nope (id) VALUES (<increment>)", "--total=5", "--threads=2", "--quiet")
    assert r.returncode == 1 and "ERROR 1146" in r.stderr, r.stderr
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    assert cur.fetchone()[0] == 100        # all or nothing per statement


def test_ignore_errors_counts_them(load, cur, uniq):
    t = uniq()
    fill(load, t, 50, 1, 1, 1)
    # Rows 41..90: statements holding ids 41..50 are refused, the rest go in.
    r = load(f"--load=INSERT INTO {t} (id, n) VALUES (<increment/41>, <int/1/2>)", "--total=50",
             "--batch-size=5", "--threads=2", "--ignore-errors", "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["errors"] == 2 and out["rows"] == 40 and out["statements"] == 8
    assert out["first_error"]["errno"] == 1062 and out["first_error"]["statement"] in (1, 2)
    cur.execute(f"SELECT COUNT(*) FROM {t}")
    assert cur.fetchone()[0] == 90


def test_connection_refused(tmp_path):
    if not os.access(LOAD, os.X_OK):
        pytest.fail(f"{LOAD} not built", pytrace=False)
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()          # nobody listens there now
    r = subprocess.run([LOAD, f"--port={port}", "--load=INSERT INTO t (id) VALUES (<increment>)",
                        "--total=3"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and f"cannot connect to 127.0.0.1:{port}" in r.stderr
