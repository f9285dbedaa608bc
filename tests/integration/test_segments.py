"""Sealed segments through the real server: FLUSH TABLE and rt_mem_limit
write the RAM segment out, queries see the same table before and after
(full-text scores, kNN, filters, counts), deletes and updates of sealed
rows are tombstones, a restart opens the segments (and replays only the
log past them), damaged segment files refuse the table naming the file,
and SIGKILL during flushes loses no acknowledged row.

Each test runs its own server on its own data folder.
"""

import glob
import os
import random
import signal
import threading
import time

import pymysql
import pytest

from test_durability import DDL, Writer, check_table, connect, finish, q, start, vec


def tdir(data, t):
    return os.path.join(data, "tables", t)


def seg_files(data, t, suffix="*"):
    return sorted(glob.glob(os.path.join(tdir(data, t), "seg-*." + suffix)))


def status(s, t):
    return dict(q(s, f"SHOW TABLE {t} STATUS"))


QUERIES = [
    "SELECT COUNT(*) FROM {t}",
    "SELECT id, batch FROM {t} WHERE id IN (5, 10, 11, 12, 250, 777) ORDER BY id ASC",
    "SELECT id, WEIGHT() FROM {t} WHERE MATCH('unique') ORDER BY id ASC",
    "SELECT id, WEIGHT() FROM {t} WHERE MATCH('word250 | word251 | word7') LIMIT 5",
    "SELECT id FROM {t} WHERE MATCH('\"batch3 common\"') ORDER BY id ASC LIMIT 1000",
    "SELECT COUNT(*) FROM {t} WHERE MATCH('common')",
    "SELECT id, KNN_DIST() FROM {t} WHERE knn(v, 5, (3, 5, 7, 1))",
    "SELECT id FROM {t} WHERE knn(v, 5, (3, 5, 7, 1)) AND batch = 2",
    "SELECT id FROM {t} WHERE batch = 99 ORDER BY id ASC",
    "SELECT id FROM {t} ORDER BY id DESC LIMIT 3",
    "SELECT id FROM {t} LIMIT 3",
]


def snapshot(s, t):
    return [q(s, sql.format(t=t)) for sql in QUERIES]


def fill(s, t, lo, hi, batch):
    vals = ",".join(f"({i}, 'word{i} batch{batch} common', 'x', {batch}, {vec(i)})"
                    for i in range(lo, hi))
    q(s, f"INSERT INTO {t} (id, title, tag, batch, v) VALUES {vals}")


def test_flush_keeps_answers_and_restart_opens_segments(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("seg", data_dir=data)
    q(s, DDL.format(t="t"))
    fill(s, "t", 1, 301, 1)
    q(s, "FLUSH TABLE t")
    assert len(seg_files(data, "t", "rows")) == 1
    fill(s, "t", 301, 601, 2)
    q(s, "FLUSH RAMCHUNK t")
    fill(s, "t", 601, 901, 3)
    # Changes to sealed rows: tombstones, and new versions in RAM.
    q(s, "DELETE FROM t WHERE id IN (5, 6, 7, 305)")
    q(s, "UPDATE t SET batch = 99 WHERE id IN (10, 400, 700)")
    q(s, f"REPLACE INTO t (id, title, tag, batch, v) VALUES (11, 'replaced unique', 'y', 4, {vec(11)})")
    q(s, f"REPLACE INTO t (id, title, tag, batch, v) VALUES (350, 'again unique', 'y', 4, {vec(350)})")
    before = snapshot(s, "t")
    assert before[0] == ((896,),)
    assert before[2] and {r[0] for r in before[2]} == {11, 350}
    st = status(s, "t")
    assert st["disk_chunks"] == "2" and st["indexed_documents"] == "896"
    q(s, "FLUSH TABLE t")
    assert snapshot(s, "t") == before
    st = status(s, "t")
    assert st["disk_chunks"] == "3"
    # The log covered by segments is gone; tombstone files were written.
    assert int(st["wal_bytes"]) < 1000, st
    assert seg_files(data, "t", "del-*")
    # After the flush, one more change that only the log holds.
    q(s, "DELETE FROM t WHERE id = 12")
    expect = snapshot(s, "t")
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    s.restart()
    assert snapshot(s, "t") == expect
    finish(s, keep=True)
    s.start()
    assert snapshot(s, "t") == expect
    # Automatic ids go on past every id in the segments.
    q(s, "INSERT INTO t (title, batch, v) VALUES ('auto', 5, (1,1,1,1))")
    assert q(s, "SELECT id FROM t WHERE batch = 5") == ((901,),)
    finish(s)


def test_rt_mem_limit_flushes_in_background(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("memlimit", data_dir=data)
    q(s, "CREATE TABLE m (title TEXT, batch INT) rt_mem_limit='256k'")
    text = " ".join(f"w{k}" for k in range(40))
    for b in range(40):
        vals = ",".join(f"({b * 100 + i + 1}, '{text} doc{b * 100 + i + 1}', {b})" for i in range(100))
        q(s, f"INSERT INTO m (id, title, batch) VALUES {vals}")
    deadline = time.monotonic() + 30
    while int(status(s, "m")["disk_chunks"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    st = status(s, "m")
    assert int(st["disk_chunks"]) >= 2, st
    assert st["mem_limit"] == str(256 * 1024)
    assert q(s, "SELECT COUNT(*) FROM m") == ((4000,),)
    assert q(s, "SELECT id FROM m WHERE MATCH('doc1234')") == ((1234,),)
    finish(s, keep=True)
    s.start()
    assert q(s, "SELECT COUNT(*) FROM m") == ((4000,),)
    assert q(s, "SELECT id FROM m WHERE MATCH('doc3999')") == ((3999,),)
    finish(s)


def test_truncate_alter_drop_with_segments(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segddl", data_dir=data)
    q(s, DDL.format(t="a"))
    fill(s, "a", 1, 101, 1)
    q(s, "FLUSH TABLE a")
    fill(s, "a", 101, 201, 2)
    q(s, "DELETE FROM a WHERE id = 50")
    # ALTER copies every row (segments and RAM) into the new version.
    q(s, "ALTER TABLE a ADD COLUMN extra INT")
    assert q(s, "SELECT COUNT(*) FROM a") == ((199,),)
    assert q(s, "SELECT id FROM a WHERE MATCH('word150')") == ((150,),)
    assert not seg_files(data, "a")      # the old version's files are gone
    q(s, "FLUSH TABLE a")
    q(s, "UPDATE a SET extra = 7 WHERE id = 20")
    finish(s, keep=True)
    s.start()
    assert q(s, "SELECT id, extra FROM a WHERE extra = 7") == ((20, 7),)
    assert q(s, "SELECT COUNT(*) FROM a") == ((199,),)
    q(s, "TRUNCATE TABLE a")
    assert not seg_files(data, "a")
    assert q(s, "SELECT COUNT(*) FROM a") == ((0,),)
    fill(s, "a", 1, 11, 3)
    finish(s, keep=True)
    s.start()
    assert q(s, "SELECT COUNT(*) FROM a") == ((10,),)
    q(s, "FLUSH TABLE a")
    q(s, "DROP TABLE a")
    assert not os.path.exists(tdir(data, "a"))
    finish(s)


def test_leftover_files_are_removed(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("orphans", data_dir=data)
    q(s, DDL.format(t="o"))
    fill(s, "o", 1, 51, 1)
    q(s, "FLUSH TABLE o")
    finish(s, keep=True)
    junk = os.path.join(tdir(data, "o"), "seg-999.rows")
    with open(junk, "wb") as fh:
        fh.write(b"half a segment")
    s.start()
    assert not os.path.exists(junk)
    assert q(s, "SELECT COUNT(*) FROM o") == ((50,),)
    finish(s)


@pytest.mark.parametrize("suffix,offset", [("rows", 40), ("rows", -20), ("fts", 100),
                                           ("vec3", 200), ("del-*", 40)])
def test_damaged_segment_refuses_table(tmp_path, suffix, offset):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segdmg", data_dir=data)
    q(s, DDL.format(t="bad"))
    q(s, DDL.format(t="good"))
    for t in ("bad", "good"):
        fill(s, t, 1, 101, 1)
        q(s, f"DELETE FROM {t} WHERE id = 3")
        q(s, f"FLUSH TABLE {t}")
        q(s, f"DELETE FROM {t} WHERE id = 4")
        q(s, f"FLUSH TABLE {t}")
    finish(s, keep=True)
    (f,) = seg_files(data, "bad", suffix)[-1:]
    with open(f, "r+b") as fh:
        fh.seek(offset, os.SEEK_SET if offset >= 0 else os.SEEK_END)
        b = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([b[0] ^ 0x5A]))
    s.start()
    with connect(s) as c, c.cursor() as cur:
        with pytest.raises(pymysql.MySQLError) as ei:
            cur.execute("SELECT COUNT(*) FROM bad")
        assert f in str(ei.value) and "damaged" in str(ei.value), str(ei.value)
        cur.execute("SELECT COUNT(*) FROM good")
        assert cur.fetchall() == ((98,),)
    finish(s)


def test_readers_see_consistent_table_during_flushes(tmp_path):
    """Readers count and search continuously while a writer inserts and
    deletes and a flusher flushes: the count never goes backwards (only
    inserts grow it, each delete follows its insert in one statement), and
    a deleted row never comes back."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segread", data_dir=data)
    q(s, DDL.format(t="r"))
    stop = threading.Event()
    errors = []
    deleted = set()
    mu = threading.Lock()

    def writer():
        i = 1
        with connect(s) as c, c.cursor() as cur:
            while not stop.is_set():
                vals = ",".join(f"({j}, 'word{j} common', 'x', {j % 5}, {vec(j)})"
                                for j in range(i, i + 20))
                cur.execute(f"INSERT INTO r (id, title, tag, batch, v) VALUES {vals}")
                # One more row inserted and deleted: net growth stays 20.
                cur.execute(f"INSERT INTO r (id, title, tag, batch, v) VALUES "
                            f"({i + 20}, 'gone{i + 20} common', 'x', 9, {vec(i)})")
                cur.execute(f"DELETE FROM r WHERE id = {i + 20}")
                with mu:
                    deleted.add(i + 20)
                i += 21

    def flusher():
        with connect(s) as c, c.cursor() as cur:
            while not stop.is_set():
                cur.execute("FLUSH TABLE r")
                time.sleep(0.05)

    def reader():
        last = 0
        with connect(s) as c, c.cursor() as cur:
            while not stop.is_set():
                cur.execute("SELECT COUNT(*) FROM r WHERE batch <> 9")
                n = cur.fetchall()[0][0]
                if n < last:
                    errors.append(f"count went back from {last} to {n}")
                last = n
                with mu:
                    gone = set(deleted)      # deleted before the query began
                cur.execute("SELECT id FROM r WHERE batch = 9")
                for (i,) in cur.fetchall():
                    if i in gone:
                        errors.append(f"deleted row {i} is back")
                cur.execute("SELECT COUNT(*) FROM r WHERE MATCH('common')")
                m = cur.fetchall()[0][0]
                if m < n:
                    errors.append(f"full-text count {m} below row count {n}")

    threads = [threading.Thread(target=f) for f in (writer, flusher, reader, reader)]
    for th in threads:
        th.start()
    time.sleep(4)
    stop.set()
    for th in threads:
        th.join(60)
    assert not errors, errors[:5]
    assert int(status(s, "r")["disk_chunks"]) >= 3
    n = q(s, "SELECT COUNT(*) FROM r")[0][0]
    assert n > 100 and n % 20 == 0, n
    finish(s)


def test_kill9_during_flushes(tmp_path):
    """20 SIGKILL / restart cycles while 2 writers insert and a flusher
    runs FLUSH TABLE without pause, so kills land inside flushes: every
    acknowledged batch is present and searchable after each restart, none
    is half present, and files of unfinished flushes are cleaned up."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segcrash", data_dir=data)
    q(s, DDL.format(t="c"))
    acked, inflight = {}, {}
    rng = random.Random(7)
    next_batch = 1
    stop = threading.Event()

    def flusher(srv):
        try:
            with connect(srv) as c, c.cursor() as cur:
                while not stop.is_set():
                    cur.execute("FLUSH TABLE c")
        except (pymysql.MySQLError, OSError, ConnectionError):
            pass

    for cycle in range(20):
        stop.clear()
        writers = []
        for w in range(2):
            wr = Writer(s, "c", w, next_batch)
            next_batch += 100000
            writers.append(wr)
            wr.start()
        fl = threading.Thread(target=flusher, args=(s,), daemon=True)
        fl.start()
        time.sleep(rng.uniform(0.1, 0.5))
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait()
        stop.set()
        fl.join(30)
        for wr in writers:
            wr.join(30)
            acked.update(wr.acked)
            inflight.update(wr.inflight)
        s.restart()
        check_table(s, "c", acked, inflight)
        for b in list(inflight):
            if q(s, f"SELECT id FROM c WHERE batch = {b}"):
                acked[b] = inflight.pop(b)
            else:
                inflight[b] = []
    assert len(acked) > 50
    assert int(status(s, "c")["disk_chunks"]) >= 1
    finish(s)
