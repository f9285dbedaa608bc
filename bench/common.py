"""Shared pieces of the benchmarks: server processes, machine description.

Used by bench/server/run.py and bench/fulltext/run.py (each puts bench/ on
sys.path). What lives here:

- LoupeServer: `loupe serve` on a fresh data folder with the MySQL listener
  on port 0; the kernel picks the port and loupe logs it, so runs never race
  for a port.
- SphinxServer: searchd 2.2.11 with a generated sphinx.conf: the caller's
  index sections plus one searchd section (mysql41 listener on a free port,
  `workers = threads`, no watchdog so the process started is the server, no
  query log).
- Both are started with PR_SET_PDEATHSIG, so no server outlives the script
  even when it is killed with SIGKILL; Server.stop() is safe to call more
  than once, and the scripts call it on every exit path.
- machine(), package_version(), git_revision(), command_line(): what the
  reports print under "Setup".
- install_signal_handlers(): SIGTERM and SIGHUP raise KeyboardInterrupt, so
  `finally:` blocks stop the servers and remove temporary folders.
"""

import ctypes
import datetime
import os
import platform
import shlex
import signal
import socket
import subprocess
import sys
import time

import pymysql

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class BenchError(Exception):
    """A failure that ends the run with a message instead of a traceback."""


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


def thread_cpu_seconds(pid):
    """CPU time of a process's live threads, to the nanosecond (the first
    field of each /proc/<pid>/task/<tid>/schedstat): finer than
    cpu_seconds' clock ticks (10 ms), for short measurements of a server
    whose threads outlive them (a thread gone takes its time along)."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # the thread ended meanwhile
    return total / 1e9


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


def install_signal_handlers():
    """SIGTERM and SIGHUP end the run like Ctrl-C, through the finally blocks."""
    def _raise(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, _raise)
    signal.signal(signal.SIGHUP, _raise)


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


class LoupeServer(Server):
    """`loupe serve` with its data in <workdir>/data."""

    name = "loupe"

    def __init__(self, workdir, binary):
        super().__init__(workdir)
        self.binary = binary
        self.data_dir = os.path.join(workdir, "data")

    def version(self):
        out = subprocess.run([self.binary, "--version"], capture_output=True, text=True)
        return (out.stdout or out.stderr).strip()

    def start(self):
        os.mkdir(self.data_dir)
        self._spawn([self.binary, "serve", "--data", self.data_dir, "--mysql", "127.0.0.1:0",
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


SPHINX_SEARCHD_SECTION = """
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


class SphinxServer(Server):
    """searchd with the index sections `index_conf` (a str.format template:
    {dir} is the server's folder, index files belong under {dir}/data)."""

    def __init__(self, workdir, binary, name, index_conf):
        super().__init__(workdir)
        self.binary = binary
        self.name = name
        self.index_conf = index_conf
        self.data_dir = os.path.join(workdir, "data")

    def version(self):
        out = subprocess.run([self.binary, "--help"], capture_output=True, text=True)
        lines = (out.stdout or out.stderr).strip().splitlines()
        return lines[0] if lines else "?"

    def start(self):
        os.mkdir(self.data_dir)
        self.port = free_port()
        conf = os.path.join(self.workdir, "sphinx.conf")
        with open(conf, "w") as f:
            f.write(self.index_conf.format(dir=self.workdir))
            f.write(SPHINX_SEARCHD_SECTION.format(dir=self.workdir, port=self.port))
        self._spawn([self.binary, "--config", conf, "--nodetach"])
        self.wait_ready()
        # With --nodetach and no watchdog the process we started is the
        # server; check, since CPU accounting depends on it.
        with open(os.path.join(self.workdir, "searchd.pid")) as f:
            pid = int(f.read().strip())
        if pid != self.proc.pid:
            raise BenchError("searchd pid file says %d, started %d" % (pid, self.proc.pid))


# ------------------------------------------------------------ report ---

def add_binary_args(ap):
    """--loupe (this build's server) and --baseline (another binary, timed
    in the same run) on an argparse parser."""
    ap.add_argument("--loupe", default=os.path.join(REPO, "build", "loupe"))
    ap.add_argument("--baseline", help="another loupe binary, timed in the same run")


def binaries(args):
    """{"loupe": path[, "baseline": path]} from add_binary_args's options."""
    bins = {"loupe": args.loupe}
    if args.baseline:
        bins["baseline"] = args.baseline
    return bins


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


def command_line(script, argv):
    """The command that reproduces this run, relative to the repository."""
    return " ".join(shlex.quote(a) for a in [sys.executable, os.path.relpath(
        os.path.abspath(script), REPO)] + list(argv))


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def report_head(title, script, argv, doc):
    """A report's first lines: its title, when, at which revision, on which
    machine, the command that reproduces it, and doc (the script's
    description, one paragraph)."""
    m = machine()
    return ["# " + title, "",
            "Run %s at %s on %s (%d cores, kernel %s):" % (utc_now(), git_revision(), m["cpu"], m["cores"],
                                                            m["kernel"]), "",
            "    " + command_line(script, argv), "", doc.strip().replace("\n", " "), ""]


def write_report(path, lines):
    """Writes a benchmark's Markdown report (lines) to path and prints it."""
    text = "\n".join(lines)
    with open(path, "w") as f:
        f.write(text)
    print(text)


def run_cli(main, name, what="servers stopped, temporary files removed"):
    """Runs main(argv) as a benchmark's entry point: a BenchError becomes a
    one-line message and exit 1, Ctrl-C exit 130 (cleanup has run)."""
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        print("%s: %s" % (name, e), file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("%s: interrupted; %s" % (name, what), file=sys.stderr)
        sys.exit(130)
