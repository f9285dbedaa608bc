"""The `loupe` binary: --version, --help, bad arguments, the data folder
lock, and clean shutdown on SIGTERM / SIGINT."""

import os
import re
import signal
import socket
import subprocess

import pytest

from helpers import (LOUPE_BIN, REPO, SANITIZER_MARKERS, LoupeServer, ServerError, raw_login,
                     sanitizer_env)


def run(*args, timeout=30):
    """Runs the binary to completion; a sanitizer report fails the test
    whatever the exit status."""
    r = subprocess.run([LOUPE_BIN, *args], capture_output=True, timeout=timeout,
                       env=sanitizer_env(), stdin=subprocess.DEVNULL)
    err = r.stderr.decode("utf-8", "replace")
    for marker in SANITIZER_MARKERS:
        assert marker not in err, f"loupe {' '.join(args)}:\n{err}"
    return r


def project_version():
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        return re.search(r"project\(loupe VERSION ([0-9.]+)", f.read()).group(1)


def test_version():
    r = run("--version")
    assert r.returncode == 0, r.stderr
    assert re.search(rf"\bloupe\b.*\b{re.escape(project_version())}\b", r.stdout.decode())


def test_help():
    r = run("--help")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    for word in ("serve", "--data", "--mysql", "--http", "--config", "--version"):
        assert word in out, word


@pytest.mark.parametrize("args", [
    [],
    ["--bogus"],
    ["frobnicate"],
    ["serve", "--no-such-flag", "1"],
    ["serve", "--mysql"],
    ["serve", "--threads", "many"],
    ["serve", "--mysql", "127.0.0.1:99999"],
    ["serve", "--mysql", "not an address"],
])
def test_bad_arguments(args, tmp_path):
    if args[:1] == ["serve"]:
        # Good settings first; the bad flag comes last and overrides them.
        args = ["serve", "--data", str(tmp_path / "d"), "--mysql", "127.0.0.1:0",
                "--http", "127.0.0.1:0"] + args[1:]
    r = run(*args)
    assert r.returncode != 0, (args, r.stdout, r.stderr)
    err = r.stderr.decode()
    assert err.strip(), args
    if args in ([], ["--bogus"], ["frobnicate"]):
        assert "usage" in err.lower()


def test_bad_config_file(tmp_path):
    cfg = tmp_path / "bad.conf"
    cfg.write_text("threads = 2\nno_such_key = 1\n")
    r = run("serve", "--config", str(cfg), "--data", str(tmp_path / "d"),
            "--mysql", "127.0.0.1:0", "--http", "127.0.0.1:0")
    assert r.returncode != 0
    assert "no_such_key" in r.stderr.decode()
    r = run("serve", "--config", str(tmp_path / "missing.conf"), "--data", str(tmp_path / "d"),
            "--mysql", "127.0.0.1:0", "--http", "127.0.0.1:0")
    assert r.returncode != 0
    assert "missing.conf" in r.stderr.decode()


def test_second_server_on_same_data_dir_refused(server):
    r = run("serve", "--data", server.data_dir, "--mysql", "127.0.0.1:0", "--http", "127.0.0.1:0")
    assert r.returncode != 0
    assert server.data_dir in r.stderr.decode() or "lock" in r.stderr.decode().lower()
    # The first one is unharmed.
    with raw_login(server.mysql_port) as c:
        assert c.query("SELECT 1")[1] == [[b"1"]]


def test_port_in_use_refused(server, tmp_path):
    r = run("serve", "--data", str(tmp_path / "d"), "--mysql", f"127.0.0.1:{server.mysql_port}",
            "--http", "127.0.0.1:0")
    assert r.returncode != 0
    assert str(server.mysql_port) in r.stderr.decode()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_clean_shutdown_with_clients_connected(sig):
    """A signal stops the server with exit 0 even while clients are
    connected (one idle after login, one stalled mid-handshake), and the
    data folder's lock is released."""
    s = LoupeServer(name="stop")
    try:
        s.start()
    except ServerError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        idle = raw_login(s.mysql_port)
        stalled = socket.create_connection(("127.0.0.1", s.mysql_port))
        http = socket.create_connection(("127.0.0.1", s.http_port))
        http.sendall(b"POST /sql HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nSEL")
        rc = s.signal_stop(sig)
        assert rc == 0, f"exit {rc}:\n{s.log_tail()}"
        assert s.sanitizer_report() is None, s.sanitizer_report()
        assert idle.closed_by_server(5)
        for sock in (stalled, http):
            sock.close()
        idle.close()
        # The lock is gone: a new server starts on the same folder.
        s2 = LoupeServer(data_dir=s.data_dir, name="restart").start()
        assert s2.stop() == []
    finally:
        s.kill()
    s.cleanup()
