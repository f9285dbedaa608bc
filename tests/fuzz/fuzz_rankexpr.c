/*
** fuzz_rankexpr.c — libFuzzer target for the ranking expression parser
** (OPTION ranker=expr('...'), src/fts/rankexpr.c).
**
** Each input is one expression. Beyond the sanitizers' checks: a failed
** compile gives no expression, LP_BADINPUT (or LP_NOMEM) and an offset
** inside the input (the length limit's error points at the limit); a
** compiled one evaluates to a finite number on documents that match in no
** field, in some, and in all, with factors from 0 to large. The table has
** the fields title, body and tags: bm25a()/bm25f() reach the rescoring
** callback only with k1, b and weights in their ranges.
*/
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fts/rankexpr.h"

static const char *const azField[] = {"title", "body", "tags"};

static double fake_bm25(void *pCtx, int bF, double k1, double b, const double *aW, int nW) {
    (void)pCtx;
    if ((bF != 0 && bF != 1) || !(k1 >= 0 && k1 <= 100) || !(b >= 0 && b <= 1) || nW != 3) abort();
    double w = 0;
    for (int f = 0; f < nW; f++) {
        if (!(aW[f] >= 0 && aW[f] <= 1e6)) abort();
        w += aW[f];
    }
    return w + k1 + b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Arena a;
    arena_init(&a, 0);
    FtsRankExpr *e = (FtsRankExpr *)1;
    LpError err;
    lp_err_clear(&err);
    int rc = fts_rankexpr_compile_fields(&a, (const char *)data, size, azField, 3, &e, &err);
    if (rc != LP_OK) {
        if (e) abort();
        if (rc != LP_BADINPUT && rc != LP_NOMEM) abort();
        if (rc == LP_BADINPUT && (err.pos < 0 || (size_t)err.pos > size) &&
            !(size > FTS_RANKEXPR_MAX_LEN && err.pos == FTS_RANKEXPR_MAX_LEN)) {
            abort();
        }
        if (!err.zMsg[0]) abort();
        arena_free(&a);
        return 0;
    }
    if (!e) abort();
    static const FtsFieldFactors aFF[4][3] = {
        {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
        {{2, 3, 2, 1, 1, 2, 0.5, 1.5, 3.5, 2, 2, 1, 1, 0.25, 3, 2},
         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
         {1, 1, 1, 4, 0, 2, 2, 2, 2, 1, 2, 4, 0, 0, 0, 1}},
        {{1, 1, 1, 1, 0, 1e-6, 1e-6, 1e-6, 1e-6, 1, 1e-6, 1, 1, 1e-12, 0, 1},
         {3, 9, 3, 2, 0, 9, 1, 5, 40, 2, 6, 2, 0, 3.5, 7, 4},
         {1, 2, 1, 7, 1, 3, 3, 3, 6, 1, 3, 7, 1, 2, 1, 2}},
        {{UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, 1, 1e300, 1e300, 1e300, 1e300, UINT32_MAX, 1e300,
          UINT32_MAX, 1, 700, UINT32_MAX, UINT32_MAX},
         {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
         {7, 7, 7, 7, 0, 20, 20, 20, 140, 7, 140, 1, 0, 9, 2, 7}},
    };
    static const double aW[3] = {1, 1e6, 0};
    static const double aBm25f[4] = {0, 2.5, 1e-9, 1e300};
    for (int k = 0; k < 4; k++) {
        FtsDocFactors d = {aFF[k], aW, 3, aBm25f[k], (uint32_t)k * 1000, (uint32_t)k, (uint32_t)k * 7, fake_bm25, NULL};
        double v = fts_rankexpr_eval(e, &d);
        if (!isfinite(v)) abort();
    }
    arena_free(&a);
    return 0;
}
