"""Rebuilds the folder a power cut would leave, from the shadow folder that
the lp_powercut shim (powercut.c) kept while a process ran.

    reconstruct(shadow, out, mode="strict", rng=None) -> Stats

Rules (README.md in this folder):
  - start at the watched root's durable listing and walk the durable
    listings of the folders it names, recursively; a folder never fsynced
    since it was created has an empty listing;
  - a file's content is its durable copy for its identity (inode, serial),
    or empty when it was never synced;
  - mode "torn": when the file the identity names still exists in the
    watched folder (after the kill) and its current content extends the
    durable one (the durable bytes are a prefix of the current ones), a
    random-length prefix of the extra bytes is kept too (an unsynced
    append that partly reached the disk). Mode "strict" never does.

The watched folder itself is only read (torn mode), never changed.

Usable from the command line too:
    python3 reconstruct.py SHADOW OUT [strict|torn] [SEED]
"""

import os
import random
import sys


class ShadowError(Exception):
    """The shadow folder is missing or incomplete (the shim did not run,
    or died before its snapshot was complete)."""


class Stats:
    """What a reconstruction did (for test messages)."""

    def __init__(self):
        self.files = 0          # files written
        self.dirs = 0           # folders written (the root included)
        self.empty = 0          # files never synced: written empty
        self.torn = 0           # files that got part of an unsynced append
        self.torn_bytes = 0     # bytes kept that way

    def __repr__(self):
        return (f"Stats(files={self.files}, dirs={self.dirs}, empty={self.empty}, "
                f"torn={self.torn}, torn_bytes={self.torn_bytes})")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def read_root(shadow):
    """(ino, serial, watched folder) of the shadow's root."""
    path = os.path.join(shadow, "root")
    if not os.path.exists(path):
        raise ShadowError(f"{path} missing: the shim's snapshot was not taken "
                          f"(was the shim loaded, with LOUPE_POWERCUT_DIR/SHADOW set?)")
    lines = _read(path).decode().split("\n")
    ino, serial, _dev = (int(x) for x in lines[0].split())
    return ino, serial, lines[1]


def read_serials(shadow):
    """ino -> latest serial (0 for inodes never created while watched)."""
    latest = {}
    path = os.path.join(shadow, "serials")
    if os.path.exists(path):
        for ln in _read(path).decode().splitlines():
            ino, serial = ln.split()
            latest[int(ino)] = int(serial)
    return latest


def read_listing(shadow, ino, serial):
    """[(kind 'f'|'d', ino, serial, name bytes)] durable in folder (ino,
    serial); [] when that folder's listing was never made durable."""
    path = os.path.join(shadow, f"d-{ino}-{serial}")
    if not os.path.exists(path):
        return []
    out = []
    for ln in _read(path).decode().splitlines():
        kind, i, s, hexname = ln.split(" ")
        out.append((kind, int(i), int(s), bytes.fromhex(hexname)))
    return out


def durable_content(shadow, ino, serial):
    """Bytes durable for file (ino, serial), or None if it never was synced."""
    path = os.path.join(shadow, f"f-{ino}-{serial}")
    return _read(path) if os.path.exists(path) else None


def _inode_paths(top):
    """ino -> path of the regular files now under top (for torn mode)."""
    out = {}
    for dirpath, _dirs, files in os.walk(top):
        for name in files:
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            out.setdefault(st.st_ino, p)
    return out


def reconstruct(shadow, out, mode="strict", rng=None):
    """Writes the folder a power cut would leave into out (which must not
    exist yet). Returns Stats."""
    if mode not in ("strict", "torn"):
        raise ValueError(f"mode {mode!r}: expected 'strict' or 'torn'")
    rng = rng or random.Random()
    root_ino, root_serial, watched = read_root(shadow)
    serials = read_serials(shadow)
    now = _inode_paths(watched) if mode == "torn" else {}
    stats = Stats()
    seen = set()

    def build_dir(ino, serial, path):
        if (ino, serial) in seen:       # a folder listed twice: keep the first
            return
        seen.add((ino, serial))
        os.mkdir(path)
        stats.dirs += 1
        for kind, cino, cserial, name in read_listing(shadow, ino, serial):
            cpath = os.path.join(path, os.fsdecode(name))
            if kind == "d":
                build_dir(cino, cserial, cpath)
                continue
            data = durable_content(shadow, cino, cserial)
            if data is None:
                data = b""
                stats.empty += 1
            if mode == "torn" and cino in now and serials.get(cino, 0) == cserial:
                try:
                    cur = _read(now[cino])
                except OSError:
                    cur = b""
                if len(cur) > len(data) and cur.startswith(data):
                    keep = rng.randint(0, len(cur) - len(data))
                    if keep:
                        stats.torn += 1
                        stats.torn_bytes += keep
                    data = cur[:len(data) + keep]
            with open(cpath, "wb") as f:
                f.write(data)
            stats.files += 1

    build_dir(root_ino, root_serial, out)
    return stats


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: reconstruct.py SHADOW OUT [strict|torn] [SEED]")
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else None
    print(reconstruct(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "strict",
                      random.Random(seed)))
