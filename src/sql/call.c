/*
** call.c — CALL KEYWORDS and CALL SNIPPETS, Manticore's procedures for
** looking at a table's text analysis and highlighting a text outside the
** table.
**
**   CALL KEYWORDS(text, table [, 1 | value AS option ...])
**     One row per word of text, in order (stop words left out):
**     qpos (1-based word position), tokenized (the word normalised and
**     case folded), normalized (the term the index keeps: stemmed); with
**     stats, docs (documents holding the term in some full-text field)
**     and hits (its occurrences), counted over the table's index
**     (deleted documents count until a merge drops them). A prefix or
**     wildcard ('cat*', '*cat*') is a row per term it expands to
**     (tokenized: the pattern), or one row with fold_wildcards; options
**     stats, fold_wildcards, fold_lemmas, fold_blended (no effect: there
**     is nothing to fold), expansion_limit, sort_mode ('docs' | 'hits').
**   CALL SNIPPETS(data, table, query [, value AS option ...])
**     data is a string or a parenthesised list of strings: one row per
**     string, column `snippet`, the text highlighted for the query as
**     SNIPPET() does (every field's words, field scopes ignored), with the
**     options HIGHLIGHT() takes (before_match, limit, around, ...).
**   CALL SUGGEST(text, table [, value AS option ...])
**   CALL QSUGGEST(text, table [, value AS option ...])
**     Spelling suggestions from the table's own words, as Manticore's: for
**     the text's first word (SUGGEST) or its last (QSUGGEST), normalised
**     (after the table's regexp_filter rules, as a query's text),
**     the table's terms within max_edits (4) Levenshtein edits, counted
**     in characters, whose length differs by less than delta_len (3);
**     the nearest first, then the ones in more documents, then in term
**     order; at most limit (5) rows: suggest [, distance, docs]
**     (result_stats, 1). With exact forms (index_exact_words) the words
**     as written are suggested, else the terms themselves (stems, on a
**     stemmed table). Terms holding a character that is not a letter are
**     left out unless non_char is 1. sentence 1: suggest is the whole text
**     with that word replaced; result_line 1: rows (name, value) of
**     suggests, distance and docs, each a comma-separated list.
**     max_matches and reject are accepted (Manticore's tuning of its
**     candidate search); every term is looked at here.
** The arguments are literals. Every error names the argument.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fts/highlight.h"
#include "fts/match.h"
#include "fts/multi.h"
#include "fts/search.h"
#include "query/ftsfn.h"
#include "query/select.h"
#include "sql/parser.h"
#include "sql/sql_int.h"
#include "text/editdist.h"
#include "text/utf8.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* A positioned error about the statement (1064, as a parse error). */
static void call_error(SqlResult *r, const SqlStmt *st, int pos, const char *zWhat) {
    LpError err;
    lp_err_clear(&err);
    sql_syntax_error(&err, st->zSql, st->nSql, pos, "%s", zWhat);
    sqlx_report(r, &err, ER_PARSE);
}

/* Argument i as a string literal into *pz and *pn; 0 with r set if it is not. */
static int arg_str(const SqlStmt *st, int i, const char *zWhat, const char **pz, size_t *pn,
                   SqlResult *r) {
    const Expr *e = st->u.call.aArg[i];
    if (e->kind != EXPR_STRING) {
        char zMsg[128];
        snprintf(zMsg, sizeof(zMsg), "expected %s as a string", zWhat);
        call_error(r, st, e->pos, zMsg);
        return 0;
    }
    *pz = e->u.s.z;
    *pn = e->u.s.n;
    return 1;
}

/* 1 when neither the text nor the table (arguments 0 and 1) has an AS
** name; else 0 with r set. */
static int call_no_as(const SqlStmt *st, const char *zProc, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    for (int i = 0; i < 2 && i < c->nArg; i++) {
        if (c->azAs[i]) {
            char zMsg[96];
            snprintf(zMsg, sizeof(zMsg), "CALL %s takes AS only on its options, after the table", zProc);
            call_error(r, st, c->aAsPos[i], zMsg);
            return 0;
        }
    }
    return 1;
}

/* The table named by argument i, or NULL with r set. */
static Table *arg_table(SqlSession *s, const SqlStmt *st, int i, SqlResult *r) {
    const char *z;
    size_t n;
    if (!arg_str(st, i, "the table name", &z, &n, r)) return NULL;
    char zName[128];
    if (n >= sizeof(zName) || memchr(z, 0, n)) {
        call_error(r, st, st->u.call.aArg[i]->pos, "expected a table name");
        return NULL;
    }
    for (size_t k = 0; k < n; k++) zName[k] = (char)(z[k] >= 'A' && z[k] <= 'Z' ? z[k] + 32 : z[k]);
    zName[n] = 0;
    return sqlx_table(s, zName, r);
}

/* ------------------------------------------------------------------ */
/* CALL KEYWORDS                                                       */

/* CALL KEYWORDS' options (Manticore's names). */
typedef struct KwOpts {
    int bStats;       /* docs and hits columns */
    int bFold;        /* fold_wildcards: a wildcard is one row, its terms summed */
    int nLimit;       /* expansion_limit (0: the default) */
    int sortMode;     /* 0: term order, 1: docs, 2: hits (descending) */
} KwOpts;

/* Arguments 2.. into *o; 0 with r set on a bad one. The third argument may
** be a bare 0 or 1 (stats, as before Manticore named it). */
static int kw_options(const SqlStmt *st, KwOpts *o, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    memset(o, 0, sizeof(*o));
    for (int i = 0; i < 2; i++) {
        if (c->azAs[i]) {
            call_error(r, st, c->aAsPos[i], "CALL KEYWORDS takes AS only on its options, after the table");
            return 0;
        }
    }
    for (int i = 2; i < c->nArg; i++) {
        const Expr *e = c->aArg[i];
        const char *zName = c->azAs[i] ? c->azAs[i] : i == 2 ? "stats" : NULL;
        if (!zName) {
            call_error(r, st, e->pos, "expected an option as 'value AS name' (stats, fold_wildcards, "
                                      "fold_lemmas, fold_blended, expansion_limit, sort_mode)");
            return 0;
        }
        int pos = c->azAs[i] ? c->aAsPos[i] : e->pos;
        if (strcmp(zName, "sort_mode") == 0) {
            if (e->kind != EXPR_STRING || !((e->u.s.n == 4 && memcmp(e->u.s.z, "docs", 4) == 0) ||
                                            (e->u.s.n == 4 && memcmp(e->u.s.z, "hits", 4) == 0))) {
                call_error(r, st, e->pos, "expected 'docs' or 'hits' (sort_mode)");
                return 0;
            }
            o->sortMode = e->u.s.z[0] == 'd' ? 1 : 2;
            continue;
        }
        int bLimit = strcmp(zName, "expansion_limit") == 0;
        int bFlag = strcmp(zName, "stats") == 0 || strcmp(zName, "fold_wildcards") == 0 ||
                    strcmp(zName, "fold_lemmas") == 0 || strcmp(zName, "fold_blended") == 0;
        if (!bLimit && !bFlag) {
            call_error(r, st, pos, "unknown CALL KEYWORDS option: expected stats, fold_wildcards, "
                                   "fold_lemmas, fold_blended, expansion_limit or sort_mode");
            return 0;
        }
        if (e->kind != EXPR_INT || e->u.i < 0 || (bFlag && e->u.i > 1) || (bLimit && e->u.i > 1000000)) {
            char zMsg[96];
            snprintf(zMsg, sizeof(zMsg), bFlag ? "expected 0 or 1 (%s)" : "expected a count from 0 to 1000000 (%s)",
                     zName);
            call_error(r, st, e->pos, zMsg);
            return 0;
        }
        if (strcmp(zName, "stats") == 0) o->bStats = (int)e->u.i;
        if (strcmp(zName, "fold_wildcards") == 0) o->bFold = (int)e->u.i;
        if (bLimit) o->nLimit = (int)e->u.i;
        /* fold_lemmas, fold_blended: loupe has no lemmatizers, and a blend
        ** token is one row already (the form MATCH looks for), so there is
        ** nothing to fold */
    }
    return 1;
}

/* A wildcard of the text: a run of non-blank bytes the MATCH parser reads
** as one prefix or wildcard ('cat*', '*cat*', 't?st' on min_infix_len
** tables). */
typedef struct KwWild {
    size_t iStart, iEnd; /* bytes of the run */
    const FtsNode *x;    /* its leaf */
} KwWild;

static int is_blank(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* The text's wildcards into *pa (in the session's statement arena). */
static int kw_find_wild(Arena *a, const Table *t, const char *z, size_t n, KwWild **pa, int *pn) {
    int bInline = analyzer_min_infix_len(table_analyzer(t)) > 0, nWild = 0, cap = 0;
    KwWild *aw = NULL;
    for (size_t i = 0; i < n;) {
        while (i < n && is_blank(z[i])) i++;
        size_t b = i;
        int bStar = 0;
        while (i < n && !is_blank(z[i])) {
            bStar |= z[i] == '*' || (bInline && (z[i] == '?' || z[i] == '%'));
            i++;
        }
        if (!bStar) continue;
        FtsNode *root = NULL;
        LpError err;
        lp_err_clear(&err);
        if (sqlx_match_parse_raw(a, t, z + b, i - b, 0, &root, &err) != LP_OK || !root ||
            (root->kind != FTSN_PREFIX && root->kind != FTSN_WILDCARD)) {
            continue; /* not one wildcard: its words are words */
        }
        root->pos += (int)b; /* messages name the offset in the text */
        KwWild *an = arena_grow(a, aw, nWild, &cap, sizeof(KwWild), 4);
        if (!an) return LP_NOMEM;
        aw = an;
        aw[nWild++] = (KwWild){b, i, root};
    }
    *pa = aw;
    *pn = nWild;
    return LP_OK;
}

/* A wildcard's terms, collected for sorting. */
typedef struct KwTerm {
    const char *z;
    uint64_t docs, hits;
} KwTerm;

typedef struct KwTerms {
    Arena *a;
    KwTerm *aT;
    int n, cap;
} KwTerms;

static int kw_term(void *ctx, const char *z, int n, uint64_t docs, uint64_t hits) {
    KwTerms *l = ctx;
    KwTerm *an = arena_grow(l->a, l->aT, l->n, &l->cap, sizeof(KwTerm), 16);
    if (!an) return LP_NOMEM;
    l->aT = an;
    char *zc = arena_strndup(l->a, z, (size_t)n);
    if (!zc) return LP_NOMEM;
    l->aT[l->n++] = (KwTerm){zc, docs, hits};
    return LP_OK;
}

/* sort_mode: largest count first; terms are distinct, so ties go by
** term (byte order, as listed) and the order is fully determined. */
static int kw_by_count(const KwTerm *a, const KwTerm *b, uint64_t va, uint64_t vb) {
    if (va != vb) return va > vb ? -1 : 1;
    return strcmp(a->z, b->z);
}
static int kw_by_docs(const void *x, const void *y) {
    const KwTerm *a = x, *b = y;
    return kw_by_count(a, b, a->docs, b->docs);
}
static int kw_by_hits(const void *x, const void *y) {
    const KwTerm *a = x, *b = y;
    return kw_by_count(a, b, a->hits, b->hits);
}

/* One row: qpos, tokenized, normalized [, docs, hits]. */
static int kw_row(SqlResult *r, int bStats, int64_t qpos, const char *zTok, const char *zNorm, uint64_t docs,
                  uint64_t hits) {
    SqlCell *row = sql_result_row(r);
    if (!row || sql_result_cell_int(r, &row[0], qpos) || sql_result_cell_str(r, &row[1], zTok) ||
        sql_result_cell_str(r, &row[2], zNorm)) {
        return LP_NOMEM;
    }
    if (bStats && (sql_result_cell_int(r, &row[3], (int64_t)docs) || sql_result_cell_int(r, &row[4], (int64_t)hits))) {
        return LP_NOMEM;
    }
    return LP_OK;
}

/* A wildcard's rows: one per term it expands to (tokenized: the pattern),
** sorted as asked, or with fold_wildcards one row for the pattern, its
** terms' counts summed; a wildcard that finds no term is one row of the
** pattern itself. */
static int kw_wild_rows(SqlSession *s, const Table *t, FtsSource *src, const KwOpts *o, const KwWild *w,
                        int64_t qpos, SqlResult *r, LpError *err) {
    KwTerms l = {&s->stmt, NULL, 0, 0};
    const char *zPat = NULL;
    int rc = fts_expansions(&s->stmt, w->x, table_analyzer(t), src, o->nLimit, &zPat, kw_term, &l, err);
    if (rc == LP_NOMEM) lp_err_set(err, LP_NOMEM, "out of memory");
    if (rc) return rc;
    if (o->bFold || l.n == 0) {
        uint64_t docs = 0, hits = 0;
        for (int i = 0; i < l.n; i++) docs += l.aT[i].docs, hits += l.aT[i].hits;
        return kw_row(r, o->bStats, qpos, zPat, zPat, docs, hits) ? lp_err_set(err, LP_NOMEM, "out of memory") : LP_OK;
    }
    if (o->sortMode == 1) qsort(l.aT, (size_t)l.n, sizeof(KwTerm), kw_by_docs);
    if (o->sortMode == 2) qsort(l.aT, (size_t)l.n, sizeof(KwTerm), kw_by_hits);
    for (int i = 0; i < l.n; i++) {
        if (kw_row(r, o->bStats, qpos, zPat, l.aT[i].z, l.aT[i].docs, l.aT[i].hits)) {
            return lp_err_set(err, LP_NOMEM, "out of memory");
        }
    }
    return LP_OK;
}

static void call_keywords(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    if (c->nArg < 2) {
        call_error(r, st, c->namePos, "CALL KEYWORDS takes (text, table [, value AS option ...])");
        return;
    }
    const char *zText;
    size_t nText;
    if (!arg_str(st, 0, "the text", &zText, &nText, r)) return;
    KwOpts o;
    if (!kw_options(st, &o, r)) return;
    Table *t = arg_table(s, st, 1, r);
    if (!t) return;
    const Analyzer *an = table_analyzer(t);
    TokenList raw = {{0}, {0}}, stem = {{0}, {0}};
    LpError err;
    lp_err_clear(&err);
    TableSnap *snap = NULL;
    KwWild *aWild = NULL;
    int nWild = 0;
    /* the text as a query reads it: regexp_filter's rules applied */
    int rc = sqlx_query_text(&s->stmt, an, &zText, &nText, &err);
    if (rc == LP_OK) rc = kw_find_wild(&s->stmt, t, zText, nText, &aWild, &nWild);
    if (rc == LP_OK && nWild > 0) {
        /* each wildcard made one plain word (its '*', '?' and '%' made
        ** letters), so that it takes one position, as in a query, and no
        ** '*' takes one as the query language's any-word '*' would */
        char *zCopy = arena_alloc(&s->stmt, nText ? nText : 1);
        if (!zCopy) goto oom;
        memcpy(zCopy, zText, nText);
        for (int i = 0; i < nWild; i++) {
            for (size_t j = aWild[i].iStart; j < aWild[i].iEnd; j++) {
                if (fts_is_wild_char(zCopy[j])) zCopy[j] = 'x';
            }
        }
        zText = zCopy;
    }
    if (rc == LP_OK) rc = analyzer_collect(an, zText, nText, 0, &raw, &err);
    if (rc == LP_OK) rc = analyzer_collect(an, zText, nText, 1, &stem, &err);
    if (rc == LP_NOMEM) goto oom;
    if (rc != LP_OK) {
        sqlx_error(r, ER_PARSE, "CALL KEYWORDS: the text: %.400s", err.zMsg);
        goto done;
    }
    static const char *const azCol[] = {"qpos", "tokenized", "normalized", "docs", "hits"};
    int nCol = o.bStats ? 5 : 3;
    if (sql_result_columns(r, nCol)) goto oom;
    for (int i = 0; i < nCol; i++) {
        if (sql_result_column(r, i, azCol[i], SQLCOL_STRING, 0)) goto oom;
    }
    FtsSource *src = NULL;
    if (o.bStats || nWild > 0) {
        snap = table_snapshot(t);
        if (!snap) goto oom;
        src = table_snap_fts(snap);
    }
    /* Pair each word with the term of the same word (none: a stop word).
    ** Both runs split the text alike, so a word starts at the same byte in
    ** both; its position is the query side's, where a '*' standing alone
    ** takes one ("a * b": 1 and 3). A wildcard's words are one keyword,
    ** at its first word's position. */
    size_t k = 0;
    int iWild = 0;
    int64_t delta = 0;
    for (size_t i = 0; i < raw.a.n; i++) {
        const Token *w = &raw.a.a[i];
        while (k < stem.a.n && stem.a.a[k].iStart < w->iStart) k++;
        while (iWild < nWild && aWild[iWild].iEnd <= w->iStart) iWild++;
        if (iWild < nWild && aWild[iWild].iStart <= w->iStart) {
            /* the query's position: the stem run's, or for a stop word
            ** the raw one shifted as the last word paired in both was */
            int64_t qpos = (int64_t)w->iPos + delta + 1;
            if (k < stem.a.n && stem.a.a[k].iStart == w->iStart) qpos = (int64_t)stem.a.a[k].iPos + 1;
            if (!src || (rc = kw_wild_rows(s, t, src, &o, &aWild[iWild], qpos, r, &err)) != LP_OK) {
                if (!src || rc == LP_NOMEM) goto oom;
                if (rc == LP_BADINPUT) {
                    const char *zMsg = strncmp(err.zMsg, "MATCH: ", 7) == 0 ? err.zMsg + 7 : err.zMsg;
                    sqlx_error(r, ER_PARSE, "CALL KEYWORDS: the text: %.400s", zMsg);
                } else {
                    sqlx_report(r, &err, ER_UNKNOWN_ERROR);
                }
                goto done;
            }
            while (i + 1 < raw.a.n && raw.a.a[i + 1].iStart < aWild[iWild].iEnd) i++;
            iWild++;
            continue;
        }
        /* Every term that starts at the word: one, or a word form's
        ** destination words, tokenized as its source's words. */
        for (; k < stem.a.n && stem.a.a[k].iStart == w->iStart; k++) {
            const Token *x = &stem.a.a[k];
            delta = (int64_t)x->iPos - (int64_t)w->iPos;
            const char *zTok = w->z;
            if (i + 1 < raw.a.n && raw.a.a[i + 1].iStart < x->iEnd) {
                StrBuf sb = {0};
                for (size_t j = i; j < raw.a.n && raw.a.a[j].iStart < x->iEnd; j++) {
                    if (j > i) strbuf_appendc(&sb, ' ');
                    strbuf_appendz(&sb, raw.a.a[j].z);
                }
                zTok = sb.oom ? NULL : arena_strndup(&s->stmt, sb.z, sb.n);
                strbuf_free(&sb);
                if (!zTok) goto oom;
            }
            uint64_t docs = 0, hits = 0;
            if (o.bStats && src && (rc = fts_term_stats(src, NULL, x->z, x->n, &docs, &hits, &err))) {
                sqlx_report(r, &err, ER_UNKNOWN_ERROR);
                goto done;
            }
            if (kw_row(r, o.bStats, (int64_t)x->iPos + 1, zTok, x->z, docs, hits)) goto oom;
        }
    }
    goto done;
oom:
    sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
done:
    if (snap) table_snapshot_release(snap);
    token_list_free(&raw);
    token_list_free(&stem);
    table_unref(t);
}

/* ------------------------------------------------------------------ */
/* CALL SNIPPETS                                                       */

static void call_snippets(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    if (c->nArg < 3) {
        call_error(r, st, c->namePos, "CALL SNIPPETS takes (data, table, query [, value AS option ...])");
        return;
    }
    for (int i = 0; i < 3; i++) {
        if (c->azAs[i]) {
            call_error(r, st, c->aAsPos[i], "CALL SNIPPETS takes AS only after its third argument");
            return;
        }
    }
    /* the documents: a string, or a list of strings */
    const Expr *pData = c->aArg[0];
    const Expr *const *aDoc = (const Expr *const *)&c->aArg[0];
    int nDoc = 1;
    if (pData->kind == EXPR_LIST) {
        aDoc = (const Expr *const *)pData->u.list.aItem;
        nDoc = pData->u.list.nItem;
    }
    for (int i = 0; i < nDoc; i++) {
        if (aDoc[i]->kind != EXPR_STRING) {
            call_error(r, st, aDoc[i]->pos, "expected the data as a string or a list of strings");
            return;
        }
    }
    const char *zQuery;
    size_t nQuery;
    if (!arg_str(st, 2, "the query", &zQuery, &nQuery, r)) return;
    Table *t = arg_table(s, st, 1, r);
    if (!t) return;
    Arena *a = &s->stmt;
    QHighlight h;
    qhl_init(&h);
    for (int i = 3; i < c->nArg; i++) {
        const Expr *e = c->aArg[i];
        if (!c->azAs[i]) {
            call_error(r, st, e->pos, "expected an option as value AS name (e.g. '<em>' AS before_match)");
            goto done;
        }
        Value v;
        if (e->kind == EXPR_STRING) {
            v = value_str(e->u.s.z, (uint32_t)e->u.s.n);
        } else if (e->kind == EXPR_INT) {
            v = value_int(e->u.i);
        } else {
            call_error(r, st, e->pos, "expected a string or an integer");
            goto done;
        }
        char zWhy[256];
        int rc = qhl_option(&h, a, c->azAs[i], v, zWhy, sizeof(zWhy));
        if (rc == LP_NOMEM) goto oom;
        if (rc) {
            call_error(r, st, rc == LP_BADINPUT && strncmp(zWhy, "unknown", 7) == 0 ? c->aAsPos[i] : e->pos,
                       zWhy);
            goto done;
        }
    }
    const Analyzer *an = table_analyzer(t);
    LpError err;
    lp_err_clear(&err);
    FtsNode *root = NULL;
    FtsHlQuery *pHl = NULL;
    if (sqlx_match_parse(a, t, zQuery, nQuery, 0, &root, &err) ||
        fts_hl_query_build(a, an, root, -1, sqlx_table_expand(table_schema(t)), h.opt.bExactPhrase, &pHl, &err) ||
        fts_hl_options_check(&h.opt, an, pHl, &err)) {
        sqlx_report(r, &err, ER_PARSE);
        goto done;
    }
    if (sql_result_columns(r, 1) || sql_result_column(r, 0, "snippet", SQLCOL_STRING, 0)) goto oom;
    StrBuf sb = {0};
    for (int i = 0; i < nDoc; i++) {
        strbuf_reset(&sb);
        int rc = fts_highlight(an, pHl, aDoc[i]->u.s.z, aDoc[i]->u.s.n, &h.opt, &sb, &err, NULL);
        if (rc == LP_OK && sb.oom) rc = LP_NOMEM;
        if (rc != LP_OK) {
            strbuf_free(&sb);
            if (rc == LP_NOMEM) goto oom;
            /* the offset is in that document: say which */
            sqlx_error(r, ER_BAD_VALUE, "document %d: %.400s", i + 1, err.zMsg);
            goto done;
        }
        SqlCell *row = sql_result_row(r);
        if (!row || sql_result_cell(r, &row[0], sb.z ? sb.z : "", sb.n)) {
            strbuf_free(&sb);
            goto oom;
        }
    }
    strbuf_free(&sb);
    goto done;
oom:
    sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
done:
    table_unref(t);
}

/* ------------------------------------------------------------------ */
/* CALL SUGGEST, CALL QSUGGEST                                         */

typedef struct SgOpts {
    int limit, maxEdits, bStats, deltaLen, bLine, bNonChar, bSentence;
} SgOpts;

/* The most characters a term has (ANALYZER_MAX_TERM bytes). */
#define SG_MAX_CHARS ANALYZER_MAX_TERM
_Static_assert(SG_MAX_CHARS <= EDIT_WORD_MAX, "a term fits an EditPattern");

/* Decodes the UTF-8 z[0..n) into a (room for SG_MAX_CHARS); the count. */
static int sg_chars(const char *z, int n, uint32_t *a) {
    int k = 0;
    for (int i = 0; i < n && k < SG_MAX_CHARS;) {
        int len = utf8_decode((const unsigned char *)z + i, (size_t)(n - i), &a[k]);
        if (len <= 0) len = 1, a[k] = 0xFFFD;
        i += len;
        k++;
    }
    return k;
}

typedef struct SgCand {
    const char *z;    /* the term as suggested (no exact mark) */
    int n;
    int dist;
    uint64_t docs;
    int bLonger;      /* a completion (SgWalk.mode) longer than a spelling:
                      ** the whole term is more than dist edits away */
} SgCand;

typedef struct SgWalk {
    Arena *a;
    const SgOpts *o;
    EditPattern word; /* the word suggestions are for */
    int nWord;        /* its characters */
    int bExact;       /* suggest the exact forms ('=word' terms) */
    int maxEdits;     /* the most edits from the word (o's unless set) */
    int mode;         /* EDIT_WHOLE: the term is the word, spelled near;
                      ** else the word is near a part of it (editdist.h):
                      ** CALL AUTOCOMPLETE's completions, then ... */
    int maxChars;     /* ... the term has at most this many characters,
                      ** and docs is summed from the scan's counts */
    HashMap seen;     /* term -> SgCand */
    SgCand **ap;
    int n, cap;
    EditWalk walk;    /* the terms' distances (sg_collect starts it) */
    int bSkip;        /* pass over the prefixes the walk finds past hope */
    uint8_t aDead[FTS_MAX_KEY]; /* the last key prefix found wanting (sg_dead) */
    int nDead;
} SgWalk;

/* Are the characters of the UTF-8 z[0..n) letters (and marks) only? */
static int sg_letters_only(const char *z, int n) {
    for (int i = 0; i < n;) {
        unsigned char c = (unsigned char)z[i];
        if (c < 0x80) { /* most characters: no call */
            if ((unsigned)((c | 0x20) - 'a') > 'z' - 'a') return 0;
            i++;
            continue;
        }
        uint32_t cp;
        int len = utf8_decode((const unsigned char *)z + i, (size_t)(n - i), &cp);
        if (len <= 0 || !utf8_is_letter(cp)) return 0;
        i += len;
    }
    return 1;
}

/* The answer for a key the walk does not want (source.h's FtsKeyFn): when
** no key beginning with its first nHead + nDead bytes is wanted (nDead > 0:
** that many bytes of the term, after the field and exact-form bytes), the
** prefix is remembered for the keys that follow and passed over; 0 when a
** longer key may be wanted. */
static int sg_dead(SgWalk *w, const uint8_t *key, int nHead, int nDead) {
    if (nDead <= 0) return 0;
    w->nDead = nHead + nDead;
    memcpy(w->aDead, key, (size_t)w->nDead);
    return FTS_SCAN_SKIP(w->nDead);
}

/* Each term of the dictionary, in key order: its distance from the word
** (editdist.h's walk: each term goes on from the table of the characters
** it shares with the term before), then, only for a term within reach,
** its length, its letters and whether another field already gave it. A
** term with a prefix no wanted term begins with (too far from the word,
** too long, holding a character not a letter; a zone's or an exact form's
** mark) has that prefix passed over (fts_scan_skipping): a search of the
** dictionary for the next key that may be wanted, rather than a read of
** every key. */
static int sg_key(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    SgWalk *w = ctx;
    if (w->nDead > 0 && nKey >= w->nDead && key[w->nDead - 1] == w->aDead[w->nDead - 1] &&
        memcmp(key, w->aDead, (size_t)w->nDead) == 0) {
        return FTS_SCAN_SKIP(w->nDead);
    }
    const char *z = (const char *)key + 1;
    int n = nKey - 1;
    if (n <= 0) return 0;
    if (w->bExact != (z[0] == ANALYZER_EXACT_MARK)) return sg_dead(w, key, 1, 1);
    int nHead = 1 + w->bExact;
    if (w->bExact) z++, n--;
    if (n <= 0) return 0;
    if (z[0] == ANALYZER_ZONE_MARK || z[0] == '.') return sg_dead(w, key, nHead, 1);
    /* a term of the wrong length costs a count of its characters (terms
    ** are valid UTF-8): most of them, as in the read of every key */
    int k = 0;
    for (int i = 0; i < n; i++) k += ((unsigned char)z[i] & 0xC0) != 0x80;
    if (w->mode == EDIT_WHOLE ? abs(k - w->nWord) >= w->o->deltaLen : k > w->maxChars) return 0;
    int d;
    if (w->bSkip) {
        int nDead = 0;
        d = edit_walk_next(&w->walk, z, n, &nDead, &k);
        if (nDead > 0) return FTS_SCAN_SKIP(nHead + nDead); /* the walk remembers it */
        if (d > w->maxEdits) return 0;
    } else {
        /* far reaches: each key as it comes, the letters of the near ones */
        d = edit_pattern_distance_to(&w->word, z, n, w->maxEdits, w->mode);
        if (d > w->maxEdits || (!w->o->bNonChar && !sg_letters_only(z, n))) return 0;
    }
    SgCand *c = hmap_get(&w->seen, z, (size_t)n);
    /* a term's documents over the fields: each field's not in an earlier
    ** one; over the segments (fts_scan_skipping gives each its own): summed */
    uint64_t docs = w->mode == EDIT_WHOLE ? 0
                    : info->df - (info->nEarlier == FTS_EARLIER_UNKNOWN || info->nEarlier > info->df ? 0 : info->nEarlier);
    if (c) {
        c->docs += docs;
        return 0;
    }
    c = arena_alloc(w->a, sizeof(SgCand));
    char *zc = arena_strndup(w->a, z, (size_t)n);
    SgCand **ap = arena_grow(w->a, w->ap, w->n, &w->cap, sizeof(SgCand *), 16);
    if (!c || !zc || !ap) return LP_NOMEM;
    /* a spelling of the word itself goes before a longer completion as near */
    int bLonger = w->mode != EDIT_WHOLE && edit_pattern_distance(&w->word, z, n, d) > d;
    *c = (SgCand){zc, n, d, docs, bLonger};
    w->ap = ap;
    w->ap[w->n++] = c;
    return hmap_put(&w->seen, zc, (size_t)n, c, NULL) == LP_OK ? 0 : LP_NOMEM;
}

static int sg_cmp(const void *x, const void *y) {
    const SgCand *a = *(const SgCand *const *)x, *b = *(const SgCand *const *)y;
    if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
    if (a->bLonger != b->bLonger) return a->bLonger - b->bLonger;
    if (a->docs != b->docs) return a->docs > b->docs ? -1 : 1;
    return strcmp(a->z, b->z);
}

static int sg_cmp_dist(const void *x, const void *y) {
    const SgCand *a = *(const SgCand *const *)x, *b = *(const SgCand *const *)y;
    return (a->dist > b->dist) - (a->dist < b->dist);
}

/* Arguments 2.. into *o; 0 with r set on a bad one. */
static int sg_options(const SqlStmt *st, const char *zProc, SgOpts *o, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    static const struct {
        const char *zName;
        int lo, hi;
    } aOpt[] = {{"limit", 1, 10000}, {"max_edits", 0, 32}, {"result_stats", 0, 1}, {"delta_len", 1, 64},
                {"max_matches", 1, 1000000}, {"reject", 0, 1000000}, {"result_line", 0, 1},
                {"non_char", 0, 1}, {"sentence", 0, 1}};
    *o = (SgOpts){5, 4, 1, 3, 0, 0, 0};
    if (!call_no_as(st, zProc, r)) return 0;
    for (int i = 2; i < c->nArg; i++) {
        const Expr *e = c->aArg[i];
        size_t k = 0;
        while (c->azAs[i] && k < LP_ARRAY_SIZE(aOpt) && strcmp(c->azAs[i], aOpt[k].zName) != 0) k++;
        if (!c->azAs[i] || k == LP_ARRAY_SIZE(aOpt)) {
            char zMsg[256];
            snprintf(zMsg, sizeof(zMsg), "%s CALL %s option: expected 'value AS name' with limit, max_edits, "
                     "result_stats, delta_len, max_matches, reject, result_line, non_char or sentence",
                     c->azAs[i] ? "unknown" : "expected an", zProc);
            call_error(r, st, c->azAs[i] ? c->aAsPos[i] : e->pos, zMsg);
            return 0;
        }
        if (e->kind != EXPR_INT || e->u.i < aOpt[k].lo || e->u.i > aOpt[k].hi) {
            char zMsg[96];
            snprintf(zMsg, sizeof(zMsg), "expected an integer from %d to %d (%s)", aOpt[k].lo, aOpt[k].hi,
                     aOpt[k].zName);
            call_error(r, st, e->pos, zMsg);
            return 0;
        }
        int v = (int)e->u.i;
        switch (k) {
        case 0: o->limit = v; break;
        case 1: o->maxEdits = v; break;
        case 2: o->bStats = v; break;
        case 3: o->deltaLen = v; break;
        case 6: o->bLine = v; break;
        case 7: o->bNonChar = v; break;
        case 8: o->bSentence = v; break;
        default: break; /* max_matches, reject: accepted, nothing to tune */
        }
    }
    return 1;
}

/* A scan that gathers suggestions for several words at once. */
typedef struct SgMulti {
    SgWalk *aw;
    int n;
} SgMulti;

/* A key passed over when every walk passes it over: the longest of
** their prefixes (the others hold it). */
static int sg_key_multi(void *ctx, const uint8_t *key, int nKey, const FtsTermInfo *info) {
    SgMulti *m = ctx;
    int bAll = 1, nSkip = 0;
    for (int i = 0; i < m->n; i++) {
        int rc = sg_key(&m->aw[i], key, nKey, info);
        if (rc > 0) return rc;
        if (rc == 0) bAll = 0;
        if (-rc > nSkip) nSkip = -rc;
    }
    return bAll ? FTS_SCAN_SKIP(nSkip) : 0;
}

/* Sets up w to gather suggestions for the word tk (o's options) */
static void sg_walk_init(SgWalk *w, Arena *a, const Analyzer *an, const SgOpts *o, const Token *tk) {
    memset(w, 0, sizeof(*w));
    w->a = a;
    w->o = o;
    w->maxEdits = o->maxEdits;
    w->bExact = analyzer_has_exact_forms(an);
    uint32_t aChar[SG_MAX_CHARS];
    w->nWord = sg_chars(tk->z, tk->n, aChar);
    edit_pattern_init(&w->word, aChar, w->nWord);
}

/* The suggestions for each word aTok[i] (tokens of the query text, as
** written) from the dictionary of src (nField full-text fields), as
** CALL SUGGEST lists them (o's maxEdits, deltaLen, bNonChar; limit: only
** the candidates as near as the limit-th nearest get their documents
** counted), found in one read of the dictionary: into aw[i] (->ap, ->n;
** the caller frees each ->seen), sorted nearest first, then in more
** documents, then in term order. With bReady, aw is set up already
** (sg_walk_init, and maybe a walk of another mode or bound) and aTok is
** not read. LP_OK or an error (err). */
static int sg_collect(SgWalk *aw, int nWord, Arena *a, const Analyzer *an, FtsSource *src, int nField,
                      const SgOpts *o, const Token *aTok, int bReady, LpError *err) {
    for (int i = 0; i < nWord && !bReady; i++) sg_walk_init(&aw[i], a, an, o, &aTok[i]);
    for (int i = 0; i < nWord; i++) {
        SgWalk *w = &aw[i];
        /* a spelling has fewer than nWord + deltaLen characters */
        edit_walk_init(&w->walk, &w->word, w->maxEdits, w->mode,
                       w->mode == EDIT_WHOLE ? w->nWord + w->o->deltaLen - 1 : w->maxChars, !w->o->bNonChar);
        /* Within 3 edits or more (CALL SUGGEST's default 4) every prefix
        ** of 3 characters is in reach, and most of 5: the few keys passed
        ** over cost more in searches than reading them does, and each key
        ** is read as it comes. */
        w->bSkip = w->maxEdits <= 2;
    }
    SgMulti m = {aw, nWord};
    int rc = LP_OK;
    /* with exact forms, only they are suggested: their range of the
    ** dictionary ('=' after the field byte), about half of it */
    int bExact = analyzer_has_exact_forms(an);
    for (int f = 0; f < nField && rc == LP_OK && nWord > 0; f++) {
        uint8_t key[2] = {(uint8_t)f, (uint8_t)ANALYZER_EXACT_MARK};
        rc = fts_scan_skipping(src, key, 1 + bExact, sg_key_multi, &m, err);
    }
    for (int j = 0; j < nWord && rc == LP_OK; j++) {
        SgWalk *w = &aw[j];
        /* Only the candidates as near as the limit-th nearest can be
        ** listed: the documents are counted for those (the nearer ones are
        ** shown with their count, the ones at that distance compete by
        ** it), not for the thousands a short word may have. */
        if (w->n > w->o->limit) {
            qsort(w->ap, (size_t)w->n, sizeof(SgCand *), sg_cmp_dist);
            int dLast = w->ap[w->o->limit - 1]->dist, nNeed = w->o->limit;
            while (nNeed < w->n && w->ap[nNeed]->dist == dLast) nNeed++;
            w->n = nNeed;
        }
        for (int i = 0; i < w->n && rc == LP_OK && w->mode == EDIT_WHOLE; i++) {
            /* documents holding the term in some field, as CALL KEYWORDS counts them */
            char zTerm[ANALYZER_MAX_TERM + 1];
            int k = 0;
            if (w->bExact) zTerm[k++] = ANALYZER_EXACT_MARK;
            memcpy(zTerm + k, w->ap[i]->z, (size_t)w->ap[i]->n);
            k += w->ap[i]->n;
            uint64_t hits = 0;
            rc = fts_term_stats(src, NULL, zTerm, k, &w->ap[i]->docs, &hits, err);
        }
        if (rc == LP_OK && w->n > 1) qsort(w->ap, (size_t)w->n, sizeof(SgCand *), sg_cmp);
    }
    if (rc == LP_NOMEM) return lp_err_set(err, LP_NOMEM, "out of memory");
    return rc;
}

static void call_suggest(SqlSession *s, const SqlStmt *st, SqlResult *r, int bLast) {
    const CallStmt *c = &st->u.call;
    const char *zProc = bLast ? "QSUGGEST" : "SUGGEST";
    if (c->nArg < 2) {
        char zMsg[96];
        snprintf(zMsg, sizeof(zMsg), "CALL %s takes (text, table [, value AS option ...])", zProc);
        call_error(r, st, c->namePos, zMsg);
        return;
    }
    SgOpts o;
    const char *zText;
    size_t nText;
    if (!sg_options(st, zProc, &o, r) || !arg_str(st, 0, "the text", &zText, &nText, r)) return;
    Table *t = arg_table(s, st, 1, r);
    if (!t) return;
    const Analyzer *an = table_analyzer(t);
    Arena *a = &s->stmt;
    SgWalk w;
    memset(&w, 0, sizeof(w));
    TokenList l = {{0}, {0}};
    TableSnap *snap = NULL;
    LpError err;
    lp_err_clear(&err);
    /* the word as a query reads it: regexp_filter's rules applied */
    int rc = sqlx_query_text(a, an, &zText, &nText, &err);
    if (rc == LP_OK) rc = analyzer_collect(an, zText, nText, ANALYZE_UNSTEMMED, &l, &err);
    if (rc == LP_NOMEM) goto oom;
    if (rc != LP_OK) {
        sqlx_error(r, ER_PARSE, "CALL %s: the text: %.400s", zProc, err.zMsg);
        goto done;
    }
    const Token *pWord = l.a.n ? &l.a.a[bLast ? l.a.n - 1 : 0] : NULL;
    if (pWord && pWord->n > 0) {
        if (!(snap = table_snapshot(t))) goto oom;
        rc = sg_collect(&w, 1, a, an, table_snap_fts(snap), table_fts_fields(t, NULL, NULL), &o, pWord, 0, &err);
        if (rc == LP_NOMEM) goto oom;
        if (rc != LP_OK) {
            sqlx_report(r, &err, ER_UNKNOWN_ERROR);
            goto done;
        }
    }
    int nOut = w.n < o.limit ? w.n : o.limit;
    StrBuf sb = {0};
    if (o.bLine) {
        if (sql_result_columns(r, 2) || sql_result_column(r, 0, "name", SQLCOL_STRING, 0) ||
            sql_result_column(r, 1, "value", SQLCOL_STRING, 0)) {
            goto oom;
        }
        static const char *const azName[] = {"suggests", "distance", "docs"};
        for (int row = 0; row < (o.bStats ? 3 : 1); row++) {
            strbuf_reset(&sb);
            for (int i = 0; i < nOut; i++) {
                if (i) strbuf_appendc(&sb, ',');
                if (row == 0) strbuf_append(&sb, w.ap[i]->z, (size_t)w.ap[i]->n);
                else if (row == 1) strbuf_appendf(&sb, "%d", w.ap[i]->dist);
                else strbuf_appendf(&sb, "%llu", (unsigned long long)w.ap[i]->docs);
            }
            SqlCell *cells = sb.oom ? NULL : sql_result_row(r);
            if (!cells || sql_result_cell_str(r, &cells[0], azName[row]) ||
                sql_result_cell(r, &cells[1], sb.z ? sb.z : "", sb.n)) {
                strbuf_free(&sb);
                goto oom;
            }
        }
        strbuf_free(&sb);
        goto done;
    }
    int nCol = o.bStats ? 3 : 1;
    if (sql_result_columns(r, nCol) || sql_result_column(r, 0, "suggest", SQLCOL_STRING, 0) ||
        (o.bStats && (sql_result_column(r, 1, "distance", SQLCOL_BIGINT, 0) ||
                      sql_result_column(r, 2, "docs", SQLCOL_BIGINT, 0)))) {
        goto oom;
    }
    for (int i = 0; i < nOut; i++) {
        strbuf_reset(&sb);
        if (o.bSentence) strbuf_append(&sb, zText, pWord->iStart);
        strbuf_append(&sb, w.ap[i]->z, (size_t)w.ap[i]->n);
        if (o.bSentence) strbuf_append(&sb, zText + pWord->iEnd, nText - pWord->iEnd);
        SqlCell *cells = sb.oom ? NULL : sql_result_row(r);
        if (!cells || sql_result_cell(r, &cells[0], sb.z, sb.n) ||
            (o.bStats && (sql_result_cell_int(r, &cells[1], w.ap[i]->dist) ||
                          sql_result_cell_int(r, &cells[2], (int64_t)w.ap[i]->docs)))) {
            strbuf_free(&sb);
            goto oom;
        }
    }
    strbuf_free(&sb);
    goto done;
oom:
    sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
done:
    if (snap) table_snapshot_release(snap);
    hmap_free(&w.seen);
    token_list_free(&l);
    table_unref(t);
}

/* Is c, in a MATCH text, an operator character that fuzzy search does
** not take? */
static int fz_operator(char c) {
    return strchr("|!()@~/*^$=\\<>\":", c) != NULL && c != 0;
}

/* A term into sb, each query operator character in it escaped. */
static void fz_term(StrBuf *sb, const char *z, int n) {
    for (int i = 0; i < n; i++) {
        if (fz_operator(z[i]) || z[i] == '-' || z[i] == '\'') strbuf_appendc(sb, '\\');
        strbuf_appendc(sb, z[i]);
    }
}

int sqlx_fuzzy_text(Arena *a, Table *t, const char *z, size_t n, int maxEdits, int bPreserve, const char **pzOut,
                    size_t *pnOut, LpError *err) {
    *pzOut = z;
    *pnOut = n;
    /* words, or one phrase of words */
    size_t lo = 0, hi = n;
    while (lo < hi && (z[lo] == ' ' || z[lo] == '\t' || z[lo] == '\n' || z[lo] == '\r')) lo++;
    while (hi > lo && (z[hi - 1] == ' ' || z[hi - 1] == '\t' || z[hi - 1] == '\n' || z[hi - 1] == '\r')) hi--;
    int bPhrase = hi - lo >= 2 && z[lo] == '"' && z[hi - 1] == '"';
    if (bPhrase) lo++, hi--;
    for (size_t i = lo; i < hi; i++) {
        int bWordStart = i == lo || z[i - 1] == ' ' || z[i - 1] == '\t' || z[i - 1] == '\n' || z[i - 1] == '\r';
        if (fz_operator(z[i]) || (z[i] == '-' && bWordStart)) {
            return lp_err_setpos(err, LP_BADINPUT, (int)i,
                                 "MATCH: near '%.30s' at offset %d: OPTION fuzzy=1 takes words, or one phrase of "
                                 "words, without operators",
                                 z + i, (int)i);
        }
    }
    const Analyzer *an = table_analyzer(t);
    const char *zText = z + lo;
    size_t nText = hi - lo;
    TokenList l = {{0}, {0}};
    TableSnap *snap = NULL;
    StrBuf sb = {0};
    SgWalk *aw = NULL;
    int nWord = 0;
    /* the words as a query reads them: regexp_filter's rules applied */
    int rc = sqlx_query_text(a, an, &zText, &nText, err);
    if (rc == LP_OK) rc = analyzer_collect(an, zText, nText, ANALYZE_UNSTEMMED, &l, err);
    if (rc == LP_OK) {
        /* (the tokens of no characters left out) */
        size_t m = 0;
        for (size_t i = 0; i < l.a.n; i++) {
            if (l.a.a[i].n > 0) l.a.a[m++] = l.a.a[i];
        }
        l.a.n = m;
        nWord = (int)m;
        if (!(aw = arena_zalloc(a, sizeof(SgWalk) * (m ? m : 1)))) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    }
    if (rc == LP_OK && !(snap = table_snapshot(t))) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    SgOpts o = {3, maxEdits, 1, 3, 0, 0, 0}; /* as Manticore's: CALL SUGGEST's three nearest */
    if (rc == LP_OK) {
        rc = sg_collect(aw, nWord, a, an, table_snap_fts(snap), table_fts_fields(t, NULL, NULL), &o, l.a.a, 0, err);
    }
    int nKept = 0;
    if (bPhrase) strbuf_appendc(&sb, '"');
    for (int i = 0; i < nWord && rc == LP_OK; i++) {
        const Token *tk = &l.a.a[i];
        const SgWalk w = aw[i];
        int nCand = w.n < o.limit ? w.n : o.limit;
        if (nCand == 0 && !bPreserve) continue;
        /* each word's choices, the earlier words' boosted more (Manticore's
        ** 50 / (k + 1)^1.44, at least 1; not inside a phrase) */
        double boost = 50 / pow(nKept + 1, 1.44);
        if (boost < 1) boost = 1;
        if (nKept++) strbuf_appendc(&sb, ' ');
        strbuf_appendc(&sb, '(');
        for (int c = 0; c < (nCand ? nCand : 1); c++) {
            if (c) strbuf_appendc(&sb, '|');
            if (nCand) fz_term(&sb, w.ap[c]->z, w.ap[c]->n);
            else fz_term(&sb, tk->z, tk->n); /* preserve=1: the word itself */
            if (!bPhrase) strbuf_appendf(&sb, "^%.4g", boost);
        }
        strbuf_appendc(&sb, ')');
    }
    if (bPhrase) strbuf_appendc(&sb, '"');
    if (rc == LP_OK && sb.oom) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    if (rc == LP_OK && nKept > 0) {
        char *zOut = arena_strndup(a, sb.z, sb.n);
        if (!zOut) rc = lp_err_set(err, LP_NOMEM, "out of memory");
        *pzOut = zOut;
        *pnOut = sb.n;
    }
    strbuf_free(&sb);
    for (int i = 0; aw && i < nWord; i++) hmap_free(&aw[i].seen);
    token_list_free(&l);
    if (snap) table_snapshot_release(snap);
    return rc;
}

/* ------------------------------------------------------------------ */
/* CALL AUTOCOMPLETE                                                   */

typedef struct AcOpts {
    int fuzziness;     /* the most edits in a word (0..2, 2) */
    int bPreserve;     /* keep a word with no spelling near (0) */
    int bAppend;       /* complete the last word at its end (1) */
    int bPrepend;      /* ... at its start (0) */
    int expansionLen;  /* characters a completion may add (10) */
    int bForceBigrams; /* two edits from 4 characters on, not 7 (0) */
} AcOpts;

/* Arguments 2.. into *o; 0 with r set on a bad one. */
static int ac_options(const SqlStmt *st, AcOpts *o, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    static const struct {
        const char *zName;
        int lo, hi;
    } aOpt[] = {{"fuzziness", 0, 2}, {"preserve", 0, 1}, {"append", 0, 1}, {"prepend", 0, 1},
                {"expansion_len", 0, 64}, {"force_bigrams", 0, 1}, {"layouts", 0, 0}};
    *o = (AcOpts){2, 0, 1, 0, 10, 0};
    if (!call_no_as(st, "AUTOCOMPLETE", r)) return 0;
    for (int i = 2; i < c->nArg; i++) {
        const Expr *e = c->aArg[i];
        size_t k = 0;
        while (c->azAs[i] && k < LP_ARRAY_SIZE(aOpt) && strcmp(c->azAs[i], aOpt[k].zName) != 0) k++;
        if (!c->azAs[i] || k == LP_ARRAY_SIZE(aOpt)) {
            call_error(r, st, c->azAs[i] ? c->aAsPos[i] : e->pos,
                       c->azAs[i] ? "unknown CALL AUTOCOMPLETE option: expected fuzziness, preserve, append, prepend, "
                                    "expansion_len, force_bigrams or layouts"
                                  : "expected an option as 'value AS name' (fuzziness, preserve, append, prepend, "
                                    "expansion_len, force_bigrams or layouts)");
            return 0;
        }
        if (k == 6) {
            /* keyboard layouts: none is all loupe has, as in MATCH's fuzzy */
            if (e->kind != EXPR_STRING || e->u.s.n != 0) {
                call_error(r, st, e->pos, "layouts: loupe has no keyboard layouts; only '' (none) is accepted");
                return 0;
            }
            continue;
        }
        if (e->kind != EXPR_INT || e->u.i < aOpt[k].lo || e->u.i > aOpt[k].hi) {
            char zMsg[96];
            snprintf(zMsg, sizeof(zMsg), "expected an integer from %d to %d (%s)", aOpt[k].lo, aOpt[k].hi,
                     aOpt[k].zName);
            call_error(r, st, e->pos, zMsg);
            return 0;
        }
        int v = (int)e->u.i;
        switch (k) {
        case 0: o->fuzziness = v; break;
        case 1: o->bPreserve = v; break;
        case 2: o->bAppend = v; break;
        case 3: o->bPrepend = v; break;
        case 4: o->expansionLen = v; break;
        default: o->bForceBigrams = v; break;
        }
    }
    return 1;
}

/* The edits allowed in a word of nChars characters (as Manticore's
** autocomplete: none up to 2, one up to 6, or with force_bigrams 3, then
** two; never more than fuzziness). */
static int ac_edits(const AcOpts *o, int nChars) {
    int d = nChars > (o->bForceBigrams ? 3 : 6) ? 2 : nChars > 2 ? 1 : 0;
    return d < o->fuzziness ? d : o->fuzziness;
}

/* A suggestion being built: a choice for each word so far. */
typedef struct AcCombo {
    const SgCand **ap; /* the choices */
    int n;             /* how many */
    int dist;          /* their edits, summed */
    uint64_t docs;     /* the fewest documents one of them is in (a word
                       ** kept as typed, preserve=1, counts none) */
} AcCombo;

/* Fewest edits first, then the most documents, then the words' order. */
static int ac_cmp(const void *x, const void *y) {
    const AcCombo *a = x, *b = y;
    if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
    if (a->docs != b->docs) return a->docs > b->docs ? -1 : 1;
    for (int i = 0; i < a->n && i < b->n; i++) {
        const SgCand *p = a->ap[i], *q = b->ap[i];
        int c = memcmp(p->z, q->z, (size_t)(p->n < q->n ? p->n : q->n));
        if (c || p->n != q->n) return c ? c : p->n - q->n;
    }
    return a->n - b->n;
}

/* Is c the text as typed: a choice for every word aTok[0..nWord), each
** the word itself (or kept as typed)? */
static int ac_as_typed(const AcCombo *c, int nPos, const Token *aTok, int nWord) {
    if (nPos != nWord) return 0;
    for (int i = 0; i < nPos; i++) {
        const SgCand *x = c->ap[i];
        if (x->dist < 0) continue;
        if (x->n != aTok[i].n || memcmp(x->z, aTok[i].z, (size_t)x->n) != 0) return 0;
    }
    return 1;
}

/* Is some document in t holding every word of c that is in the dictionary
** (not kept as typed)? *pb: 1 or 0. LP_OK or an error. */
static int ac_cooccur(Arena *a, Table *t, const AcCombo *c, int nPos, int bExact, int *pb, LpError *err) {
    StrBuf sb = {0};
    int nKnown = 0;
    for (int i = 0; i < nPos; i++) {
        if (c->ap[i]->dist < 0) continue; /* kept as typed */
        if (nKnown++) strbuf_appendc(&sb, ' ');
        if (bExact) strbuf_appendc(&sb, '=');
        fz_term(&sb, c->ap[i]->z, c->ap[i]->n);
    }
    *pb = 0;
    if (sb.oom) {
        strbuf_free(&sb);
        return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    if (nKnown == 0) return LP_OK;
    if (nKnown == 1 && nPos == 1) { /* one word: its count says */
        strbuf_free(&sb);
        *pb = c->docs > 0;
        return LP_OK;
    }
    char *zMatch = arena_strndup(a, sb.z, sb.n);
    size_t nMatch = sb.n;
    strbuf_free(&sb);
    if (!zMatch) return lp_err_set(err, LP_NOMEM, "out of memory");
    FtsNode *root = NULL;
    int rc = sqlx_match_parse_raw(a, t, zMatch, nMatch, 0, &root, err);
    if (rc != LP_OK) return rc;
    QSelect q;
    memset(&q, 0, sizeof(q));
    q.pTable = t;
    q.bCountOnly = 1;
    q.bMatch = 1;
    q.pMatch = root;
    q.zMatch = zMatch;
    q.nMatch = nMatch;
    q.nCutoff = 1; /* one is enough */
    fts_rank_defaults(&q.rank);
    q.rank.ranker = FTS_RANK_NONE;
    QMeta m;
    memset(&m, 0, sizeof(m));
    rc = query_select(&q, NULL, NULL, &m, err);
    *pb = m.nTotalFound > 0;
    return rc;
}

/* CALL AUTOCOMPLETE('text', 'table' [, value AS option ...]): Manticore's
** (its Buddy's) completion of what a user is typing, built in. Each word
** but the last stands for its nearest spellings in the table's dictionary
** (as OPTION fuzzy=1 finds them: itself first when the table has it, at
** most three, within ac_edits() edits); the last for the terms it begins
** (append; prepend: ends; both: holds) at most expansion_len characters
** longer, also within those edits of the word (a typo before the end),
** the nearest first, a spelling of the word before a longer completion as
** near, then the most frequent (the first maxCount, or after other words
** 4 * maxCount). Suggestions are every choice of one term per
** word, fewest edits first, then the rarest word's documents, and only
** those whose words some document holds together are listed: at most 50
** for a text under 2 bytes, 25 under 5, else 10. */
static void call_autocomplete(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    if (c->nArg < 2) {
        call_error(r, st, c->namePos, "CALL AUTOCOMPLETE takes (text, table [, value AS option ...])");
        return;
    }
    AcOpts o;
    const char *zText;
    size_t nText;
    if (!ac_options(st, &o, r) || !arg_str(st, 0, "the text", &zText, &nText, r)) return;
    Table *t = arg_table(s, st, 1, r);
    if (!t) return;
    const Analyzer *an = table_analyzer(t);
    Arena *a = &s->stmt;
    TokenList l = {{0}, {0}};
    TableSnap *snap = NULL;
    SgWalk *aw = NULL;
    int nWord = 0;
    LpError err;
    lp_err_clear(&err);
    if (analyzer_min_infix_len(an) <= 0) {
        sqlx_error(r, ER_PARSE, "CALL AUTOCOMPLETE needs the table option min_infix_len (as in Manticore)");
        goto done;
    }
    int maxCount = nText < 2 ? 50 : nText < 5 ? 25 : 10;
    /* the words as a query reads them: regexp_filter's rules applied */
    int rc = sqlx_query_text(a, an, &zText, &nText, &err);
    if (rc == LP_OK) rc = analyzer_collect(an, zText, nText, ANALYZE_UNSTEMMED, &l, &err);
    if (rc == LP_NOMEM) goto oom;
    if (rc != LP_OK) {
        sqlx_error(r, ER_PARSE, "CALL AUTOCOMPLETE: the text: %.400s", err.zMsg);
        goto done;
    }
    size_t m = 0;
    for (size_t i = 0; i < l.a.n; i++) {
        if (l.a.a[i].n > 0) l.a.a[m++] = l.a.a[i];
    }
    nWord = (int)m;
    if (sql_result_columns(r, 1) || sql_result_column(r, 0, "query", SQLCOL_STRING, 0)) goto oom;
    if (nWord == 0) goto done;
    if (!(aw = arena_zalloc(a, sizeof(SgWalk) * (size_t)nWord))) goto oom;
    /* the words before the last: three spellings each, as fuzzy=1's; the
    ** last: its completions (or, neither append nor prepend, as the others) */
    SgOpts oWord = {.limit = 3, .bStats = 1, .deltaLen = 3};
    /* (after other words, more: a completion must also go with them) */
    SgOpts oLast = {.limit = nWord > 1 ? 4 * maxCount : maxCount, .bStats = 1, .deltaLen = 3, .bNonChar = 1};
    int bComplete = o.bAppend || o.bPrepend;
    for (int i = 0; i < nWord; i++) {
        int bLast = i == nWord - 1 && bComplete;
        sg_walk_init(&aw[i], a, an, bLast ? &oLast : &oWord, &l.a.a[i]);
        aw[i].maxEdits = ac_edits(&o, aw[i].nWord);
        if (bLast) {
            aw[i].mode = o.bAppend && o.bPrepend ? EDIT_INFIX : o.bAppend ? EDIT_PREFIX : EDIT_SUFFIX;
            aw[i].maxChars = aw[i].nWord + o.expansionLen;
        }
    }
    if (!(snap = table_snapshot(t))) goto oom;
    rc = sg_collect(aw, nWord, a, an, table_snap_fts(snap), table_fts_fields(t, NULL, NULL), &oWord, l.a.a, 1, &err);
    /* The choices live in the arena. Let the snapshot go before the count
    ** queries take their own: a table's lock prefers writers and is not
    ** recursive, so a second read lock behind a waiting writer would wait
    ** for ever. */
    table_snapshot_release(snap);
    snap = NULL;
    if (rc == LP_NOMEM) goto oom;
    if (rc != LP_OK) {
        sqlx_report(r, &err, ER_UNKNOWN_ERROR);
        goto done;
    }
    /* Each word's choices, a word with none kept as typed (preserve, dist
    ** -1 marks it) or left out; then the combinations, best first, the
    ** best 4 * maxCount kept at each step (some may hold no document). */
    int nBeam = 4 * maxCount, nCombo = 1, nPos = 0;
    AcCombo *aCombo = arena_zalloc(a, sizeof(AcCombo));
    if (!aCombo) goto oom;
    for (int i = 0; i < nWord; i++) {
        SgWalk *w = &aw[i];
        int nCand = w->n < w->o->limit ? w->n : w->o->limit;
        /* preserve: the word as typed is one more choice, unless found */
        const SgCand *pKeep = NULL;
        int bFound = 0;
        for (int e = 0; e < nCand; e++) {
            bFound |= w->ap[e]->n == l.a.a[i].n && memcmp(w->ap[e]->z, l.a.a[i].z, (size_t)l.a.a[i].n) == 0;
        }
        if (o.bPreserve && !bFound) {
            SgCand *k = arena_alloc(a, sizeof(SgCand));
            if (!k) goto oom;
            *k = (SgCand){l.a.a[i].z, l.a.a[i].n, -1, 0, 0};
            pKeep = k;
        }
        int nChoice = nCand + (pKeep != NULL);
        if (nChoice == 0) continue; /* nothing near: left out */
        AcCombo *aNext = arena_alloc(a, sizeof(AcCombo) * (size_t)(nCombo * nChoice));
        if (!aNext) goto oom;
        int k = 0;
        for (int j = 0; j < nCombo; j++) {
            for (int e = 0; e < nChoice; e++) {
                const SgCand *cand = e < nCand ? w->ap[e] : pKeep;
                AcCombo *x = &aNext[k++];
                if (!(x->ap = arena_alloc(a, sizeof(*x->ap) * (size_t)(nPos + 1)))) goto oom;
                for (int i2 = 0; i2 < nPos; i2++) x->ap[i2] = aCombo[j].ap[i2];
                x->ap[nPos] = cand;
                x->n = nPos + 1;
                x->dist = aCombo[j].dist + (cand->dist > 0 ? cand->dist : 0);
                x->docs = nPos == 0 || cand->docs < aCombo[j].docs ? cand->docs : aCombo[j].docs;
                if (cand->dist < 0 && nPos > 0) x->docs = aCombo[j].docs; /* as typed: no count */
            }
        }
        qsort(aNext, (size_t)k, sizeof(AcCombo), ac_cmp);
        aCombo = aNext;
        nCombo = k < nBeam ? k : nBeam;
        nPos++;
    }
    /* the text as typed, every word found as it is, comes first */
    int bExact = analyzer_has_exact_forms(an);
    StrBuf sb = {0};
    int nOut = 0;
    for (int pass = 0; pass < 2 && nPos > 0; pass++) {
        for (int j = 0; j < nCombo && nOut < maxCount; j++) {
            if (ac_as_typed(&aCombo[j], nPos, l.a.a, nWord) != (pass == 0)) continue;
            int bAny;
            rc = ac_cooccur(a, t, &aCombo[j], nPos, bExact, &bAny, &err);
            if (rc == LP_NOMEM) goto oom;
            if (rc != LP_OK) {
                sqlx_report(r, &err, ER_UNKNOWN_ERROR);
                goto done;
            }
            if (!bAny) continue;
            strbuf_reset(&sb);
            for (int i = 0; i < nPos; i++) {
                if (i) strbuf_appendc(&sb, ' ');
                strbuf_append(&sb, aCombo[j].ap[i]->z, (size_t)aCombo[j].ap[i]->n);
            }
            SqlCell *cells = sb.oom ? NULL : sql_result_row(r);
            if (!cells || sql_result_cell(r, &cells[0], sb.z, sb.n)) {
                strbuf_free(&sb);
                goto oom;
            }
            nOut++;
        }
    }
    strbuf_free(&sb);
    goto done;
oom:
    sqlx_error(r, ER_OUTOFMEMORY, "out of memory");
done:
    for (int i = 0; aw && i < nWord; i++) hmap_free(&aw[i].seen);
    if (snap) table_snapshot_release(snap);
    token_list_free(&l);
    table_unref(t);
}

void sqlx_call(SqlSession *s, const SqlStmt *st, SqlResult *r) {
    const CallStmt *c = &st->u.call;
    if (strcmp(c->zName, "keywords") == 0) {
        call_keywords(s, st, r);
    } else if (strcmp(c->zName, "snippets") == 0) {
        call_snippets(s, st, r);
    } else if (strcmp(c->zName, "suggest") == 0 || strcmp(c->zName, "qsuggest") == 0) {
        call_suggest(s, st, r, c->zName[0] == 'q');
    } else if (strcmp(c->zName, "autocomplete") == 0) {
        call_autocomplete(s, st, r);
    } else {
        char zMsg[160];
        snprintf(zMsg, sizeof(zMsg), "unknown procedure '%.64s': loupe has CALL KEYWORDS, SNIPPETS, SUGGEST, "
                 "QSUGGEST and AUTOCOMPLETE", c->zName);
        call_error(r, st, c->namePos, zMsg);
    }
}
