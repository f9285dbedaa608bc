/* Unit tests for the SQL executor: statements through sql_execute(), no
** network. The integration tests (tests/integration) repeat the important
** ones through the real server and real clients. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sql/session.h"
#include "util/strbuf.h"

static SqlEngine *g_e;
static StrBuf g_out;

/* Runs zSql and renders the result: rows as "a|b" lines (NULL as \N),
** "OK <affected> <last id>" or "ERR <errno> <message>". */
static const char *run(SqlSession *s, const char *zSql) {
    SqlResult r;
    sql_result_init(&r);
    sql_execute(s, zSql, strlen(zSql), &r);
    strbuf_reset(&g_out);
    strbuf_appendz(&g_out, "");
    if (r.kind == SQLRES_ERROR) {
        strbuf_appendf(&g_out, "ERR %d %s", r.iErrno, r.zErr);
    } else if (r.kind == SQLRES_OK) {
        strbuf_appendf(&g_out, "OK %llu %llu", (unsigned long long)r.nAffected,
                       (unsigned long long)r.iLastInsertId);
    } else {
        for (size_t i = 0; i < r.nRow; i++) {
            if (i) strbuf_appendc(&g_out, '\n');
            for (int c = 0; c < r.nCol; c++) {
                const SqlCell *x = &r.aCell[i * (size_t)r.nCol + (size_t)c];
                if (c) strbuf_appendc(&g_out, '|');
                if (x->z) strbuf_append(&g_out, x->z, x->n); else strbuf_appendz(&g_out, "\\N");
            }
        }
    }
    sql_result_free(&r);
    return g_out.z;
}

static int setup(void **state) {
    SqlEngineConfig cfg = {.zDataDir = NULL, .nWorkThreads = 2};
    LpError err;
    g_e = sql_engine_new(&cfg, &err);
    *state = sql_session_new(g_e, 7, "alice");
    return g_e && *state ? 0 : -1;
}

static int teardown(void **state) {
    sql_session_free(*state);
    sql_engine_free(g_e);
    strbuf_free(&g_out);
    return 0;
}

static void test_connect_statements(void **state) {
    SqlSession *s = *state;
    assert_string_equal(run(s, "select @@version_comment limit 1"), "loupe " LOUPE_VERSION);
    assert_string_equal(run(s, "SELECT DATABASE(), USER(), CONNECTION_ID()"), "loupe|alice@localhost|7");
    assert_string_equal(run(s, "SET NAMES utf8mb4"), "OK 0 0");
    assert_string_equal(run(s, "SET NAMES latin1"),
                        "ERR 1115 character set 'latin1' is not supported: loupe speaks UTF-8 (utf8mb4) only");
    assert_string_equal(run(s, "SET autocommit=1"), "OK 0 0");
    assert_string_equal(run(s, "SELECT @@autocommit, @@session.autocommit"), "1|1");
    assert_string_equal(run(s, "SET nonsense = 1"), "ERR 1193 unknown system variable 'nonsense'");
    assert_string_equal(run(s, "SET @@version = 'x'"), "ERR 1238 variable 'version' is read-only");
    assert_string_equal(run(s, "SET @x = 42"), "OK 0 0");
    assert_string_equal(run(s, "SELECT @x, @undefined"), "42|\\N");
    assert_string_equal(run(s, "SHOW VARIABLES LIKE 'wait%'"), "wait_timeout|28800");
    assert_string_equal(run(s, "SHOW DATABASES"), "loupe");
    assert_string_equal(run(s, "SELECT 1+2, 7/2, -5 * 2, 10 DIV 3, 1 = 1, NULL IS NULL"),
                        "3|3.5|-10|3|1|1");
    assert_string_equal(run(s, ""), "ERR 1065 query was empty");
    assert_string_equal(run(s, "SELECT 1; SELECT 2"),
                        "ERR 1064 near 'SELECT 2' at line 1 col 11: multiple statements are not supported (multi-statement mode is off)");
}

static void test_ddl(void **state) {
    SqlSession *s = *state;
    assert_string_equal(run(s, "CREATE TABLE t1 (title TEXT, body TEXT stored, price FLOAT, "
                               "qty INT, big BIGINT, ok BOOL, ts TIMESTAMP, cat STRING, j JSON, "
                               "v FLOAT_VECTOR knn_type='hnsw' knn_dims='2' hnsw_similarity='ip') "
                               "min_prefix_len='3'"),
                        "OK 0 0");
    assert_string_equal(run(s, "CREATE TABLE t1 (a INT)"), "ERR 1050 table 't1' already exists");
    assert_string_equal(run(s, "CREATE TABLE IF NOT EXISTS t1 (a INT)"), "OK 0 0");
    assert_string_equal(run(s, "SHOW WARNINGS"), "Warning|1050|table 't1' already exists");
    assert_string_equal(run(s, "CREATE TABLE t2 (a INT, A STRING)"),
                        "ERR 1060 duplicate column name 'a'");
    assert_string_equal(run(s, "CREATE TABLE t2 (a INTEGR)"),
                        "ERR 1064 near 'INTEGR)' at line 1 col 20: unknown column type 'integr': "
                        "expected text, string, int, bigint, float, bool, timestamp, json, float_vector, multi or multi64");
    assert_string_equal(run(s, "CREATE TABLE t2 (a INT) colour='red'"),
                        "ERR 1064 near 'colour='red'' at line 1 col 25: unknown table option 'colour': the "
                        "options are Manticore's full-text ones (morphology, stopwords, charset_table, min_word_len, "
                        "...), rt_mem_limit, rank_profile and type; docs/sql.md lists them");
    assert_string_equal(run(s, "CREATE TABLE t2 (a INT) ngram_char='cont'"),
                        "ERR 1064 near 'ngram_char='cont'' at line 1 col 25: unknown table option 'ngram_char': "
                        "did you mean 'ngram_chars'?");
    assert_string_equal(run(s, "CREATE TABLE t2 (v FLOAT_VECTOR knn_type='hnsw')"),
                        "ERR 1064 column 'v': knn_type='hnsw' needs knn_dims (or model_name)");
    assert_string_equal(run(s, "CREATE TABLE t2 (id bigint, a INT, id bigint)"),
                        "ERR 1060 duplicate column name 'id'");
    assert_string_equal(run(s, "CREATE TABLE t2 (a INT, v FLOAT_VECTOR model_name='m/x' from='a')"),
                        "ERR 1054 column 'v': from names 'a', which is not a text or string column of this table");
    /* The model is loaded at CREATE TABLE: without a data folder (this
    ** engine is memory only) 'org/m' cannot resolve, and says so. */
    assert_string_equal(run(s, "CREATE TABLE t2 (t TEXT, v FLOAT_VECTOR knn_type='hnsw' "
                               "model_name='org/m' from='t')"),
                        "ERR 1064 model 'org/m': no data directory to resolve the name in");
    assert_string_equal(run(s, "CREATE TABLE t2 (t TEXT, v FLOAT_VECTOR knn_type='hnsw' "
                               "model_name='/nonexistent/model' from='t')"),
                        "ERR 1105 model '/nonexistent/model': no model folder at /nonexistent/model "
                        "(expected a folder with onnx/model.onnx or model.onnx, config.json and "
                        "tokenizer.json)");
    assert_string_equal(run(s, "CREATE TABLE t2 (t TEXT)"), "OK 0 0");
    run(s, "DROP TABLE t2");
    assert_string_equal(run(s, "SHOW TABLES"), "t1|rt");
    assert_string_equal(run(s, "DESCRIBE t1"),
                        "id|bigint|\ntitle|text|indexed stored\nbody|text|stored\nprice|float|\n"
                        "qty|int|\nbig|bigint|\nok|bool|\nts|timestamp|\ncat|string|\nj|json|\n"
                        "v|float_vector|knn_type='hnsw' knn_dims='2' hnsw_similarity='IP'");
    /* SHOW CREATE TABLE output recreates an identical table */
    char *zCreate = strdup(strchr(run(s, "SHOW CREATE TABLE t1"), '|') + 1);
    assert_string_equal(run(s, "DROP TABLE t1"), "OK 0 0");
    assert_string_equal(run(s, zCreate), "OK 0 0");
    assert_string_equal(strchr(run(s, "SHOW CREATE TABLE t1"), '|') + 1, zCreate);
    free(zCreate);
    assert_string_equal(run(s, "DROP TABLE nope"), "ERR 1051 table 'nope' does not exist");
    assert_string_equal(run(s, "DROP TABLE IF EXISTS nope"), "OK 0 0");
    assert_string_equal(run(s, "DROP TABLE t1"), "OK 0 0");
}

static void test_dml(void **state) {
    SqlSession *s = *state;
    run(s, "CREATE TABLE d (title TEXT, price FLOAT, qty INT, cat STRING)");
    assert_string_equal(run(s, "INSERT INTO d VALUES (5, 'five', 5.5, 5, 'x')"), "OK 1 0");
    assert_string_equal(run(s, "INSERT INTO d (title, qty) VALUES ('a', 1), ('b', 2)"), "OK 2 6");
    assert_string_equal(run(s, "SELECT LAST_INSERT_ID()"), "6");
    assert_string_equal(run(s, "INSERT INTO d (id, title) VALUES (100, 'x'), (6, 'dup')"),
                        "ERR 1062 duplicate id '6'");
    assert_string_equal(run(s, "SELECT COUNT(*) FROM d"), "3");
    assert_string_equal(run(s, "INSERT INTO d (qty) VALUES (1), (2147483648)"),
                        "ERR 1264 row 2: value 2147483648 out of range for INT column 'qty' "
                        "(-2147483648 to 2147483647)");
    assert_string_equal(run(s, "INSERT INTO d (qty, qty) VALUES (1, 2)"),
                        "ERR 1110 column 'qty' specified twice");
    assert_string_equal(run(s, "INSERT INTO d (nope) VALUES (1)"),
                        "ERR 1054 unknown column 'nope' in table 'd'");
    assert_string_equal(run(s, "INSERT INTO d VALUES (1, 'x')"),
                        "ERR 1136 column count doesn't match value count at row 1 (5 columns, 2 values)");
    assert_string_equal(run(s, "INSERT INTO d (id) VALUES (-3)"),
                        "ERR 1264 value -3 out of range for BIGINT column 'id' (1 to 9223372036854775807)");
    assert_string_equal(run(s, "INSERT INTO d (id, title) VALUES (9223372036854775807, 'max')"),
                        "OK 1 0");
    assert_string_equal(run(s, "INSERT INTO d (title) VALUES ('after max')"),
                        "ERR 1264 automatic ids exhausted in table 'd'");
    assert_string_equal(run(s, "DELETE FROM d WHERE id = 9223372036854775807"), "OK 1 0");
    assert_string_equal(run(s, "REPLACE INTO d (id, title, qty) VALUES (5, 'FIVE', 50)"), "OK 1 0");
    assert_string_equal(run(s, "SELECT id, title, price, qty FROM d WHERE id = 5"), "5|FIVE|\\N|50");
    assert_string_equal(run(s, "UPDATE d SET qty = qty WHERE id = 5"),
                        "ERR 1054 column 'qty' cannot be used here: expected a constant value");
    assert_string_equal(run(s, "UPDATE d SET qty = 7, cat = 'y' WHERE id IN (5, 6, 999)"), "OK 2 0");
    assert_string_equal(run(s, "UPDATE d SET title = 'no' WHERE id = 5"),
                        "ERR 1366 full-text field 'title' cannot be updated: use REPLACE to rewrite the row");
    assert_string_equal(run(s, "UPDATE d SET id = 1 WHERE id = 5"),
                        "ERR 1366 the id of a row cannot be updated: REPLACE the row under its new id and DELETE the old one");
    assert_string_equal(run(s, "SELECT id, qty, cat FROM d"), "5|7|y\n6|7|y\n7|2|\\N");
    assert_string_equal(run(s, "DELETE FROM d"),
                        "ERR 1175 DELETE needs a WHERE clause; use TRUNCATE TABLE d to delete every row");
    assert_string_equal(run(s, "DELETE FROM d WHERE qty = 7 AND cat = 'Y'"), "OK 2 0");
    assert_string_equal(run(s, "SELECT id FROM d"), "7");
    assert_string_equal(run(s, "TRUNCATE TABLE d"), "OK 0 0");
    assert_string_equal(run(s, "SELECT COUNT(*) FROM d"), "0");
    run(s, "DROP TABLE d");
}

static void test_select(void **state) {
    SqlSession *s = *state;
    run(s, "CREATE TABLE p (name STRING, price FLOAT, qty INT, ts TIMESTAMP, body TEXT)");
    assert_string_equal(run(s, "INSERT INTO p (name, price, qty, ts, body) VALUES "
                               "('apple', 1.5, 10, '2024-01-01', 'red fruit'), "
                               "('Banana', 0.25, NULL, 0, 'yellow'), "
                               "('cherry', 10, 3, 1700000000, NULL), "
                               "('date', NULL, -4, NULL, 'sweet')"),
                        "OK 4 1");
    assert_string_equal(run(s, "SELECT * FROM p WHERE id = 2"), "2|Banana|0.25|\\N|0|yellow");
    assert_string_equal(run(s, "SELECT id FROM p WHERE qty > 0 ORDER BY qty DESC"), "1\n3");
    assert_string_equal(run(s, "SELECT id FROM p WHERE NOT qty > 0"), "4");
    assert_string_equal(run(s, "SELECT id FROM p WHERE qty IS NULL OR price IS NULL"), "2\n4");
    assert_string_equal(run(s, "SELECT id FROM p WHERE name = 'BANANA'"), "2");
    assert_string_equal(run(s, "SELECT id FROM p WHERE name IN ('apple', 'DATE')"), "1\n4");
    assert_string_equal(run(s, "SELECT id FROM p WHERE qty NOT IN (10, 3)"), "4");
    assert_string_equal(run(s, "SELECT id FROM p WHERE price BETWEEN 0.25 AND 1.5"), "1\n2");
    assert_string_equal(run(s, "SELECT id FROM p WHERE qty != 10 AND qty <> 3"), "4");
    assert_string_equal(run(s, "SELECT id FROM p WHERE ts >= '2023-11-14 22:13:20'"), "1\n3");
    assert_string_equal(run(s, "SELECT id FROM p WHERE ts > 'yesterday'"),
                        "ERR 1366 cannot compare TIMESTAMP column 'ts' with 'yesterday': expected unix seconds or 'YYYY-MM-DD[ HH:MM:SS]'");
    assert_string_equal(run(s, "SELECT id FROM p WHERE qty = '10'"), "1");
    assert_string_equal(run(s, "SELECT id FROM p WHERE name = 5"),
                        "ERR 1366 cannot compare STRING column 'name' with a numeric value: quote the value");
    assert_string_equal(run(s, "SELECT id FROM p WHERE body = 'x'"),
                        "ERR 1235 column 'body' is a full-text field: it cannot be filtered or sorted on; search it with MATCH('@body ...'), or declare it 'string attribute indexed' to be both a field and a string attribute");
    assert_string_equal(run(s, "SELECT id FROM p WHERE body IS NULL"), "3");
    assert_string_equal(run(s, "SELECT id, name FROM p ORDER BY name ASC LIMIT 1, 2"),
                        "2|Banana\n3|cherry");
    assert_string_equal(run(s, "SELECT id FROM p ORDER BY price ASC LIMIT 2 OFFSET 0"), "4\n2");
    assert_string_equal(run(s, "SELECT id, price * 2 AS dbl FROM p ORDER BY dbl DESC LIMIT 1"),
                        "3|20");
    assert_string_equal(run(s, "SELECT name, qty FROM p ORDER BY 2 DESC, 1 LIMIT 2"),
                        "apple|10\ncherry|3");
    assert_string_equal(run(s, "SELECT COUNT(*) FROM p WHERE qty < 5"), "2");
    /* aggregates without GROUP BY: one group of every row (the other
    ** columns from its smallest id), one row of none */
    assert_string_equal(run(s, "SELECT COUNT(*), id FROM p"), "4|1");
    assert_string_equal(run(s, "SELECT COUNT(*), SUM(qty) FROM p WHERE qty > 1000"), "0|\\N");
    assert_string_equal(run(s, "SELECT id FROM p WHERE id IN (4, 1, 1, 77) AND qty < 100"),
                        "1\n4");
    assert_string_equal(run(s, "SHOW META LIKE 'plan'"), "plan|id_lookup");
    assert_string_equal(run(s, "SELECT nope FROM p"), "ERR 1054 unknown column 'nope' in table 'p'");
    assert_string_equal(run(s, "SELECT * FROM nope"), "ERR 1146 table 'nope' does not exist");
    assert_string_equal(run(s, "SELECT id FROM p OPTION ranker=bm25"),
                        "ERR 1064 near 'ranker=bm25' at line 1 col 25: option 'ranker' needs a MATCH() query");
    /* scalar functions: values, NULLs, types, and where they may stand */
    assert_string_equal(run(s, "SELECT id, IF(qty > 3, 'many', 'few'), IF(qty, 1, 2.5) FROM p ORDER BY id ASC"),
                        "1|many|1\n2|few|2.5\n3|few|1\n4|few|1");
    assert_string_equal(run(s, "SELECT ABS(qty), CEIL(price), FLOOR(price), SQRT(qty), POW(qty, 2) FROM p WHERE id = 4"),
                        "4|\\N|\\N|\\N|16");
    assert_string_equal(run(s, "SELECT LN(1), LOG2(8), LOG10(1000), EXP(0), CEIL(-1.5), FLOOR(-1.5), ABS(-2.5)"),
                        "0|3|3|1|-1|-2|2.5");
    assert_string_equal(run(s, "SELECT SQRT(-1), LN(0), POW(10, 400), CEIL(1e30), ABS(NULL), IF(NULL, 1, 2)"),
                        "\\N|\\N|\\N|\\N|\\N|2");
    assert_string_equal(run(s, "SELECT MIN(2, 3), MAX(2, 3.5), GREATEST(1, 5, 3), LEAST('b', 'A', 'c'), "
                               "GREATEST(1, NULL)"),
                        "2|3.5|5|A|\\N");
    assert_string_equal(run(s, "SELECT INTERVAL(5, 1, 5, 9), INTERVAL(0, 1, 5), INTERVAL(9.5, 1, 5, 9), "
                               "IDIV(7, 2), IN(3, 1, 3), BIGINT(2.9), DOUBLE(2)"),
                        "2|0|3|3|1|2|2");
    assert_string_equal(run(s, "SELECT YEAR(ts), MONTH(ts), DAY(ts), HOUR(ts), MINUTE(ts), SECOND(ts), "
                               "YEARMONTH(ts), YEARMONTHDAY(ts) FROM p WHERE id = 3"),
                        "2023|11|14|22|13|20|202311|20231114");
    assert_string_equal(run(s, "SELECT id FROM p WHERE IF(qty > 0, qty, 100) > 5 ORDER BY id ASC"), "1\n2\n4");
    assert_string_equal(run(s, "SELECT id FROM p WHERE IN(qty, 3, -4) ORDER BY ABS(qty) DESC"), "4\n3");
    char zRand[64]; /* a seed gives the same order every time; another seed another */
    snprintf(zRand, sizeof(zRand), "%s", run(s, "SELECT id FROM p ORDER BY RAND(7) ASC"));
    assert_string_equal(run(s, "SELECT id FROM p ORDER BY RAND(7) ASC"), zRand);
    assert_string_not_equal(run(s, "SELECT id FROM p ORDER BY RAND(8) ASC"), zRand);
    assert_string_equal(run(s, "SELECT COUNT(*) FROM p WHERE RAND() >= 0 AND RAND() < 1"), "4");
    assert_string_equal(run(s, "SELECT id, REGEX(name, 'an+a') FROM p WHERE id < 4 ORDER BY id ASC"),
                        "1|0\n2|1\n3|0");
    assert_string_equal(run(s, "SELECT id FROM p WHERE REGEX(name, '^(apple|cherry)$') ORDER BY id DESC"), "3\n1");
    assert_string_equal(run(s, "SELECT id FROM p WHERE REGEX(name, '(?i)^b')"), "2");
    assert_string_equal(run(s, "SELECT REGEX(name, 'a(') FROM p"),
                        "ERR 1064 near ''a(') FROM p' at line 1 col 20: REGEX(): the pattern does not compile at offset "
                        "2: missing closing parenthesis");
    assert_string_equal(run(s, "SELECT REGEX(qty, 'x') FROM p"),
                        "ERR 1064 near 'qty, 'x') FROM p' at line 1 col 14: REGEX() searches a string: argument 1 is "
                        "INT column 'qty'");
    /* string functions: in the select list, WHERE, ORDER BY; constants computed once; NULLs */
    assert_string_equal(run(s, "SELECT id, CONCAT(name, '/', TO_STRING(qty), '/', TO_STRING(price)), UPPER(name), "
                               "LOWER(name) FROM p WHERE id < 4 ORDER BY id ASC"),
                        "1|apple/10/1.5|APPLE|apple\n2|\\N|BANANA|banana\n3|cherry/3/10|CHERRY|cherry");
    assert_string_equal(run(s, "SELECT UPPER('stra\xc3\x9f\x65 \xc3\xa9t\xc3\xa9'), LOWER('\xc3\x89T\xc3\x89 ABC'), "
                               "CONCAT('a', NULL), UPPER(NULL), TO_STRING(NULL)"),
                        "STRA\xe1\xba\x9e\x45 \xc3\x89T\xc3\x89|\xc3\xa9t\xc3\xa9 abc|\\N|\\N|\\N");
    assert_string_equal(run(s, "SELECT SUBSTRING_INDEX('www.w3schools.com', '.', 2), SUBSTRING_INDEX('www.w3schools.com', "
                               "'.', -2), SUBSTRING_INDEX('a.b', '.', 0), SUBSTRING_INDEX('a.b', 'x', 1), "
                               "SUBSTRING_INDEX('a..b', '..', -1), SUBSTRING_INDEX('1.2 3.4', ' ', 1)"),
                        "www.w3schools|w3schools.com||a.b|b|1.2");
    assert_string_equal(run(s, "SELECT LEVENSHTEIN('gily', 'gilly'), LEVENSHTEIN('kitten', 'sitting'), "
                               "LEVENSHTEIN('abc', 'abc', {normalize=1}), LEVENSHTEIN('ab', 'abcdefgh', {length_delta=3}), "
                               "LEVENSHTEIN('\xc3\xa9t\xc3\xa9', 'ete'), LEVENSHTEIN('', 'abc')"),
                        "1|3|0|8|2|3");
    assert_string_equal(run(s, "SELECT DOUBLE('1.2e3'), BIGINT('12345'), BIGINT('x'), DOUBLE(SUBSTRING_INDEX('1.2 3.4', ' ', -1))"),
                        "1200|12345|0|3.4");
    assert_string_equal(run(s, "SELECT id FROM p WHERE LOWER(name) = 'banana' OR CONCAT(name, '!') = 'date!' ORDER BY id ASC"),
                        "2\n4");
    assert_string_equal(run(s, "SELECT id, LEVENSHTEIN('aple', name) d FROM p ORDER BY d ASC, id ASC LIMIT 2"), "1|1\n4|3");
    /* 'PPLE', '' (Banana ends in 'a'), 'CHERRY' (no 'a': all of it), 'TE' */
    assert_string_equal(run(s, "SELECT id FROM p ORDER BY UPPER(SUBSTRING_INDEX(name, 'a', -1)) DESC, id ASC"),
                        "4\n1\n3\n2");
    { /* past 2^28 cells: NULL, not minutes of work; just under: the distance */
        static char zSql[40000];
        int n = snprintf(zSql, sizeof(zSql), "SELECT LEVENSHTEIN('");
        for (int i = 0; i < 16385; i++) zSql[n++] = 'a';
        n += snprintf(zSql + n, sizeof(zSql) - (size_t)n, "', '");
        for (int i = 0; i < 16385; i++) zSql[n++] = 'b';
        n += snprintf(zSql + n, sizeof(zSql) - (size_t)n, "'), LEVENSHTEIN('");
        for (int i = 0; i < 3000; i++) zSql[n++] = 'a';
        snprintf(zSql + n, sizeof(zSql) - (size_t)n, "', 'ab')");
        assert_string_equal(run(s, zSql), "\\N|2999");
    }
    assert_string_equal(run(s, "SELECT CONCAT(qty, 'x') FROM p"),
                        "ERR 1064 near 'qty, 'x') FROM p' at line 1 col 15: concat() takes a string as argument 1, not INT "
                        "column 'qty': convert it with TO_STRING()");
    assert_string_equal(run(s, "SELECT SUBSTRING_INDEX('a', '.', 'x')"),
                        "ERR 1064 near ''x')' at line 1 col 34: substring_index() takes an integer as argument 3, not a "
                        "string value");
    assert_string_equal(run(s, "SELECT LEVENSHTEIN('a', 'b', {normalize=2})"),
                        "ERR 1064 near '2})' at line 1 col 41: levenshtein(): normalize is 0 or 1");
    assert_string_equal(run(s, "SELECT UPPER('a', 'b')"), "ERR 1064 near 'UPPER('a', 'b')' at line 1 col 8: upper() takes 1 argument, got 2");
    assert_string_equal(run(s, "SELECT IF(1, 2, 'x')"),
                        "ERR 1064 near 'IF(1, 2, 'x')' at line 1 col 8: if() takes branches that are both numbers or "
                        "both strings, not a mix");
    assert_string_equal(run(s, "SELECT ABS(name) FROM p"),
                        "ERR 1064 near 'name) FROM p' at line 1 col 12: abs() takes numbers: argument 1 is STRING "
                        "column 'name'");
    assert_string_equal(run(s, "SELECT POW(2)"), "ERR 1064 near 'POW(2)' at line 1 col 8: pow() takes 2 arguments, got 1");
    assert_string_equal(run(s, "SELECT GREATEST(1)"),
                        "ERR 1064 near 'GREATEST(1)' at line 1 col 8: greatest() takes 2 to 64 arguments, got 1");
    assert_string_equal(run(s, "SELECT RAND(qty) FROM p"),
                        "ERR 1064 near 'qty) FROM p' at line 1 col 13: rand() takes an integer seed, or nothing");
    assert_string_equal(run(s, "SELECT IN(1)"),
                        "ERR 1064 near 'IN(1)' at line 1 col 8: IN() takes a value and one or more to look for: IN(x, 1, 2)");
    assert_string_equal(run(s, "SELECT id FROM p WHERE ABS(WEIGHT()) > 0"),
                        "ERR 1064 weight() can only be used in the select list and ORDER BY");
    /* GROUP BY: keys, aggregates, the first row's values, ORDER BY over groups */
    run(s, "INSERT INTO p (id, name, price, qty) VALUES (10, 'APPLE', 2.5, 1), (11, 'kiwi', NULL, 7), "
           "(12, 'kiwi', 4, NULL)");
    assert_string_equal(run(s, "SELECT name, COUNT(*), SUM(qty), AVG(price), MIN(qty), MAX(price) FROM p "
                               "GROUP BY name ORDER BY name ASC"),
                        "apple|2|11|2|1|2.5\nBanana|1|\\N|0.25|\\N|0.25\ncherry|1|3|10|3|10\ndate|1|-4|\\N|-4|\\N\n"
                        "kiwi|2|7|4|7|4");
    assert_string_equal(run(s, "SELECT id, name, COUNT(*) c FROM p GROUP BY name ORDER BY c DESC, name DESC LIMIT 2"),
                        "11|kiwi|2\n1|apple|2");
    assert_string_equal(run(s, "SHOW META LIKE 'total%'"), "total|2\ntotal_found|5\ntotal_relation|eq");
    assert_string_equal(run(s, "SELECT GROUPBY(), COUNT(*) FROM p WHERE qty > 0 GROUP BY qty > 5 ORDER BY 1"),
                        "0|2\n1|2");
    assert_string_equal(run(s, "SELECT name n, SUM(qty) FROM p GROUP BY n ORDER BY SUM(qty) DESC LIMIT 1, 2"),
                        "kiwi|7\ncherry|3");
    assert_string_equal(run(s, "SELECT qty > 0, COUNT(DISTINCT name), COUNT(*) FROM p GROUP BY qty > 0 ORDER BY 1"),
                        "\\N|2|2\n0|1|1\n1|3|4"); /* apple and APPLE are one name */
    assert_string_equal(run(s, "SELECT name, COUNT(*) c FROM p GROUP BY name HAVING c > 1 ORDER BY name ASC"),
                        "apple|2\nkiwi|2");
    assert_string_equal(run(s, "SELECT name FROM p GROUP BY name HAVING SUM(qty) > 5 AND MIN(price) < 2"), "apple");
    assert_string_equal(run(s, "SELECT name n FROM p GROUP BY name HAVING n = 'KIWI' OR qty IS NULL ORDER BY n"),
                        "Banana\nkiwi");
    assert_string_equal(run(s, "SHOW META LIKE 'total_found'"), "total_found|2");
    assert_string_equal(run(s, "SELECT name FROM p HAVING name = 'x'"),
                        "ERR 1064 near 'HAVING name = 'x'' at line 1 col 20: expected WHERE, GROUP BY, ORDER BY, LIMIT, "
                        "OPTION or end of statement");
    assert_string_equal(run(s, "SELECT COUNT(name) FROM p GROUP BY qty"),
                        "ERR 1064 near 'COUNT(name) FROM p GROUP BY qty' at line 1 col 8: COUNT takes * or DISTINCT "
                        "and one expression: COUNT(*), COUNT(DISTINCT x)");
    assert_string_equal(run(s, "SELECT SUM(qty) FROM p"), "17");
    assert_string_equal(run(s, "SELECT id FROM p ORDER BY SUM(qty)"),
                        "ERR 1140 sum() is an aggregate: it needs GROUP BY (COUNT(*) alone counts the matches)");
    assert_string_equal(run(s, "SELECT name FROM p GROUP BY body"),
                        "ERR 1235 column 'body' is a full-text field: it cannot be filtered or sorted on; search it with "
                        "MATCH('@body ...'), or declare it 'string attribute indexed' to be both a field and a string "
                        "attribute");
    assert_string_equal(run(s, "SELECT SUM(name) FROM p GROUP BY qty"),
                        "ERR 1064 near 'name) FROM p GROUP BY qty' at line 1 col 12: sum() adds numbers: its argument is "
                        "STRING column 'name'");
    run(s, "DELETE FROM p WHERE id >= 10");
    /* default LIMIT 20, total_found counts everything */
    for (int i = 0; i < 30; i++) run(s, "INSERT INTO p (name) VALUES ('more')");
    assert_string_equal(run(s, "SELECT COUNT(*) FROM p"), "34");
    run(s, "SELECT id FROM p WHERE name = 'more'");
    assert_string_equal(run(s, "SHOW META LIKE 'total%'"), "total|20\ntotal_found|30\ntotal_relation|eq");
    run(s, "DROP TABLE p");
}

static void test_transactions(void **state) {
    SqlSession *s = *state;
    SqlSession *other = sql_session_new(g_e, 8, NULL);
    run(s, "CREATE TABLE x (n INT)");
    run(s, "CREATE TABLE y (n INT)");
    assert_string_equal(run(s, "BEGIN"), "OK 0 0");
    assert_string_equal(run(s, "INSERT INTO x (id, n) VALUES (1, 1)"), "OK 1 0");
    assert_string_equal(run(s, "INSERT INTO y (n) VALUES (1)"),
                        "ERR 1105 a transaction can write to one table only: this one writes to 'x'; COMMIT or ROLLBACK first");
    assert_string_equal(run(other, "SELECT COUNT(*) FROM x"), "0");
    assert_string_equal(run(s, "COMMIT"), "OK 0 0");
    assert_string_equal(run(other, "SELECT COUNT(*) FROM x"), "1");
    /* autocommit=0: buffered until COMMIT, ROLLBACK drops */
    assert_string_equal(run(s, "SET autocommit = 0"), "OK 0 0");
    run(s, "INSERT INTO x (id, n) VALUES (2, 2)");
    assert_string_equal(run(s, "ROLLBACK"), "OK 0 0");
    assert_string_equal(run(s, "SELECT COUNT(*) FROM x"), "1");
    /* a conflicting COMMIT applies nothing */
    run(s, "INSERT INTO x (id, n) VALUES (3, 3)");
    run(s, "INSERT INTO x (id, n) VALUES (4, 4)");
    assert_string_equal(run(other, "INSERT INTO x (id, n) VALUES (4, 40)"), "OK 1 0");
    assert_string_equal(run(s, "COMMIT"),
                        "ERR 1062 COMMIT failed, transaction rolled back: duplicate id '4'");
    assert_string_equal(run(s, "SELECT id, n FROM x"), "1|1\n4|40");
    /* DDL commits the open transaction; autocommit=1 commits too */
    run(s, "INSERT INTO x (id, n) VALUES (5, 5)");
    assert_string_equal(run(s, "CREATE TABLE z (n INT)"), "OK 0 0");
    assert_string_equal(run(other, "SELECT COUNT(*) FROM x"), "3");
    run(s, "UPDATE x SET n = 0 WHERE id = 5");
    assert_string_equal(run(s, "SET autocommit = 1"), "OK 0 0");
    assert_string_equal(run(other, "SELECT n FROM x WHERE id = 5"), "0");
    run(s, "DROP TABLE x");
    run(s, "DROP TABLE y");
    run(s, "DROP TABLE z");
    sql_session_free(other);
}

static void test_types_roundtrip(void **state) {
    SqlSession *s = *state;
    run(s, "CREATE TABLE rt (s STRING, f FLOAT, b BIGINT, j JSON, v FLOAT_VECTOR, ok BOOL)");
    assert_string_equal(run(s, "INSERT INTO rt VALUES (1, 'it''s \\\\ \"q\" \\n 😀 漢字', 0.1, "
                               "-9223372036854775808, '{\"k\": [true, null]}', (0.5, -1e-3, 3), TRUE)"),
                        "OK 1 0");
    assert_string_equal(run(s, "SELECT * FROM rt"),
                        "1|it's \\ \"q\" \n 😀 漢字|0.1|-9223372036854775808|{\"k\":[true,null]}|0.5,-0.001,3|1");
    assert_string_equal(run(s, "INSERT INTO rt (s) VALUES ('bad \\xff')"), "OK 1 2"); /* \x is x */
    assert_string_equal(run(s, "INSERT INTO rt (j) VALUES ('{oops}')"),
                        "ERR 1366 invalid JSON for column 'j': string or '}' expected near 'oops'");
    assert_string_equal(run(s, "INSERT INTO rt (f) VALUES (1e39)"),
                        "ERR 1264 value 9.9999999999999994e+38 out of range for FLOAT column 'f'");
    assert_string_equal(run(s, "INSERT INTO rt (b) VALUES (9223372036854775808)"),
                        "ERR 1264 value 9223372036854775808 out of range for BIGINT column 'b'");
    assert_string_equal(run(s, "SELECT COUNT(*) FROM rt WHERE id = 18446744073709551615"), "0");
    run(s, "DROP TABLE rt");
}

static void test_fulltext(void **state) {
    SqlSession *s = *state;
    assert_string_equal(run(s, "CREATE TABLE f (title TEXT, body TEXT, price FLOAT) morphology='stem_en' "
                               "rank_profile='titles: field_weights=(title=4); flat: ranker=none'"),
                        "OK 0 0");
    assert_string_equal(run(s, "INSERT INTO f (title, body, price) VALUES "
                               "('Diabetes type 1', 'Insulin therapy for children with type 1 diabetes', 10), "
                               "('Heart disease', 'Running and exercise reduce heart risk', 20), "
                               "('Insulin pumps', 'Pumps deliver insulin; diabetics like them', 30)"),
                        "OK 3 1");
    /* best first without ORDER BY; filters; COUNT */
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('insulin')"), "3\n1");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('insulin | heart') AND price > 15"), "2\n3");
    assert_string_equal(run(s, "SELECT COUNT(*) FROM f WHERE MATCH('insulin | heart')"), "3");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('insulin') ORDER BY price DESC"), "3\n1");
    /* operators */
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('\"type 1\"')"), "1");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('insulin -pumps')"), "1");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('@title insulin')"), "3");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('title:heart | body:pumps')"), "2\n3");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('run*')"), "2");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('running')"), "2"); /* stemmed both sides */
    /* weights at query time: a profile, then an override */
    char *zProfile = strdup(run(s, "SELECT id, WEIGHT() FROM f WHERE MATCH('diabetes | pumps') "
                                   "OPTION rank_profile='titles'"));
    assert_string_equal(run(s, "SELECT id, WEIGHT() FROM f WHERE MATCH('diabetes | pumps') "
                               "OPTION field_weights=(title=4)"),
                        zProfile);
    assert_string_not_equal(run(s, "SELECT id, WEIGHT() FROM f WHERE MATCH('diabetes | pumps')"),
                            zProfile);
    free(zProfile);
    assert_string_equal(run(s, "SELECT id, WEIGHT() FROM f WHERE MATCH('insulin') OPTION ranker=none"),
                        "1|1\n3|1");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('insulin') OPTION field_weights=(nope=1)"),
                        "ERR 1064 near 'nope=1)' at line 1 col 63: field_weights: 'nope' is not a full-text field of table 'f'");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('insulin') OPTION rank_profile='zzz'"),
                        "ERR 1064 rank_profile 'zzz' is not defined for table 'f'");
    assert_string_equal(run(s, "SELECT id FROM f OPTION ranker=bm25"),
                        "ERR 1064 near 'ranker=bm25' at line 1 col 25: option 'ranker' needs a MATCH() query");
    /* errors */
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('@nope x')"),
                        "ERR 1064 MATCH: unknown field 'nope' at offset 1");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('x') OR price > 1"),
                        "ERR 1064 MATCH() must be a condition of its own in WHERE, joined to the rest with AND (not under OR or NOT), and there can be only one");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('ab\xff')"),
                        "ERR 1064 MATCH: invalid UTF-8 at offset 2");
    assert_string_equal(run(s, "SELECT id FROM f WHERE WEIGHT() > 1"),
                        "ERR 1064 weight() can only be used in the select list and ORDER BY");
    /* highlighting */
    assert_string_equal(run(s, "SELECT HIGHLIGHT({before_match='[', after_match=']'}, 'body') FROM f "
                               "WHERE MATCH('running')"),
                        "[Running] and exercise reduce heart risk");
    assert_string_equal(run(s, "SELECT SNIPPET(title, 'pump') FROM f WHERE id = 3"), "Insulin <b>pumps</b>");
    /* the index follows REPLACE and DELETE */
    assert_string_equal(run(s, "REPLACE INTO f (id, title, body) VALUES (2, 'Lungs', 'Breathing')"), "OK 1 0");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('heart')"), "");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('breathing')"), "2");
    assert_string_equal(run(s, "DELETE FROM f WHERE id = 1"), "OK 1 0");
    assert_string_equal(run(s, "SELECT id FROM f WHERE MATCH('insulin')"), "3");
    assert_string_equal(run(s, "UPDATE f SET price = 1 WHERE MATCH('insulin')"), "OK 1 0");
    assert_string_equal(run(s, "SELECT id, price FROM f WHERE MATCH('insulin')"), "3|1");
    /* meta and explain */
    run(s, "SELECT id FROM f WHERE MATCH('insulin | breathing')");
    assert_string_equal(run(s, "SHOW META LIKE 'strategy'"), "strategy|maxscore");
    assert_string_equal(run(s, "EXPLAIN SELECT id FROM f WHERE MATCH('\"deliver insulin\" | breathing')"),
                        "fulltext: strategy=bool_fallback (not maxscore: the query has a positional clause (phrase, proximity, anchor, position limit, zone limit, NEAR or '<<'))\n"
                        "OR\n  phrase \"deliv insulin\" idf=0.8473 type_weight=1\n"
                        "    field body: idf=0.8473 weight=1\n"
                        "  term \"breath\" idf=0.8473 type_weight=1\n"
                        "    field body: df=1 idf=0.8473 weight=1");
    assert_string_equal(run(s, "EXPLAIN SELECT id FROM f WHERE MATCH('insulin | lungs x')"),
                        "fulltext: strategy=empty\n"
                        "no documents (terms absent or only stop words)");
    assert_non_null(strstr(run(s, "CREATE TABLE g (t TEXT) morphology='stem_xx'"),
                           "ERR 1064 unknown morphology 'stem_xx' (supported: none, "));
    run(s, "DROP TABLE f");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_statements),
        cmocka_unit_test(test_ddl),
        cmocka_unit_test(test_dml),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_types_roundtrip),
        cmocka_unit_test(test_fulltext),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
