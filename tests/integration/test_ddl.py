"""CREATE / DROP / TRUNCATE TABLE, SHOW TABLES, DESCRIBE, SHOW CREATE TABLE."""

import os
import re

import pytest

from helpers import REPO, col_names, expect_error, rows, server_error

ALL_TYPES = ("title TEXT, tag STRING, n INT, n2 INTEGER, big BIGINT, f FLOAT, ok BOOL, "
             "ts TIMESTAMP, j JSON, "
             "v FLOAT_VECTOR knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' "
             "hnsw_m='16' hnsw_ef_construction='200'")
ALL_TYPE_NAMES = ["bigint", "text", "string", "int", "int", "bigint", "float", "bool",
                  "timestamp", "json", "float_vector"]
ALL_FIELDS = ["id", "title", "tag", "n", "n2", "big", "f", "ok", "ts", "j", "v"]


def describe(cur, t, how="DESCRIBE"):
    cur.execute(f"{how} {t}")
    assert col_names(cur) == ["Field", "Type", "Properties"]
    return [tuple(r) for r in cur.fetchall()]


def type_name(s):
    s = s.lower()
    return "int" if s == "integer" else s


def show_create(cur, t):
    cur.execute(f"SHOW CREATE TABLE {t}")
    assert col_names(cur) == ["Table", "Create Table"]
    (name, text), = cur.fetchall()
    assert name == t
    return text


def test_create_every_type(cur, uniq):
    t = uniq()
    assert cur.execute(f"CREATE TABLE {t} ({ALL_TYPES})") == 0
    d = describe(cur, t)
    assert [r[0] for r in d] == ALL_FIELDS
    assert [type_name(r[1]) for r in d] == ALL_TYPE_NAMES
    props = {r[0]: r[2].lower().split() for r in d}
    assert "indexed" in props["title"] and "stored" in props["title"]
    assert describe(cur, t, "DESC") == d
    assert describe(cur, t, "SHOW COLUMNS FROM") == d
    # Every column is usable.
    cur.execute(f"INSERT INTO {t} (id, title, tag, n, n2, big, f, ok, ts, j, v) VALUES "
                "(1, 'a title', 'tg', 1, 2, 3, 0.5, 1, 10, '{\"k\":1}', (1, 2, 3, 4))")
    assert cur.rowcount == 1
    assert rows(cur, f"SELECT id, n, big FROM {t}") == [(1, 1, 3)]


def test_show_create_table_recreates_identical(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT indexed, body TEXT stored, {ALL_TYPES.split(', ', 1)[1]}, "
                "emb FLOAT_VECTOR knn_type='hnsw' knn_dims='3' hnsw_similarity='cosine') "
                "morphology='stem_en' min_prefix_len='2' rt_mem_limit='128M'")
    d1, c1 = describe(cur, t), show_create(cur, t)
    low = c1.lower()
    assert low.startswith("create table")
    for opt in ("knn_type='hnsw'", "knn_dims='4'", "hnsw_similarity='l2'",
                "knn_dims='3'", "hnsw_similarity='cosine'", "hnsw_m='16'",
                "hnsw_ef_construction='200'",
                "morphology='stem_en'", "min_prefix_len='2'"):
        assert opt in low, f"{opt} missing from {c1!r}"
    props = {r[0]: r[2].lower().split() for r in d1}
    assert props["title"] == ["indexed"] and props["body"] == ["stored"]
    cur.execute(f"DROP TABLE {t}")
    cur.execute(c1)
    assert describe(cur, t) == d1
    assert show_create(cur, t) == c1


def test_vector_with_model_options_kept(server, cur, uniq):
    """model_name and from are shown exactly as given (a dump recreates the
    table); the model resolves in <data dir>/models/ (make models)."""
    d = os.path.join(server.data_dir, "models", "loupe-test")
    os.makedirs(os.path.dirname(d), exist_ok=True)
    if not os.path.exists(d):
        os.symlink(os.path.join(REPO, "models", "loupe-test"), d)
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT, v FLOAT_VECTOR knn_type='hnsw' knn_dims='384' "
                "hnsw_similarity='ip' model_name='loupe-test/all-MiniLM-L6-v2' from='title')")
    c = show_create(cur, t).lower()
    assert "model_name='loupe-test/all-minilm-l6-v2'" in c and "from='title'" in c
    assert "hnsw_similarity='ip'" in c


@pytest.mark.parametrize("coldef", [
    "v FLOAT_VECTOR knn_type='hnsw' knn_dims='0' hnsw_similarity='l2'",
    "v FLOAT_VECTOR knn_type='hnsw' knn_dims='65537' hnsw_similarity='l2'",
    "v FLOAT_VECTOR knn_type='hnsw' knn_dims='abc' hnsw_similarity='l2'",
    "v FLOAT_VECTOR knn_type='hnsw' knn_dims='4' hnsw_similarity='manhattan'",
    "v FLOAT_VECTOR knn_type='kdtree' knn_dims='4' hnsw_similarity='l2'",
    "v FLOAT_VECTOR knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' bogus_option='1'",
])
def test_bad_vector_options_refused(cur, uniq, coldef):
    t = uniq()
    server_error(cur, f"CREATE TABLE {t} ({coldef})")
    assert rows(cur, f"SHOW TABLES LIKE '{t}'") == []


def test_table_options(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (title TEXT) type='rt' stopwords='' min_prefix_len='3' "
                "rank_profile='titles: field_weights=(title=2), k1=1.0'")
    assert "min_prefix_len='3'" in show_create(cur, t).lower()
    assert "rank_profile='titles: field_weights=(title=2), k1=1.0'" in show_create(cur, t)
    # a profile must be well-formed and name real fields
    code, msg = server_error(cur, f"CREATE TABLE {uniq()} (title TEXT) rank_profile='default'")
    assert code == 1064 and "rank_profile" in msg
    code, msg = server_error(cur, f"CREATE TABLE {uniq()} (title TEXT) "
                                  "rank_profile='p: field_weights=(body=2)'")
    assert code == 1064 and "'body' is not a full-text field" in msg
    t2 = uniq()
    code, msg = server_error(cur, f"CREATE TABLE {t2} (title TEXT) frobnicate='1'")
    assert "frobnicate" in msg
    assert rows(cur, f"SHOW TABLES LIKE '{t2}'") == []


def test_explicit_id_column(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT, id BIGINT, tag STRING)")
    d = describe(cur, t)
    assert [r[0] for r in d] == ["id", "n", "tag"]
    assert type_name(d[0][1]) == "bigint"
    t2 = uniq()
    server_error(cur, f"CREATE TABLE {t2} (id INT, n INT)")
    server_error(cur, f"CREATE TABLE {t2} (id STRING)")
    assert rows(cur, f"SHOW TABLES LIKE '{t2}'") == []


def test_if_not_exists_keeps_existing(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT)")
    cur.execute(f"INSERT INTO {t} (id, n) VALUES (1, 5)")
    cur.execute(f"CREATE TABLE IF NOT EXISTS {t} (other STRING)")
    assert [r[0] for r in describe(cur, t)] == ["id", "n"]
    assert rows(cur, f"SELECT id, n FROM {t}") == [(1, 5)]
    t2 = uniq()
    cur.execute(f"CREATE TABLE IF NOT EXISTS {t2} (s STRING)")
    assert [r[0] for r in describe(cur, t2)] == ["id", "s"]


def test_duplicate_table_1050(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT)")
    expect_error(cur, f"CREATE TABLE {t} (n INT)", 1050, match=t)
    expect_error(cur, f"CREATE TABLE {t.upper()} (s STRING)", 1050)


def test_duplicate_column_1060(cur, uniq):
    t = uniq()
    expect_error(cur, f"CREATE TABLE {t} (a INT, b STRING, a FLOAT)", 1060)
    expect_error(cur, f"CREATE TABLE {t} (a INT, A STRING)", 1060)
    expect_error(cur, f"CREATE TABLE {t} (id BIGINT, id BIGINT)", 1060)
    assert rows(cur, f"SHOW TABLES LIKE '{t}'") == []


@pytest.mark.parametrize("sql_tail,word", [
    ("(a INT, b FOOTYPE)", "FOOTYPE"),
    ("(a VARCHAR2)", "VARCHAR2"),
    ("(a INT,\n   b 42)", "42"),
])
def test_unknown_type_1064_with_position(cur, uniq, sql_tail, word):
    t = uniq()
    sql = f"CREATE TABLE {t} {sql_tail}"
    off = sql.index(word)
    line = sql.count("\n", 0, off) + 1
    col = off - (sql.rfind("\n", 0, off) + 1) + 1
    expect_error(cur, sql, 1064, match=rf"near '{re.escape(word)}[^']*' at line {line} col {col}\b")


def test_drop_table(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT)")
    cur.execute(f"INSERT INTO {t} (id, n) VALUES (1, 1)")
    cur.execute(f"DROP TABLE {t}")
    expect_error(cur, f"SELECT * FROM {t}", 1146, match=t)
    expect_error(cur, f"DROP TABLE {t}", 1051, match=t)
    cur.execute(f"DROP TABLE IF EXISTS {t}")
    # The name is free again, with a fresh schema and no rows.
    cur.execute(f"CREATE TABLE {t} (s STRING)")
    assert rows(cur, f"SELECT * FROM {t}") == []
    assert [r[0] for r in describe(cur, t)] == ["id", "s"]


def test_show_tables(cur, uniq):
    p = uniq("st")
    names = [f"{p}_a", f"{p}_b", f"{p}x"]
    for n in names:
        cur.execute(f"CREATE TABLE {n} (n INT)")
    cur.execute("SHOW TABLES")
    assert col_names(cur) == ["Table", "Type"]
    alln = [r[0] for r in cur.fetchall()]
    assert set(names) <= set(alln)
    assert sorted([r[0] for r in rows(cur, f"SHOW TABLES LIKE '{p}%'")]) == sorted(names)
    assert [r[0] for r in rows(cur, f"SHOW TABLES LIKE '{p}_a'")] == [f"{p}_a"]
    # '_' matches exactly one character.
    assert sorted(r[0] for r in rows(cur, f"SHOW TABLES LIKE '{p}__'")) == [f"{p}_a", f"{p}_b"]
    assert rows(cur, "SHOW TABLES LIKE 'no_such_table_prefix%'") == []
    cur.execute(f"DROP TABLE {names[0]}")
    assert names[0] not in [r[0] for r in rows(cur, "SHOW TABLES")]


def test_identifiers_case_insensitive(cur, uniq):
    t = uniq()
    mixed = "Mx_" + t
    cur.execute(f"CREATE TABLE {mixed} (Title TEXT, NumX INT)")
    assert [r[0] for r in rows(cur, f"SHOW TABLES LIKE '{mixed.lower()}'")] == [mixed.lower()]
    assert [r[0] for r in describe(cur, mixed.upper())] == ["id", "title", "numx"]
    cur.execute(f"INSERT INTO {mixed.upper()} (ID, NUMX) VALUES (1, 7)")
    cur.execute(f"SELECT NumX FROM {mixed.lower()} WHERE Id = 1")
    assert cur.fetchall() == ((7,),)


def test_truncate(cur, uniq):
    t = uniq()
    cur.execute(f"CREATE TABLE {t} (n INT, s STRING)")
    cur.execute(f"INSERT INTO {t} (id, n, s) VALUES (1, 1, 'a'), (2, 2, 'b')")
    d = describe(cur, t)
    cur.execute(f"TRUNCATE TABLE {t}")
    assert rows(cur, f"SELECT * FROM {t}") == []
    assert rows(cur, f"SELECT COUNT(*) FROM {t}") == [(0,)]
    assert describe(cur, t) == d
    cur.execute(f"INSERT INTO {t} (id, n, s) VALUES (1, 3, 'c')")
    assert rows(cur, f"SELECT id, n, s FROM {t}") == [(1, 3, "c")]
    expect_error(cur, f"TRUNCATE TABLE {t}_missing", 1146)


def test_unknown_table_in_show_statements(cur, uniq):
    t = uniq()
    expect_error(cur, f"DESCRIBE {t}", 1146, match=t)
    expect_error(cur, f"SHOW CREATE TABLE {t}", 1146, match=t)
    expect_error(cur, f"INSERT INTO {t} (id) VALUES (1)", 1146, match=t)
