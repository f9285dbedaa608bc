"""Sealed segments through the real server: FLUSH TABLE and rt_mem_limit
write the RAM segment out, queries see the same table before and after
(full-text scores, kNN, filters, counts), deletes and updates of sealed
rows are tombstones, a restart opens the segments (and replays only the
log past them), damaged segment files refuse the table naming the file,
and SIGKILL during flushes loses no acknowledged row.

Each test runs its own server on its own data folder.
"""

import glob
import json
import os
import random
import signal
import threading
import time

import pymysql
import pytest

from helpers import LoupeServer, http_request
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
    "SELECT id, KNN_DIST() FROM {t} WHERE knn(v, 5, (3, 5, 7, 1)) AND batch = 2",
    "SELECT id FROM {t} WHERE batch = 99 ORDER BY id ASC",
    "SELECT id FROM {t} ORDER BY id DESC LIMIT 3",
    "SELECT id FROM {t} LIMIT 3",
]


def snapshot(s, t, weights=True):
    """Every query's answer. weights=False drops WEIGHT() values (dropping
    deleted rows changes the BM25 statistics) and compares their ids as sets.
    kNN answers are compared by their distances: among rows at equal
    distance a graph may find any (a merge builds a new graph)."""
    out = []
    for sql in QUERIES:
        rows = q(s, sql.format(t=t))
        if not weights and "WEIGHT()" in sql:
            rows = sorted(r[0] for r in rows)
        if "knn(" in sql:
            rows = [r[1] for r in rows]
        out.append(rows)
    return out


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
    wal_before = int(st["wal_bytes"])
    q(s, "FLUSH TABLE t")
    assert snapshot(s, "t") == before
    st = status(s, "t")
    assert st["disk_chunks"] == "3"
    # A log this small stays in one file, covered records included (replay
    # skips them); tombstone files were written.
    assert int(st["wal_bytes"]) == wal_before, st
    assert [os.path.basename(f) for f in glob.glob(os.path.join(data, "tables", "t", "wal", "*.wal"))] == \
        ["0000000000000001.wal"]
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
    # The limit flushes the RAM chunk several times. The chunks on disk may
    # then be fewer: the tiered merge counts a chunk under 1024 rows as 1024,
    # so four small flushes and the chunk merged from them are "similar" and
    # can end as one chunk, depending on how the flushes fell.
    deadline = time.monotonic() + 30
    while int(status(s, "m")["flushes"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    st = status(s, "m")
    assert int(st["flushes"]) >= 2 and int(st["disk_chunks"]) >= 1, st
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
    # ALTER converts the sealed segment (a new one, seg-2) and copies the
    # RAM segment's rows into the new version.
    q(s, "ALTER TABLE a ADD COLUMN extra INT")
    assert q(s, "SELECT COUNT(*) FROM a") == ((199,),)
    assert q(s, "SELECT id FROM a WHERE MATCH('word150')") == ((150,),)
    names = [os.path.basename(f) for f in seg_files(data, "a")]
    assert names and all(n.startswith("seg-2.") for n in names), names  # the old version's are gone
    assert status(s, "a")["disk_chunks"] == "1"
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
    deletes and another connection flushes and merges: the count never goes backwards (only
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
            k = 0
            while not stop.is_set():
                k += 1
                cur.execute("OPTIMIZE TABLE r OPTION sync=1" if k % 5 == 0 else "FLUSH TABLE r")
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
    st = status(s, "r")
    assert int(st["flushes"]) >= 10 and int(st["merges"]) >= 2, st
    n = q(s, "SELECT COUNT(*) FROM r")[0][0]
    assert n > 100 and n % 20 == 0, n
    finish(s)


def test_kill9_during_flushes(tmp_path):
    """20 SIGKILL / restart cycles while 2 writers insert and a flusher
    runs FLUSH TABLE and OPTIMIZE without pause, so kills land inside
    flushes and merges: every
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
        # Flushes without pause, and every few rounds merges everything, so
        # kills land inside flushes and merges alike.
        try:
            with connect(srv) as c, c.cursor() as cur:
                k = 0
                while not stop.is_set():
                    k += 1
                    cur.execute("OPTIMIZE TABLE c OPTION sync=1" if k % 4 == 0 else "FLUSH TABLE c")
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


def wait_merges_done(s, t, timeout=60):
    """Until the background merges stop changing the segment count."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        st = status(s, t)
        cur = (st["disk_chunks"], st["merges"])
        if cur == last:
            return st
        last = cur
        time.sleep(0.5)
    return status(s, t)


def test_optimize_reclaims_space_and_keeps_answers(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("optimize", data_dir=data)
    q(s, DDL.format(t="t"))
    for b in range(3):
        fill(s, "t", b * 1000 + 1, b * 1000 + 1001, b + 1)
        q(s, "FLUSH TABLE t")
    assert status(s, "t")["disk_chunks"] == "3"
    # Delete every other row (sealed rows: tombstones, no space back yet).
    for lo in range(1, 3001, 500):
        ids = ",".join(str(i) for i in range(lo, lo + 500, 2))
        q(s, f"DELETE FROM t WHERE id IN ({ids})")
    q(s, "FLUSH TABLE t")
    before_bytes = int(status(s, "t")["segment_bytes"])
    before = snapshot(s, "t", weights=False)
    assert before[0] == ((1500,),)
    q(s, "OPTIMIZE TABLE t OPTION sync=1")
    st = status(s, "t")
    assert st["disk_chunks"] == "1", st
    after_bytes = int(st["segment_bytes"])
    assert after_bytes < before_bytes * 0.6, (before_bytes, after_bytes)
    assert snapshot(s, "t", weights=False) == before
    merged = snapshot(s, "t")
    # The merged segment's files are the only ones left.
    assert {os.path.basename(f).split(".")[0] for f in seg_files(data, "t")} == \
        {os.path.basename(seg_files(data, "t", "rows")[0]).split(".")[0]}
    finish(s, keep=True)
    s.start()
    assert snapshot(s, "t") == merged
    # A lone segment with deletes is rewritten by OPTIMIZE.
    q(s, "DELETE FROM t WHERE id > 1500")
    q(s, "OPTIMIZE TABLE t OPTION sync=1")
    st = status(s, "t")
    assert st["disk_chunks"] == "1" and int(st["segment_bytes"]) < after_bytes * 0.7, st
    assert q(s, "SELECT COUNT(*) FROM t") == ((750,),)
    finish(s)


def test_background_merges_keep_segments_few(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("tiered", data_dir=data)
    q(s, DDL.format(t="t"))
    for b in range(24):
        fill(s, "t", b * 100 + 1, b * 100 + 101, b)
        q(s, "FLUSH TABLE t")
    st = wait_merges_done(s, "t")
    assert int(st["merges"]) >= 5, st
    assert int(st["disk_chunks"]) <= 6, st
    assert q(s, "SELECT COUNT(*) FROM t") == ((2400,),)
    assert q(s, "SELECT id FROM t WHERE MATCH('word1234')") == ((1234,),)
    ids = [r[0] for r in q(s, "SELECT id FROM t LIMIT 3000")]
    assert ids == list(range(1, 2401))      # merged segments keep the rows' order
    assert q(s, f"SELECT id FROM t WHERE knn(v, 1, {vec(777)}) AND id = 777") == ((777,),)
    finish(s)


def test_optimize_errors(tmp_path):
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("opterr", data_dir=data)
    q(s, DDL.format(t="t"))
    with connect(s) as c, c.cursor() as cur:
        for sql, msg in [("OPTIMIZE TABLE t OPTION cutof=2", "unknown option 'cutof'"),
                         ("OPTIMIZE TABLE t OPTION cutoff=0", "expects an integer"),
                         ("OPTIMIZE TABLE t OPTION sync='yes'", "expects an integer"),
                         ("OPTIMIZE t", "expected TABLE"),
                         ("OPTIMIZE TABLE nope", "does not exist"),
                         ("FLUSH INDEX t", "expected TABLE or RAMCHUNK")]:
            with pytest.raises(pymysql.MySQLError) as ei:
                cur.execute(sql)
            assert msg in str(ei.value), (sql, str(ei.value))
        cur.execute("OPTIMIZE TABLE t")           # background, on an empty table
        cur.execute("OPTIMIZE TABLE t OPTION cutoff=3, sync=1")
    finish(s)


def test_knn_over_segments_against_brute_force(tmp_path):
    """kNN over three sealed segments and the RAM segment (searched side by
    side and merged): recall@10 against brute force, filters never return
    a rejected or deleted row and still return k rows."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segknn", data_dir=data)
    q(s, "CREATE TABLE k (title TEXT, grp INT, v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='8' "
         "HNSW_SIMILARITY='L2')")
    rng = random.Random(5)
    vecs = {}
    for part in range(4):
        rows = []
        for i in range(part * 500 + 1, part * 500 + 501):
            v = [round(rng.gauss(0, 1), 4) for _ in range(8)]
            vecs[i] = v
            rows.append(f"({i}, 'r{i}', {i % 3}, ({','.join(map(str, v))}))")
        q(s, "INSERT INTO k (id, title, grp, v) VALUES " + ",".join(rows))
        if part < 3:
            q(s, "FLUSH TABLE k")
    gone = set(rng.sample(sorted(vecs), 200))
    q(s, "DELETE FROM k WHERE id IN (%s)" % ",".join(map(str, sorted(gone))))
    for i in gone:
        del vecs[i]
    assert status(s, "k")["disk_chunks"] == "3"
    hits = total = 0
    for _ in range(30):
        qv = [round(rng.gauss(0, 1), 4) for _ in range(8)]
        lit = "(" + ",".join(map(str, qv)) + ")"
        d = lambda i: sum((a - b) ** 2 for a, b in zip(vecs[i], qv))
        exact = sorted(vecs, key=lambda i: (d(i), i))[:10]
        got = [r[0] for r in q(s, f"SELECT id FROM k WHERE knn(v, 10, {lit})")]
        assert len(got) == 10 and not set(got) & gone
        hits += len(set(got) & set(exact))
        total += 10
        got = [r[0] for r in q(s, f"SELECT id FROM k WHERE knn(v, 10, {lit}) AND grp = 1")]
        assert len(got) == 10 and all(i % 3 == 1 and i not in gone for i in got), got
    assert hits / total >= 0.95, hits / total
    finish(s)


def test_knn_radius_over_segments(tmp_path):
    """KNN_DIST() < r AND-ed with a filter is a range search on each
    segment's graph (segments large enough that the library walks them),
    within the radius, with recall against brute force."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segradius", data_dir=data)
    q(s, "CREATE TABLE k (grp INT, v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='8' HNSW_SIMILARITY='L2')")
    rng = random.Random(9)
    vecs = {}
    for part in range(3):
        n = 3000 if part < 2 else 500
        base = len(vecs)
        for lo in range(base + 1, base + n + 1, 500):
            rows = []
            for i in range(lo, lo + 500):
                v = [round(rng.gauss(0, 1), 4) for _ in range(8)]
                vecs[i] = v
                rows.append(f"({i}, {i % 3}, ({','.join(map(str, v))}))")
            q(s, "INSERT INTO k (id, grp, v) VALUES " + ",".join(rows))
        if part < 2:
            q(s, "FLUSH TABLE k")
    hits = total = 0
    with connect(s) as c, c.cursor() as cur:
        for _ in range(20):
            qv = [round(rng.gauss(0, 1), 4) for _ in range(8)]
            lit = "(" + ",".join(map(str, qv)) + ")"
            d = lambda i: sum((a - b) ** 2 for a, b in zip(vecs[i], qv))
            ds = sorted(d(i) for i in vecs)
            r = (ds[19] + ds[20]) / 2                # 20 rows inside, 13 or so that pass
            exact = {i for i in vecs if d(i) < r and i % 3 != 2}
            cur.execute(f"SELECT id, KNN_DIST() FROM k WHERE knn(v, 20, {lit}, {{ef=20}}) "
                        f"AND KNN_DIST() < {r} AND grp <> 2")
            got = cur.fetchall()
            cur.execute("SHOW META")
            m = dict(cur.fetchall())
            assert m["plan"] == "knn_hnsw_range", m
            assert int(m["knn_distances"]) < len(vecs) // 2, m
            assert all(dist < r for _, dist in got) and {i for i, _ in got} <= exact
            hits += len({i for i, _ in got} & exact)
            total += len(exact)
    assert hits / total >= 0.95, hits / total
    finish(s)


def test_full_disk_during_merge(tmp_path):
    """A merge that cannot write its output (file size limit, as a full
    disk: each segment and log file fits, the merged one does not) fails
    with a clear error naming the file; the table is unchanged and keeps
    taking writes, and after a restart without the limit everything is
    there and OPTIMIZE succeeds. binlog_max_log_size 0: each flush starts a
    new log file, so that the log of both batches is never in one file."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segfull", data_dir=data, prefix=["prlimit", "--fsize=100000"],
              extra=["--binlog-max-log-size", "0"])
    q(s, DDL.format(t="f"))
    # Text that does not compress much (stored text is zstd-compressed).
    rnd = random.Random(5)
    text = lambda: " ".join("%08x" % rnd.getrandbits(32) for _ in range(60))
    for b in range(2):
        rows = ",".join(f"({i}, '{text()} w{i}', {i}, {vec(i)})" for i in range(b * 100 + 1, b * 100 + 101))
        q(s, f"INSERT INTO f (id, title, batch, v) VALUES {rows}")
        q(s, "FLUSH TABLE f")
    with connect(s) as c, c.cursor() as cur:
        with pytest.raises(pymysql.MySQLError) as ei:
            cur.execute("OPTIMIZE TABLE f OPTION sync=1")
        msg = str(ei.value)
        assert "seg-" in msg and "File too large" in msg, msg
    assert s.alive()
    assert status(s, "f")["disk_chunks"] == "2"
    assert q(s, "SELECT COUNT(*) FROM f") == ((200,),)
    assert q(s, "SELECT id FROM f WHERE MATCH('w177')") == ((177,),)
    q(s, f"INSERT INTO f (id, title, batch, v) VALUES (201, 'after', 1, {vec(1)})")
    q(s, "DELETE FROM f WHERE id = 5")
    finish(s, keep=True)
    s.argv = lambda: LoupeServer.argv(s)     # no limit from now on
    s.start()
    assert q(s, "SELECT COUNT(*) FROM f") == ((200,),)
    q(s, "OPTIMIZE TABLE f OPTION sync=1")
    assert status(s, "f")["disk_chunks"] == "1"
    assert q(s, "SELECT id FROM f WHERE MATCH('w77')") == ((77,),)
    finish(s, keep=True)
    s.start()
    assert q(s, "SELECT COUNT(*) FROM f") == ((200,),)
    assert q(s, "SELECT id FROM f WHERE id = 5") == ()
    finish(s)


def test_updates_of_sealed_rows(tmp_path):
    """UPDATE of rows in sealed segments moves their new versions into the
    RAM segment (prepared outside the write lock); racing REPLACEs of the
    same rows from another connection never leave two versions or lose the
    row; full text and kNN find the moved rows; all of it survives a
    restart."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segupd", data_dir=data)
    q(s, DDL.format(t="u"))
    fill(s, "u", 1, 601, 1)
    q(s, "FLUSH TABLE u")
    assert q(s, "UPDATE u SET batch = 7 WHERE id <= 300") == ()
    assert q(s, "SELECT COUNT(*) FROM u WHERE batch = 7") == ((300,),)
    assert q(s, "SELECT id FROM u WHERE MATCH('word123')") == ((123,),)
    assert q(s, f"SELECT id, batch FROM u WHERE knn(v, 600, {vec(123)}) AND id = 123") == ((123, 7),)
    errors = []

    def replacer():
        try:
            with connect(s) as c, c.cursor() as cur:
                for i in range(301, 601, 3):
                    cur.execute(f"REPLACE INTO u (id, title, tag, batch, v) VALUES "
                                f"({i}, 'replaced{i} common', 'r', 8, {vec(i)})")
        except Exception as e:       # noqa: BLE001 - reported below
            errors.append(repr(e))

    th = threading.Thread(target=replacer)
    th.start()
    with connect(s) as c, c.cursor() as cur:
        for lo in range(301, 601, 50):
            cur.execute(f"UPDATE u SET batch = 101 WHERE id >= {lo} AND id < {lo + 50}")
    th.join(60)
    assert not errors, errors
    rows = dict(q(s, "SELECT id, batch FROM u LIMIT 1000"))
    assert len(rows) == 600 and sorted(rows) == list(range(1, 601))
    for i in range(301, 601):
        # Replaced rows end as 8 or 101 (the update after the replace);
        # the others were updated once.
        assert rows[i] in ((8, 101) if (i - 301) % 3 == 0 else (101,)), (i, rows[i])
    expect = q(s, "SELECT id, batch FROM u ORDER BY id ASC LIMIT 1000")
    finish(s, keep=True)
    s.start()
    assert q(s, "SELECT id, batch FROM u ORDER BY id ASC LIMIT 1000") == expect
    assert q(s, "SELECT id FROM u WHERE MATCH('replaced304')") == ((304,),)
    finish(s)


def test_id_lookups_over_overlapping_segments(tmp_path):
    """Segments whose id ranges overlap (REPLACEs of old ids, ids inserted
    interleaved): every id lookup (WHERE id IN, DELETE, REPLACE) finds the
    live version, before and after a restart and OPTIMIZE, and a lookup asks
    only the segments holding ids near it: SHOW TABLE STATUS's
    id_lookup_max_segments stays at the deepest stack of versions, not the
    number of segments (each segment's [min id, max id] spans the table)."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("idfence", data_dir=data)
    q(s, "CREATE TABLE o (title TEXT, n INT)")
    rnd = random.Random(7)
    model = {}                       # id -> n of the live version

    def put(rows, verb="INSERT"):
        for k in range(0, len(rows), 500):
            part = rows[k:k + 500]
            q(s, f"{verb} INTO o (id, title, n) VALUES " +
              ",".join(f"({i}, 'w{i} r{n}', {n})" for i, n in part))
            model.update(part)

    def check():
        ids = rnd.sample(sorted(model), min(400, len(model))) + [0, 10**9, 2**63 - 1]
        ids += [rnd.randrange(1, 60000) for _ in range(100)]
        ids += ids[:50]              # a row counts once however often named
        want = sorted((i, model[i]) for i in set(ids) if i in model)
        got = q(s, "SELECT id, n FROM o WHERE id IN (%s) ORDER BY id ASC LIMIT 1000"
                % ",".join(map(str, ids)))
        assert [tuple(r) for r in got] == want
        assert q(s, "SELECT COUNT(*) FROM o") == ((len(model),),)

    # Sizes alternate 1100 / 4000 rows a flush, so no four neighbours are
    # similar enough for the tiered policy to merge them.
    base, r = 1, 0
    for size in (1100, 4000, 1100, 4000, 1100, 4000):
        r += 1
        rows = [(i, r) for i in range(base, base + size)]
        base += size
        old = rnd.sample(sorted(model), 20) if model else []
        put(rows)
        if old:
            put([(i, 100 + r) for i in old], "REPLACE")
        q(s, "FLUSH TABLE o")
        check()
    # Two segments with interleaved ids: odd ones, then even ones.
    for parity, size in ((1, 1100), (0, 4000)):
        r += 1
        put([(i, r) for i in range(base, base + 8000) if i % 2 == parity][:size])
        q(s, "FLUSH TABLE o")
        check()
    # Deletes and REPLACEs across the segments, then flushed as tombstones.
    gone = rnd.sample(sorted(model), 300)
    q(s, "DELETE FROM o WHERE id IN (%s)" % ",".join(map(str, gone)))
    for i in gone:
        del model[i]
    put([(i, 999) for i in rnd.sample(sorted(model), 50)], "REPLACE")
    check()
    q(s, "FLUSH TABLE o")
    st = wait_merges_done(s, "o")
    assert int(st["disk_chunks"]) >= 8, st
    assert int(st["merges"]) == 0, st
    depth = int(st["id_lookup_max_segments"])
    assert 2 <= depth <= 4, st
    assert int(st["id_lookup_cells"]) >= 8, st
    check()
    finish(s, keep=True)
    s.start()
    assert status(s, "o")["id_lookup_max_segments"] == str(depth)
    assert q(s, "SHOW TABLE o STATUS LIKE 'id_lookup%'") == (
        ("id_lookup_cells", st["id_lookup_cells"]), ("id_lookup_max_segments", str(depth)))
    check()
    q(s, "OPTIMIZE TABLE o OPTION sync=1")
    st = status(s, "o")
    assert st["disk_chunks"] == "1" and st["id_lookup_max_segments"] == "1", st
    check()
    finish(s)


def expect_start_refused(tmp_path, flag, bad_values, needles):
    """The server, started with `flag bad` for each bad value, exits with
    an error on stderr that holds every needle."""
    import subprocess
    from helpers import LOUPE_BIN, sanitizer_env
    for bad in bad_values:
        r = subprocess.run([LOUPE_BIN, "serve", "--data", str(tmp_path / "d"), flag, bad,
                            "--mysql", "127.0.0.1:0", "--http", "127.0.0.1:0"],
                           capture_output=True, timeout=30, env=sanitizer_env())
        assert r.returncode != 0
        assert all(n in r.stderr for n in needles), r.stderr


def test_bad_rt_mem_limit_refused(tmp_path):
    """A bad rt_mem_limit is refused with what was expected: as a server key
    (the server does not start) and as a table option (CREATE fails)."""
    expect_start_refused(tmp_path, "--rt-mem-limit", ("12", "lots", "64Q"),
                         (b"rt_mem_limit", b"at least 64K"))
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("badlimit", data_dir=data)
    with connect(s) as c, c.cursor() as cur:
        for bad in ("abc", "0", "12X"):
            with pytest.raises(pymysql.MySQLError) as ei:
                cur.execute(f"CREATE TABLE b (title TEXT) rt_mem_limit='{bad}'")
            assert "rt_mem_limit expects a size" in str(ei.value), str(ei.value)
    finish(s)


def test_bad_binlog_max_log_size_refused(tmp_path):
    """A bad binlog_max_log_size stops the server with what was expected."""
    expect_start_refused(tmp_path, "--binlog-max-log-size", ("lots", "16Q", "-1"),
                         (b"binlog_max_log_size", b"expected a size such as 16M"))


def test_stored_text_compressed_in_segments(tmp_path):
    """Sealed segments keep TEXT values zstd-compressed in blocks: every
    value reads back exactly (empty, Unicode, one larger than a block, two
    fields per row) through SELECT, HIGHLIGHT() and the HTTP API, after a
    flush, an UPDATE that moves sealed rows, a merge, ALTER and a restart;
    and the rows file is smaller than the text it holds."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segtext", data_dir=data)
    q(s, "CREATE TABLE x (title TEXT, body TEXT, tag STRING, n INT, "
         "v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='4' HNSW_SIMILARITY='L2')")
    rnd = random.Random(11)
    words = ["alpha", "beta", "gamma", "delta", "épée", "naïve", "日本語", "zeta", "eta", "theta"]
    rows = {}
    for i in range(1, 601):
        n = rnd.randint(0, 60)
        title = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 6)))
        body = " ".join(rnd.choice(words) + str(rnd.randint(0, 50)) for _ in range(n))
        if i == 77:
            body = " ".join(f"big{k}" for k in range(8000))   # ~60 KiB, larger than a block
        if i % 50 == 0:
            title, body = "", ""
        rows[i] = (title, body, f"t{i % 7}", i)
    for lo in (1, 301):
        with connect(s) as c, c.cursor() as cur:
            cur.executemany("INSERT INTO x (id, title, body, tag, n, v) VALUES (%s, %s, %s, %s, %s, (1, 2, 3, 4))",
                            [(i, *rows[i]) for i in range(lo, lo + 300)])
        q(s, "FLUSH TABLE x")
    assert status(s, "x")["disk_chunks"] == "2"
    text_bytes = sum(len(t.encode()) + len(b.encode()) for t, b, _, _ in rows.values())
    rows_bytes = sum(os.path.getsize(f) for f in seg_files(data, "x", "rows"))
    assert rows_bytes < text_bytes * 0.6, (rows_bytes, text_bytes)

    def check():
        got = q(s, "SELECT id, title, body, tag, n FROM x ORDER BY id ASC LIMIT 1000")
        assert len(got) == len(rows)
        for r in got:
            assert r[1:] == rows[r[0]], r[0]
        hl = q(s, "SELECT id, HIGHLIGHT({}, 'body') FROM x WHERE MATCH('@body big7999') LIMIT 5")
        assert len(hl) == 1 and hl[0][0] == 77 and "<b>big7999</b>" in hl[0][1], hl
        code, _, raw = http_request(s.http_port, "/sql", b"SELECT id, body FROM x WHERE id IN (77, 100, 101)",
                                    content_type="text/plain")
        assert code == 200, raw
        got = {r["id"]: r["body"] for r in json.loads(raw)[0]["data"]}
        assert got == {77: rows[77][1], 100: rows[100][1], 101: rows[101][1]}

    check()
    # UPDATE of sealed rows moves them (with their text) into RAM.
    for i in (3, 77, 450):
        q(s, f"UPDATE x SET n = {rows[i][3] + 1000} WHERE id = {i}")
        rows[i] = rows[i][:3] + (rows[i][3] + 1000,)
    check()
    q(s, "OPTIMIZE TABLE x OPTION sync=1")
    assert status(s, "x")["disk_chunks"] == "1"
    check()
    q(s, "ALTER TABLE x ADD COLUMN extra INT")
    check()
    q(s, "FLUSH TABLE x")
    finish(s, keep=True)
    s.start()
    check()
    finish(s)


def test_alter_keeps_segments(tmp_path):
    """ALTER TABLE ADD / DROP COLUMN of attributes and vector columns does
    not copy the sealed segments row by row: each gets a converted rows
    file while its text, full-text index and kept graphs are the same files
    (same inode: linked, not rewritten). Values, deletes, MATCH and kNN are
    as before; a new vector column is empty in the old segments and fills
    as rows get vectors; a merge, UPDATE of old rows and a restart work on
    the converted segments; adding a TEXT field still copies the table."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("segalter", data_dir=data)
    q(s, DDL.format(t="a"))
    fill(s, "a", 1, 201, 1)
    q(s, "FLUSH TABLE a")
    fill(s, "a", 201, 401, 2)
    q(s, "DELETE FROM a WHERE id IN (5, 250)")
    q(s, "FLUSH TABLE a")
    fill(s, "a", 401, 451, 3)                 # stays in the RAM segment
    q(s, "UPDATE a SET batch = 7 WHERE id = 10")   # a sealed row moved to RAM
    q(s, "DELETE FROM a WHERE id = 300")      # tombstone not flushed yet
    before = snapshot(s, "a")
    rows_before = q(s, "SELECT id, title, tag, batch FROM a ORDER BY id ASC LIMIT 1000")
    fts_inodes = sorted(os.stat(f).st_ino for f in seg_files(data, "a", "fts"))
    text_inodes = sorted(os.stat(f).st_ino for f in seg_files(data, "a", "text"))
    vec_inodes = sorted(os.stat(f).st_ino for f in seg_files(data, "a", "vec3"))
    assert len(fts_inodes) == 2 and len(vec_inodes) == 2

    q(s, "ALTER TABLE a ADD COLUMN price FLOAT")
    assert sorted(os.stat(f).st_ino for f in seg_files(data, "a", "fts")) == fts_inodes
    assert sorted(os.stat(f).st_ino for f in seg_files(data, "a", "text")) == text_inodes
    assert sorted(os.stat(f).st_ino for f in seg_files(data, "a", "vec3")) == vec_inodes
    assert status(s, "a")["disk_chunks"] == "2"
    assert snapshot(s, "a") == before
    assert q(s, "SELECT id, title, tag, batch FROM a ORDER BY id ASC LIMIT 1000") == rows_before
    assert q(s, "SELECT COUNT(*) FROM a WHERE price IS NULL") == ((447,),)
    q(s, "UPDATE a SET price = 2.5 WHERE id IN (1, 300, 420)")
    assert q(s, "SELECT id, price FROM a WHERE price > 1 ORDER BY id ASC") == ((1, 2.5), (420, 2.5))

    # Drop the vector column, add another: the old segments have no graph
    # for it; rows given vectors are found by kNN.
    q(s, "ALTER TABLE a DROP COLUMN v")
    assert seg_files(data, "a", "vec*") == []
    q(s, "ALTER TABLE a ADD COLUMN w FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='2' HNSW_SIMILARITY='L2'")
    assert sorted(os.stat(f).st_ino for f in seg_files(data, "a", "fts")) == fts_inodes
    assert q(s, "SELECT id FROM a WHERE knn(w, 5, (1, 1))") == ()
    q(s, "REPLACE INTO a (id, title, tag, batch, w) VALUES (7, 'word7 batch1 common', 'x', 1, (1, 1))")
    q(s, "REPLACE INTO a (id, title, tag, batch, price, w) VALUES (8, 'word8 replaced', 'x', 1, 1.0, (1, 2))")
    assert [r[0] for r in q(s, "SELECT id FROM a WHERE knn(w, 5, (1, 1))")] == [7, 8]
    assert q(s, "SELECT id FROM a WHERE MATCH('word9 | word250 | word300 | word8')") == ((8,), (9,))
    assert q(s, "SELECT title, batch FROM a WHERE id = 10") == (("word10 batch1 common", 7),)
    assert q(s, "SELECT COUNT(*) FROM a") == ((447,),)

    finish(s, keep=True)
    s.start()
    assert q(s, "SELECT COUNT(*) FROM a") == ((447,),)
    assert [r[0] for r in q(s, "SELECT id FROM a WHERE knn(w, 5, (1, 1))")] == [7, 8]
    assert q(s, "SELECT id, price FROM a WHERE price > 1 ORDER BY id ASC") == ((1, 2.5), (420, 2.5))
    q(s, "OPTIMIZE TABLE a OPTION sync=1")
    assert status(s, "a")["disk_chunks"] == "1"
    assert q(s, "SELECT COUNT(*) FROM a") == ((447,),)
    assert [r[0] for r in q(s, "SELECT id FROM a WHERE knn(w, 5, (1, 1))")] == [7, 8]
    assert q(s, "SELECT id FROM a WHERE MATCH('word9 | word250 | word300 | word8')") == ((8,), (9,))

    # A new TEXT field has to be indexed: the table is copied.
    q(s, "FLUSH TABLE a")
    fts_old = sorted(os.stat(f).st_ino for f in seg_files(data, "a", "fts"))
    q(s, "ALTER TABLE a ADD COLUMN body TEXT")
    assert status(s, "a")["disk_chunks"] == "0"
    assert sorted(os.stat(f).st_ino for f in seg_files(data, "a", "fts")) != fts_old
    assert q(s, "SELECT COUNT(*) FROM a") == ((447,),)
    finish(s)


def test_updates_in_place(tmp_path):
    """UPDATE of numeric attributes (INT, BIGINT, FLOAT, BOOL, TIMESTAMP) of
    sealed rows writes their slots in place instead of moving the rows to
    the RAM segment (SHOW TABLE STATUS counts them); the values are seen by
    SELECT and filters at once, survive a restart (log), a flush (a patch
    file per segment, replaced by the next one), kill -9, and a merge; an
    UPDATE of a string still moves the row; a damaged patch file is
    refused naming it."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("seginplace", data_dir=data)
    q(s, "CREATE TABLE p (title TEXT, tag STRING, n INT, big BIGINT, f FLOAT, ok BOOL, ts TIMESTAMP, "
         "v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='2' HNSW_SIMILARITY='L2')")
    for lo in (1, 151):
        q(s, "INSERT INTO p (id, title, tag, n, big, f, ok, ts, v) VALUES " +
          ",".join(f"({i}, 'word{i} common', 't{i}', {i}, {i * 1000}, {i / 4}, 1, {1700000000 + i}, ({i}, 0))"
                   for i in range(lo, lo + 150)))
        q(s, "FLUSH TABLE p")
    expect = {i: (i, i * 1000, i / 4, 1, 1700000000 + i, f"t{i}") for i in range(1, 301)}

    def check():
        got = q(s, "SELECT id, n, big, f, ok, ts, tag FROM p ORDER BY id ASC LIMIT 1000")
        assert {r[0]: r[1:] for r in got} == expect
        assert q(s, "SELECT id FROM p WHERE n = 99999 ORDER BY id ASC") == \
            tuple((i,) for i in sorted(k for k, e in expect.items() if e[0] == 99999))
        assert q(s, "SELECT id FROM p WHERE MATCH('word160')") == ((160,),)
        assert q(s, "SELECT id FROM p WHERE knn(v, 1, (160, 0))") == ((160,),)

    def update(ids, n, big, f, ok, ts):
        q(s, f"UPDATE p SET n = {n}, big = {big}, f = {f}, ok = {ok}, ts = {ts} "
             f"WHERE id IN ({','.join(map(str, ids))})")
        for i in ids:
            expect[i] = (n, None if big == "NULL" else big, f, ok, ts, expect[i][5])

    base = int(status(s, "p")["updates_in_place"])
    update([3, 160, 299], 99999, "NULL", 0.5, 0, 42)
    assert int(status(s, "p")["updates_in_place"]) == base + 3
    assert status(s, "p")["disk_chunks"] == "2"
    check()
    # A string is not fixed-width: that row moves to the RAM segment.
    q(s, "UPDATE p SET tag = 'moved', n = 7 WHERE id = 4")
    expect[4] = (7,) + expect[4][1:5] + ("moved",)
    assert int(status(s, "p")["updates_in_place"]) == base + 3
    check()
    finish(s, keep=True)
    s.start()                                  # replayed from the log
    check()
    q(s, "FLUSH TABLE p")
    patches = seg_files(data, "p", "patch-*")
    assert len(patches) == 2, patches          # one per segment changed
    finish(s, keep=True)
    s.start()                                  # from the patch files
    check()
    update([160, 161], 12, 13, 1.25, 1, 99)
    q(s, "FLUSH TABLE p")
    after = seg_files(data, "p", "patch-*")
    assert len(after) == 2 and after != patches, (patches, after)   # the next generation
    update([5], 99999, 1, 2.0, 1, 3)           # only in the log
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    s.start()
    check()
    # A damaged patch file: the table is refused, naming the file.
    finish(s, keep=True)
    victim = seg_files(data, "p", "patch-*")[0]
    with open(victim, "r+b") as fh:
        fh.seek(40)
        b = fh.read(1)
        fh.seek(40)
        fh.write(bytes([b[0] ^ 0x40]))
    s.start()
    with connect(s) as c, c.cursor() as cur:
        with pytest.raises(pymysql.MySQLError) as ei:
            cur.execute("SELECT COUNT(*) FROM p")
        assert os.path.basename(victim) in str(ei.value), str(ei.value)
    with open(victim, "r+b") as fh:
        fh.seek(40)
        fh.write(b)
    finish(s, keep=True)
    s.start()
    check()
    q(s, "OPTIMIZE TABLE p OPTION sync=1")
    assert seg_files(data, "p", "patch-*") == []
    check()
    finish(s)


def _random_condition(rnd):
    """A random WHERE over the numeric attributes of table c (see
    test_column_scans_agree_with_row_evaluation): tests the column scan
    compiles (comparisons either way round, BETWEEN, IN, IS NULL, int and
    float constants, extremes) mixed with some it leaves to each row."""
    def const(col):
        r = rnd.random()
        if r < 0.05:
            return rnd.choice(["9223372036854775807", "-9223372036854775808", "-1"])
        if r < 0.3 or col == "f":
            return repr(rnd.randint(-40, 40) / 4)
        return str(rnd.randint(-5, 45) if col != "ts" else rnd.randint(1699999990, 1700000050))

    def leaf():
        col = rnd.choice(["n", "big", "f", "ok", "ts"])
        k = rnd.random()
        if k < 0.45:
            op = rnd.choice(["=", "!=", "<>", "<", "<=", ">", ">="])
            return f"{const(col)} {op} {col}" if rnd.random() < 0.2 else f"{col} {op} {const(col)}"
        if k < 0.6:
            return f"{col} {rnd.choice(['', 'NOT '])}BETWEEN {const(col)} AND {const(col)}"
        if k < 0.75:
            vals = ", ".join(str(rnd.randint(-3, 45)) for _ in range(rnd.randint(1, 6)))
            return f"{col} {rnd.choice(['', 'NOT '])}IN ({vals})"
        if k < 0.85:
            return f"{col} IS {rnd.choice(['', 'NOT '])}NULL"
        # not compiled: evaluated on each row the columns leave
        return rnd.choice([f"{col} + 1 > {const(col)}", "tag = 'even'", f"id > {rnd.randint(0, 900)}",
                           f"({col} < 10 OR {col} > 30)", f"NOT ({col} = 3)"])

    return " AND ".join(leaf() for _ in range(rnd.randint(1, 3)))


def test_column_scans_agree_with_row_evaluation(tmp_path):
    """Sealed segments keep numeric attributes as column arrays and a full
    scan tests its WHERE there: every answer (rows, order, LIMIT without
    ORDER BY, COUNT, total_found, kNN and range searches and MATCH queries
    filtered by the condition) equals the one the row-by-row evaluator
    gives for the same condition (wrapped in NOT NOT, which the column scan
    does not compile), over two sealed segments with deletes, values
    changed in place, NULLs and RAM rows; then after a restart and an
    OPTIMIZE. SHOW META says how many rows the columns tested."""
    data = str(tmp_path / "data")
    os.makedirs(data)
    s = start("colscan", data_dir=data)
    q(s, "CREATE TABLE c (title TEXT, tag STRING, n INT, big BIGINT, f FLOAT, ok BOOL, ts TIMESTAMP, "
         "v FLOAT_VECTOR KNN_TYPE='hnsw' KNN_DIMS='2' HNSW_SIMILARITY='L2')")
    rnd = random.Random(7)

    def value(col, i):
        if rnd.random() < 0.1:
            return "NULL"
        return {"n": str(rnd.randint(-3, 42)), "big": str(rnd.choice([rnd.randint(-40, 40), 2**63 - 1, -2**63])),
                "f": repr(rnd.randint(-40, 40) / 4), "ok": str(rnd.randint(0, 1)),
                "ts": str(rnd.randint(1699999995, 1700000045))}[col]

    def batch(ids):
        q(s, "INSERT INTO c (id, title, tag, n, big, f, ok, ts, v) VALUES " + ",".join(
            f"({i}, 'row {i}', '{'even' if i % 2 == 0 else 'odd'}', " +
            ", ".join(value(col, i) for col in ("n", "big", "f", "ok", "ts")) +
            f", ({rnd.randint(0, 99)}, {rnd.randint(0, 99)}))"
            for i in ids))

    for lo, hi in ((1, 401), (401, 801)):
        batch(range(lo, hi))
        # deleted before the flush: ordinals written without a row
        q(s, f"DELETE FROM c WHERE id IN ({lo + 5}, {lo + 64}, {lo + 65})")
        q(s, "FLUSH TABLE c")

    def meta(cur):
        cur.execute("SHOW META")
        return dict(cur.fetchall())

    def row_path(shape):
        """The shape with its ORDER BY keys written `col + 0`: the same
        order, but expressions, so no key is read from the arrays."""
        if "ORDER BY" not in shape:
            return shape
        head, tail = shape.split(" ORDER BY ", 1)
        keys, rest = tail.split(" LIMIT ", 1)
        keys = ", ".join(k if k.split()[0] == "id" else "%s + 0 %s" % tuple(k.split()) for k in keys.split(", "))
        return "%s ORDER BY %s LIMIT %s" % (head, keys, rest)

    def agree(nCond):
        tested = 0
        with connect(s) as conn, conn.cursor() as cur:
            for _ in range(nCond):
                cond = _random_condition(rnd)
                x, y = rnd.randint(0, 99), rnd.randint(0, 99)
                for shape in ("SELECT id FROM c WHERE {w} ORDER BY id ASC LIMIT 1000",
                              "SELECT COUNT(*) FROM c WHERE {w}",
                              "SELECT id, n FROM c WHERE {w} LIMIT 5",
                              "SELECT id, f FROM c WHERE {w} ORDER BY f DESC, id ASC LIMIT 7",
                              # keys all numeric attributes: read from the arrays
                              "SELECT id, f FROM c WHERE {w} ORDER BY f DESC LIMIT 7",
                              "SELECT id, n, big FROM c WHERE {w} ORDER BY n ASC, big DESC LIMIT 12",
                              # kNN: the filter is an allow-bitmap over each graph
                              f"SELECT id, KNN_DIST() FROM c WHERE knn(v, 10, ({x}, {y})) AND {{w}}",
                              f"SELECT id, KNN_DIST() FROM c WHERE knn(v, 20, ({x}, {y})) AND KNN_DIST() < 30 "
                              "AND {w}",
                              # MATCH: each candidate document is tested
                              f"SELECT id, WEIGHT() FROM c WHERE MATCH('row | {x} | {y}') AND {{w}} LIMIT 10",
                              "SELECT COUNT(*) FROM c WHERE MATCH('row') AND {w}",
                              "SELECT id, n FROM c WHERE MATCH('row') AND {w} ORDER BY n DESC, id ASC LIMIT 5",
                              "SELECT id, n FROM c WHERE MATCH('row') AND {w} ORDER BY n DESC LIMIT 5",
                              "SELECT id, f, big FROM c WHERE MATCH('row') AND {w} ORDER BY f ASC, big DESC LIMIT 8"):
                    cur.execute(shape.format(w=cond))
                    got = cur.fetchall()
                    m = meta(cur)
                    tested += int(m.get("rows_tested_by_columns", 0))
                    cur.execute(row_path(shape).format(w=f"NOT NOT ({cond})"))
                    want = cur.fetchall()
                    assert "rows_tested_by_columns" not in meta(cur)
                    assert got == want, (cond, shape)
                    if "COUNT" not in shape:
                        cur.execute(shape.format(w=cond))
                        cur.fetchall()
                        found = meta(cur)["total_found"]
                        cur.execute(row_path(shape).format(w=f"NOT NOT ({cond})"))
                        cur.fetchall()
                        assert found == meta(cur)["total_found"], (cond, shape)
        return tested

    assert agree(30) > 0          # rows in id order: a scan without ORDER BY stops early
    # RAM rows out of id order (then merged into a segment out of order): a
    # scan without ORDER BY takes each segment's matches in id order
    ids = list(range(801, 951))
    rnd.shuffle(ids)
    batch(ids)
    q(s, "DELETE FROM c WHERE id IN (3, 50, 399, 400, 401, 777, 900)")
    q(s, "UPDATE c SET n = 41, f = 10.25, big = NULL WHERE id IN (10, 420, 421)")   # in place
    assert int(status(s, "c")["updates_in_place"]) >= 3
    assert agree(120) > 0
    # no WHERE: sort keys alone from the arrays
    for order in ("f DESC", "n ASC, ts DESC", "big DESC, ok ASC, f ASC", "ok ASC"):
        for lim in (1, 9, 2000):
            sql = f"SELECT id, n, big, f, ok, ts FROM c {{w}} ORDER BY {order} LIMIT {lim}"
            assert q(s, sql.format(w="")) == q(s, sql.format(w="WHERE NOT NOT (id > 0)")), (order, lim)
    # a condition the columns answer alone: they test every sealed slot
    with connect(s) as conn, conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM c WHERE n BETWEEN 5 AND 20 AND f > 0")
        cur.fetchall()
        assert meta(cur)["rows_tested_by_columns"] == "800"
        cur.execute("SELECT id FROM c WHERE knn(v, 10, (50, 50)) AND n BETWEEN 5 AND 20")
        cur.fetchall()
        assert meta(cur)["rows_tested_by_columns"] == "800"      # the graphs' filters too
        cur.execute("SELECT COUNT(*) FROM c WHERE MATCH('row') AND n BETWEEN 5 AND 20")
        cur.fetchall()
        assert int(meta(cur)["rows_tested_by_columns"]) > 700    # each sealed document matched
        cur.execute("EXPLAIN SELECT id FROM c WHERE n > 5 AND tag = 'odd'")
        assert "part of the condition tested on the column arrays" in "\n".join(r[0] for r in cur.fetchall())
        cur.execute("EXPLAIN SELECT id FROM c WHERE n > 5 ORDER BY f DESC LIMIT 3")
        plan = "\n".join(r[0] for r in cur.fetchall())
        assert "the whole condition tested on the column arrays" in plan, plan
        assert "key(s) read from the column arrays" in plan, plan
    finish(s, keep=True)
    s.start()
    assert agree(40) > 0
    q(s, "OPTIMIZE TABLE c")
    for _ in range(200):
        if status(s, "c")["disk_chunks"] == "1":
            break
        time.sleep(0.1)
    assert agree(40) > 0
    finish(s)
