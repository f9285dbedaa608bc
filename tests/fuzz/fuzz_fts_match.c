/*
** fuzz_fts_match.c — libFuzzer target for the MATCH query parser.
**
** Each input is one query against a table with the fields title, body and
** tags. Beyond "no crash, no leak, no out-of-bounds read" (the
** sanitizers), it checks the parser's promises: success gives a tree
** whose every node lies inside the query, with flat AND/OR of two or more
** children, NOT only under an AND that also holds something positive, and
** NUL-terminated leaf text, and the dump of any tree succeeds; failure
** gives no tree, a message and, for a syntax error, an offset inside the
** query.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fts/match.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const azField[] = {"title", "body", "tags"};

/* The tree's invariants; aborts on a broken one. */
static void check_node(const FtsNode *x, const FtsNode *parent, size_t n) {
    if (x->pos < 0 || x->len < 0 || (size_t)x->pos + (size_t)x->len > n) abort();
    switch (x->kind) {
    case FTSN_TERM:
    case FTSN_PREFIX:
    case FTSN_PHRASE:
        if (!x->z || x->n < 0 || x->z[x->n] != 0 || x->nChild != 0) abort();
        if (x->kind != FTSN_PHRASE && x->n == 0) abort();
        return;
    case FTSN_NOT:
        if (x->nChild != 1 || !parent || parent->kind != FTSN_AND) abort();
        if (x->aChild[0]->kind == FTSN_NOT) abort();
        check_node(x->aChild[0], x, n);
        return;
    case FTSN_AND:
    case FTSN_OR: {
        if (x->nChild < 2) abort();
        int nPos = 0;
        for (int k = 0; k < x->nChild; k++) {
            if (x->aChild[k]->kind == x->kind) abort();
            if (x->aChild[k]->kind != FTSN_NOT) nPos++;
            check_node(x->aChild[k], x, n);
        }
        if (nPos == 0) abort();
        return;
    }
    }
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A heap copy of exactly size bytes, so ASan catches any read past the
    ** end (the fuzzer's own buffer may have slack). */
    char *z = malloc(size ? size : 1);
    if (!z) return 0;
    if (size) memcpy(z, data, size);
    Arena a;
    arena_init(&a, 0);
    FtsNode *root = (FtsNode *)1;
    LpError err;
    lp_err_clear(&err);
    int rc = fts_match_parse(&a, z, size, azField, 3, &root, &err);
    if (rc == LP_OK) {
        if (err.code != LP_OK) abort();
        if (root) check_node(root, NULL, size);
        StrBuf sb = {0};
        fts_match_dump(root, azField, 3, &sb);
        if (!sb.oom && (!sb.z || sb.n == 0)) abort();
        strbuf_free(&sb);
    } else {
        if (root || err.code != rc || err.zMsg[0] == 0) abort();
        if (rc == LP_BADINPUT &&
            (err.detail != FTS_MATCH_ER_PARSE || err.pos < 0 || (size_t)err.pos > size)) {
            abort();
        }
    }
    arena_free(&a);
    free(z);
    return 0;
}
