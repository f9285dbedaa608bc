/*
** wordforms.c — see wordforms.h.
**
** The map is two hash maps (util/hashmap.h), one for the rules matched
** before morphology and one for those matched after, keyed by the source
** words joined by spaces; keys and entries live in one arena. A source of
** several words also enters each of its shorter starts, as a prefix entry
** (zDst NULL unless a rule of its own has that source too).
*/
#include "text/wordforms.h"

#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

typedef struct WfNode {
    WfEntry e;
    char *zKey;
} WfNode;

struct Wordforms {
    Arena a;
    HashMap aMap[2]; /* [0]: before morphology, [1]: after ('~') */
    size_t nRule;
};

Wordforms *wordforms_new(void) {
    Wordforms *w = calloc(1, sizeof(*w));
    if (w) arena_init(&w->a, 0);
    return w;
}

void wordforms_free(Wordforms *w) {
    if (!w) return;
    hmap_free(&w->aMap[0]);
    hmap_free(&w->aMap[1]);
    arena_free(&w->a);
    free(w);
}

/* The node of key in map m, made (as a prefix only) when absent. */
static WfNode *node_get(Wordforms *w, HashMap *m, const char *zKey, size_t nKey) {
    WfNode *p = hmap_get(m, zKey, nKey);
    if (p) return p;
    p = arena_zalloc(&w->a, sizeof(*p));
    if (!p || !(p->zKey = arena_strndup(&w->a, zKey, nKey))) return NULL;
    if (hmap_put(m, p->zKey, nKey, p, NULL) != LP_OK) return NULL;
    return p;
}

int wordforms_add(Wordforms *w, int bPost, const char *zKey, size_t nKey, int nWords, const char *zDst,
                  size_t nDst, int nDstWords) {
    HashMap *m = &w->aMap[bPost != 0];
    /* Every shorter start of a source of several words is a prefix. */
    size_t iEnd = 0;
    for (int k = 1; k < nWords; k++) {
        while (iEnd < nKey && zKey[iEnd] != ' ') iEnd++;
        WfNode *p = node_get(w, m, zKey, iEnd);
        if (!p) return LP_NOMEM;
        p->e.bPrefix = 1;
        iEnd++;
    }
    WfNode *p = node_get(w, m, zKey, nKey);
    if (!p) return LP_NOMEM;
    char *z = arena_strndup(&w->a, zDst, nDst);
    if (!z) return LP_NOMEM;
    if (!p->e.zDst) w->nRule++;
    p->e.zDst = z;
    p->e.nDst = (int)nDst;
    p->e.nDstWords = nDstWords;
    return LP_OK;
}

const WfEntry *wordforms_find(const Wordforms *w, int bPost, const char *zKey, size_t nKey) {
    const WfNode *p = hmap_get(&w->aMap[bPost != 0], zKey, nKey);
    return p ? &p->e : NULL;
}

int wordforms_has_post(const Wordforms *w) {
    return hmap_count(&w->aMap[1]) > 0;
}

size_t wordforms_count(const Wordforms *w) {
    return w->nRule;
}

/* ------------------------------------------------------------ splitting */

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

/* Does the side sb hold anything but blanks? */
static int side_blank(const StrBuf *sb) {
    for (size_t i = 0; i < sb->n; i++) {
        if (!is_blank(sb->z[i])) return 0;
    }
    return 1;
}

int wordforms_split(const char *z, size_t n, unsigned flags, WfRuleFn xRule, void *ctx, LpError *err) {
    StrBuf side[2] = {{0}, {0}};
    int rc = LP_OK, iRule = 0, iLine = 1;
    size_t i = 0;
    while (i <= n && rc == LP_OK) {
        /* One rule: [iRule's start, the next unescaped ';' or line break). */
        size_t iStart = i;
        if (iStart > 0 && z[iStart - 1] == '\n') iLine++;
        int iSide = 0, bPost = 0, bAny = 0, bComment = 0;
        strbuf_reset(&side[0]);
        strbuf_reset(&side[1]);
        for (; i < n && z[i] != '\n' && z[i] != ';'; i++) {
            char c = z[i];
            if (bComment) {
                if (c == '\\' && i + 1 < n && z[i + 1] != '\n') i++;
                continue;
            }
            if (c == '\\' && i + 1 < n && z[i + 1] != '\n') {
                strbuf_appendc(&side[iSide], z[++i]);
                bAny = 1;
            } else if (c == '#' && (flags & WF_SPLIT_COMMENTS)) {
                bComment = 1;
            } else if (c == '~' && !bAny && iSide == 0 && (flags & WF_SPLIT_TILDE)) {
                bPost = 1;
                bAny = 1;
            } else if (c == '>' || (c == '=' && i + 1 < n && z[i + 1] == '>')) {
                if (iSide == 1) {
                    rc = lp_err_setpos(err, LP_BADINPUT, (int64_t)iStart,
                                       "wordforms rule %d (line %d, byte %zu): more than one '>' (write '\\>' "
                                       "for the character itself)", iRule + 1, iLine, iStart);
                    break;
                }
                i += c == '=';
                iSide = 1;
                bAny = 1;
            } else {
                strbuf_appendc(&side[iSide], c);
                if (!is_blank(c)) bAny = 1;
            }
        }
        if (rc != LP_OK) break;
        if (side[0].oom || side[1].oom) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory reading wordforms");
            break;
        }
        if (bAny || !side_blank(&side[0])) {
            iRule++;
            if (iSide == 0) {
                rc = lp_err_setpos(err, LP_BADINPUT, (int64_t)iStart,
                                   "wordforms rule %d (line %d, byte %zu) '%.*s': expected 'source > "
                                   "destination'", iRule, iLine, iStart, (int)(i - iStart > 60 ? 60 : i - iStart),
                                   z + iStart);
                break;
            }
            rc = xRule(ctx, iRule, iLine, iStart, bPost, side[0].z ? side[0].z : "", side[0].n,
                       side[1].z ? side[1].z : "", side[1].n);
        }
        i++; /* past the ';' or the line break (or the end) */
    }
    strbuf_free(&side[0]);
    strbuf_free(&side[1]);
    return rc;
}
