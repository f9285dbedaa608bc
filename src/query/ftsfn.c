/* ftsfn.c — see ftsfn.h. */
#include "query/ftsfn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/query_int.h"
#include "util/strbuf.h"

/* Copies sb into the row's scratch arena as a string value. */
static Value scratch_str(const QRow *row, StrBuf *sb) {
    if (sb->oom || !row->pScratch) return value_null();
    char *z = arena_strndup(row->pScratch, sb->z ? sb->z : "", sb->n);
    return z ? value_str(z, (uint32_t)sb->n) : value_null();
}

Value qfn_explain_score(const QExpr *e, const QRow *row) {
    (void)e;
    if (!row || !row->fts || !row->fts->q) return value_null();
    StrBuf sb = {0};
    LpError err;
    Value v = value_null();
    if (fts_query_explain_doc(row->fts->q, row->ord, &sb, &err) == LP_OK) v = scratch_str(row, &sb);
    strbuf_free(&sb);
    return v;
}

Value qfn_packed_factors(const QExpr *e, const QRow *row) {
    if (!row || !row->fts || !row->fts->q) return value_null();
    StrBuf sb = {0};
    LpError err;
    Value v = value_null();
    int bNoAtc = e->u.call.pArg != NULL;
    if (fts_query_packed_factors(row->fts->q, row->ord, bNoAtc, &sb, &err) == LP_OK && sb.n) {
        v = scratch_str(row, &sb);
    }
    strbuf_free(&sb);
    return v;
}

/* HIGHLIGHT() with limits_per_field=0: the row's fields share the limits
** (fts_highlight_shared), joined by the field separator. */
static Value highlight_shared(const QHighlight *h, const QRow *row) {
    size_t nf = (size_t)h->nField;
    const FtsHlQuery **apQ = calloc(nf, sizeof(*apQ));
    const char **az = calloc(nf, sizeof(*az));
    size_t *an = calloc(nf, sizeof(*an));
    StrBuf *aOut = calloc(nf, sizeof(*aOut));
    StrBuf sb = {0};
    int n = 0;
    if (!apQ || !az || !an || !aOut) goto done;
    for (int i = 0; i < h->nField; i++) {
        Value v = row->rd ? row_read(row->rd, row->s, row->r, h->aCol[i]) : row_get(row->s, row->r, h->aCol[i]);
        if (v.kind != VAL_STR || v.u.s.n == 0) continue;
        apQ[n] = h->apHl[i];
        az[n] = v.u.s.z;
        an[n] = v.u.s.n;
        n++;
    }
    LpError err;
    if (fts_highlight_shared(h->an, apQ, az, an, n, &h->opt, aOut, &err, NULL) == LP_OK) {
        for (int i = 0, bAny = 0; i < n; i++) {
            if (aOut[i].n == 0) continue; /* nothing shown: no separator either */
            if (bAny) strbuf_appendz(&sb, h->zFieldSep);
            strbuf_append(&sb, aOut[i].z, aOut[i].n);
            bAny = 1;
        }
    }
done:
    for (int i = 0; i < n; i++) strbuf_free(&aOut[i]);
    free(apQ);
    free(az);
    free(an);
    free(aOut);
    Value out = scratch_str(row, &sb);
    strbuf_free(&sb);
    return out;
}

Value qfn_highlight(const QExpr *e, const QRow *row) {
    const QHighlight *h = e->u.call.pArg;
    if (!row || !row->r) return value_null();
    if (!h->bLimitsPerField && h->nField > 1) return highlight_shared(h, row);
    StrBuf sb = {0};
    int bAny = 0;
    /* %PASSAGE_ID% numbers the row's marked words across its fields */
    FtsHlOptions opt = h->opt;
    for (int i = 0; i < h->nField; i++) {
        Value v = row->rd ? row_read(row->rd, row->s, row->r, h->aCol[i]) : row_get(row->s, row->r, h->aCol[i]);
        if (v.kind != VAL_STR || v.u.s.n == 0) continue;
        size_t mark = sb.n;
        if (bAny) strbuf_appendz(&sb, h->zFieldSep);
        size_t before = sb.n;
        LpError err;
        FtsHlStats st;
        if (fts_highlight(h->an, h->apHl[i], v.u.s.z, v.u.s.n, &opt, &sb, &err, &st) != LP_OK) {
            sb.n = mark; /* skip a field that cannot be highlighted */
            if (sb.z) sb.z[mark] = 0;
            continue;
        }
        if (sb.n == before) { /* nothing to show (allow_empty): no separator either */
            sb.n = mark;
            if (sb.z) sb.z[mark] = 0;
            continue;
        }
        opt.startPassageId += st.nMarked;
        bAny = 1;
    }
    Value out = scratch_str(row, &sb);
    strbuf_free(&sb);
    return out;
}

Value qfn_snippet(const QExpr *e, const QRow *row) {
    const QHighlight *h = e->u.call.pArg;
    Value v = qexpr_eval(h->pText, row);
    if (v.kind != VAL_STR) return value_null();
    StrBuf sb = {0};
    LpError err;
    Value out = value_null();
    if (fts_highlight(h->an, h->pHlText, v.u.s.z, v.u.s.n, &h->opt, &sb, &err, NULL) == LP_OK) {
        out = scratch_str(row, &sb);
    }
    strbuf_free(&sb);
    return out;
}

void qhl_init(QHighlight *h) {
    memset(h, 0, sizeof(*h));
    fts_hl_options_init(&h->opt);
    h->zFieldSep = " | ";
    h->bLimitsPerField = 1;
}

int qhl_option(QHighlight *h, Arena *a, const char *zName, Value v, char *zWhy, size_t nWhy) {
    FtsHlOptions *o = &h->opt;
    const char **pz = !strcmp(zName, "before_match")        ? &o->zBefore
                      : !strcmp(zName, "after_match")       ? &o->zAfter
                      : !strcmp(zName, "chunk_separator")   ? &o->zChunkSep
                      : !strcmp(zName, "snippet_separator") ? &o->zChunkSep
                      : !strcmp(zName, "field_separator")   ? &h->zFieldSep
                                                            : NULL;
    if (pz) {
        if (v.kind != VAL_STR) {
            snprintf(zWhy, nWhy, "expected a string value");
            return LP_BADINPUT;
        }
        char *z = arena_strndup(a, v.u.s.z, v.u.s.n);
        if (!z) return LP_NOMEM;
        *pz = z;
        return LP_OK;
    }
    /* Options that name one of a few words. */
    static const char *const azBoundary[] = {"sentence", "paragraph", "zone", NULL};
    static const char *const azMode[] = {"index", "none", "strip", "retain", NULL};
    int bBoundary = !strcmp(zName, "passage_boundary") || !strcmp(zName, "snippet_boundary");
    if (bBoundary || !strcmp(zName, "html_strip_mode")) {
        const char *const *az = bBoundary ? azBoundary : azMode;
        int k = 0;
        while (v.kind == VAL_STR && az[k] && !(strlen(az[k]) == v.u.s.n && !strncasecmp(az[k], v.u.s.z, v.u.s.n))) k++;
        if (v.kind != VAL_STR || !az[k]) {
            snprintf(zWhy, nWhy, bBoundary ? "expected 'sentence', 'paragraph' or 'zone'"
                                           : "expected 'index', 'none', 'strip' or 'retain'");
            return LP_BADINPUT;
        }
        if (bBoundary) {
            o->boundary = FTS_HL_BOUNDARY_SENTENCE + k;
        } else {
            o->htmlMode = FTS_HL_HTML_INDEX + k;
        }
        return LP_OK;
    }
    /* Manticore's newer names (…_snippets, start_snippet_id) are the same
    ** options as Sphinx's (…_passages, start_passage_id). */
    int *pi = !strcmp(zName, "limit")                ? &o->limit
              : !strcmp(zName, "around")             ? &o->around
              : !strcmp(zName, "limit_passages")     ? &o->limitPassages
              : !strcmp(zName, "limit_snippets")     ? &o->limitPassages
              : !strcmp(zName, "limit_words")        ? &o->limitWords
              : !strcmp(zName, "allow_empty")        ? &o->bAllowEmpty
              : !strcmp(zName, "force_all_words")    ? &o->bForceAllWords
              : !strcmp(zName, "force_passages")     ? &o->bForcePassages
              : !strcmp(zName, "force_snippets")     ? &o->bForcePassages
              : !strcmp(zName, "start_passage_id")   ? &o->startPassageId
              : !strcmp(zName, "start_snippet_id")   ? &o->startPassageId
              : !strcmp(zName, "weight_order")       ? &o->bWeightOrder
              : !strcmp(zName, "escape_html")        ? &o->bEscapeHtml
              : !strcmp(zName, "exact_phrase")       ? &o->bExactPhrase
              : !strcmp(zName, "emit_zones")         ? &o->bEmitZones
              : !strcmp(zName, "use_boundaries")     ? &o->bUseBoundaries
              : !strcmp(zName, "limits_per_field")   ? &h->bLimitsPerField
                                                     : NULL;
    if (!pi) {
        snprintf(zWhy, nWhy,
                 "unknown highlighting option '%.40s': the options are Manticore's (before_match, "
                 "after_match, limit, around, limit_passages, limit_words, allow_empty, ...) and "
                 "escape_html; docs/sql.md lists them",
                 zName);
        return LP_BADINPUT;
    }
    int64_t i;
    if (v.kind == VAL_INT) {
        i = v.u.i;
    } else if (v.kind == VAL_STR && v.u.s.n > 0 && v.u.s.n < 20) {
        char buf[24];
        memcpy(buf, v.u.s.z, v.u.s.n);
        buf[v.u.s.n] = 0;
        char *end;
        i = strtoll(buf, &end, 10);
        if (*end) {
            snprintf(zWhy, nWhy, "expected a number");
            return LP_BADINPUT;
        }
    } else {
        snprintf(zWhy, nWhy, "expected a number");
        return LP_BADINPUT;
    }
    if (i < 0 || i > 100000000) {
        snprintf(zWhy, nWhy, "expected a number from 0 to 100000000");
        return LP_BADINPUT;
    }
    *pi = (int)i;
    return LP_OK;
}
