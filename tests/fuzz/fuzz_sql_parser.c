/*
** fuzz_sql_parser.c — libFuzzer target for the SQL lexer and parser.
**
** Each input is parsed as one statement with a fresh arena. Beyond "no
** crash, no leak, no out-of-bounds read" (the sanitizers), it checks the
** parser's promises: success gives a tree and no error; failure gives no
** tree, a non-empty message and a position inside the statement.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A heap copy of exactly size bytes, so ASan catches any read past the
    ** end (the fuzzer's own buffer may have slack). */
    char *z = malloc(size ? size : 1);
    if (!z) return 0;
    if (size) memcpy(z, data, size);
    Arena a;
    arena_init(&a, 0);
    SqlStmt *s = NULL;
    LpError err;
    lp_err_clear(&err);
    int rc = sql_parse(&a, z, size, &s, &err);
    if (rc == LP_OK) {
        if (!s || err.code != LP_OK) abort();
    } else {
        if (s || err.code != rc || err.zMsg[0] == 0) abort();
        if (rc == LP_BADINPUT && err.detail == SQL_ER_PARSE_ERROR &&
            (err.pos < 0 || (size_t)err.pos > size)) {
            abort();
        }
    }
    arena_free(&a);
    free(z);
    return 0;
}
