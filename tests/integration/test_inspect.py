"""loupe-inspect on real files: a build, a check and a timed query run that
work, and every bad input (arguments, JSON, query file, MATCH text, a
truncated or damaged segment) refused with a message that says where."""

import json
import os
import subprocess

import pytest

from helpers import LOUPE_BIN

INSPECT = os.path.join(os.path.dirname(LOUPE_BIN), "loupe-inspect")


def run(*args):
    return subprocess.run([INSPECT, *args], capture_output=True, text=True, timeout=60)


@pytest.fixture
def docs(tmp_path):
    p = tmp_path / "docs.jsonl"
    p.write_text("".join(json.dumps({"title": "doc %d" % i, "text": "quick brown fox %d jumps" % i}) + "\n"
                         for i in range(200)))
    return p


@pytest.fixture
def segment(tmp_path, docs):
    seg = tmp_path / "c.seg"
    r = run("fts-build", str(docs), str(seg), "--morphology", "stem_en", "--threads", "2")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["documents"] == 200 and out["segment_bytes"] == seg.stat().st_size
    # The timed parts of analyse_index_s: each measured, none counted twice.
    parts = [out["analyse_s"], out["reserve_s"], out["append_s"]]
    assert all(x > 0 for x in parts) and sum(parts) <= out["analyse_index_s"] + 1e-6, out
    return seg


def test_build_threads_only_when_shared(tmp_path, docs):
    """Threads start only for a write (1000 documents) with 64 KiB of text
    or more; the segment is the same on one thread or several."""
    small = run("fts-build", str(docs), str(tmp_path / "s.seg"), "--threads", "2")
    assert small.returncode == 0 and json.loads(small.stdout)["threads"] == 1, small.stdout
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"title": "doc %d" % i, "text": ("word%d alpha beta gamma " % (i % 97)) * 5})
                           + "\n" for i in range(2500)))
    assert big.stat().st_size > 64 * 1024 * 2
    segs = []
    for n in ("1", "2"):
        seg = tmp_path / ("big%s.seg" % n)
        r = run("fts-build", str(big), str(seg), "--threads", n)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["threads"] == int(n)
        segs.append(seg.read_bytes())
    assert segs[0] == segs[1]


def test_build_check_and_bench(tmp_path, segment):
    r = run("fts-info", str(segment))
    assert r.returncode == 0 and "documents       200" in r.stdout and "check           ok" in r.stdout
    q = tmp_path / "q.txt"
    q.write_text("fox\nquick | jumps\n\"brown fox\"\njum*\n")
    r = run("fts-bench", str(segment), str(q), "--seconds", "0.05", "--morphology", "stem_en")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["queries"] >= 4 and out["queries"] % 4 == 0 and out["rows"] == out["queries"] * 10


def test_exact_words_and_expand_keywords(tmp_path, docs):
    """--exact-words 1 indexes an exact form beside each stem (more terms);
    '=word' and --expand-keywords then run against it."""
    seg = tmp_path / "x.seg"
    r = run("fts-build", str(docs), str(seg), "--morphology", "stem_en", "--exact-words", "1")
    assert r.returncode == 0, r.stderr
    plain = json.loads(run("fts-build", str(docs), str(tmp_path / "p.seg"), "--morphology", "stem_en").stdout)
    assert json.loads(r.stdout)["terms"] > plain["terms"]
    q = tmp_path / "q.txt"
    q.write_text("=jumps\njumping\njump*\n")
    for mode in ("0", "exact", "1"):
        r = run("fts-bench", str(seg), str(q), "--seconds", "0.05", "--morphology", "stem_en",
                "--expand-keywords", mode, "--exact-words", "1")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        # '=jumps' finds all 200, 'jumping' (stem jump) too, 'jump*' the
        # exact form "jumps"
        assert out["rows"] == out["queries"] * 10, (mode, out)
    # a prefix no stem starts with but a word does: found by the exact forms only
    q.write_text("jumps*\n")
    for path, flag, rows in ((seg, "1", 10), (tmp_path / "p.seg", "0", 0)):
        r = run("fts-bench", str(path), str(q), "--seconds", "0.05", "--morphology", "stem_en",
                "--exact-words", flag)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["rows"] == out["queries"] * rows, (flag, out)
    # --exact-words takes 0 or 1
    for bad in ("2", "-1"):
        r = run("fts-bench", str(seg), str(q), "--exact-words", bad)
        assert r.returncode == 2 and "usage" in r.stderr, (bad, r.stderr)
    # '=word' needs exact forms
    q.write_text("=jumps\n")
    r = run("fts-bench", str(seg), str(q), "--seconds", "0.05", "--morphology", "stem_en")
    assert r.returncode == 1 and "index_exact_words" in r.stderr, r.stderr


def test_infix_section(tmp_path, docs):
    """--infix 1 stores the wildcards' infix filter: fts-info lists it and
    the check passes; without it, no filter line."""
    for flag, want in (("1", True), ("0", False)):
        seg = tmp_path / ("i%s.seg" % flag)
        r = run("fts-build", str(docs), str(seg), "--infix", flag)
        assert r.returncode == 0, r.stderr
        info = run("fts-info", str(seg))
        assert info.returncode == 0 and "check           ok" in info.stdout, info.stdout
        assert ("  infix " in info.stdout) == want, info.stdout


def test_ranker_expression(tmp_path, segment):
    """--ranker-expr times OPTION ranker=expr('...'); a bad one is refused
    with the expression's message."""
    q = tmp_path / "q.txt"
    q.write_text("quick fox\nbrown | jumps\n")
    r = run("fts-bench", str(segment), str(q), "--seconds", "0.05", "--morphology", "stem_en",
            "--ranker-expr", "sum(lcs*user_weight)*1000+bm25")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["rows"] == out["queries"] * 10
    r = run("fts-bench", str(segment), str(q), "--seconds", "0.05", "--ranker-expr", "lcs")
    assert r.returncode == 1 and "lcs is a per-field factor" in r.stderr, r.stderr


def test_build_and_bench_remove_diacritics(tmp_path):
    """fts-build folds accents by default, as a table created without the
    option does; --remove-diacritics 0 keeps them, and fts-bench analyses
    its queries the same way."""
    docs = tmp_path / "acc.jsonl"
    docs.write_text("".join(json.dumps({"title": t, "text": "x"}) + "\n" for t in ["Café", "cafe", "CAFÉ au lait"]))
    qf = tmp_path / "q.txt"
    qf.write_text("cafe\n")
    rows = {}
    for flag in ("1", "0"):
        seg = tmp_path / f"acc{flag}.seg"
        r = run("fts-build", str(docs), str(seg), "--remove-diacritics", flag)
        assert r.returncode == 0, r.stderr
        r = run("fts-bench", str(seg), str(qf), "--seconds", "0.05", "--remove-diacritics", flag)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        rows[flag] = out["rows"] / out["queries"]
    assert rows == {"1": 3, "0": 1}, rows


@pytest.mark.parametrize("args", [
    ["fts-build"],
    ["fts-build", "a", "b", "--threads", "0"],
    ["fts-build", "a", "b", "--nope", "1"],
    ["fts-bench", "a", "b", "--k", "0"],
    ["fts-build", "a", "b", "--exact-words", "2"],
    ["fts-build", "a", "b", "--infix", "2"],
    ["fts-build", "a", "b", "--remove-diacritics", "2"],
    ["fts-bench", "a", "b", "--remove-diacritics", "-1"],
    ["fts-bench", "a", "b", "--expand-keywords", "exactly"],
    ["frobnicate", "x"],
])
def test_bad_arguments(args):
    r = run(*args)
    assert r.returncode == 2 and "usage:" in r.stderr


def test_bad_json_names_the_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"title": "ok", "text": "fine"}\n{"title": "broken\n')
    r = run("fts-build", str(p), str(tmp_path / "x.seg"))
    assert r.returncode == 1 and "line 2" in r.stderr and str(p) in r.stderr
    r = run("fts-build", str(tmp_path / "missing.jsonl"), str(tmp_path / "x.seg"))
    assert r.returncode == 1 and "cannot open" in r.stderr


def test_invalid_unicode_names_the_line(tmp_path):
    # A raw invalid byte and an escaped lone surrogate: refused while reading.
    for body in (b'{"title": "bad \xff here"}', b'{"title": "bad \\udc80 here"}'):
        p = tmp_path / "utf8.jsonl"
        p.write_bytes(b'{"title": "ok", "text": "fine"}\n' + body + b"\n")
        r = run("fts-build", str(p), str(tmp_path / "x.seg"))
        assert r.returncode == 1 and "line 2" in r.stderr, (body, r.stderr)
        assert not (tmp_path / "x.seg").exists()


def test_bad_query_file_and_match(tmp_path, segment):
    r = run("fts-bench", str(segment), str(tmp_path / "none.txt"), "--seconds", "0.05")
    assert r.returncode == 1 and "cannot open" in r.stderr
    q = tmp_path / "q.txt"
    q.write_text("fox\n\"unclosed phrase\n")
    r = run("fts-bench", str(segment), str(q), "--seconds", "0.05")
    assert r.returncode == 1 and "query 2" in r.stderr


def test_damaged_segments_name_the_file(tmp_path, segment):
    data = segment.read_bytes()
    cut = tmp_path / "cut.seg"
    cut.write_bytes(data[:len(data) // 2])
    r = run("fts-info", str(cut))
    assert r.returncode == 1 and str(cut) in r.stderr
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    bad = tmp_path / "flipped.seg"
    bad.write_bytes(bytes(flipped))
    r = run("fts-info", str(bad))
    assert r.returncode == 1 and str(bad) in r.stderr
    q = tmp_path / "q.txt"
    q.write_text("fox\n")
    r = run("fts-bench", str(cut), str(q), "--seconds", "0.05")
    assert r.returncode == 1 and str(cut) in r.stderr
