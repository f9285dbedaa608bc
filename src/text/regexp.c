/* regexp.c — see regexp.h. PCRE2 (Debian's libpcre2-8) does the matching;
** the substitution loop is ours, so that the replacement syntax is
** Manticore's (\1) and empty matches replace nothing. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/regexp.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "text/utf8.h"
#include "util/threadlocal.h"

/* Matching bounds per rule and text: a pattern that would backtrack past
** them on some text is stopped there (an error), however long it runs. */
#define REGEXP_MATCH_LIMIT 1000000
#define REGEXP_DEPTH_LIMIT 10000

/* A piece of a replacement: literal text, or a group of the match. */
typedef struct ReplPart {
    int iGroup;             /* -1: the literal z[0..n) */
    const char *z;
    size_t n;
} ReplPart;

typedef struct Rule {
    pcre2_code *code;
    ReplPart *aPart;
    int nPart;
    char *zRepl;            /* the replacement's literal bytes (aPart points in) */
} Rule;

struct RegexpFilter {
    Rule *aRule;
    int nRule;
    pcre2_match_context *mctx;
};

void regexp_filter_free(RegexpFilter *f) {
    if (!f) return;
    for (int i = 0; i < f->nRule; i++) {
        pcre2_code_free(f->aRule[i].code);
        free(f->aRule[i].aPart);
        free(f->aRule[i].zRepl);
    }
    free(f->aRule);
    pcre2_match_context_free(f->mctx);
    free(f);
}

int regexp_filter_count(const RegexpFilter *f) {
    return f ? f->nRule : 0;
}

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

/* Parses the replacement z[0..n) of rule iRule into r (its literal bytes
** copied, "\N" a group reference, "\\" a backslash). nGroup: the
** pattern's capturing groups. */
static int parse_replacement(Rule *r, const char *z, size_t n, uint32_t nGroup, int iRule, LpError *err) {
    r->zRepl = malloc(n + 1);
    r->aPart = malloc(sizeof(ReplPart) * (n + 1));
    if (!r->zRepl || !r->aPart) return lp_err_set(err, LP_NOMEM, "out of memory");
    size_t nLit = 0, iLit = 0;
    for (size_t i = 0; i < n; i++) {
        if (z[i] == '\\' && i + 1 < n && z[i + 1] >= '0' && z[i + 1] <= '9') {
            uint32_t g = (uint32_t)(z[i + 1] - '0');
            if (g > nGroup) {
                return lp_err_set(err, LP_BADINPUT,
                                  "regexp_filter rule %d: the replacement names group \\%u, and the pattern "
                                  "has %u",
                                  iRule, g, nGroup);
            }
            if (nLit > iLit) r->aPart[r->nPart++] = (ReplPart){-1, r->zRepl + iLit, nLit - iLit};
            iLit = nLit;
            r->aPart[r->nPart++] = (ReplPart){(int)g, NULL, 0};
            i++;
            continue;
        }
        if (z[i] == '\\' && i + 1 < n && z[i + 1] == '\\') i++;
        r->zRepl[nLit++] = z[i];
    }
    if (nLit > iLit) r->aPart[r->nPart++] = (ReplPart){-1, r->zRepl + iLit, nLit - iLit};
    return LP_OK;
}

/* Compiles the rule z[0..n) (one line, not blank), number iRule. */
static int rule_compile(Rule *r, const char *z, size_t n, int iRule, LpError *err) {
    const char *zArrow = NULL;
    for (size_t i = 0; i + 1 < n && !zArrow; i++) {
        if (z[i] == '=' && z[i + 1] == '>') zArrow = z + i;
    }
    if (!zArrow) {
        return lp_err_set(err, LP_BADINPUT, "regexp_filter rule %d '%.*s': expected 'pattern => replacement'",
                          iRule, (int)(n > 64 ? 64 : n), z);
    }
    size_t nPat = (size_t)(zArrow - z);
    while (nPat > 0 && is_space(z[nPat - 1])) nPat--;
    const char *zRep = zArrow + 2;
    size_t nRep = n - (size_t)(zRep - z);
    while (nRep > 0 && is_space(*zRep)) zRep++, nRep--;
    while (nRep > 0 && is_space(zRep[nRep - 1])) nRep--;
    if (nPat == 0) return lp_err_set(err, LP_BADINPUT, "regexp_filter rule %d: the pattern is empty", iRule);
    int iErr;
    PCRE2_SIZE iErrOff;
    r->code = pcre2_compile((PCRE2_SPTR)z, nPat, PCRE2_UTF, &iErr, &iErrOff, NULL);
    if (!r->code) {
        PCRE2_UCHAR zMsg[160];
        pcre2_get_error_message(iErr, zMsg, sizeof(zMsg));
        if (iErr == PCRE2_ERROR_NOMEMORY) return lp_err_set(err, LP_NOMEM, "out of memory");
        return lp_err_set(err, LP_BADINPUT, "regexp_filter rule %d: the pattern '%.*s' at offset %zu: %s", iRule,
                          (int)(nPat > 64 ? 64 : nPat), z, (size_t)iErrOff, (const char *)zMsg);
    }
    uint32_t nGroup = 0;
    pcre2_pattern_info(r->code, PCRE2_INFO_CAPTURECOUNT, &nGroup);
    return parse_replacement(r, zRep, nRep, nGroup, iRule, err);
}

int regexp_filter_new(const char *zRules, RegexpFilter **pp, LpError *err) {
    *pp = NULL;
    if (!zRules) return LP_OK;
    int64_t iBad = utf8_check(zRules, strlen(zRules));
    if (iBad >= 0) {
        return lp_err_set(err, LP_BADINPUT, "regexp_filter: invalid UTF-8 at byte %lld", (long long)iBad);
    }
    RegexpFilter *f = calloc(1, sizeof(*f));
    if (!f) return lp_err_set(err, LP_NOMEM, "out of memory");
    int rc = LP_OK, nLine = 0;
    for (const char *p = zRules; *p && rc == LP_OK;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *q = p;
        size_t m = n;
        while (m > 0 && (is_space(*q))) q++, m--;
        while (m > 0 && is_space(q[m - 1])) m--;
        p += n + (e ? 1 : 0);
        if (m == 0) continue;
        if (++nLine > REGEXP_MAX_RULES) {
            rc = lp_err_set(err, LP_BADINPUT, "regexp_filter: more than %d rules", REGEXP_MAX_RULES);
            break;
        }
        Rule *a = realloc(f->aRule, sizeof(Rule) * (size_t)(f->nRule + 1));
        if (!a) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory");
            break;
        }
        f->aRule = a;
        memset(&a[f->nRule], 0, sizeof(Rule));
        rc = rule_compile(&a[f->nRule], q, m, nLine, err);
        f->nRule++; /* freed with the rest, compiled or not */
    }
    if (rc == LP_OK && f->nRule > 0) {
        f->mctx = pcre2_match_context_create(NULL);
        if (!f->mctx) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory");
        } else {
            pcre2_set_match_limit(f->mctx, REGEXP_MATCH_LIMIT);
            pcre2_set_depth_limit(f->mctx, REGEXP_DEPTH_LIMIT);
        }
    }
    if (rc != LP_OK || f->nRule == 0) {
        regexp_filter_free(f);
        return rc;
    }
    *pp = f;
    return LP_OK;
}

/* Bytes of the UTF-8 character that starts with byte c. */
static size_t char_len(unsigned char c) {
    return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* Where bytes came from, through the rules (regexp_filter_apply_map): byte
** i of a text came from bytes [a[2i], a[2i + 1]) of the text the first
** rule read; n pairs, in a buffer with room for cap. */
typedef struct SrcMap {
    uint32_t *a;
    size_t n, cap;
} SrcMap;

/* Appends to m the sources of z[from..to) (mIn: the sources of z; NULL:
** z is the first text, byte i from [i, i + 1)), or, bSpan, one source
** for each of nRep bytes: the whole of z[from..to)'s. 0: out of memory. */
static int map_add(SrcMap *m, const uint32_t *mIn, size_t from, size_t to, int bSpan, size_t nRep) {
    size_t nAdd = bSpan ? nRep : to - from;
    if (nAdd == 0) return 1;
    if (m->n + nAdd > m->cap) {
        size_t cap = m->cap ? m->cap : 64;
        while (cap < m->n + nAdd) cap *= 2;
        uint32_t *a = realloc(m->a, sizeof(uint32_t) * 2 * cap);
        if (!a) return 0;
        m->a = a;
        m->cap = cap;
    }
    uint32_t *p = m->a + 2 * m->n;
    if (bSpan) {
        uint32_t lo = mIn ? mIn[2 * from] : (uint32_t)from, hi = mIn ? mIn[2 * (to - 1) + 1] : (uint32_t)to;
        for (size_t k = 0; k < nRep; k++) {
            p[2 * k] = lo;
            p[2 * k + 1] = hi;
        }
    } else if (mIn) {
        memcpy(p, mIn + 2 * from, sizeof(uint32_t) * 2 * nAdd);
    } else {
        for (size_t k = 0; k < nAdd; k++) {
            p[2 * k] = (uint32_t)(from + k);
            p[2 * k + 1] = (uint32_t)(from + k + 1);
        }
    }
    m->n += nAdd;
    return 1;
}

/* Rule r over z[0..n), appending the result to out; *pbChanged set when
** it replaced something. With mOut, the result's sources are appended to
** it (mIn: z's, as map_add reads them). */
static int rule_apply(const Rule *r, int iRule, const char *z, size_t n, pcre2_match_data *md,
                      pcre2_match_context *mctx, StrBuf *out, int *pbChanged, const uint32_t *mIn, SrcMap *mOut,
                      LpError *err) {
    size_t off = 0, last = 0;
    *pbChanged = 0;
    while (off <= n) {
        int rc = pcre2_match(r->code, (PCRE2_SPTR)z, n, off, PCRE2_NO_UTF_CHECK, md, mctx);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            if (rc == PCRE2_ERROR_NOMEMORY || rc == PCRE2_ERROR_HEAPLIMIT) {
                return lp_err_set(err, LP_NOMEM, "out of memory matching regexp_filter rule %d", iRule);
            }
            PCRE2_UCHAR zMsg[120];
            pcre2_get_error_message(rc, zMsg, sizeof(zMsg));
            return lp_err_set(err, LP_LIMIT, "regexp_filter rule %d stopped on this text: %s", iRule,
                              (const char *)zMsg);
        }
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t s = ov[0], e = ov[1];
        if (e <= s) {
            /* an empty match replaces nothing: look again one character on */
            if (s >= n) break;
            off = s + char_len((unsigned char)z[s]);
            continue;
        }
        strbuf_append(out, z + last, s - last);
        if (mOut && !map_add(mOut, mIn, last, s, 0, 0)) return lp_err_set(err, LP_NOMEM, "out of memory");
        size_t nCopied = out->n;
        for (int k = 0; k < r->nPart; k++) {
            const ReplPart *p = &r->aPart[k];
            if (p->iGroup < 0) {
                strbuf_append(out, p->z, p->n);
            } else if ((uint32_t)p->iGroup < (uint32_t)rc && ov[2 * p->iGroup] != PCRE2_UNSET) {
                strbuf_append(out, z + ov[2 * p->iGroup], ov[2 * p->iGroup + 1] - ov[2 * p->iGroup]);
            }
        }
        /* every byte the replacement wrote came from the whole match */
        if (mOut && !out->oom && !map_add(mOut, mIn, s, e, 1, out->n - nCopied)) {
            return lp_err_set(err, LP_NOMEM, "out of memory");
        }
        last = off = e;
        *pbChanged = 1;
    }
    if (*pbChanged) {
        strbuf_append(out, z + last, n - last);
        if (mOut && !map_add(mOut, mIn, last, n, 0, 0)) return lp_err_set(err, LP_NOMEM, "out of memory");
    }
    return out->oom ? lp_err_set(err, LP_NOMEM, "out of memory") : LP_OK;
}

static int filter_apply(const RegexpFilter *f, const char *z, size_t n, StrBuf *buf, const char **pz, size_t *pn,
                        uint32_t **paMap, LpError *err) {
    *pz = z;
    *pn = n;
    if (paMap) *paMap = NULL;
    if (!f || f->nRule == 0) return LP_OK;
    int64_t iBad = utf8_check(z, n);
    if (iBad >= 0) return lp_err_setpos(err, LP_BADINPUT, iBad, "invalid UTF-8 at byte %lld", (long long)iBad);
    if (paMap && n > UINT32_MAX) {
        return lp_err_set(err, LP_LIMIT, "text of %zu bytes is longer than the 4 GiB a field may hold", n);
    }
    /* two buffers in turn: rule i reads what rule i-1 wrote; so do the
    ** maps of where their bytes came from */
    StrBuf tmp = {0};
    StrBuf *aBuf[2] = {buf, &tmp};
    SrcMap aMap[2] = {{0}, {0}};
    const uint32_t *mCur = NULL;
    int iOut = 0, rc = LP_OK, bAny = 0;
    const char *zCur = z;
    size_t nCur = n;
    for (int i = 0; i < f->nRule && rc == LP_OK; i++) {
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(f->aRule[i].code, NULL);
        if (!md) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory");
            break;
        }
        StrBuf *out = aBuf[iOut];
        SrcMap *mOut = paMap ? &aMap[iOut] : NULL;
        strbuf_reset(out);
        if (mOut) mOut->n = 0;
        int bChanged;
        rc = rule_apply(&f->aRule[i], i + 1, zCur, nCur, md, f->mctx, out, &bChanged, mCur, mOut, err);
        pcre2_match_data_free(md);
        if (rc == LP_OK && bChanged) {
            zCur = out->z ? out->z : "";
            nCur = out->n;
            if (mOut) mCur = mOut->a;
            iOut ^= 1;
            bAny = 1;
        }
    }
    if (rc == LP_OK && bAny && zCur != buf->z) {
        /* the last result is in tmp: it becomes buf (no copy) */
        StrBuf x = *buf;
        *buf = tmp;
        tmp = x;
    }
    strbuf_free(&tmp);
    /* the last result's map is the one not written next */
    SrcMap *mLast = &aMap[iOut ^ 1];
    if (rc == LP_OK && bAny && paMap) {
        *paMap = mLast->a;
        mLast->a = NULL;
    }
    free(aMap[0].a);
    free(aMap[1].a);
    if (rc != LP_OK) return rc;
    if (bAny) {
        *pz = zCur ? zCur : "";
        *pn = nCur;
    }
    return LP_OK;
}

int regexp_filter_apply(const RegexpFilter *f, const char *z, size_t n, StrBuf *buf, const char **pz,
                        size_t *pn, LpError *err) {
    return filter_apply(f, z, n, buf, pz, pn, NULL, err);
}

int regexp_filter_apply_map(const RegexpFilter *f, const char *z, size_t n, StrBuf *buf, const char **pz,
                            size_t *pn, uint32_t **paMap, LpError *err) {
    return filter_apply(f, z, n, buf, pz, pn, paMap, err);
}

/* -- REGEX() terms -- */

/* One compiled term pattern of a thread's cache. */
typedef struct TermPattern {
    char *z;                /* the pattern as given (NULL: an empty slot) */
    size_t n;
    int bSearch;            /* compiled to match anywhere (regexp_search_*),
                            ** not a whole term */
    pcre2_code *code;       /* NULL: it does not compile */
    pcre2_match_data *md;
} TermPattern;

typedef struct TermCache {
    TermPattern a[REGEXP_TERM_CACHE];
    int iNext;              /* the slot the next miss takes (round robin) */
    pcre2_match_context *mctx;
} TermCache;

static __thread TermCache *t_pTermCache;

static void term_pattern_clear(TermPattern *tp) {
    pcre2_match_data_free(tp->md);
    pcre2_code_free(tp->code);
    free(tp->z);
    memset(tp, 0, sizeof(*tp));
}

static void term_cache_free(void *p) {
    TermCache *c = p;
    for (int i = 0; i < REGEXP_TERM_CACHE; i++) term_pattern_clear(&c->a[i]);
    pcre2_match_context_free(c->mctx);
    free(c);
    if (t_pTermCache == c) t_pTermCache = NULL;
}

static ThreadLocal g_termCaches = THREAD_LOCAL_INIT(term_cache_free);

/* Compiles z[0..n) for whole-term matching (or, bSearch, to match
** anywhere); NULL (with *piErr and *pOff set) when it does not compile. */
static pcre2_code *term_compile(const char *z, size_t n, int bSearch, int *piErr, PCRE2_SIZE *pOff) {
    return pcre2_compile((PCRE2_SPTR)z, n, PCRE2_UTF | (bSearch ? 0 : PCRE2_ANCHORED | PCRE2_ENDANCHORED), piErr,
                         pOff, NULL);
}

static int pattern_check(const char *z, size_t n, int bSearch, LpError *err) {
    int iErr;
    PCRE2_SIZE iOff;
    pcre2_code *code = term_compile(z, n, bSearch, &iErr, &iOff);
    if (code) {
        pcre2_code_free(code);
        return LP_OK;
    }
    if (iErr == PCRE2_ERROR_NOMEMORY) return lp_err_set(err, LP_NOMEM, "out of memory");
    PCRE2_UCHAR zMsg[160];
    pcre2_get_error_message(iErr, zMsg, sizeof(zMsg));
    return lp_err_setpos(err, LP_BADINPUT, (int)(iOff < n ? iOff : n), "%s", (const char *)zMsg);
}

int regexp_term_check(const char *z, size_t n, LpError *err) {
    return pattern_check(z, n, 0, err);
}

int regexp_search_check(const char *z, size_t n, LpError *err) {
    return pattern_check(z, n, 1, err);
}

/* This thread's compiled z[0..n), from its cache or compiled now; NULL
** when it cannot be had (no memory, no thread key, no compile). */
static TermPattern *term_pattern_get(const char *z, size_t n, int bSearch) {
    TermCache *c = t_pTermCache;
    if (!c) {
        c = calloc(1, sizeof(*c));
        if (!c) return NULL;
        c->mctx = pcre2_match_context_create(NULL);
        if (!c->mctx || thread_local_set(&g_termCaches, c) != LP_OK) {
            pcre2_match_context_free(c->mctx);
            free(c);
            return NULL;
        }
        pcre2_set_match_limit(c->mctx, REGEXP_MATCH_LIMIT);
        pcre2_set_depth_limit(c->mctx, REGEXP_DEPTH_LIMIT);
        t_pTermCache = c;
    }
    for (int i = 0; i < REGEXP_TERM_CACHE; i++) {
        TermPattern *tp = &c->a[i];
        if (tp->z && tp->n == n && tp->bSearch == bSearch && memcmp(tp->z, z, n) == 0) return tp->code ? tp : NULL;
    }
    TermPattern *tp = &c->a[c->iNext];
    c->iNext = (c->iNext + 1) % REGEXP_TERM_CACHE;
    term_pattern_clear(tp);
    if (!(tp->z = malloc(n + 1))) return NULL;
    memcpy(tp->z, z, n);
    tp->z[n] = 0;
    tp->n = n;
    tp->bSearch = bSearch;
    int iErr;
    PCRE2_SIZE iOff;
    if ((tp->code = term_compile(z, n, bSearch, &iErr, &iOff)) != NULL) {
        /* a scan matches it against every term of a dictionary: machine
        ** code where PCRE2 has it (else the interpreter does the same) */
        pcre2_jit_compile(tp->code, PCRE2_JIT_COMPLETE);
        tp->md = pcre2_match_data_create_from_pattern(tp->code, NULL);
        if (!tp->md) {
            term_pattern_clear(tp);
            return NULL;
        }
    }
    return tp->code ? tp : NULL;
}

int regexp_term_match(const char *z, size_t n, const unsigned char *t, size_t nt) {
    TermPattern *tp = term_pattern_get(z, n, 0);
    if (!tp) return 0;
    return pcre2_match(tp->code, (PCRE2_SPTR)t, nt, 0, 0, tp->md, t_pTermCache->mctx) >= 0;
}

int regexp_search_match(const char *z, size_t n, const char *s, size_t ns) {
    TermPattern *tp = term_pattern_get(z, n, 1);
    if (!tp) return 0;
    return pcre2_match(tp->code, (PCRE2_SPTR)s, ns, 0, 0, tp->md, t_pTermCache->mctx) >= 0;
}
