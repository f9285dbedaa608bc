/*
** test_sql_lexer.c — unit tests for src/sql/lexer.c: token types, offsets
** and lengths, keywords, numbers, strings and their escapes, variables,
** comments, and every lexical error.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sql/lexer.h"

/* ------------------------------------------------------------- helpers */

#define MAXTOK 64

/* Lexes z (NUL-terminated) into aTok, up to and including TK_EOF or
** TK_ERROR. Returns the number of tokens. */
static int lex_all(const char *z, SqlToken *aTok) {
    SqlLexer lx;
    sql_lexer_init(&lx, z, (int)strlen(z), 0);
    int n = 0;
    for (;;) {
        assert_true(n < MAXTOK);
        int t = sql_lex_next(&lx, &aTok[n]);
        n++;
        if (t == TK_EOF || t == TK_ERROR) break;
    }
    return n;
}

/* Asserts that z lexes to the token types given (terminated by -1,
** TK_EOF included). */
static void check_types(const char *z, ...) {
    SqlToken a[MAXTOK];
    int n = lex_all(z, a);
    va_list ap;
    va_start(ap, z);
    int i = 0;
    for (;; i++) {
        int want = va_arg(ap, int);
        if (want < 0) break;
        if (i >= n) fail_msg("%s: only %d tokens", z, n);
        if (a[i].type != want) fail_msg("%s: token %d is type %d, want %d", z, i, a[i].type, want);
    }
    va_end(ap);
    assert_int_equal(i, n);
}

/* Asserts one token's type and source text. */
static void check_tok(const char *z, const SqlToken *t, int type, const char *zText) {
    assert_int_equal(t->type, type);
    assert_int_equal(t->len, (int)strlen(zText));
    assert_memory_equal(z + t->pos, zText, strlen(zText));
}

/* The decoded value of the single string or quoted-name token in z. */
static size_t unquote_one(const char *z, char *zOut) {
    SqlToken a[MAXTOK];
    int n = lex_all(z, a);
    assert_int_equal(n, 2);
    assert_true(a[0].type == TK_STRING || a[0].type == TK_QID);
    return sql_lex_unquote(z + a[0].pos, a[0].len, zOut);
}

/* ------------------------------------------------------------- tests */

static void test_point_query(void **state) {
    (void)state;
    const char *z = "SELECT * FROM t WHERE id = 123;";
    SqlToken a[MAXTOK];
    int n = lex_all(z, a);
    assert_int_equal(n, 10);
    check_tok(z, &a[0], TK_ID, "SELECT");
    assert_int_equal(a[0].sub, KW_SELECT);
    assert_int_equal(a[0].pos, 0);
    check_tok(z, &a[1], TK_STAR, "*");
    check_tok(z, &a[2], TK_ID, "FROM");
    assert_int_equal(a[2].sub, KW_FROM);
    check_tok(z, &a[3], TK_ID, "t");
    assert_int_equal(a[3].sub, KW_NONE);
    assert_int_equal(a[3].pos, 14);
    check_tok(z, &a[4], TK_ID, "WHERE");
    check_tok(z, &a[5], TK_ID, "id");
    check_tok(z, &a[6], TK_EQ, "=");
    check_tok(z, &a[7], TK_INT, "123");
    assert_int_equal(a[7].pos, 27);
    check_tok(z, &a[8], TK_SEMI, ";");
    assert_int_equal(a[9].type, TK_EOF);
    assert_int_equal(a[9].pos, (int)strlen(z));
    assert_int_equal(a[9].len, 0);
}

static void test_keywords(void **state) {
    (void)state;
    /* Every keyword is found in any case: this also proves the table is
    ** sorted, as the lookup is a binary search. */
    for (int kw = 1; kw < KW_COUNT_; kw++) {
        const char *zName = sql_keyword_name(kw);
        char zLower[32], zMixed[32];
        size_t n = strlen(zName);
        assert_true(n < sizeof(zLower));
        for (size_t i = 0; i <= n; i++) {
            char c = zName[i];
            zLower[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            zMixed[i] = (char)(i % 2 ? zLower[i] : c);
        }
        assert_int_equal(sql_keyword(zName, (int)n), kw);
        assert_int_equal(sql_keyword(zLower, (int)n), kw);
        assert_int_equal(sql_keyword(zMixed, (int)n), kw);
        assert_int_equal(sql_keyword(zName, (int)n - 1) == kw, 0);
    }
    assert_int_equal(sql_keyword("selects", 7), KW_NONE);
    assert_int_equal(sql_keyword("a", 1), KW_NONE);
    assert_int_equal(sql_keyword("status_", 7), KW_NONE);
    assert_int_equal(sql_keyword("s_elect", 7), KW_NONE);
    assert_string_equal(sql_keyword_name(KW_NONE), "");
    /* Structural words are reserved; words users name columns after are not. */
    assert_int_equal(sql_keyword_reserved(KW_FROM), 1);
    assert_int_equal(sql_keyword_reserved(KW_SELECT), 1);
    assert_int_equal(sql_keyword_reserved(KW_NULL), 1);
    assert_int_equal(sql_keyword_reserved(KW_STATUS), 0);
    assert_int_equal(sql_keyword_reserved(KW_DEFAULT), 0);
    assert_int_equal(sql_keyword_reserved(KW_NONE), 0);
    /* In a token. */
    SqlToken a[MAXTOK];
    lex_all("sElEcT", a);
    assert_int_equal(a[0].type, TK_ID);
    assert_int_equal(a[0].sub, KW_SELECT);
}

static void test_identifiers(void **state) {
    (void)state;
    const char *z = "abc_1$ $x _y 1st 2$ `we``ird name` `` a.b";
    SqlToken a[MAXTOK];
    int n = lex_all(z, a);
    assert_int_equal(n, 11);
    check_tok(z, &a[0], TK_ID, "abc_1$");
    check_tok(z, &a[1], TK_ID, "$x");
    check_tok(z, &a[2], TK_ID, "_y");
    check_tok(z, &a[3], TK_ID, "1st");
    check_tok(z, &a[4], TK_ID, "2$");
    check_tok(z, &a[5], TK_QID, "`we``ird name`");
    assert_int_equal(a[5].sub, 1);
    check_tok(z, &a[6], TK_QID, "``");
    check_tok(z, &a[7], TK_ID, "a");
    check_tok(z, &a[8], TK_DOT, ".");
    check_tok(z, &a[9], TK_ID, "b");
    char zOut[64];
    assert_int_equal(sql_lex_unquote(z + a[5].pos, a[5].len, zOut), 11);
    assert_string_equal(zOut, "we`ird name");
    /* In a backquoted name a backslash is an ordinary character. */
    assert_int_equal(unquote_one("`a\\b`", zOut), 3);
    assert_string_equal(zOut, "a\\b");
    assert_int_equal(unquote_one("`caf\xc3\xa9`", zOut), 5);
    assert_string_equal(zOut, "caf\xc3\xa9");
}

static void test_numbers(void **state) {
    (void)state;
    const char *z = "0 123 1.5 .5 1. 1e10 1.5E-3 1e+5 2E5 12e 0x1F 1.5abc 007";
    SqlToken a[MAXTOK];
    int n = lex_all(z, a);
    assert_int_equal(n, 15);
    check_tok(z, &a[0], TK_INT, "0");
    check_tok(z, &a[1], TK_INT, "123");
    check_tok(z, &a[2], TK_FLOAT, "1.5");
    check_tok(z, &a[3], TK_FLOAT, ".5");
    check_tok(z, &a[4], TK_FLOAT, "1.");
    check_tok(z, &a[5], TK_FLOAT, "1e10");
    check_tok(z, &a[6], TK_FLOAT, "1.5E-3");
    check_tok(z, &a[7], TK_FLOAT, "1e+5");
    check_tok(z, &a[8], TK_FLOAT, "2E5");
    check_tok(z, &a[9], TK_ID, "12e");
    check_tok(z, &a[10], TK_ID, "0x1F");
    check_tok(z, &a[11], TK_FLOAT, "1.5");
    check_tok(z, &a[12], TK_ID, "abc");
    check_tok(z, &a[13], TK_INT, "007");

    uint64_t u;
    assert_int_equal(sql_lex_uint("18446744073709551615", 20, &u), 1);
    assert_true(u == UINT64_MAX);
    assert_int_equal(sql_lex_uint("18446744073709551616", 20, &u), 0);
    assert_int_equal(sql_lex_uint("99999999999999999999", 20, &u), 0);
    assert_int_equal(sql_lex_uint("000000000000000000000000042", 27, &u), 1);
    assert_true(u == 42);

    double f;
    assert_int_equal(sql_lex_double("1.5E-3", 6, &f), 1);
    assert_true(f == 1.5e-3);
    assert_int_equal(sql_lex_double(".5", 2, &f), 1);
    assert_true(f == 0.5);
    assert_int_equal(sql_lex_double("1e999", 5, &f), 0);
    assert_int_equal(sql_lex_double("1e-999", 6, &f), 1);
    assert_true(f == 0.0);
    /* A literal longer than the stack buffer is still exact. */
    char zLong[400];
    memset(zLong, '0', sizeof(zLong));
    zLong[1] = '.';
    zLong[300] = '1';
    assert_int_equal(sql_lex_double(zLong, 301, &f), 1);
    assert_true(f == 1e-299);
}

static void test_operators(void **state) {
    (void)state;
    check_types("( ) , ; . * + - / % = == != <> < <= > >= ! { } | || & && ~ ^ : [ ]", TK_LP, TK_RP,
                TK_COMMA, TK_SEMI, TK_DOT, TK_STAR, TK_PLUS, TK_MINUS, TK_SLASH, TK_PERCENT, TK_EQ,
                TK_EQ, TK_NE, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, TK_BANG, TK_LBRACE, TK_RBRACE,
                TK_PIPE, TK_OROR, TK_AMP, TK_ANDAND, TK_TILDE, TK_CARET, TK_COLON, TK_LBRACKET,
                TK_RBRACKET, TK_EOF, -1);
    check_types("j.a[0]['k']", TK_ID, TK_DOT, TK_ID, TK_LBRACKET, TK_INT, TK_RBRACKET, TK_LBRACKET, TK_STRING,
                TK_RBRACKET, TK_EOF, -1);
    /* Without spaces, longest match. */
    check_types("a<=b<>c>=d!=e==f", TK_ID, TK_LE, TK_ID, TK_NE, TK_ID, TK_GE, TK_ID, TK_NE, TK_ID,
                TK_EQ, TK_ID, TK_EOF, -1);
    check_types("<=>", TK_LE, TK_GT, TK_EOF, -1);
}

static void test_strings(void **state) {
    (void)state;
    char zOut[128];
    SqlToken a[MAXTOK];
    lex_all("'plain' \"dq\"", a);
    check_tok("'plain' \"dq\"", &a[0], TK_STRING, "'plain'");
    assert_int_equal(a[0].sub, 0); /* no escapes: the value is the text */
    check_tok("'plain' \"dq\"", &a[1], TK_STRING, "\"dq\"");

    assert_int_equal(unquote_one("'it''s'", zOut), 4);
    assert_string_equal(zOut, "it's");
    assert_int_equal(unquote_one("\"say \"\"hi\"\"\"", zOut), 8);
    assert_string_equal(zOut, "say \"hi\"");
    /* The other quote needs no doubling. */
    assert_int_equal(unquote_one("'a\"b'", zOut), 3);
    assert_string_equal(zOut, "a\"b");
    assert_int_equal(unquote_one("\"a'b\"", zOut), 3);
    assert_string_equal(zOut, "a'b");
    /* Every MySQL escape. */
    assert_int_equal(unquote_one("'\\'\\\"\\b\\n\\r\\t\\Z\\\\'", zOut), 8);
    assert_memory_equal(zOut, "'\"\b\n\r\t\x1a\\", 8);
    /* \% and \_ stay two characters; unknown \x is x. */
    assert_int_equal(unquote_one("'\\%\\_\\q\\Q'", zOut), 6);
    assert_string_equal(zOut, "\\%\\_qQ");
    /* \0 is a NUL byte inside the value. */
    assert_int_equal(unquote_one("'a\\0b'", zOut), 3);
    assert_memory_equal(zOut, "a\0b", 4);
    /* UTF-8, emoji and CJK pass through untouched. */
    const char *zUtf = "'h\xc3\xa9llo \xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87'";
    assert_int_equal(unquote_one(zUtf, zOut), strlen(zUtf) - 2);
    assert_memory_equal(zOut, zUtf + 1, strlen(zUtf) - 2);
    /* An escaped quote does not end the string. */
    check_types("'a\\'b' c", TK_STRING, TK_ID, TK_EOF, -1);
    check_types("'' \"\"", TK_STRING, TK_STRING, TK_EOF, -1);
    assert_int_equal(unquote_one("''", zOut), 0);
    assert_string_equal(zOut, "");
}

static void test_variables(void **state) {
    (void)state;
    const char *z = "@@version_comment @@session.autocommit @@GLOBAL.x @@local.y @@foo.bar @v @a.b$";
    SqlToken a[MAXTOK];
    int n = lex_all(z, a);
    assert_int_equal(n, 10);
    check_tok(z, &a[0], TK_SYSVAR, "@@version_comment");
    assert_int_equal(a[0].sub, 0);
    check_tok(z, &a[1], TK_SYSVAR, "@@session.autocommit");
    assert_int_equal(a[1].sub, 1);
    check_tok(z, &a[2], TK_SYSVAR, "@@GLOBAL.x");
    assert_int_equal(a[2].sub, 2);
    check_tok(z, &a[3], TK_SYSVAR, "@@local.y");
    assert_int_equal(a[3].sub, 1);
    /* Only the scope words take a '.'. */
    check_tok(z, &a[4], TK_SYSVAR, "@@foo");
    assert_int_equal(a[5].type, TK_DOT);
    check_tok(z, &a[6], TK_ID, "bar");
    check_tok(z, &a[7], TK_USERVAR, "@v");
    check_tok(z, &a[8], TK_USERVAR, "@a.b$");
    /* @@session without a name after the dot is a variable called session. */
    check_types("@@session.", TK_SYSVAR, TK_DOT, TK_EOF, -1);
}

static void test_comments(void **state) {
    (void)state;
    check_types("a -- comment\nb", TK_ID, TK_ID, TK_EOF, -1);
    check_types("a --\tcomment", TK_ID, TK_EOF, -1);
    check_types("a --", TK_ID, TK_EOF, -1);
    /* "--" not followed by a space is two minus signs. */
    check_types("5--3", TK_INT, TK_MINUS, TK_MINUS, TK_INT, TK_EOF, -1);
    check_types("a # comment\nb #", TK_ID, TK_ID, TK_EOF, -1);
    check_types("a /* x */ b /**/ c /*! 40101 SET x */ d /* * / ** */", TK_ID, TK_ID, TK_ID, TK_ID,
                TK_EOF, -1);
    check_types("a/*multi\nline*/b", TK_ID, TK_ID, TK_EOF, -1);
    /* Comment markers inside strings are text. */
    check_types("'-- x' '/* y' \"# z\"", TK_STRING, TK_STRING, TK_STRING, TK_EOF, -1);
}

static void test_errors(void **state) {
    (void)state;
    static const struct {
        const char *z;
        int nBefore;    /* tokens before the error */
        int err;
        int pos;
    } aCase[] = {
        {"SELECT 'abc", 1, SQL_LEXERR_STRING, 7},
        {"SELECT \"abc", 1, SQL_LEXERR_STRING, 7},
        {"SELECT 'abc\\'", 1, SQL_LEXERR_STRING, 7},
        {"SELECT 'abc\\", 1, SQL_LEXERR_STRING, 7},
        {"'", 0, SQL_LEXERR_STRING, 0},
        {"SELECT `abc", 1, SQL_LEXERR_QID, 7},
        {"SELECT `ab``", 1, SQL_LEXERR_QID, 7},
        {"SELECT 1 /* abc", 2, SQL_LEXERR_COMMENT, 9},
        {"SELECT 1 /*/", 2, SQL_LEXERR_COMMENT, 9},
        {"SELECT ?", 1, SQL_LEXERR_CHAR, 7},
        {"a ?", 1, SQL_LEXERR_CHAR, 2},
        {"\\", 0, SQL_LEXERR_CHAR, 0},
        {"a \xc3\xa9", 1, SQL_LEXERR_CHAR, 2},
        {"@", 0, SQL_LEXERR_CHAR, 0},
        {"@@ x", 0, SQL_LEXERR_CHAR, 0},
        {"x \x01", 1, SQL_LEXERR_CHAR, 2},
    };
    for (size_t i = 0; i < sizeof(aCase) / sizeof(aCase[0]); i++) {
        SqlToken a[MAXTOK];
        int n = lex_all(aCase[i].z, a);
        if (n != aCase[i].nBefore + 1) fail_msg("%s: %d tokens", aCase[i].z, n);
        const SqlToken *t = &a[n - 1];
        assert_int_equal(t->type, TK_ERROR);
        assert_int_equal(t->sub, aCase[i].err);
        assert_int_equal(t->pos, aCase[i].pos);
        assert_int_equal(t->len, (int)strlen(aCase[i].z) - aCase[i].pos);
    }
    assert_string_equal(sql_lex_errmsg(SQL_LEXERR_STRING), "unterminated string");
    assert_string_equal(sql_lex_errmsg(SQL_LEXERR_CHAR), "invalid character");
    /* After an error the lexer stops. */
    SqlLexer lx;
    SqlToken t;
    sql_lexer_init(&lx, "'x y z", 6, 0);
    assert_int_equal(sql_lex_next(&lx, &t), TK_ERROR);
    assert_int_equal(sql_lex_next(&lx, &t), TK_EOF);
}

static void test_bounds(void **state) {
    (void)state;
    /* The lexer honours n: bytes past it are never looked at, even when
    ** they would continue a token. */
    const char *z = "abc'def 12.5e7 --";
    SqlLexer lx;
    SqlToken t;
    sql_lexer_init(&lx, z, 2, 0);
    assert_int_equal(sql_lex_next(&lx, &t), TK_ID);
    assert_int_equal(t.len, 2);
    assert_int_equal(sql_lex_next(&lx, &t), TK_EOF);
    sql_lexer_init(&lx, z, 5, 0);
    sql_lex_next(&lx, &t);
    assert_int_equal(sql_lex_next(&lx, &t), TK_ERROR);
    sql_lexer_init(&lx, z, 12, 8);
    assert_int_equal(sql_lex_next(&lx, &t), TK_FLOAT);
    assert_int_equal(t.len, 4);
    assert_int_equal(t.pos, 8);
    /* NUL bytes are data, not terminators. */
    const char zNul[] = "a\0b";
    sql_lexer_init(&lx, zNul, 3, 0);
    assert_int_equal(sql_lex_next(&lx, &t), TK_ID);
    assert_int_equal(sql_lex_next(&lx, &t), TK_ERROR);
    assert_int_equal(t.pos, 1);
    const char zStr[] = "'a\0b'";
    sql_lexer_init(&lx, zStr, 5, 0);
    assert_int_equal(sql_lex_next(&lx, &t), TK_STRING);
    assert_int_equal(t.len, 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_point_query), cmocka_unit_test(test_keywords),
        cmocka_unit_test(test_identifiers), cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_operators),   cmocka_unit_test(test_strings),
        cmocka_unit_test(test_variables),   cmocka_unit_test(test_comments),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
