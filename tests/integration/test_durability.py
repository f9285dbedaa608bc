"""Durability through the real server: the write-ahead log survives
SIGKILL at random moments, torn and damaged files give the documented
behaviour, a full disk is an error and not a crash, and tables come back
after a restart exactly as they were.

Each test runs its own server on its own data folder (never the shared
`server` fixture), so killing it disturbs nobody else.
"""

import glob
import os
import random
import signal
import subprocess
import threading
import time

import pymysql
import pytest

from helpers import LoupeServer, ServerError, sanitizer_env, LOUPE_BIN

DDL = ("CREATE TABLE {t} (title TEXT, tag STRING, batch INT, "
       "v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='4' HNSW_SIMILARITY='L2')")


def start(name, data_dir=None, extra=(), prefix=()):
    s = LoupeServer(name=name, data_dir=data_dir, extra_args=list(extra))
    if prefix:
        # Run the server under a wrapper (e.g. prlimit); argv() is the rest.
        orig = s.argv
        s.argv = lambda: list(prefix) + orig()
    try:
        return s.start()
    except ServerError as e:
        pytest.fail(str(e), pytrace=False)


def connect(s):
    return pymysql.connect(host=s.host, port=s.mysql_port, user="root", autocommit=True,
                           connect_timeout=10, read_timeout=60, write_timeout=60)


def q(s, sql, args=None):
    with connect(s) as c, c.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def finish(s, keep=False):
    """Stops s with SIGTERM; fails on a bad exit or a sanitizer report.
    keep: leave its folder (logs) for a restart."""
    if keep:
        rc = s.signal_stop()
        assert rc == 0, f"exit {rc}:\n{s.log_tail()}"
        assert not s.sanitizer_report(), s.sanitizer_report()
        return
    problems = s.stop()
    assert not problems, "\n".join(problems)


def vec(i):
    return "({:.3f},{:.3f},{:.3f},{:.3f})".format(i % 7, i % 11, i % 13, 1.0)


class Writer(threading.Thread):
    """Inserts batches of 1..5 rows until the connection dies; records
    each batch it saw acknowledged (and the ones in flight when it died)."""

    def __init__(self, s, table, wid, first_batch):
        super().__init__(daemon=True)
        self.s, self.table, self.wid = s, table, wid
        self.next_batch = first_batch
        self.acked = {}         # batch -> list of ids
        self.inflight = {}      # batch -> list of ids (outcome unknown)

    def run(self):
        rng = random.Random(self.wid * 7919 + self.next_batch)
        try:
            c = connect(self.s)
        except pymysql.MySQLError:
            return
        try:
            with c.cursor() as cur:
                while True:
                    b = self.next_batch
                    self.next_batch += 1
                    n = rng.randint(1, 5)
                    ids = [b * 10 + k for k in range(n)]
                    vals = ",".join(
                        f"({i}, 'word{i} batch{b} common', 'w{self.wid}', {b}, {vec(i)})"
                        for i in ids)
                    self.inflight[b] = ids
                    cur.execute(f"INSERT INTO {self.table} (id, title, tag, batch, v) "
                                f"VALUES {vals}")
                    del self.inflight[b]
                    self.acked[b] = ids
        except (pymysql.MySQLError, OSError, ConnectionError):
            pass
        finally:
            try:
                c.close()
            except Exception:
                pass


def check_table(s, table, acked, inflight):
    """Every acknowledged row is there and searchable; every batch is all
    there or not at all."""
    got = {}
    for (i, b) in q(s, f"SELECT id, batch FROM {table} LIMIT 1000000"):
        got.setdefault(b, set()).add(i)
    for b, ids in acked.items():
        assert got.get(b) == set(ids), f"acknowledged batch {b} {ids}: found {got.get(b)}"
    for b, ids in got.items():
        if b in acked:
            continue
        assert b in inflight, f"batch {b} was never sent but rows {ids} exist"
        assert ids == set(inflight[b]), f"batch {b} is half there: {ids} of {inflight[b]}"
    # Searchable: full-text and kNN find acknowledged rows.
    sample = random.Random(1).sample(sorted(acked), min(5, len(acked)))
    for b in sample:
        i = acked[b][0]
        assert q(s, f"SELECT id FROM {table} WHERE MATCH('word{i}')") == ((i,),)
        rows = q(s, f"SELECT id FROM {table} WHERE knn(v, 2000, {vec(i)}) AND id = {i}")
        assert rows == ((i,),)
    return sum(len(v) for v in got.values())


def test_kill9_cycles(tmp_path):
    """At least 20 SIGKILL / restart cycles while 3 writers insert; after
    each restart every acknowledged batch is present and searchable, and no
    batch is half present."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("crash", data_dir=data)
    q(s, DDL.format(t="c"))
    acked, inflight = {}, {}
    rng = random.Random(42)
    ncycles = 0
    deadline = time.monotonic() + 150
    next_batch = 1
    while ncycles < 20 or (ncycles < 25 and time.monotonic() < deadline):
        writers = []
        for w in range(3):
            wr = Writer(s, "c", w, next_batch)
            next_batch += 100000
            writers.append(wr)
            wr.start()
        time.sleep(rng.uniform(0.05, 0.4))
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait()
        for wr in writers:
            wr.join(30)
            assert not wr.is_alive()
            acked.update(wr.acked)
            inflight.update(wr.inflight)
        s.restart()
        n = check_table(s, "c", acked, inflight)
        # A batch in flight that made it is now acknowledged for good (it
        # is durable); one that did not must never appear later.
        for b in list(inflight):
            rows = q(s, f"SELECT id FROM c WHERE batch = {b}")
            if rows:
                acked[b] = inflight.pop(b)
            else:
                inflight[b] = []
        ncycles += 1
        assert time.monotonic() < deadline + 60, "crash cycles take too long"
    assert ncycles >= 20
    assert len(acked) > 50, f"only {len(acked)} batches acknowledged in {ncycles} cycles"
    assert n > 0
    finish(s)


def wal_files(data, table):
    return sorted(glob.glob(os.path.join(data, "tables", table, "wal", "*.wal")))


def test_torn_tail_and_restart(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("torn", data_dir=data)
    q(s, DDL.format(t="t"))
    for i in range(1, 11):
        q(s, f"INSERT INTO t (id, title, batch, v) VALUES ({i}, 'row {i}', {i}, {vec(i)})")
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    (f,) = wal_files(data, "t")
    size = os.path.getsize(f)
    with open(f, "r+b") as fh:
        fh.truncate(size - 7)       # the last record loses its tail
    s.restart()
    assert "torn record" in s.log_text()
    assert [r[0] for r in q(s, "SELECT id FROM t ORDER BY id ASC")] == list(range(1, 10))
    q(s, f"INSERT INTO t (id, title, batch, v) VALUES (10, 'row ten', 10, {vec(10)})")
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    s.restart()
    assert [r[0] for r in q(s, "SELECT id FROM t ORDER BY id ASC")] == list(range(1, 11))
    finish(s)


def test_damaged_wal_refuses_table(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("damaged", data_dir=data)
    q(s, DDL.format(t="bad"))
    q(s, DDL.format(t="good"))
    for i in range(1, 6):
        q(s, f"INSERT INTO bad (id, title, batch, v) VALUES ({i}, 'row {i}', {i}, {vec(i)})")
        q(s, f"INSERT INTO good (id, title, batch, v) VALUES ({i}, 'row {i}', {i}, {vec(i)})")
    finish(s, keep=True)
    (f,) = wal_files(data, "bad")
    with open(f, "r+b") as fh:
        fh.seek(32 + 16 + 3)        # inside the first record's payload
        b = fh.read(1)
        fh.seek(32 + 16 + 3)
        fh.write(bytes([b[0] ^ 0xFF]))
    size = os.path.getsize(f)
    s.start()
    # The damaged table is refused with the file and offset; the other
    # one is served; nothing was cut from the damaged log.
    with connect(s) as c, c.cursor() as cur:
        with pytest.raises(pymysql.MySQLError) as ei:
            cur.execute("SELECT * FROM bad")
        msg = str(ei.value)
        assert f in msg and "offset 32" in msg, msg
        cur.execute("SHOW TABLES")
        assert {r[0] for r in cur.fetchall()} == {"bad", "good"}
        cur.execute("SELECT COUNT(*) FROM good")
        assert cur.fetchall() == ((5,),)
        with pytest.raises(pymysql.MySQLError) as ei:
            cur.execute(DDL.format(t="bad"))
        assert "already exists" in str(ei.value)
    assert os.path.getsize(f) == size
    assert "cannot be opened" in s.log_text()
    # DROP TABLE is the way out.
    q(s, "DROP TABLE bad")
    q(s, DDL.format(t="bad"))
    assert q(s, "SELECT COUNT(*) FROM bad") == ((0,),)
    finish(s)


def test_damaged_manifest(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("manifest", data_dir=data)
    q(s, DDL.format(t="m"))
    q(s, f"INSERT INTO m (id, title, batch, v) VALUES (1, 'x', 1, {vec(1)})")
    finish(s, keep=True)
    path = os.path.join(data, "tables", "m", "manifest")
    with open(path, "r+b") as fh:
        fh.seek(10)
        fh.write(b"#")
    s.start()
    with connect(s) as c, c.cursor() as cur:
        with pytest.raises(pymysql.MySQLError) as ei:
            cur.execute("SELECT * FROM m")
        assert path in str(ei.value) and "checksum" in str(ei.value)
    finish(s)


def test_full_disk_is_an_error(tmp_path):
    """Writes past a file-size limit fail as on a full disk: the statement
    gets a clear error, the server keeps serving, and after a restart every
    acknowledged row is there and no refused one is."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("full", data_dir=data, prefix=["prlimit", "--fsize=300000"])
    q(s, DDL.format(t="f"))
    acked, refused, err = [], [], None
    text = "lorem ipsum dolor " * 200
    for i in range(1, 400):
        try:
            q(s, f"INSERT INTO f (id, title, batch, v) VALUES ({i}, '{text} {i}', {i}, {vec(i)})")
            acked.append(i)
        except pymysql.MySQLError as e:
            err = str(e)
            refused.append(i)
            if len(refused) >= 3:
                break
    assert err and "cannot write to WAL file" in err, err
    assert s.alive()
    assert q(s, "SELECT COUNT(*) FROM f") == ((len(acked),),)
    finish(s, keep=True)
    s.argv = lambda: LoupeServer.argv(s)     # no limit from now on
    s.start()
    assert [r[0] for r in q(s, "SELECT id FROM f ORDER BY id ASC LIMIT 1000")] == acked
    q(s, f"INSERT INTO f (id, title, batch, v) VALUES (1000, 'more', 1, {vec(1)})")
    finish(s)


def test_restart_keeps_everything(tmp_path):
    """Schema, rows, updates, deletes, TRUNCATE and automatic ids survive a
    clean restart; DROP TABLE removes the table's folder."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("restart", data_dir=data, extra=["--binlog-flush", "1s"])
    q(s, "CREATE TABLE r (title TEXT, price FLOAT, n INT, tag STRING, j JSON) "
         "morphology='stem_en'")
    q(s, "CREATE TABLE gone (title TEXT)")
    q(s, "CREATE TABLE tr (title TEXT)")
    q(s, "INSERT INTO r (title, price, n, tag, j) VALUES ('running dogs', 1.5, 1, 'a', '{\"k\":1}'),"
         "('walking cats', 2.5, 2, 'b', '[1,2]'), ('third', 3.5, 3, 'c', NULL)")
    q(s, "UPDATE r SET n = 20, tag = 'bb' WHERE id = 2")
    q(s, "DELETE FROM r WHERE id = 3")
    q(s, "REPLACE INTO r (id, title, price, n, tag) VALUES (1, 'flying birds', 9.5, 10, 'z')")
    q(s, "INSERT INTO tr (title) VALUES ('x'), ('y')")
    q(s, "TRUNCATE TABLE tr")
    q(s, "INSERT INTO tr (title) VALUES ('after')")
    q(s, "DROP TABLE gone")
    before = q(s, "SELECT * FROM r ORDER BY id ASC")
    create = q(s, "SHOW CREATE TABLE r")
    finish(s, keep=True)
    assert not os.path.exists(os.path.join(data, "tables", "gone"))
    s.start()
    assert q(s, "SELECT * FROM r ORDER BY id ASC") == before
    assert q(s, "SHOW CREATE TABLE r") == create
    assert q(s, "SELECT id FROM r WHERE MATCH('fly')") == ((1,),)      # stemmed index rebuilt
    assert q(s, "SELECT id, title FROM tr") == ((1, "after"),)
    assert {r[0] for r in q(s, "SHOW TABLES")} == {"r", "tr"}
    q(s, "INSERT INTO r (title) VALUES ('new')")
    assert q(s, "SELECT id FROM r ORDER BY id DESC LIMIT 1")[0][0] == 4   # ids go on past 3
    finish(s)


def test_bad_binlog_flush_refused(tmp_path):
    r = subprocess.run([LOUPE_BIN, "serve", "--data", str(tmp_path), "--binlog-flush", "often",
                        "--mysql", "127.0.0.1:0", "--http", "127.0.0.1:0"],
                       capture_output=True, timeout=30, env=sanitizer_env())
    assert r.returncode != 0
    assert b"binlog_flush" in r.stderr and b"commit, 1s or none" in r.stderr


def test_group_commit_with_one_worker(tmp_path):
    """binlog_flush=commit with a single MySQL worker thread: a write waiting
    for its fdatasync parks its connection instead of the worker, so the
    worker applies the other connections' writes meanwhile and they share
    the next sync. 8 writers x 40 single-row INSERTs need fewer syncs than
    statements; every acknowledged row is there after a SIGKILL."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("group", data_dir=data, extra=["--threads", "1"])
    q(s, DDL.format(t="g"))
    acked = []
    mu = threading.Lock()

    def writer(w):
        with connect(s) as c, c.cursor() as cur:
            for k in range(40):
                i = w * 1000 + k + 1
                cur.execute(f"INSERT INTO g (id, title, batch, v) VALUES ({i}, 'w{i}', {w}, {vec(i)})")
                with mu:
                    acked.append(i)

    ths = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for th in ths:
        th.start()
    for th in ths:
        th.join(120)
    assert len(acked) == 320
    syncs = int(dict(q(s, "SHOW TABLE g STATUS"))["wal_syncs"])
    # A worker that waited in fdatasync itself would sync once per
    # statement: exactly 320 (with one worker no two writes are ever
    # waiting at once). How many fewer depends on how long a sync takes
    # next to an INSERT: measured here 104 (release), 182-256 (ASan), 309
    # (ThreadSanitizer, whose INSERTs are slowest).
    assert 0 < syncs < 320, syncs
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    s.restart()
    got = {r[0] for r in q(s, "SELECT id FROM g LIMIT 1000")}
    assert got == set(acked)
    finish(s)
