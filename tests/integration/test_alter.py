"""ALTER TABLE ADD / DROP / MODIFY COLUMN and REBUILD EMBEDDINGS, through
the real server: data kept, indexes still answer, the change survives a
restart, a rebuild interrupted by SIGKILL resumes, and every refusal says
what to do instead."""

import os
import signal
import time

import pymysql
import pytest

from helpers import REPO, LoupeServer, expect_error

L6 = os.path.join(REPO, "models", "loupe-test", "all-MiniLM-L6-v2")
L12 = os.path.join(REPO, "models", "loupe-test", "all-MiniLM-L12-v2")


def status(cur, t):
    cur.execute(f"SHOW TABLE {t} STATUS")
    return dict(cur.fetchall())


def wait_rebuild(cur, t, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = status(cur, t).get("rebuild_embeddings", "")
        if st.startswith(("done", "failed", "stopped")):
            return st
        time.sleep(0.1)
    raise AssertionError(f"rebuild of {t} did not finish: {status(cur, t)}")


def test_add_and_drop_columns_keep_data(connect, uniq):
    t = uniq("alt")
    with connect() as c, c.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (title TEXT, n INT, v FLOAT_VECTOR KNN_TYPE='hnsw' "
                    "KNN_DIMS='2' HNSW_SIMILARITY='L2')")
        cur.execute(f"INSERT INTO {t} (title, n, v) VALUES ('red apple', 1, (0, 0)), "
                    "('green pear', 2, (1, 0)), ('red cherry', 3, (5, 5))")
        cur.execute(f"DELETE FROM {t} WHERE id = 3")
        cur.execute(f"ALTER TABLE {t} ADD COLUMN price FLOAT")
        cur.execute(f"SELECT id, title, n, price FROM {t} ORDER BY id ASC")
        assert cur.fetchall() == ((1, "red apple", 1, None), (2, "green pear", 2, None))
        cur.execute(f"INSERT INTO {t} (title, n, price, v) VALUES ('red plum', 4, 2.5, (0, 1))")
        cur.execute(f"SELECT id, price FROM {t} WHERE id > 2")
        assert cur.fetchall() == ((4, 2.5),)      # automatic ids never go back to 3
        cur.execute(f"SELECT id FROM {t} WHERE MATCH('red') ORDER BY id ASC")
        assert cur.fetchall() == ((1,), (4,))
        cur.execute(f"SELECT id FROM {t} WHERE knn(v, 1, (0.9, 0))")
        assert cur.fetchall() == ((2,),)
        cur.execute(f"ALTER TABLE {t} ADD body TEXT")     # COLUMN is optional
        cur.execute(f"REPLACE INTO {t} (id, title, body, n, v) VALUES (2, 'green pear', "
                    "'juicy', 2, (1, 0))")
        cur.execute(f"SELECT id FROM {t} WHERE MATCH('@body juicy')")
        assert cur.fetchall() == ((2,),)
        cur.execute(f"ALTER TABLE {t} DROP COLUMN n")
        cur.execute(f"DESCRIBE {t}")
        assert [r[0] for r in cur.fetchall()] == ["id", "title", "v", "price", "body"]
        cur.execute(f"SELECT * FROM {t} ORDER BY id ASC")
        assert cur.fetchall() == ((1, "red apple", "0,0", None, None),
                                  (2, "green pear", "1,0", None, "juicy"),
                                  (4, "red plum", "0,1", 2.5, None))
        cur.execute(f"SHOW CREATE TABLE {t}")
        sql = cur.fetchone()[1]
        assert "price float" in sql and " n " not in sql


def test_alter_errors(connect, uniq):
    t = uniq("alterr")
    with connect() as c, c.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (title TEXT, n INT, v FLOAT_VECTOR KNN_TYPE='hnsw' "
                    f"HNSW_SIMILARITY='cosine' MODEL_NAME='{L6}' FROM='title')")
        expect_error(cur, f"ALTER TABLE {t} ADD COLUMN n BIGINT", 1060, "duplicate column name 'n'")
        expect_error(cur, f"ALTER TABLE {t} ADD COLUMN id BIGINT", 1064, "id column")
        expect_error(cur, f"ALTER TABLE {t} ADD COLUMN x WIDGET", 1064, "unknown column type")
        expect_error(cur, f"ALTER TABLE {t} DROP COLUMN nosuch", 1054, "unknown column 'nosuch'")
        expect_error(cur, f"ALTER TABLE {t} DROP COLUMN title", 1054, "from names 'title'")
        expect_error(cur, f"ALTER TABLE {t} REBUILD EMBEDDINGS n", 1064, "model_name")
        expect_error(cur, f"ALTER TABLE {t} RENAME TO x", 1064, "ADD COLUMN, DROP COLUMN")
        expect_error(cur, f"ALTER TABLE nosuch_{t} ADD COLUMN x INT", 1146)
        msg = expect_error(cur, f"ALTER TABLE {t} MODIFY COLUMN v FLOAT_VECTOR KNN_TYPE='hnsw' "
                                f"MODEL_NAME='{L12}' FROM='title'", 1235)
        assert "ADD COLUMN" in msg and "REBUILD EMBEDDINGS" in msg and "DROP COLUMN v" in msg
        expect_error(cur, f"ALTER TABLE {t} MODIFY COLUMN n BIGINT", 1235, "not supported")
        expect_error(cur, f"ALTER TABLE {t} ADD COLUMN w FLOAT_VECTOR KNN_TYPE='hnsw' "
                          "MODEL_NAME='no/such' FROM='title'", 1105, "no model folder")
        cur.execute(f"DESCRIBE {t}")
        assert [r[0] for r in cur.fetchall()] == ["id", "title", "n", "v"]


def test_add_model_column_then_rebuild(connect, uniq):
    """The add-rebuild-drop path: a new model column is NULL for the rows
    already there; REBUILD EMBEDDINGS fills them in the background (progress
    in SHOW TABLE STATUS) with the vectors an INSERT would compute."""
    t, ref = uniq("reb"), uniq("ref")
    texts = [f"text number {i} about {w}" for i, w in
             enumerate(["cats", "dogs", "rockets", "bread", "taxes", "rain"] * 5, 1)]
    with connect() as c, c.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (title TEXT, n INT)")
        cur.execute(f"CREATE TABLE {ref} (title TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' "
                    f"HNSW_SIMILARITY='cosine' MODEL_NAME='{L6}' FROM='title')")
        for i, x in enumerate(texts, 1):
            cur.execute(f"INSERT INTO {t} (id, title, n) VALUES (%s, %s, %s)", (i, x, i))
            cur.execute(f"INSERT INTO {ref} (id, title) VALUES (%s, %s)", (i, x))
        # Sealed rows keep their text compressed: ALTER and the rebuild
        # read it from there.
        cur.execute(f"FLUSH TABLE {t}")
        cur.execute(f"ALTER TABLE {t} ADD COLUMN v FLOAT_VECTOR KNN_TYPE='hnsw' "
                    f"HNSW_SIMILARITY='cosine' MODEL_NAME='{L6}' FROM='title'")
        cur.execute(f"FLUSH TABLE {t}")
        cur.execute(f"SELECT COUNT(*) FROM {t} WHERE v IS NULL")
        assert cur.fetchone()[0] == len(texts)
        # A row inserted now is embedded at once.
        cur.execute(f"INSERT INTO {t} (id, title, n) VALUES (100, 'brand new', 0)")
        cur.execute(f"SELECT COUNT(*) FROM {t} WHERE v IS NULL")
        assert cur.fetchone()[0] == len(texts)
        cur.execute(f"ALTER TABLE {t} REBUILD EMBEDDINGS v")
        st = wait_rebuild(cur, t)
        assert st.startswith("done"), st
        cur.execute(f"SELECT COUNT(*) FROM {t} WHERE v IS NULL")
        assert cur.fetchone()[0] == 0
        cur.execute(f"SELECT id, v FROM {t} WHERE id <= {len(texts)} ORDER BY id ASC LIMIT 100")
        got = cur.fetchall()
        cur.execute(f"SELECT id, v FROM {ref} ORDER BY id ASC LIMIT 100")
        assert got == cur.fetchall()
        cur.execute(f"SELECT id FROM {t} WHERE knn(v, 1, %s)", (texts[2],))
        assert cur.fetchall() == ((3,),)
        # A second rebuild finds nothing to do; DROP the old column works.
        cur.execute(f"ALTER TABLE {t} REBUILD EMBEDDINGS v")
        assert wait_rebuild(cur, t).startswith("done")


def test_alter_and_rebuild_survive_restart(tmp_path):
    """An ALTER is durable (new schema and log after a restart, the old log
    gone); a REBUILD killed half way resumes at the next start."""
    data = tmp_path / "data"
    data.mkdir()
    s = LoupeServer(name="alterrestart", data_dir=str(data))
    s.start()
    n = 240
    try:
        conn = lambda: pymysql.connect(host=s.host, port=s.mysql_port, user="root",  # noqa: E731
                                       autocommit=True)
        with conn() as c, c.cursor() as cur:
            cur.execute("CREATE TABLE r (title TEXT, k INT)")
            vals = ",".join(f"({i}, 'sentence {i} with a few more words to embed', {i})"
                            for i in range(1, n + 1))
            cur.execute(f"INSERT INTO r (id, title, k) VALUES {vals}")
            cur.execute("ALTER TABLE r ADD COLUMN tag STRING")
            cur.execute("UPDATE r SET tag = 'x' WHERE id = 1")
            cur.execute(f"ALTER TABLE r ADD COLUMN v FLOAT_VECTOR KNN_TYPE='hnsw' "
                        f"HNSW_SIMILARITY='cosine' MODEL_NAME='{L12}' FROM='title'")
            cur.execute("ALTER TABLE r REBUILD EMBEDDINGS v")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                cur.execute("SELECT COUNT(*) FROM r WHERE v IS NOT NULL")
                done = cur.fetchone()[0]
                if done >= 1:
                    break
                time.sleep(0.01)
            assert 0 < done < n, done
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait()
        wals = sorted(p.name for p in (data / "tables" / "r").iterdir() if p.name.startswith("wal"))
        s.restart()
        assert "resuming REBUILD EMBEDDINGS v" in s.log_text()
        with conn() as c, c.cursor() as cur:
            cur.execute("DESCRIBE r")
            assert [r[0] for r in cur.fetchall()] == ["id", "title", "k", "tag", "v"]
            cur.execute("SELECT id, tag FROM r WHERE id <= 2 ORDER BY id ASC")
            assert cur.fetchall() == ((1, "x"), (2, None))
            st = wait_rebuild(cur, "r", timeout=180)
            assert st.startswith("done"), st
            cur.execute("SELECT COUNT(*) FROM r WHERE v IS NULL")
            assert cur.fetchone()[0] == 0
            cur.execute("SELECT id FROM r WHERE knn(v, 1, 'sentence 7 with a few more words to embed')")
            assert cur.fetchall() == ((7,),)
        assert len(wals) == 1, wals     # one log: the versions before it are removed
    finally:
        problems = s.stop()
    assert not problems, problems


def test_alter_table_options_reindex(connect, uniq):
    """ALTER TABLE t name = 'value' ... (Manticore's way to change a table's
    full-text settings): the options replace the table's, and every row,
    flushed or not, is indexed again with them, attributes kept. Options
    that only tune queries or memory keep the sealed segments as they are.
    Rules given again replace the table's of their kind."""
    t = uniq("altopt")
    with connect() as c, c.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (title TEXT, body TEXT, n INT)")
        cur.execute(f"INSERT INTO {t} (id, title, body, n) VALUES (1, 'Running dogs', 'in the office', 10), "
                    "(2, 'a runner', 'walks home', 20)")
        cur.execute(f"FLUSH TABLE {t}")
        cur.execute(f"INSERT INTO {t} (id, title, body, n) VALUES (3, 'runs', 'in office', 30)")

        def ids(q):
            cur.execute(f"SELECT id FROM {t} WHERE MATCH(%s) ORDER BY id ASC", (q,))
            return [r[0] for r in cur.fetchall()]

        assert ids("run") == [] and ids('"in office"') == [3]
        cur.execute(f"ALTER TABLE {t} morphology='stem_en' stopwords='en', stopword_step='0'")
        assert ids("run") == [1, 3]
        assert ids('"in office"') == [1, 3]
        assert ids("the") == []
        cur.execute(f"SELECT id, n FROM {t} ORDER BY id ASC")
        assert cur.fetchall() == ((1, 10), (2, 20), (3, 30))
        cur.execute(f"SHOW CREATE TABLE {t}")
        ddl = cur.fetchone()[1]
        assert "morphology='stem_en'" in ddl and "stopwords='en'" in ddl and "stopword_step='0'" in ddl
        cur.execute(f"SHOW TABLE {t} SETTINGS")
        rows = cur.fetchall()
        assert len(rows) == 1 and rows[0][0] == "settings"
        assert rows[0][1].split("\n") == ["remove_diacritics = 1", "morphology = stem_en", "stopword_step = 0",
                                          "stopwords = en"], rows
        # rules: given again, they replace the table's of their kind
        cur.execute(f"ALTER TABLE {t} wordforms_list='walks > stroll'")
        assert ids("stroll") == [2] and ids("walk") == []
        cur.execute(f"ALTER TABLE {t} wordforms_list='runner > sprinter'")
        cur.execute(f"SHOW TABLE {t} SETTINGS")
        assert cur.fetchone()[1].endswith("\nwordforms_list = runner > sprinter")
        assert ids("stroll") == [] and ids("walk") == [2] and ids("sprinter") == [2]
        cur.execute(f"ALTER TABLE {t} wordforms_list=''")
        assert ids("sprinter") == [] and ids("runner") == [2]
        # prefixes on a stemmed table bring exact forms, as at CREATE TABLE
        cur.execute(f"ALTER TABLE {t} min_prefix_len='2'")
        cur.execute("SHOW WARNINGS")
        assert "forcing index_exact_words=1" in cur.fetchall()[0][2]
        assert ids("runn*") == [1, 2]
        # back to no stemming
        cur.execute(f"ALTER TABLE {t} morphology='none'")
        assert ids("run") == [] and ids("runs") == [3]
        # an option that changes no analysis keeps the sealed segments
        cur.execute(f"FLUSH TABLE {t}")
        cur.execute(f"SHOW TABLE {t} STATUS")
        chunks = dict(cur.fetchall())["disk_chunks"]
        assert int(chunks) >= 1
        cur.execute(f"ALTER TABLE {t} rt_mem_limit='64M' rank_profile='tw:field_weights=(title=3)' type='rt'")
        cur.execute(f"SHOW TABLE {t} STATUS")
        st = dict(cur.fetchall())
        assert st["disk_chunks"] == chunks and st["mem_limit"] == str(64 << 20)
        cur.execute(f"SELECT id FROM {t} WHERE MATCH('runs | office') ORDER BY WEIGHT() DESC "
                    "OPTION rank_profile='tw'")
        assert cur.fetchall()[0] == (3,)


def test_alter_table_options_errors(connect, uniq):
    t = uniq("altopterr")
    with connect() as c, c.cursor() as cur:
        cur.execute(f"CREATE TABLE {t} (title TEXT INDEXED, body TEXT)")
        expect_error(cur, f"ALTER TABLE {t} colour='red'", 1064, "unknown table option 'colour'")
        expect_error(cur, f"ALTER TABLE {t} morphology='stem_en' morphology='none'", 1064, "given twice")
        expect_error(cur, f"ALTER TABLE {t} min_word_len='99'", 1064, "from 0 to 64")
        expect_error(cur, f"ALTER TABLE {t} morphology='stem_xx'", 1064, "unknown morphology 'stem_xx'")
        expect_error(cur, f"ALTER TABLE {t} wordforms_list='a >'", 1064, "wordforms")
        expect_error(cur, f"ALTER TABLE {t} wordforms='relative.txt'", 1064, "absolute")
        expect_error(cur, f"ALTER TABLE {t} rank_profile='p:field_weights=(nosuch=2)'", 1064, "nosuch")
        expect_error(cur, f"ALTER TABLE {t} morphology=", 1064)
        expect_error(cur, f"ALTER TABLE {t}", 1064, "a table option")
        expect_error(cur, f"SHOW TABLE nosuch_{t} SETTINGS", 1146)
        # an empty table takes any change
        cur.execute(f"ALTER TABLE {t} morphology='stem_en'")
        # a field indexed but not stored cannot be indexed again: refused,
        # nothing lost
        cur.execute(f"INSERT INTO {t} (id, title, body) VALUES (1, 'hello worlds', 'text')")
        expect_error(cur, f"ALTER TABLE {t} ADD COLUMN k INT", 1105, f"FLUSH TABLE {t}, then ALTER it")
        expect_error(cur, f"ALTER TABLE {t} morphology='none'", 1105, "field 'title' is indexed but not stored")
        cur.execute(f"FLUSH TABLE {t}")
        cur.execute(f"ALTER TABLE {t} ADD COLUMN k INT")
        expect_error(cur, f"ALTER TABLE {t} stopwords='en'", 1105, "field 'title' is indexed but not stored")
        cur.execute(f"SELECT id FROM {t} WHERE MATCH('@title world')")
        assert cur.fetchall() == ((1,),)
        cur.execute(f"SHOW CREATE TABLE {t}")
        assert "morphology='stem_en'" in cur.fetchone()[1]


def test_alter_table_options_survive_restart(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    s = LoupeServer(name="altoptrestart", data_dir=str(data))
    s.start()
    try:
        conn = lambda: pymysql.connect(host=s.host, port=s.mysql_port, user="root",  # noqa: E731
                                       autocommit=True)
        with conn() as c, c.cursor() as cur:
            cur.execute("CREATE TABLE o (body TEXT)")
            cur.execute("INSERT INTO o (id, body) VALUES (1, 'running late'), (2, 'the runs')")
            cur.execute("FLUSH TABLE o")
            cur.execute("INSERT INTO o (id, body) VALUES (3, 'a runner')")
            cur.execute("ALTER TABLE o morphology='stem_en' exceptions_list='a runner => sprinter'")
            cur.execute("INSERT INTO o (id, body) VALUES (4, 'she runs')")
        s.restart()
        with conn() as c, c.cursor() as cur:
            cur.execute("SELECT id FROM o WHERE MATCH('run') ORDER BY id ASC")
            assert cur.fetchall() == ((1,), (2,), (4,))
            cur.execute("SELECT id FROM o WHERE MATCH('sprinter')")
            assert cur.fetchall() == ((3,),)
            cur.execute("SHOW CREATE TABLE o")
            assert "exceptions_list='a runner => sprinter" in cur.fetchone()[1]
    finally:
        s.stop()
