#!/usr/bin/python3
"""Storage benchmark: loupe's write path and cold start next to Sphinx's RT index.

`make bench-storage` runs this with Debian's python3 after `make build`. One
run measures, with build/loupe-load as the client of both servers:

 (a) Inserts. The same table on both: a text field `<text/10/100>` plus an
     INT and a FLOAT attribute, explicit ids (`<increment>`). For each
     durability setting (loupe `binlog_flush = commit` / Sphinx
     `binlog_flush = 1`, loupe `1s` / Sphinx `2`), both servers are started
     fresh; then for every cell (batch size 1, 100, 1000 x 1 and 8 client
     threads) each server gets an empty table (loupe: DROP + CREATE, Sphinx:
     TRUNCATE RTINDEX) and loupe-load inserts the cell's rows. Rounds repeat
     the cells, and which server goes first alternates per cell and round, so
     machine noise hits both alike; the report gives medians over rounds:
     docs/s, statement latency p50/p95/p99, server CPU per 1000 rows, and
     the ratio loupe/Sphinx. After every cell SELECT COUNT(*) must equal the
     rows sent, and both servers must agree on how many rows MATCH a word.

 (b) Cold start. loupe alone with `binlog_flush = none` is loaded with
     --cold-rows rows (default 1,000,000; loading stops after
     --cold-max-load-s seconds, and the rows then in the table are used),
     stopped with SIGTERM and started again on the same data folder: the
     time from the start of the process to the first answer to SELECT
     COUNT(*) (which must be the row count), resident memory (VmRSS) right
     after, and the table folder's size per row. Then Sphinx with the same
     rows (binlog_flush = 0), restarted twice: once with the rows in its RAM
     chunk (saved at shutdown), once after FLUSH RAMCHUNK (a disk chunk).

 (c) ALTER TABLE, on the reopened table once all rows are in segments
     (loupe: after the `flushed` restart; Sphinx: after the `disk-chunk`
     one): ADD COLUMN extra INT (Sphinx: INTEGER), then DROP COLUMN extra,
     each timed from sending the statement to its reply, with COUNT(*) and
     DESCRIBE checked after each, and which of the table's files the
     statement wrote and which it left as they were (same inode, size and
     mtime). loupe alone then, after its last restart, ADD COLUMN note TEXT
     (every row copied and indexed again), given --alter-text-cap-s seconds
     (default 300) before the client stops waiting. A refused ALTER on
     Sphinx is recorded with its message; on loupe it ends the run.

Results: docs/benchmarks/storage.md and storage.json (--quick: a smoke run,
written under build/bench/). With --perf-dir, loupe is profiled with
`perf record -g` during every batch-1000 cell. Any failed statement, wrong
count, server crash or failed restart ends the run with exit status 1;
servers are stopped and temporary folders removed on every exit path.
"""

import argparse
import glob
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import (run_cli, REPO, BenchError, LoupeServer, SphinxServer, Server,  # noqa: E402
                    command_line, connect, free_port, git_revision,
                    install_signal_handlers, machine, package_version, rss_mib, utc_now)

TABLE = "t"
LOUPE_DDL = "CREATE TABLE t (body TEXT, qty INT, price FLOAT)"
LOAD_SQL = ("INSERT INTO t (id, body, qty, price) VALUES "
            "(<increment>, <text/10/100>, <int/0/1000000>, <float/0/1000>)")
# A word that the load's vocabulary uses often: both servers must count the
# same rows matching it.
CHECK_WORD = "house"
TARGET_RATIO = 2.0
TARGET_BATCH = 1000
# loupe's binlog_flush -> Sphinx's. Sphinx 2.2.11: 0 = write and fsync once a
# second, 1 = write and fsync at every transaction, 2 = write at every
# transaction, fsync once a second (its default). loupe's `1s` pwrite()s each
# record at once and fdatasync()s once a second: Sphinx's 2.
SPHINX_FLUSH = {"commit": 1, "1s": 2, "none": 0}
BATCHES = (1, 100, 1000)
THREADS = (1, 8)
DEFAULT_ROWS = {1: 3000, 100: 30000, 1000: 200000}
QUICK_ROWS = {1: 200, 100: 2000, 1000: 10000}
COLD_LOAD_THREADS = 2


# ------------------------------------------------------------ servers ---

def dir_bytes(path):
    """(apparent bytes, allocated bytes) of every file under path."""
    size = alloc = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except FileNotFoundError:
                continue
            size += st.st_size
            alloc += st.st_blocks * 512
    return size, alloc


def rss_parts_mib(pid):
    """VmRSS split into RssAnon (heap: structures built in memory) and
    RssFile (file pages mapped in, e.g. mmap'd segments), from
    /proc/<pid>/status."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key = line.split(":", 1)[0]
            if key in ("RssAnon", "RssFile", "RssShmem"):
                out[key] = round(int(line.split()[1]) / 1024, 1)
    return out


def count_rows(port, where="", timeout=10.0):
    conn = connect(port, timeout=timeout)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM %s%s" % (TABLE, where))
            row = cur.fetchone()
            return int(row[0]) if row else 0
    finally:
        conn.close()


class Restartable:
    """What both servers add to common.Server: a stop that waits long enough
    for a big table, and a timed restart on the same data and port."""

    def stop_timed(self, timeout=300.0):
        """SIGTERM and wait; returns seconds to exit. Fails if the server is
        still up after `timeout` (then killed) or exits non-zero."""
        self.check_alive()
        t0 = time.monotonic()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise BenchError("%s still running %.0f s after SIGTERM; killed" % (self.name, timeout))
        took = time.monotonic() - t0
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.proc.returncode != 0:
            raise BenchError("%s exited with status %d on SIGTERM; log tail:\n%s"
                             % (self.name, self.proc.returncode, self.log_tail()))
        return took

    def restart_timed(self, expect_rows, tag, timeout=600.0):
        """Starts the server again on the same data folder and port and
        returns seconds from the process start until SELECT COUNT(*) answers
        (it must answer expect_rows)."""
        self.log_path = os.path.join(self.workdir, "server-%s.log" % tag)
        t0 = time.monotonic()
        self._respawn()
        deadline = t0 + timeout
        while True:
            self.check_alive()
            try:
                got = count_rows(self.port, timeout=timeout)
                took = time.monotonic() - t0
                break
            except pymysql.err.MySQLError as e:
                # Refused (not listening yet), or the table is not loaded yet.
                if time.monotonic() > deadline:
                    raise BenchError("%s did not answer within %.0f s of restarting (last: %s); "
                                     "log tail:\n%s" % (self.name, timeout, e, self.log_tail()))
                time.sleep(0.005)
        if got != expect_rows:
            raise BenchError("%s: after restarting, COUNT(*) is %d, expected %d"
                             % (self.name, got, expect_rows))
        return took


class Loupe(Restartable, LoupeServer):
    """`loupe serve` with --binlog-flush; first start on port 0 (the kernel
    picks it, loupe logs it), restarts on the same port."""

    def __init__(self, workdir, binary, flush):
        super().__init__(workdir, binary)
        self.flush = flush

    def _spawn(self, argv):
        super()._spawn(argv + ["--binlog-flush", self.flush])

    def _respawn(self):
        Server._spawn(self, [self.binary, "serve", "--data", self.data_dir,
                             "--mysql", "127.0.0.1:%d" % self.port, "--http", "127.0.0.1:0",
                             "--binlog-flush", self.flush])

    def table_dir(self):
        return os.path.join(self.data_dir, "tables", TABLE)

    def opened_line(self):
        """loupe's own "table 't' opened: N rows, X ms" line, if logged."""
        try:
            with open(self.log_path, errors="replace") as f:
                for line in f:
                    if "table '%s' opened" % TABLE in line:
                        return line.split("] ", 1)[-1].strip()
        except OSError:
            pass
        return None

    def empty_table_args(self):
        return ["--drop", "--init=" + LOUPE_DDL]


# Written with str.replace, not format: the braces are Sphinx's.
SPHINX_CONF = """\
# Generated by bench/storage/run.py for one benchmark run.
index t
{
    type            = rt
    path            = {dir}/data/t
    # Larger than any table here: no disk chunk is written while loading
    # (loupe, without sealed segments yet, keeps everything in memory too).
    rt_mem_limit    = 2047M
    # body is a full-text field and a string attribute, so Sphinx stores the
    # text as loupe's TEXT column does.
    rt_field        = body
    rt_attr_string  = body
    rt_attr_uint    = qty
    rt_attr_float   = price
}

searchd
{
    listen          = 127.0.0.1:{port}:mysql41
    log             = {dir}/searchd.log
    pid_file        = {dir}/searchd.pid
    binlog_path     = {dir}/data
    binlog_flush    = {flush}
    workers         = threads
    watchdog        = 0
    max_packet_size = 128M
}
"""


class Sphinx(Restartable, SphinxServer):
    """searchd 2.2.11 with one RT index and the binlog_flush that matches
    loupe's setting (SPHINX_FLUSH)."""

    def __init__(self, workdir, binary, flush):
        super().__init__(workdir, binary, "sphinx", "")
        self.flush = flush
        self.conf = os.path.join(workdir, "sphinx.conf")

    def start(self):
        # common.SphinxServer.start() writes its own searchd section; this
        # one needs binlog_flush, so the whole file is written here.
        os.mkdir(self.data_dir)
        self.port = free_port()
        with open(self.conf, "w") as f:
            f.write(SPHINX_CONF.replace("{dir}", self.workdir).replace("{port}", str(self.port))
                    .replace("{flush}", str(SPHINX_FLUSH[self.flush])))
        self._respawn()
        self.wait_ready()
        with open(os.path.join(self.workdir, "searchd.pid")) as f:
            pid = int(f.read().strip())
        if pid != self.proc.pid:
            raise BenchError("searchd pid file says %d, started %d" % (pid, self.proc.pid))

    def _respawn(self):
        self._spawn([self.binary, "--config", self.conf, "--nodetach"])

    def table_dir(self):
        return self.data_dir        # index files t.* and the binlog

    def empty_table_args(self):
        return ["--init=TRUNCATE RTINDEX " + TABLE]


# ------------------------------------------------------------ load ---

def run_load(args, server, rows, batch, threads, seed, extra=(), time_cap=None, perf_out=None):
    """One loupe-load run against `server`; returns its JSON result (plus the
    load average at its end). time_cap: SIGINT loupe-load after that many
    seconds (the rows inserted so far stay; the result says interrupted)."""
    server.check_alive()
    argv = [args.loupe_load, "--port", str(server.port), "--load=" + LOAD_SQL,
            "--total=%d" % rows, "--batch-size=%d" % batch, "--threads=%d" % threads,
            "--seed=%d" % seed, "--server-pid=%d" % server.pid, "--json", "--quiet"] + list(extra)
    perf = None
    if perf_out:
        perf = subprocess.Popen(["perf", "record", "-g", "-q", "-o", perf_out, "-p", str(server.pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.5)  # perf attaches
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        try:
            out, err = proc.communicate(timeout=time_cap)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if perf is not None:
            perf.send_signal(signal.SIGINT)
            try:
                perf.wait(timeout=60)
            except subprocess.TimeoutExpired:
                perf.kill()
                perf.wait()
    res = None
    try:
        res = json.loads(out.strip().splitlines()[-1]) if out.strip() else None
    except ValueError:
        pass
    interrupted = bool(res and res.get("interrupted"))
    if res is None or (proc.returncode != 0 and not interrupted):
        raise BenchError("loupe-load against %s (batch %d, %d threads) failed (exit %d):\n%s%s\n"
                         "server log tail:\n%s" % (server.name, batch, threads, proc.returncode,
                                                   err[-3000:], out[-2000:], server.log_tail()))
    if res.get("errors") or res.get("first_error"):
        raise BenchError("loupe-load against %s: statements failed: %s" % (server.name, res.get("first_error")))
    res["loadavg_1m"] = round(os.getloadavg()[0], 2)
    return res


def cell_result(res):
    cpu = (res.get("server_cpu") or {}).get("cpu_s")
    return {
        "rows": res["rows"],
        "docs_per_s": res["docs_per_s"],
        "time_s": res["time_s"],
        "latency_ms": res["latency_ms"],
        "server_cpu_s": cpu,
        "server_cpu_ms_per_1k_rows": round(cpu / res["rows"] * 1e6, 1) if cpu is not None and res["rows"] else None,
        "client_cpu_s": res.get("client_cpu_s"),
        "loadavg_1m": res["loadavg_1m"],
    }


def check_counts(servers, rows, what):
    """Every server holds exactly `rows` rows, and they agree on how many
    match CHECK_WORD (same seed, same rows)."""
    matched = {}
    for s in servers:
        got = count_rows(s.port)
        if got != rows:
            raise BenchError("%s after %s: COUNT(*) is %d, sent %d rows" % (s.name, what, got, rows))
        matched[s.name] = count_rows(s.port, " WHERE MATCH('%s')" % CHECK_WORD)
    if len(set(matched.values())) > 1:
        raise BenchError("after %s the servers disagree on MATCH('%s'): %s" % (what, CHECK_WORD, matched))
    if rows >= 1000 and not any(matched.values()):
        raise BenchError("after %s no row matches '%s'" % (what, CHECK_WORD))


def log_bytes(server):
    """Total size of the server's log files: loupe's tables/t/wal*/*.wal,
    Sphinx's data/binlog.NNN."""
    total = 0
    if isinstance(server, Loupe):
        names = glob.glob(os.path.join(server.table_dir(), "wal*", "*.wal"))
    else:
        names = [n for n in glob.glob(os.path.join(server.data_dir, "binlog.*"))
                 if n.rsplit(".", 1)[1].isdigit()]
    for n in names:
        total += os.path.getsize(n)
    return total


def probe_log_write(server):
    """Whether the reply to a one-row INSERT comes after the row reached the
    log file (the file grew by then). Sphinx 2.2.11 with binlog_flush = 1
    keeps commits in a 256 KB user-space buffer (see README.md), so this is
    checked, not assumed. Leaves one row in the table; the cells empty it."""
    conn = connect(server.port)
    try:
        with conn.cursor() as cur:
            if isinstance(server, Loupe):
                cur.execute("DROP TABLE IF EXISTS " + TABLE)
                cur.execute(LOUPE_DDL)
            before = log_bytes(server)
            cur.execute("INSERT INTO %s (id, body, qty, price) VALUES (1, 'probe row', 1, 1.5)" % TABLE)
            return log_bytes(server) > before
    finally:
        conn.close()


def bench_inserts(args, tmp):
    """Part (a): every cell, both servers, every round; returns the raw runs
    and the log-write probes."""
    runs, probes = [], []
    for flush in args.flush:
        servers = []
        try:
            for name in args.servers:
                d = os.path.join(tmp, "%s-%s" % (name, flush))
                os.mkdir(d)
                s = (Loupe(d, args.loupe_bin, flush) if name == "loupe"
                     else Sphinx(d, args.searchd, flush))
                s.start()
                servers.append(s)
                probes.append({"server": s.name, "flush": flush,
                               "log_written_before_reply": probe_log_write(s)})
            k = 0
            for rnd in range(args.rounds):
                for batch in args.batches:
                    for threads in args.threads:
                        rows = args.rows[batch]
                        order = servers if k % 2 == 0 else servers[::-1]
                        k += 1
                        for s in order:
                            perf_out = None
                            if args.perf_dir and s.name == "loupe" and batch == TARGET_BATCH:
                                perf_out = os.path.join(args.perf_dir, "loupe-%s-b%d-t%d-r%d.data"
                                                        % (flush, batch, threads, rnd + 1))
                            res = run_load(args, s, rows, batch, threads, args.seed + rnd,
                                           s.empty_table_args(), perf_out=perf_out)
                            r = cell_result(res)
                            r.update(server=s.name, flush=flush, batch=batch, threads=threads,
                                     round=rnd + 1)
                            runs.append(r)
                            print("bench-storage: %-6s %-6s batch %4d %d thr round %d: %9.0f docs/s  "
                                  "p50 %8.2f  p99 %8.2f ms  load %.1f"
                                  % (s.name, flush, batch, threads, rnd + 1, r["docs_per_s"],
                                     r["latency_ms"]["p50"], r["latency_ms"]["p99"], r["loadavg_1m"]),
                                  flush=True)
                        check_counts(servers, rows, "batch %d, %d threads" % (batch, threads))
            for s in servers:
                s.check_alive()
        finally:
            for s in servers:
                note = s.stop()
                if note:
                    print("bench-storage: warning: %s %s; log tail:\n%s" % (s.name, note, s.log_tail()),
                          file=sys.stderr)
            for s in servers:
                shutil.rmtree(s.workdir, ignore_errors=True)
    return runs, probes


def summarize(args, runs):
    """Medians over rounds per (flush, batch, threads, server), and the ratio."""
    cells = []
    for flush in args.flush:
        for batch in args.batches:
            for threads in args.threads:
                cell = {"flush": flush, "sphinx_binlog_flush": SPHINX_FLUSH[flush],
                        "batch": batch, "threads": threads, "rows": args.rows[batch]}
                for name in args.servers:
                    rs = [r for r in runs if (r["server"], r["flush"], r["batch"], r["threads"])
                          == (name, flush, batch, threads)]
                    if not rs:
                        continue
                    med = lambda f: round(statistics.median(f(r) for r in rs), 4)
                    cpus = [r["server_cpu_ms_per_1k_rows"] for r in rs
                            if r["server_cpu_ms_per_1k_rows"] is not None]
                    cell[name] = {
                        "rounds": len(rs),
                        "docs_per_s": round(med(lambda r: r["docs_per_s"]), 1),
                        "docs_per_s_min": min(r["docs_per_s"] for r in rs),
                        "docs_per_s_max": max(r["docs_per_s"] for r in rs),
                        "p50_ms": med(lambda r: r["latency_ms"]["p50"]),
                        "p95_ms": med(lambda r: r["latency_ms"]["p95"]),
                        "p99_ms": med(lambda r: r["latency_ms"]["p99"]),
                        "max_ms": med(lambda r: r["latency_ms"]["max"]),
                        "server_cpu_ms_per_1k_rows": round(statistics.median(cpus), 1) if cpus else None,
                    }
                if "loupe" in cell and "sphinx" in cell:
                    cell["ratio"] = round(cell["loupe"]["docs_per_s"] / cell["sphinx"]["docs_per_s"], 2)
                    # Per round: the two servers ran this cell back to back,
                    # so a busy moment on the machine tends to hit both.
                    by_round = {}
                    for r in runs:
                        if (r["flush"], r["batch"], r["threads"]) == (flush, batch, threads):
                            by_round.setdefault(r["round"], {})[r["server"]] = r["docs_per_s"]
                    pairs = [round(v["loupe"] / v["sphinx"], 2) for _, v in sorted(by_round.items())
                             if "loupe" in v and "sphinx" in v]
                    cell["ratio_per_round"] = pairs
                    cell["ratio_per_round_median"] = round(statistics.median(pairs), 2)
                    lc, sc = (cell["loupe"]["server_cpu_ms_per_1k_rows"],
                              cell["sphinx"]["server_cpu_ms_per_1k_rows"])
                    if lc and sc:
                        cell["cpu_per_row_sphinx_over_loupe"] = round(sc / lc, 2)
                cells.append(cell)
    return cells


# ------------------------------------------------------------ cold start ---

PROBE_ID = 2000000000


def flush_probe(port, before):
    """Runs `before` (FLUSH TABLE / OPTIMIZE) while another connection
    inserts one row at a time: how long single-row inserts wait while a
    large RAM segment is frozen and written out. Returns the statement's
    time and the insert latencies (ms) before and during it; the probe rows
    are deleted again."""
    import threading
    lat = []            # (t_start, ms)
    stop = threading.Event()

    def prober():
        c = connect(port, timeout=60)
        k = 0
        try:
            with c.cursor() as cur:
                while not stop.is_set():
                    k += 1
                    t0 = time.monotonic()
                    cur.execute("INSERT INTO %s (id, body, qty, price) VALUES (%d, 'probe row', 1, 1.0)"
                                % (TABLE, PROBE_ID + k))
                    lat.append((t0, (time.monotonic() - t0) * 1000.0))
        finally:
            c.close()

    th = threading.Thread(target=prober, daemon=True)
    th.start()
    time.sleep(1.0)
    c = connect(port, timeout=600)
    try:
        with c.cursor() as cur:
            t0 = time.monotonic()
            cur.execute(before)
            t1 = time.monotonic()
            time.sleep(0.3)
            stop.set()
            th.join(60)
            cur.execute("DELETE FROM %s WHERE id >= %d" % (TABLE, PROBE_ID))
    finally:
        c.close()
    base = sorted(ms for (ts, ms) in lat if ts < t0)
    during = sorted(ms for (ts, ms) in lat if t0 <= ts <= t1)

    def pct(a, p):
        return round(a[min(len(a) - 1, int(p * len(a)))], 3) if a else None
    return {"statement": before, "statement_s": round(t1 - t0, 3),
            "inserts_before": len(base), "before_p50_ms": pct(base, 0.5), "before_p99_ms": pct(base, 0.99),
            "before_max_ms": round(base[-1], 3) if base else None,
            "inserts_during": len(during), "during_p50_ms": pct(during, 0.5),
            "during_p99_ms": pct(during, 0.99), "during_max_ms": round(during[-1], 3) if during else None}


# (loupe's statement, Sphinx's): 2.2.11 documents INTEGER (it takes INT too).
ALTER_ADD = ("ALTER TABLE %s ADD COLUMN extra INT" % TABLE, "ALTER TABLE %s ADD COLUMN extra INTEGER" % TABLE)
ALTER_DROP = ("ALTER TABLE %s DROP COLUMN extra" % TABLE,) * 2
ALTER_TEXT = "ALTER TABLE %s ADD COLUMN note TEXT" % TABLE


def file_states(path):
    """{path relative to `path`: (inode, size, mtime_ns)} of every file."""
    out = {}
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                continue
            out[os.path.relpath(full, path)] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def file_kind(rel):
    """A file's name with its numbers as *: seg-12.rows -> seg-*.rows,
    wal-3/0000000000000001.wal -> wal-*/*.wal, t.0.spa -> t.*.spa."""
    return re.sub(r"[0-9]+", "*", rel)


def files_touched(before, after):
    """What a statement did to a table folder: per kind of file (file_kind),
    [files, bytes] written (a new inode, or the same inode with a new size
    or mtime) and kept (an inode that was there before with the same size
    and mtime, under its old name or as a hard link under a new one)."""
    old = {v[0]: v for v in before.values()}
    written, kept = {}, {}
    for rel, v in sorted(after.items()):
        d = kept if old.get(v[0]) == v else written
        k = d.setdefault(file_kind(rel), [0, 0])
        k[0] += 1
        k[1] += v[1]
    return written, kept


def table_columns(port):
    """The column names DESCRIBE lists (Sphinx lists a field that is also a
    string attribute twice)."""
    conn = connect(port, timeout=60)
    try:
        with conn.cursor() as cur:
            cur.execute("DESCRIBE " + TABLE)
            return [str(r[0]) for r in cur.fetchall()]
    finally:
        conn.close()


def timed_alter(s, sql, rows, column, present, cap_s=None):
    """Runs one ALTER on its own connection and times it from sending the
    statement to the reply. Then COUNT(*) must still be `rows` and DESCRIBE
    must list `column` (present) or not. cap_s: the client stops waiting
    after that long (the result says so; the server may still be working).
    A refused statement is returned as `error` (the caller decides whether
    that ends the run); a wrong count or column list raises BenchError."""
    s.check_alive()
    before = file_states(s.table_dir())
    timeout = cap_s if cap_s else 600
    conn = pymysql.connect(host="127.0.0.1", port=s.port, user="bench", autocommit=True,
                           connect_timeout=10, read_timeout=timeout, write_timeout=timeout)
    r = {"statement": sql, "s": None}
    try:
        with conn.cursor() as cur:
            t0 = time.monotonic()
            try:
                cur.execute(sql)
                r["s"] = round(time.monotonic() - t0, 3)
            except pymysql.err.MySQLError as e:
                took = time.monotonic() - t0
                if cap_s and isinstance(e, pymysql.err.OperationalError) and took >= cap_s * 0.98:
                    r["did_not_finish_s"] = cap_s
                else:
                    r["error"] = (e.args[1] if len(e.args) > 1 else str(e)).rstrip("\x00")
                    r["error_after_s"] = round(took, 3)
    finally:
        try:
            conn.close()
        except pymysql.err.Error:
            pass        # already closed by a timed-out read
    if r["s"] is None:
        return r
    r["written"], r["kept"] = files_touched(before, file_states(s.table_dir()))
    got = count_rows(s.port, timeout=60)
    if got != rows:
        raise BenchError("%s: after `%s` COUNT(*) is %d, expected %d" % (s.name, sql, got, rows))
    r["count_after"] = got
    cols = table_columns(s.port)
    if (column in cols) != present:
        raise BenchError("%s: after `%s` DESCRIBE %s column %s: %s"
                         % (s.name, sql, "lacks" if present else "still lists", column, cols))
    return r


def alter_attr(s, name, rows):
    """ADD then DROP an INT attribute (part (c)); returns the two results."""
    i = 0 if name == "loupe" else 1
    out = []
    for sql, present in ((ALTER_ADD[i], True), (ALTER_DROP[i], False)):
        if out and out[0]["s"] is None:
            out.append({"statement": sql, "s": None, "not_run": "the ADD COLUMN failed"})
            continue
        r = timed_alter(s, sql, rows, "extra", present)
        if r.get("error") and name == "loupe":
            raise BenchError("loupe refused `%s`: %s; log tail:\n%s" % (sql, r["error"], s.log_tail()))
        out.append(r)
        print("bench-storage: %s: `%s`: %s" % (name, sql, alter_outcome(r)), flush=True)
    return out


def alter_outcome(r):
    """One result of timed_alter in words."""
    if r.get("s") is not None:
        return "%.3f s" % r["s"]
    if r.get("did_not_finish_s"):
        return "did not finish in %g s" % r["did_not_finish_s"]
    if r.get("error"):
        return "refused: %s" % r["error"]
    if r.get("not_run"):
        return "not run (%s)" % r["not_run"]
    return "not run"


def cold_one(args, tmp, name, rows_wanted, time_cap):
    """Load, stop, restart; returns the measurements (and the rows loaded)."""
    d = os.path.join(tmp, "cold-" + name)
    os.mkdir(d)
    # Loading: loupe without fsync; Sphinx with its cheapest setting.
    s = (Loupe(d, args.loupe_bin, "none") if name == "loupe"
         else Sphinx(d, args.searchd, "none"))
    out = {"server": name, "binlog_flush": "none" if name == "loupe" else SPHINX_FLUSH["none"]}
    try:
        s.start()
        print("bench-storage: cold start: loading %s with up to %d rows (at most %.0f s)"
              % (name, rows_wanted, time_cap), flush=True)
        res = run_load(args, s, rows_wanted, 1000, COLD_LOAD_THREADS, args.seed,
                       s.empty_table_args(), time_cap=time_cap)
        rows = count_rows(s.port, timeout=60)
        out["load"] = {"rows_requested": rows_wanted, "capped_by_time": bool(res.get("interrupted")),
                       "time_s": res["time_s"], "docs_per_s": res["docs_per_s"],
                       "batch": 1000, "threads": COLD_LOAD_THREADS}
        out["rows"] = rows
        out["rss_mib_loaded"] = rss_mib(s.pid)
        print("bench-storage: cold start: %s holds %d rows (%.0f docs/s), RSS %.0f MiB; stopping"
              % (name, rows, res["docs_per_s"], out["rss_mib_loaded"]), flush=True)
        states = []
        if name == "loupe":
            states.append(("as-loaded", None))
            states.append(("flushed", "FLUSH TABLE " + TABLE))
            states.append(("optimized", "OPTIMIZE TABLE %s OPTION sync=1" % TABLE))
        else:
            states.append(("ram-chunk", None))
            states.append(("disk-chunk", "FLUSH RAMCHUNK " + TABLE))
        out["restarts"] = []
        out["probes"] = []
        for state, before in states:
            if before and name == "loupe":
                pr = flush_probe(s.port, before)
                out["probes"].append(pr)
                print("bench-storage: %s took %.2f s; single-row inserts meanwhile: %d, p99 %.2f ms, "
                      "max %.2f ms (before: p99 %.2f ms)" % (before, pr["statement_s"], pr["inserts_during"],
                                                            pr["during_p99_ms"] or 0, pr["during_max_ms"] or 0,
                                                            pr["before_p99_ms"] or 0), flush=True)
            elif before:
                conn = connect(s.port, timeout=60)
                try:
                    with conn.cursor() as cur:
                        cur.execute(before)
                finally:
                    conn.close()
            stop_s = s.stop_timed()
            size, alloc = dir_bytes(s.table_dir())
            start_s = s.restart_timed(rows, state)
            r = {"state": state, "before_stop": before, "stop_s": round(stop_s, 3),
                 "start_to_first_answer_s": round(start_s, 3),
                 "rss_mib_after_open": rss_mib(s.pid),
                 "rss_parts_mib_after_open": rss_parts_mib(s.pid),
                 "disk_bytes": size, "disk_bytes_allocated": alloc,
                 "disk_bytes_per_row": round(size / rows, 1) if rows else None}
            if name == "loupe":
                r["server_log"] = s.opened_line()
            time.sleep(2)
            r["rss_mib_after_2s"] = rss_mib(s.pid)
            matched = count_rows(s.port, " WHERE MATCH('%s')" % CHECK_WORD, timeout=60)
            r["match_check"] = matched
            out["restarts"].append(r)
            print("bench-storage: cold start: %s (%s): stop %.1f s, start to first answer %.2f s, "
                  "RSS %.0f MiB, %.0f bytes/row on disk"
                  % (name, state, stop_s, start_s, r["rss_mib_after_open"], r["disk_bytes_per_row"] or 0),
                  flush=True)
            if state in ("flushed", "disk-chunk"):
                # Part (c): every row is in segments (disk chunks), just reopened.
                out["alter"] = alter_attr(s, name, rows)
                out["alter_state"] = state
        if name == "loupe" and args.alter_text_cap_s > 0:
            # Last: it changes the table (a new TEXT field, every row copied).
            r = timed_alter(s, ALTER_TEXT, rows, "note", True, cap_s=args.alter_text_cap_s)
            if r.get("error"):
                raise BenchError("loupe refused `%s`: %s; log tail:\n%s" % (ALTER_TEXT, r["error"], s.log_tail()))
            r["state"] = out["restarts"][-1]["state"]
            out["alter_text"] = r
            print("bench-storage: loupe: `%s` (on the %s table): %s%s"
                  % (ALTER_TEXT, r["state"], alter_outcome(r),
                     "; the server is stopped while it may still be working" if r["s"] is None else ""),
                  flush=True)
        s.check_alive()
    finally:
        note = s.stop()
        if note:
            print("bench-storage: warning: %s %s; log tail:\n%s" % (s.name, note, s.log_tail()),
                  file=sys.stderr)
        shutil.rmtree(d, ignore_errors=True)
    return out


def bench_cold(args, tmp):
    results = []
    lo = cold_one(args, tmp, "loupe", args.cold_rows, args.cold_max_load_s)
    results.append(lo)
    if "sphinx" in args.servers:
        sp = cold_one(args, tmp, "sphinx", lo["rows"], args.cold_max_load_s)
        if sp["rows"] != lo["rows"]:
            sp["note"] = "fewer rows than loupe (loading stopped by the time limit)"
        matched = {r["match_check"] for x in (lo, sp) for r in x["restarts"]}
        if sp["rows"] == lo["rows"] and len(matched) > 1:
            raise BenchError("cold start: loupe and Sphinx disagree on MATCH('%s') after restart: %s"
                             % (CHECK_WORD, sorted(matched)))
        results.append(sp)
    return results


# ------------------------------------------------------------ report ---

def fmt_rate(x):
    return "%.0f" % x if x is not None else "–"


def alter_cell(r):
    """A result of timed_alter for the report's table."""
    if r is None:
        return "–"
    if r.get("s") is not None:
        return "%.3f" % r["s"]
    if r.get("did_not_finish_s"):
        return "did not finish in %g s" % r["did_not_finish_s"]
    if r.get("error"):
        return "refused: “%s”" % r["error"].replace("|", "\\|")
    return "not run (%s)" % r["not_run"] if r.get("not_run") else "not run"


def files_words(d):
    """{kind: [files, bytes]} in words: the kinds of 64 KiB or more with
    their count and size, biggest first, then the small ones by name."""
    if not d:
        return "nothing"
    big = sorted(((k, n, b) for k, (n, b) in d.items() if b >= 65536), key=lambda x: -x[2])
    small = sorted(k for k, (n, b) in d.items() if b < 65536)
    words = ["`%s` (%d file%s, %.1f MiB)" % (k, n, "" if n == 1 else "s", b / 1048576) for k, n, b in big]
    if small:
        words.append("%s: %s" % ("small files" if big else "only small files",
                                 ", ".join("`%s`" % k for k in small)))
    return "; ".join(words) if len(words) > 1 else words[0]


def alter_report(meta, cold):
    """Part (c) of the report: the ALTER TABLE timings and what each
    statement did to the table's files. [] for a run without them (an
    older storage.json)."""
    by = {c["server"]: c for c in cold}
    lo, sp = by.get("loupe", {}), by.get("sphinx")
    if not lo.get("alter") and not lo.get("alter_text"):
        return []
    rows = lo["rows"]
    L = ["## ALTER TABLE on the %s-row table" % format(rows, ","), "",
         "Right after the restart that found every row in segments (loupe: `%s` above; Sphinx: `%s`),"
         % (lo.get("alter_state", "flushed"), (sp or {}).get("alter_state", "disk-chunk")),
         "each statement is timed from sending it to its reply, on its own connection; after each,",
         "`SELECT COUNT(*)` must still be %s and `DESCRIBE t` must list the new column (or no longer"
         % format(rows, ","),
         "list the dropped one)."]
    at = lo.get("alter_text")
    if at:
        cap = at.get("did_not_finish_s") or meta["settings"].get("alter_text_cap_s")
        L += ["loupe's `ADD COLUMN note TEXT` runs last, after the `%s` restart, because it changes the"
              % at.get("state", "optimized"),
              "table; the client waits for it at most %g s." % cap]
    if sp and sp.get("note"):
        L.append("Sphinx: %s." % sp["note"])
    L += ["", "| statement | loupe s | Sphinx s |", "|---|---:|---:|"]
    la, sa = lo.get("alter") or [None, None], (sp or {}).get("alter") or [None, None]
    for i in range(2):
        lr, sr = la[i], sa[i]
        stmt = "`%s`" % (lr or sr)["statement"]
        if lr and sr and sr["statement"] != lr["statement"]:
            stmt += " (Sphinx: `%s`)" % sr["statement"].split()[-1]
        L.append("| %s | %s | %s |" % (stmt, alter_cell(lr), alter_cell(sr) if sp else "not run"))
    if at:
        L.append("| `%s` | %s | – (not measured) |" % (at["statement"], alter_cell(at)))
    L += ["", "What each statement did to the table's files, seen from outside: a file there after the",
          "reply whose inode, size and mtime were there before (under its old name, or as a hard link",
          "under a new one) counts as *kept*, any other file as *written*:", ""]
    for name, c in (("loupe", lo), ("Sphinx", sp)):
        for r in ((c or {}).get("alter") or []) + ([c["alter_text"]] if c and c.get("alter_text") else []):
            if "written" not in r:
                continue
            w = sum(b for _, b in r["written"].values())
            k = sum(b for _, b in r["kept"].values())
            L.append("- %s, `%s`: wrote %.1f of the folder's %.1f MiB: %s. Kept %s." % (
                name, r["statement"].split(" ", 3)[3], w / 1048576, (w + k) / 1048576,
                files_words(r["written"]), files_words(r["kept"])))
    L += ["",
          "loupe's files (docs/storage.md): `seg-*.rows` a segment's rows (attributes, strings,",
          "vectors), `seg-*.text` their TEXT values in zstd-compressed blocks, `seg-*.fts` its full-text",
          "index, `seg-*.vec*` a vector column's graph, `seg-*.del-*` / `seg-*.patch-*` its tombstones",
          "and rows updated in place, `manifest` the table's state, `wal-*/` the log of the table's version.",
          "Sphinx's: `t.*.spa` a disk chunk's attributes, `t.*.sph` its header, `t.*.sps` its strings,",
          "`t.*.spi`/`.spd`/`.spp`/`.spe` its full-text dictionary, documents, positions and skip lists,",
          "`t.meta`/`t.ram`/`t.kill` the index's chunk list, RAM chunk and kill list, `binlog.*` the",
          "binlog.", ""]
    return L


def write_report(out_dir, meta, cells, runs, cold):
    os.makedirs(out_dir, exist_ok=True)
    targets = [c for c in cells if c["batch"] == TARGET_BATCH and "ratio" in c]
    verdict = {"target": "loupe >= %.1fx Sphinx's docs/s at batch %d" % (TARGET_RATIO, TARGET_BATCH),
               "cells": [{"flush": c["flush"], "threads": c["threads"], "ratio": c["ratio"],
                          "ratio_per_round_median": c["ratio_per_round_median"],
                          "cpu_ratio": c.get("cpu_per_row_sphinx_over_loupe"),
                          "met": c["ratio"] >= TARGET_RATIO} for c in targets]}
    verdict["all_met"] = bool(targets) and all(v["met"] for v in verdict["cells"])
    with open(os.path.join(out_dir, "storage.json"), "w") as f:
        json.dump({"meta": meta, "inserts": cells, "target": verdict, "cold_start": cold,
                   "runs": runs}, f, indent=2)
        f.write("\n")

    m, st = meta["machine"], meta["settings"]
    L = ["# Storage benchmark: inserts and cold start, loupe vs Sphinx", ""]
    if cells:
        L += [
            "## Inserts",
            "",
            "`build/loupe-load` against each server over the MySQL protocol: `%s`, with"
            % LOAD_SQL,
            "`--batch-size` rows per statement and `--threads` connections, into an empty table",
            "(loupe: `%s`; Sphinx: an RT index with `rt_field = body`, `rt_attr_string = body`," % LOUPE_DDL,
            "`rt_attr_uint = qty`, `rt_attr_float = price`, so both store the text). Rows per cell:",
            ", ".join("batch %d: %d" % (b, st["rows"][str(b)]) for b in st["batches"]) + ".",
            "Each number is the median of %d round(s); the server that goes first alternates." % st["rounds"],
            "Latency is per statement (a statement carries `batch` rows), in ms. CPU is the",
            "server process's user+system time per 1000 rows. The 1-minute load average at",
            "the end of a cell ranged %.1f–%.1f on %d cores (the benchmark itself adds up to"
            % (min(r["loadavg_1m"] for r in runs), max(r["loadavg_1m"] for r in runs), m["cores"]),
            "threads + 1).",
            "",
            "Durability settings compared (both acknowledge a statement only after it is applied):",
            "",
            "| loupe `binlog_flush` | Sphinx `binlog_flush` | documented: a reply waits for | "
            "log file grown when the reply came: loupe / Sphinx (probe) |",
            "|---|---|---|---|",
        ]
        probe = {(p["server"], p["flush"]): p["log_written_before_reply"] for p in meta["log_probe"]}
        yn = lambda v: "–" if v is None else ("yes" if v else "**no**")
        for flush, what in (("commit", "the record written and fsynced (loupe: one fdatasync shared by "
                             "the writers waiting at that moment)"),
                            ("1s", "the record written to the file; fsync once a second")):
            if flush in st["flush"]:
                L.append("| `%s` | `%d`%s | %s | %s / %s |" % (
                    flush, SPHINX_FLUSH[flush], " (its default)" if flush == "1s" else "", what,
                    yn(probe.get(("loupe", flush))), yn(probe.get(("sphinx", flush)))))
        L.append("")
        if probe.get(("sphinx", "commit")) is False:
            L += ["**Sphinx 2.2.11's `binlog_flush = 1` does not do what it documents.** Its commit path",
                  "(`RtBinlog_c::CheckDoFlush`, sphinxrt.cpp) writes and fsyncs only when",
                  "`HasUnsyncedData()`, i.e. when bytes were written but not synced, which is never the",
                  "case right after a commit (the record is still in the 256 KB user-space buffer), and",
                  "mode 1 starts no once-a-second flush thread. So a commit reaches the file only when",
                  "the buffer fills (then it is fsynced): acknowledged rows are not on disk, not even in",
                  "the page cache (the probe above: the binlog had not grown when the reply came). Its",
                  "`commit` numbers are therefore those of a server doing no I/O per statement; loupe's",
                  "include a real `fdatasync` per group of statements.",
                  ""]

        for flush in st["flush"]:
            L += ["### binlog_flush = %s (Sphinx %d)" % (flush, SPHINX_FLUSH[flush]), "",
                  "| batch | threads | loupe docs/s (range) | Sphinx docs/s (range) | loupe/Sphinx "
                  "| per round | loupe p50 / p95 / p99 ms | Sphinx p50 / p95 / p99 ms "
                  "| CPU ms/1k rows loupe / Sphinx |",
                  "|---:|---:|---:|---:|---:|---|---|---|---|"]
            for c in cells:
                if c["flush"] != flush:
                    continue
                lo, sp = c.get("loupe"), c.get("sphinx")
                rate = lambda x: ("%.0f (%.0f–%.0f)" % (x["docs_per_s"], x["docs_per_s_min"],
                                                        x["docs_per_s_max"])) if x else "–"
                lat = lambda x: ("%.2f / %.2f / %.2f" % (x["p50_ms"], x["p95_ms"], x["p99_ms"])) if x else "–"
                cpu = lambda x: ("%.0f" % x["server_cpu_ms_per_1k_rows"]) if x and x.get(
                    "server_cpu_ms_per_1k_rows") is not None else "–"
                L.append("| %d | %d | %s | %s | %s | %s | %s | %s | %s / %s |" % (
                    c["batch"], c["threads"], rate(lo), rate(sp),
                    "**%.2fx**" % c["ratio"] if "ratio" in c else "–",
                    ", ".join("%.2f" % x for x in c.get("ratio_per_round", [])) or "–",
                    lat(lo), lat(sp), cpu(lo), cpu(sp)))
            L.append("")
        if targets:
            L.append("Target (%s, judged on the ratio of the medians): %s." % (verdict["target"], "; ".join(
                "%s, %d thread(s): %.2fx, %s (per-round median %.2fx; CPU per row: Sphinx %sx loupe's)"
                % (v["flush"], v["threads"], v["ratio"], "met" if v["met"] else "NOT met",
                   v["ratio_per_round_median"], v["cpu_ratio"] if v["cpu_ratio"] else "?")
                for v in verdict["cells"])))
            L.append("")
            L += ["*loupe/Sphinx* is the ratio of the medians; *per round* the ratio within each round,",
                  "where the two servers ran the cell back to back. *Range* is the slowest and fastest",
                  "round. On this shared 2-core machine, with the client on the same cores, both servers",
                  "are CPU-bound at batch 1000 and 8 threads, so the CPU per row is the steadier measure",
                  "of the work each does.", ""]
    if cold:
        L += ["## Cold start", "",
              "A table of `%s` rows (the load above, batch 1000, %d threads; loupe with"
              % (cold[0]["rows"], COLD_LOAD_THREADS),
              "`binlog_flush = none`, Sphinx with `binlog_flush = 0`) is stopped with SIGTERM and the",
              "server started again on the same folder. *Start* is from the process start to the",
              "first answer to `SELECT COUNT(*)` (checked against the row count); RSS is VmRSS right",
              "then (and 2 s later), split into private anonymous memory (built at start), shared",
              "memory (Sphinx keeps a disk chunk's attributes there) and file pages (mapped files).",
              "*Disk* is the apparent size of the table's files (loupe:",
              "`tables/t/`: manifest, segments and WAL; Sphinx: its data folder, index files and binlog).",
              ""]
        for c in cold:
            if c["load"]["capped_by_time"]:
                L.append("- %s: loading stopped after the %.0f s limit at %d of %d rows requested."
                         % (c["server"], meta["settings"]["cold_max_load_s"], c["rows"],
                            c["load"]["rows_requested"]))
            if c.get("note"):
                L.append("- %s: %s." % (c["server"], c["note"]))
        L += ["",
              "| server | state at restart | rows | load docs/s | stop s | start s | RSS after open MiB "
              "(2 s later) | of which anon / shmem / file MiB | RSS before stop MiB | disk MiB | disk bytes/row |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for c in cold:
            for r in c["restarts"]:
                parts = r.get("rss_parts_mib_after_open") or {}
                part = lambda k: "%.0f" % parts[k] if k in parts else "?"
                L.append("| %s | %s | %d | %.0f | %.2f | %.2f | %.0f (%.0f) | %s / %s / %s | %.0f | %.1f | %.0f |" % (
                    c["server"], r["state"], c["rows"], c["load"]["docs_per_s"], r["stop_s"],
                    r["start_to_first_answer_s"], r["rss_mib_after_open"], r["rss_mib_after_2s"],
                    part("RssAnon"), part("RssShmem"), part("RssFile"),
                    c["rss_mib_loaded"], r["disk_bytes"] / 1048576, r["disk_bytes_per_row"]))
        L += ["",
              "States: loupe `as-loaded`: as the load left it: sealed segments written whenever the",
              "RAM segment passed `rt_mem_limit` (128M) and merged by the background policy, plus the",
              "RAM segment's rows, which a start replays from the write-ahead log (rebuilding their",
              "full-text index); `flushed`: after `FLUSH TABLE t`, everything is in sealed segments",
              "(mapped, verified, nothing rebuilt); `optimized`: after `OPTIMIZE TABLE t OPTION",
              "sync=1`, one segment. Sphinx `ram-chunk`: the rows were in its RAM chunk, which",
              "searchd writes to `t.ram` at shutdown and reads back at start; `disk-chunk`: after",
              "`FLUSH RAMCHUNK t`, the rows are one disk chunk.", ""]
        probes = [p for c in cold for p in c.get("probes", [])]
        if probes:
            L += ["Write stalls: while the statement below ran on the loaded table, another connection",
                  "inserted one row at a time (`binlog_flush = none`); latency of those inserts in ms,",
                  "before and during the statement (the RAM segment is frozen under the write lock,",
                  "then written out while writes go on).", "",
                  "| statement | took s | inserts during | p50 / p99 / max ms during | p50 / p99 / max ms before |",
                  "|---|---:|---:|---|---|"]
            for p in probes:
                L.append("| `%s` | %.2f | %d | %s / %s / %s | %s / %s / %s |" % (
                    p["statement"], p["statement_s"], p["inserts_during"], p["during_p50_ms"],
                    p["during_p99_ms"], p["during_max_ms"], p["before_p50_ms"], p["before_p99_ms"],
                    p["before_max_ms"]))
            L.append("")
        for c in cold:
            for r in c["restarts"]:
                if r.get("server_log"):
                    L.append("loupe's log at the restart: `%s`" % r["server_log"])
                    L.append("")
        L += alter_report(meta, cold)
    L += [
        "## Setup",
        "",
        "- Command: `%s`" % meta["command"],
        "- Date: %s" % meta["date"],
        "- Machine: %s, %d cores, %.1f GiB, kernel %s" % (m["cpu"], m["cores"], m["memory_gib"], m["kernel"]),
        "- loupe: %s (git %s), `--threads` default (one MySQL worker per CPU)" % (
            meta["versions"]["loupe"], meta["versions"]["git"]),
        "- Sphinx: %s (Debian sphinxsearch %s): `workers = threads`, no query log, `rt_mem_limit = 2047M`"
        % (meta["versions"]["searchd"], meta["versions"]["sphinxsearch_pkg"]),
        "  (no disk chunk written while loading); loupe: `rt_mem_limit` default (128M).",
        "- Client: loupe-load (tools/loupe-load.c, libmariadb %s), seed %d (same rows for both)"
        % (meta["versions"]["libmariadb_pkg"], st["seed"]),
        "- Data: in %s" % meta["tmp_fs"],
        "",
        "Raw numbers per run: `storage.json` next to this file.",
        "",
    ]
    with open(os.path.join(out_dir, "storage.md"), "w") as f:
        f.write("\n".join(L))


# ------------------------------------------------------------ main ---

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3, help="rounds of insert cells (default 3)")
    p.add_argument("--rows", default=None,
                   help="rows per cell for batch 1,100,1000 (default %s)"
                   % ",".join(str(DEFAULT_ROWS[b]) for b in BATCHES))
    p.add_argument("--batches", default="1,100,1000", help="batch sizes (default 1,100,1000)")
    p.add_argument("--threads", default="1,8", help="client threads (default 1,8)")
    p.add_argument("--flush", default="commit,1s", help="loupe binlog_flush settings (default commit,1s)")
    p.add_argument("--servers", default="loupe,sphinx", help="loupe and/or sphinx (default both)")
    p.add_argument("--cold-rows", type=int, default=1000000, help="rows for the cold start (default 1000000)")
    p.add_argument("--cold-max-load-s", type=float, default=300.0,
                   help="stop loading the cold-start table after this long (default 300)")
    p.add_argument("--alter-text-cap-s", type=float, default=300.0,
                   help="how long the client waits for loupe's ALTER TABLE ADD COLUMN note TEXT "
                   "on the cold-start table (default 300; 0: not run)")
    p.add_argument("--skip-inserts", action="store_true", help="cold start only")
    p.add_argument("--skip-cold", action="store_true", help="insert cells only")
    p.add_argument("--seed", type=int, default=1, help="loupe-load seed (default 1)")
    p.add_argument("--perf-dir", help="profile loupe with `perf record -g` in each batch-1000 cell, "
                   "files written here")
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                   help="where loupe and loupe-load are (default build/)")
    p.add_argument("--searchd", default="/usr/bin/searchd", help="searchd binary")
    p.add_argument("--tmp-dir", default=None, help="where the servers' data goes (default $TMPDIR)")
    p.add_argument("--out-dir", help="where storage.md/json go (default docs/benchmarks, "
                   "or <build-dir>/bench with --quick)")
    p.add_argument("--rerender", metavar="JSON",
                   help="measure nothing: write storage.md (and storage.json) in --out-dir again "
                   "from the numbers in JSON, a storage.json of an earlier run")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: tiny cells, 1 round, 20000-row cold start; report not in docs/")
    args = p.parse_args(argv)
    args.batches = [int(x) for x in args.batches.split(",")]
    args.threads = [int(x) for x in args.threads.split(",")]
    args.flush = [x.strip() for x in args.flush.split(",")]
    args.servers = [x.strip() for x in args.servers.split(",")]
    if args.quick:
        args.rounds, args.cold_rows = 1, min(args.cold_rows, 20000)
    base = QUICK_ROWS if args.quick else DEFAULT_ROWS
    if args.rows:
        vals = [int(x) for x in args.rows.split(",")]
        if len(vals) != len(args.batches):
            p.error("--rows needs one count per batch size")
        args.rows = dict(zip(args.batches, vals))
    else:
        args.rows = {b: base.get(b, 1000 * b) for b in args.batches}
    if not set(args.flush) <= {"commit", "1s"} or not args.flush:
        p.error("--flush takes commit and/or 1s")
    if not set(args.servers) <= {"loupe", "sphinx"} or "loupe" not in args.servers:
        p.error("--servers: loupe, optionally sphinx")
    if min(args.batches + args.threads + list(args.rows.values()) + [args.rounds, args.cold_rows]) < 1:
        p.error("counts must be positive")
    if args.alter_text_cap_s < 0:
        p.error("--alter-text-cap-s must be 0 or more")
    args.out_dir = args.out_dir or (os.path.join(args.build_dir, "bench") if args.quick
                                    else os.path.join(REPO, "docs", "benchmarks"))
    return args


def main(argv):
    args = parse_args(argv)
    if args.rerender:
        # Only the report: storage.md again from a storage.json's numbers.
        with open(args.rerender) as f:
            d = json.load(f)
        write_report(args.out_dir, d["meta"], d["inserts"], d["runs"], d["cold_start"])
        print("bench-storage: wrote %s from %s" % (os.path.join(args.out_dir, "storage.md"), args.rerender))
        return 0
    install_signal_handlers()
    for exe in ("loupe", "loupe-load"):
        if not os.access(os.path.join(args.build_dir, exe), os.X_OK):
            raise BenchError("no %s in %s (run `make build`)" % (exe, args.build_dir))
    if "sphinx" in args.servers and not os.access(args.searchd, os.X_OK):
        raise BenchError("no searchd at %s (scripts/install-deps.sh bench)" % args.searchd)
    if args.perf_dir:
        if not shutil.which("perf"):
            raise BenchError("--perf-dir: no perf on PATH")
        os.makedirs(args.perf_dir, exist_ok=True)

    tmp = tempfile.mkdtemp(prefix="loupe-bench-storage-", dir=args.tmp_dir)
    try:
        # Copies: a rebuild of build/ during the run cannot change what runs.
        args.loupe_bin = os.path.join(tmp, "loupe")
        args.loupe_load = os.path.join(tmp, "loupe-load")
        shutil.copy2(os.path.join(args.build_dir, "loupe"), args.loupe_bin)
        shutil.copy2(os.path.join(args.build_dir, "loupe-load"), args.loupe_load)
        t0 = time.monotonic()
        runs, probes = ([], []) if args.skip_inserts else bench_inserts(args, tmp)
        cells = summarize(args, runs) if runs else []
        t1 = time.monotonic()
        cold = [] if args.skip_cold else bench_cold(args, tmp)
        t2 = time.monotonic()
        lv = LoupeServer(tmp, args.loupe_bin).version()
        sv = (SphinxServer(tmp, args.searchd, "sphinx", "").version()
              if "sphinx" in args.servers else "not run")
        fs = subprocess.run(["df", "--output=source,fstype,target", tmp], capture_output=True, text=True)
        parts = fs.stdout.split()[-3:] if fs.returncode == 0 else []
        tmp_fs = ("%s (%s, %s mounted on %s)" % (tmp, parts[1], parts[0], parts[2])
                  if len(parts) == 3 else tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    meta = {
        "command": command_line(__file__, argv),
        "date": utc_now(),
        "machine": machine(),
        "versions": {"loupe": lv, "searchd": sv, "git": git_revision(),
                     "sphinxsearch_pkg": package_version("sphinxsearch"),
                     "libmariadb_pkg": package_version("libmariadb-dev"),
                     "python": platform.python_version()},
        "settings": {"rounds": args.rounds, "batches": args.batches, "threads": args.threads,
                     "rows": {str(k): v for k, v in args.rows.items()}, "flush": args.flush,
                     "sphinx_binlog_flush": {f: SPHINX_FLUSH[f] for f in args.flush},
                     "servers": args.servers, "seed": args.seed, "load_sql": LOAD_SQL,
                     "loupe_ddl": LOUPE_DDL, "cold_rows": args.cold_rows,
                     "cold_max_load_s": args.cold_max_load_s,
                     "alter_text_cap_s": args.alter_text_cap_s},
        "tmp_fs": tmp_fs,
        "log_probe": probes,
        "wall_s": {"inserts": round(t1 - t0, 1), "cold_start": round(t2 - t1, 1)},
    }
    write_report(args.out_dir, meta, cells, runs, cold)
    print("bench-storage: wrote %s (inserts %.0f s, cold start %.0f s)"
          % (os.path.join(args.out_dir, "storage.md"), t1 - t0, t2 - t1))
    for c in cells:
        if "ratio" in c:
            print("  %-6s batch %4d %d thr: loupe %8.0f  sphinx %8.0f docs/s  %.2fx" % (
                c["flush"], c["batch"], c["threads"], c["loupe"]["docs_per_s"],
                c["sphinx"]["docs_per_s"], c["ratio"]))
    for c in cold:
        for r in c["restarts"]:
            print("  cold %-6s %-10s %d rows: start %.2f s, RSS %.0f MiB, %.0f bytes/row" % (
                c["server"], r["state"], c["rows"], r["start_to_first_answer_s"],
                r["rss_mib_after_open"], r["disk_bytes_per_row"]))
        for r in c.get("alter", []) + ([c["alter_text"]] if c.get("alter_text") else []):
            print("  alter %-6s %s: %s" % (c["server"], r["statement"], alter_outcome(r)))
    return 0


if __name__ == "__main__":
    run_cli(main, "bench-storage")
