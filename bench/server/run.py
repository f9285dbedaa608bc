#!/usr/bin/python3
"""Point-query benchmark: loupe against Debian's sphinxsearch, same run.

`make bench-server` runs this with Debian's python3. Steps:

 1. Compile bench/server/pointq.c (the load client, libmariadb) with gcc -O2
    into <build-dir>/bench/pointq.
 2. Start both servers on free loopback ports, each with its own folder in
    one temporary directory: loupe (`loupe serve --data ... --mysql
    127.0.0.1:0`, port read from its log) and searchd 2.2.11 with a generated
    sphinx.conf (one RT index, mysql41 listener, workers = threads).
 3. Create the same table on both (title and body text, price float, qty
    int, category string; Sphinx keeps title and body as full-text fields
    *and* string attributes so that SELECT * returns the same data from both)
    and load the same deterministic rows with multi-row INSERTs via pymysql.
 4. Check both return the expected row for a sample of ids and the right
    row count.
 5. Run pointq (`SELECT * FROM t WHERE id = <random>`) against each server
    with 1 and 8 connections, in interleaved rounds (the server that goes
    first alternates per round) so machine noise hits both alike, sampling
    each server's CPU time (/proc/<pid>/stat) over the measured window.
 6. Write medians, ratio loupe/sphinx, raw numbers and the machine
    description to docs/benchmarks/server.md and server.json.

Any wrong answer (missing row, wrong id, failed statement) fails the run.
Both servers are stopped and the temporary directory removed on every exit
path, Ctrl-C and SIGTERM included.
"""

import argparse
import ctypes
import datetime
import json
import os
import platform
import random
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import pymysql

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = "t"
COLUMNS = ("id", "title", "body", "price", "qty", "category")
LOUPE_DDL = "CREATE TABLE t (title TEXT, body TEXT, price FLOAT, qty INT, category STRING)"
TARGET_RATIO = 1.5
SERVERS = {"loupe", "sphinx", "sphinx-ram"}
CATEGORIES = ("books", "music", "garden", "tools", "toys", "games", "sports",
              "food", "health", "office", "pets", "travel")


class BenchError(Exception):
    """A failure that ends the run with a message instead of a traceback."""


# ---------------------------------------------------------------- data ---

def _vocabulary(rng, n):
    """n distinct pronounceable lowercase words: only [a-z], nothing to escape."""
    cons, vows = "bcdfghjklmnprstvz", "aeiou"
    words = set()
    while len(words) < n:
        k = rng.randint(2, 4)
        words.add("".join(rng.choice(cons) + rng.choice(vows) for _ in range(k)))
    return sorted(words)


def generate_rows(n, seed):
    """Rows 1..n as dicts keyed by COLUMNS; the same seed gives the same rows.

    Prices are multiples of 0.25 below 1000, exact in a 32-bit float, so both
    servers must return them exactly.
    """
    rng = random.Random(seed)
    vocab = _vocabulary(rng, 5000)
    rows = []
    for i in range(1, n + 1):
        rows.append({
            "id": i,
            "title": " ".join(rng.choices(vocab, k=rng.randint(3, 8))),
            "body": " ".join(rng.choices(vocab, k=rng.randint(20, 60))),
            "price": rng.randint(4, 3999) / 4.0,
            "qty": rng.randint(0, 10000),
            "category": rng.choice(CATEGORIES),
        })
    return rows


def insert_statements(rows, batch):
    """Multi-row INSERTs with an explicit column list (the syntax both take)."""
    head = "INSERT INTO %s (%s) VALUES " % (TABLE, ", ".join(COLUMNS))
    for k in range(0, len(rows), batch):
        parts = []
        for r in rows[k:k + batch]:
            parts.append("(%d, '%s', '%s', %r, %d, '%s')" % (
                r["id"], pymysql.converters.escape_string(r["title"]),
                pymysql.converters.escape_string(r["body"]), r["price"], r["qty"],
                pymysql.converters.escape_string(r["category"])))
        yield head + ", ".join(parts)


# ------------------------------------------------------------ processes ---

def _die_with_parent():
    """Runs in the child before exec: SIGTERM it if this script dies, even by
    SIGKILL, so no server outlives the benchmark."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """utime + stime of a whole process (all threads) from /proc/<pid>/stat."""
    with open("/proc/%d/stat" % pid) as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2:].split()   # skip "pid (comm) "
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    """Resident memory of a process, from /proc/<pid>/status."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def connect(port, timeout=10.0):
    return pymysql.connect(host="127.0.0.1", port=port, user="bench", autocommit=True,
                           connect_timeout=timeout, read_timeout=600, write_timeout=600)


class Server:
    """One server process under test; subclasses know how to start it."""

    name = "?"

    def __init__(self, workdir):
        self.workdir = workdir
        self.proc = None
        self.port = None
        self.log_path = os.path.join(workdir, "server.log")
        self._log = None

    def _spawn(self, argv):
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, cwd=self.workdir,
                                     preexec_fn=_die_with_parent)

    def log_tail(self, n=30):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def check_alive(self):
        if self.proc is None or self.proc.poll() is not None:
            code = None if self.proc is None else self.proc.returncode
            raise BenchError("%s is not running (exit status %s); log tail:\n%s"
                             % (self.name, code, self.log_tail()))

    def wait_ready(self, timeout=30.0):
        """Until a MySQL-protocol connection succeeds."""
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            if self.port is not None:
                try:
                    connect(self.port, timeout=2).close()
                    return
                except pymysql.err.OperationalError:
                    pass
            if time.monotonic() > deadline:
                raise BenchError("%s did not accept connections within %.0f s; log tail:\n%s"
                                 % (self.name, timeout, self.log_tail()))
            time.sleep(0.1)

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        """SIGTERM, then SIGKILL after 30 s; safe to call more than once.
        Returns a complaint when the server did not shut down cleanly."""
        note = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
                if self.proc.returncode != 0:
                    note = "exited with status %d on SIGTERM" % self.proc.returncode
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                note = "still running 30 s after SIGTERM; killed"
        if self._log is not None:
            self._log.close()
            self._log = None
        return note


class Loupe(Server):
    name = "loupe"

    def __init__(self, workdir, binary):
        super().__init__(workdir)
        self.binary = binary

    def version(self):
        out = subprocess.run([self.binary, "--version"], capture_output=True, text=True)
        return (out.stdout or out.stderr).strip()

    def start(self):
        data = os.path.join(self.workdir, "data")
        os.mkdir(data)
        self._spawn([self.binary, "serve", "--data", data, "--mysql", "127.0.0.1:0",
                     "--http", "127.0.0.1:0"])
        # Port 0: the kernel picks the port and loupe logs it.
        marker = "mysql listening on 127.0.0.1:"
        deadline = time.monotonic() + 30
        while self.port is None:
            self.check_alive()
            with open(self.log_path, errors="replace") as f:
                for line in f:
                    at = line.find(marker)
                    if at >= 0:
                        digits = line[at + len(marker):].split()[0].rstrip(".,")
                        self.port = int(digits)
                        break
            if self.port is None:
                if time.monotonic() > deadline:
                    raise BenchError("loupe never logged %r; log tail:\n%s"
                                     % (marker, self.log_tail()))
                time.sleep(0.05)
        self.wait_ready()

    def create_table(self, conn):
        with conn.cursor() as cur:
            cur.execute(LOUPE_DDL)

    def after_load(self, conn):
        pass


SPHINX_CONF = """\
# Generated by bench/server/run.py for one benchmark run.
index t
{{
    type            = rt
    path            = {dir}/data/t
    # Large enough that loading never flushes the RAM chunk by itself; the
    # "sphinx" setup flushes it explicitly (see class Sphinx in run.py).
    rt_mem_limit    = 1024M
    # title and body are full-text fields and also string attributes of the
    # same name, so SELECT * returns them as loupe does.
    rt_field        = title
    rt_field        = body
    rt_attr_string  = title
    rt_attr_string  = body
    rt_attr_float   = price
    rt_attr_uint    = qty
    rt_attr_string  = category
}}

searchd
{{
    listen          = 127.0.0.1:{port}:mysql41
    log             = {dir}/searchd.log
    # No query_log: logging every statement would slow Sphinx down.
    pid_file        = {dir}/searchd.pid
    binlog_path     = {dir}/data
    workers         = threads
    # No watchdog: one process, so /proc/<pid>/stat is the server's CPU.
    watchdog        = 0
    max_packet_size = 32M
}}
"""


class Sphinx(Server):
    """searchd with one RT index.

    Sphinx 2.2.11 answers `WHERE id = ?` without MATCH by scanning: rows in
    the RT index's RAM chunk are checked one by one (about 6 ns a row, so
    ~0.75 ms at 100k rows), while a disk chunk's attribute block index lets
    it skip to the row. So "sphinx" moves the loaded rows into a disk chunk
    (FLUSH RAMCHUNK; its attributes are still held in memory), the faster
    setup and the one loupe is compared with; "sphinx-ram" keeps them in the
    RAM chunk, for reference.
    """

    def __init__(self, workdir, binary, flush):
        super().__init__(workdir)
        self.binary = binary
        self.flush = flush
        self.name = "sphinx" if flush else "sphinx-ram"

    def version(self):
        out = subprocess.run([self.binary, "--help"], capture_output=True, text=True)
        lines = (out.stdout or out.stderr).strip().splitlines()
        return lines[0] if lines else "?"

    def start(self):
        os.mkdir(os.path.join(self.workdir, "data"))
        self.port = free_port()
        conf = os.path.join(self.workdir, "sphinx.conf")
        with open(conf, "w") as f:
            f.write(SPHINX_CONF.format(dir=self.workdir, port=self.port))
        self._spawn([self.binary, "--config", conf, "--nodetach"])
        self.wait_ready()
        # With --nodetach and no watchdog the process we started is the
        # server; check, since CPU accounting depends on it.
        with open(os.path.join(self.workdir, "searchd.pid")) as f:
            pid = int(f.read().strip())
        if pid != self.proc.pid:
            raise BenchError("searchd pid file says %d, started %d" % (pid, self.proc.pid))

    def create_table(self, conn):
        pass   # the RT index is declared in sphinx.conf

    def after_load(self, conn):
        if self.flush:
            with conn.cursor() as cur:
                cur.execute("FLUSH RAMCHUNK %s" % TABLE)


# ------------------------------------------------------------ load, check ---

def load(server, rows, batch):
    conn = connect(server.port)
    try:
        server.create_table(conn)
        t0 = time.monotonic()
        with conn.cursor() as cur:
            for sql in insert_statements(rows, batch):
                cur.execute(sql)
        server.after_load(conn)
        return time.monotonic() - t0
    finally:
        conn.close()


def verify(server, rows, seed):
    """Row count and a sample of full rows, compared by column name (Sphinx
    orders SELECT * columns by attribute type)."""
    rng = random.Random(seed + 1)
    ids = sorted({1, len(rows)} | {rng.randint(1, len(rows)) for _ in range(30)})
    conn = connect(server.port)
    try:
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SELECT COUNT(*) FROM %s" % TABLE)
            got = list(cur.fetchone().values())[0]
            if int(got) != len(rows):
                raise BenchError("%s: COUNT(*) is %s, loaded %d rows" % (server.name, got, len(rows)))
            for i in ids:
                cur.execute("SELECT * FROM %s WHERE id = %d" % (TABLE, i))
                res = cur.fetchall()
                want = rows[i - 1]
                if len(res) != 1:
                    raise BenchError("%s: id %d returned %d rows" % (server.name, i, len(res)))
                row = res[0]
                if set(row) != set(COLUMNS):
                    raise BenchError("%s: id %d has columns %s, expected %s"
                                     % (server.name, i, sorted(row), sorted(COLUMNS)))
                for col in COLUMNS:
                    a, b = row[col], want[col]
                    same = (float(a) == b) if col == "price" else (a == b)
                    if not same:
                        raise BenchError("%s: id %d column %s is %r, expected %r"
                                         % (server.name, i, col, a, b))
            # An id that does not exist must return nothing.
            cur.execute("SELECT * FROM %s WHERE id = %d" % (TABLE, len(rows) + 1))
            if cur.fetchall():
                raise BenchError("%s: id %d (not loaded) returned a row" % (server.name, len(rows) + 1))
    finally:
        conn.close()


# ------------------------------------------------------------ measure ---

def run_pointq(pointq, server, args, conns, seed):
    """One pointq run; returns its JSON plus the server's CPU time over the
    measured window."""
    argv = [pointq, "--port", str(server.port), "--table", TABLE, "--threads", str(conns),
            "--warmup", str(args.warmup), "--seconds", str(args.seconds),
            "--max-id", str(args.rows), "--seed", str(seed)]
    server.check_alive()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cpu0 = cpu1 = None
    errlines = []
    try:
        for line in proc.stderr:
            if line.strip() == "pointq: measuring":
                cpu0 = cpu_seconds(server.pid)
            elif line.strip() == "pointq: done":
                cpu1 = cpu_seconds(server.pid)
            else:
                errlines.append(line)
        out = proc.stdout.read()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise BenchError("pointq against %s with %d connection(s) failed (exit %d):\n%s%s\nserver log tail:\n%s"
                         % (server.name, conns, proc.returncode, "".join(errlines[-20:]), out,
                            server.log_tail()))
    res = json.loads(out)
    if cpu0 is None or cpu1 is None:
        raise BenchError("pointq did not mark its measured window")
    # Other work on the machine skews a round; the 1-minute load average at
    # its end shows how busy the machine was (ours adds up to conns + 1).
    res["loadavg_1m"] = round(os.getloadavg()[0], 2)
    res["server_cpu_s"] = round(cpu1 - cpu0, 3)
    res["server_cpu_us_per_query"] = round((cpu1 - cpu0) / res["queries"] * 1e6, 2)
    res["server_cores_busy"] = round((cpu1 - cpu0) / res["seconds"], 2)
    return res


def summarize(runs):
    """Medians over the rounds of one (server, connections) pair."""
    med = lambda key: statistics.median(r[key] for r in runs)
    lat = lambda key: statistics.median(r["latency_us"][key] for r in runs)
    return {
        "rounds": len(runs),
        "qps_median": round(med("qps"), 1),
        "qps_min": min(r["qps"] for r in runs),
        "qps_max": max(r["qps"] for r in runs),
        "p50_us": round(lat("p50"), 1),
        "p95_us": round(lat("p95"), 1),
        "p99_us": round(lat("p99"), 1),
        "p999_us": round(lat("p999"), 1),
        "server_cpu_us_per_query": round(med("server_cpu_us_per_query"), 2),
        "server_cores_busy": round(med("server_cores_busy"), 2),
        "client_cpu_s": round(med("client_cpu_s"), 3),
    }


# ------------------------------------------------------------ report ---

def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    return {"cpu": model, "cores": os.cpu_count(), "kernel": platform.release(),
            "memory_gib": round(mem_kb / 1024 / 1024, 1)}


def package_version(pkg):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def git_revision():
    out = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "?"


def write_report(out_dir, meta, runs, summary):
    """server.json: everything; server.md: the summary table and the setup."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "server.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary, "runs": runs}, f, indent=2)
        f.write("\n")

    m = meta["machine"]
    lines = [
        "# Server benchmark: point queries, loupe vs Sphinx",
        "",
        "`SELECT * FROM t WHERE id = ?` with a uniformly random id over %d rows, sent"
        % meta["settings"]["rows"],
        "over the MySQL protocol by `bench/server/pointq.c` (libmariadb; one connection",
        "per thread, each statement's result read in full and checked). Every number is",
        "the median of %d rounds of %g s (after %g s of warm-up); rounds alternate which"
        % (meta["settings"]["rounds"], meta["settings"]["seconds"], meta["settings"]["warmup"]),
        "server goes first. Client and servers share the machine; the 1-minute load average",
        "at the end of a round ranged %.1f–%.1f on %d cores (the benchmark itself adds up to"
        % (min(r["loadavg_1m"] for r in runs), max(r["loadavg_1m"] for r in runs),
           meta["machine"]["cores"]),
        "the connection count plus one).",
        "",
        "| server | connections | qps (median) | qps range | p50 µs | p95 µs | p99 µs | server CPU µs/query | loupe/sphinx |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key in sorted(summary, key=lambda k: (int(k.split("/")[1]), k.split("/")[0])):
        s = summary[key]
        name, conns = key.split("/")
        ratio = s.get("ratio_vs_sphinx")
        lines.append("| %s | %s | %.0f | %.0f–%.0f | %.1f | %.1f | %.1f | %.1f | %s |" % (
            name, conns, s["qps_median"], s["qps_min"], s["qps_max"], s["p50_us"], s["p95_us"],
            s["p99_us"], s["server_cpu_us_per_query"],
            "%.2fx" % ratio if ratio is not None else ""))
    lines.append("")
    verdicts = [(k, v["ratio_vs_sphinx"]) for k, v in sorted(summary.items())
                if v.get("ratio_vs_sphinx") is not None]
    if verdicts:
        lines.append("Target: loupe at least %.1fx Sphinx's rate. %s" % (TARGET_RATIO, "; ".join(
            "%s connection(s): %.2fx, %s" % (k.split("/")[1], r, "met" if r >= TARGET_RATIO else "NOT met")
            for k, r in verdicts)))
        lines.append("")
    lines += [
        "Server CPU is the server process's user+system time (`/proc/<pid>/stat`) over",
        "the measured window divided by the statements answered in it.",
        "",
        "## Setup",
        "",
        "- Command: `%s`" % meta["command"],
        "- Date: %s" % meta["date"],
        "- Machine: %s, %d cores, %.1f GiB, kernel %s" % (m["cpu"], m["cores"], m["memory_gib"], m["kernel"]),
        "- loupe: %s (git %s)" % (meta["versions"]["loupe"], meta["versions"]["git"]),
        "- Sphinx: %s (Debian sphinxsearch %s): one RT index, `workers = threads`, no query log."
        % (meta["versions"]["searchd"], meta["versions"]["sphinxsearch_pkg"]),
        "  `sphinx`: after loading, `FLUSH RAMCHUNK t` moves the rows into a disk chunk (attributes",
        "  held in memory), where `WHERE id = ?` finds the row through the attribute block index;",
        "  `sphinx-ram` (if run): rows left in the RAM chunk, where Sphinx 2.2.11 scans every row",
        "  for `WHERE id = ?`. The ratio is against `sphinx`, the faster of the two.",
        "- Client: pointq, gcc -O2, libmariadb %s; Python %s" % (
            meta["versions"]["libmariadb_pkg"], meta["versions"]["python"]),
        "- Table: `%s`; Sphinx: the same columns, title/body as `rt_field` plus `rt_attr_string`"
        % LOUPE_DDL,
        "- Load: %d rows in INSERTs of %d rows; %s" % (
            meta["settings"]["rows"], meta["settings"]["batch"],
            ", ".join("%s %.1f s" % kv for kv in meta["load_s"].items())),
        "- Resident memory after loading: %s" % ", ".join(
            "%s %.0f MiB" % kv for kv in meta["rss_mib_after_load"].items()),
        "",
        "Raw numbers per round: `server.json` next to this file.",
        "",
    ]
    with open(os.path.join(out_dir, "server.md"), "w") as f:
        f.write("\n".join(lines))


# ------------------------------------------------------------ main ---

def build_pointq(build_dir):
    out_dir = os.path.join(build_dir, "bench")
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, "pointq")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmariadb"],
                           capture_output=True, text=True)
    if flags.returncode != 0:
        raise BenchError("pkg-config libmariadb failed (is libmariadb-dev installed? "
                         "`scripts/install-deps.sh bench`): %s" % flags.stderr.strip())
    cmd = (["gcc", "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-pthread",
            os.path.join(REPO, "bench", "server", "pointq.c"), "-o", exe] + flags.stdout.split())
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise BenchError("building pointq failed:\n%s" % res.stderr)
    return exe


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=100000, help="rows loaded (default 100000)")
    p.add_argument("--seconds", type=float, default=10.0, help="measured seconds per run (default 10)")
    p.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds per run (default 2)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--connections", default="1,8", help="comma-separated (default 1,8)")
    p.add_argument("--batch", type=int, default=1000, help="rows per INSERT (default 1000)")
    p.add_argument("--seed", type=int, default=42, help="data and id seed (default 42)")
    p.add_argument("--servers", default="loupe,sphinx",
                   help="which to run, of loupe, sphinx (RT index, rows in a disk chunk) and "
                   "sphinx-ram (rows left in the RAM chunk) (default loupe,sphinx)")
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                   help="where loupe is and pointq goes (default build/)")
    p.add_argument("--loupe-bin", help="loupe binary (default <build-dir>/loupe)")
    p.add_argument("--searchd", default="/usr/bin/searchd", help="searchd binary")
    p.add_argument("--out-dir", help="where server.md/json go (default docs/benchmarks, "
                   "or <build-dir>/bench with --quick)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 2000 rows, 1 round of 1 s; report not written to docs/")
    args = p.parse_args(argv)
    if args.quick:
        args.rows, args.seconds, args.warmup, args.rounds = 2000, 1.0, 0.3, 1
    args.loupe_bin = args.loupe_bin or os.path.join(args.build_dir, "loupe")
    args.out_dir = args.out_dir or (os.path.join(args.build_dir, "bench") if args.quick
                                    else os.path.join(REPO, "docs", "benchmarks"))
    args.connections = [int(c) for c in args.connections.split(",")]
    args.servers = [s.strip() for s in args.servers.split(",")]
    if not set(args.servers) <= SERVERS or not args.servers or len(set(args.servers)) != len(args.servers):
        p.error("--servers takes a list of %s" % ", ".join(sorted(SERVERS)))
    if args.rows < 1 or args.rounds < 1 or args.batch < 1:
        p.error("--rows, --rounds and --batch must be positive")
    return args


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGHUP, _on_sigterm)
    if "loupe" in args.servers and not os.access(args.loupe_bin, os.X_OK):
        raise BenchError("no loupe binary at %s (build it, or pass --loupe-bin)" % args.loupe_bin)
    if any(n.startswith("sphinx") for n in args.servers) and not os.access(args.searchd, os.X_OK):
        raise BenchError("no searchd at %s (scripts/install-deps.sh bench)" % args.searchd)

    pointq = build_pointq(args.build_dir)
    print("bench-server: generating %d rows" % args.rows, flush=True)
    rows = generate_rows(args.rows, args.seed)

    tmp = tempfile.mkdtemp(prefix="loupe-bench-")
    servers = []
    try:
        for name in args.servers:
            d = os.path.join(tmp, name)
            os.mkdir(d)
            servers.append(Loupe(d, args.loupe_bin) if name == "loupe"
                           else Sphinx(d, args.searchd, flush=(name == "sphinx")))
        load_s, rss = {}, {}
        for s in servers:
            s.start()
            print("bench-server: %s up on port %d, loading" % (s.name, s.port), flush=True)
            load_s[s.name] = round(load(s, rows, args.batch), 2)
            verify(s, rows, args.seed)
            rss[s.name] = rss_mib(s.pid)
            print("bench-server: %s loaded in %.1f s, sample rows verified" % (s.name, load_s[s.name]),
                  flush=True)

        runs = []
        for rnd in range(args.rounds):
            order = servers if rnd % 2 == 0 else servers[::-1]
            for conns in args.connections:
                for s in order:
                    # Same ids for both servers within a round, new ones per round.
                    res = run_pointq(pointq, s, args, conns, args.seed + rnd)
                    res.update(server=s.name, round=rnd + 1, connections=conns)
                    runs.append(res)
                    print("bench-server: round %d %-6s %d conn: %8.0f qps  p50 %7.1f  p99 %7.1f us  "
                          "server %.1f us CPU/query" % (rnd + 1, s.name, conns, res["qps"],
                                                         res["latency_us"]["p50"],
                                                         res["latency_us"]["p99"],
                                                         res["server_cpu_us_per_query"]), flush=True)
        # Both still up at the end: a crash mid-run would have failed pointq,
        # but one right after the last statement would otherwise go unseen.
        for s in servers:
            s.check_alive()
        by_name = {s.name: s for s in servers}
        sphinx = [s for s in servers if isinstance(s, Sphinx)]
        versions = {"loupe": by_name["loupe"].version() if "loupe" in by_name else "not run",
                    "searchd": sphinx[0].version() if sphinx else "not run"}
    finally:
        for s in servers:
            note = s.stop()
            if note:
                print("bench-server: warning: %s %s; log tail:\n%s" % (s.name, note, s.log_tail()),
                      file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)

    summary = {}
    for name in args.servers:
        for conns in args.connections:
            summary["%s/%d" % (name, conns)] = summarize(
                [r for r in runs if r["server"] == name and r["connections"] == conns])
    if "loupe" in args.servers and "sphinx" in args.servers:
        for conns in args.connections:
            lo, sp = summary["loupe/%d" % conns], summary["sphinx/%d" % conns]
            lo["ratio_vs_sphinx"] = round(lo["qps_median"] / sp["qps_median"], 2)

    versions.update(git=git_revision(), sphinxsearch_pkg=package_version("sphinxsearch"),
                    libmariadb_pkg=package_version("libmariadb-dev"),
                    python=platform.python_version())
    meta = {
        "command": " ".join(shlex.quote(a) for a in [sys.executable, os.path.relpath(
            os.path.abspath(__file__), REPO)] + list(argv)),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "versions": versions,
        "settings": {"rows": args.rows, "seconds": args.seconds, "warmup": args.warmup,
                     "rounds": args.rounds, "connections": args.connections, "batch": args.batch,
                     "seed": args.seed, "servers": args.servers},
        "load_s": load_s,
        "rss_mib_after_load": rss,
    }
    write_report(args.out_dir, meta, runs, summary)
    print("bench-server: wrote %s" % os.path.join(args.out_dir, "server.md"))
    for key, s in sorted(summary.items()):
        print("  %-10s %8.0f qps  p99 %7.1f us%s" % (
            key, s["qps_median"], s["p99_us"],
            "  %.2fx sphinx" % s["ratio_vs_sphinx"] if "ratio_vs_sphinx" in s else ""))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        print("bench-server: %s" % e, file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("bench-server: interrupted; servers stopped, temporary files removed", file=sys.stderr)
        sys.exit(130)
