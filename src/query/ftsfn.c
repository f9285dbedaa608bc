/* ftsfn.c — see ftsfn.h. */
#include "query/ftsfn.h"

#include <string.h>

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

Value qfn_highlight(const QExpr *e, const QRow *row) {
    const QHighlight *h = e->u.call.pArg;
    if (!row || !row->r) return value_null();
    StrBuf sb = {0};
    int bAny = 0;
    for (int i = 0; i < h->nField; i++) {
        Value v = row->rd ? row_read(row->rd, row->s, row->r, h->aCol[i]) : row_get(row->s, row->r, h->aCol[i]);
        if (v.kind != VAL_STR || v.u.s.n == 0) continue;
        size_t mark = sb.n;
        if (bAny) strbuf_appendz(&sb, h->zFieldSep);
        size_t before = sb.n;
        LpError err;
        if (fts_highlight(h->an, h->apHl[i], v.u.s.z, v.u.s.n, &h->opt, &sb, &err) != LP_OK) {
            sb.n = mark; /* skip a field that cannot be highlighted */
            if (sb.z) sb.z[mark] = 0;
            continue;
        }
        if (sb.n == before) { /* nothing to show (allow_empty): no separator either */
            sb.n = mark;
            if (sb.z) sb.z[mark] = 0;
            continue;
        }
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
    if (fts_highlight(h->an, h->pHlText, v.u.s.z, v.u.s.n, &h->opt, &sb, &err) == LP_OK) {
        out = scratch_str(row, &sb);
    }
    strbuf_free(&sb);
    return out;
}
