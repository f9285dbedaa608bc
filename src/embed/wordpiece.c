/*
** wordpiece.c — the BERT WordPiece tokenizer; see wordpiece.h.
**
** Reference. The Hugging Face `tokenizers` library (Rust), which is what
** `AutoTokenizer` and sentence-transformers run for these models:
**
**   added tokens   the special tokens ([CLS], [SEP], [UNK], [PAD], [MASK],
**                  "normalized": false) are cut out of the RAW text first,
**                  leftmost-longest; each becomes its id, and the pieces of
**                  text between them are tokenized separately. So a literal
**                  "[SEP]" in a document is id 102, as in Python.
**   BertNormalizer, in this order:
**     clean_text     drop U+0000, U+FFFD and "control" characters, which
**                    HF defines as the Unicode categories Cc, Cf and Co
**                    except \t \n \r; then map every whitespace character
**                    (\t \n \r and Rust's char::is_whitespace, the Unicode
**                    White_Space property) to ' '. The drop comes first, so
**                    \v, \f and U+0085 (Cc and White_Space) disappear
**                    without splitting the word they sit in.
**     handle_chinese ' ' before and after every code point of the CJK
**                    ideograph blocks is_chinese_char lists (below);
**     strip_accents  NFD, then drop the non-spacing marks (Mn). When the
**                    setting is null it takes the value of lowercase;
**     lowercase      Rust's char::to_lowercase per character: the simple
**                    Unicode mapping, except U+0130 'İ' -> "i̇" (i, U+0307).
**                    It runs AFTER stripping, so with both on 'İ' -> 'i'.
**   BertPreTokenizer split on Rust whitespace (dropped), then every
**                  punctuation character (ASCII punctuation, which includes
**                  $ + < = > ^ ` | ~, or Unicode P*) is a word of its own.
**   WordPiece      a word longer than max_input_chars_per_word characters
**                  (code points, after normalising) is [UNK]; otherwise
**                  greedy longest-match-first, "##" before every piece but
**                  the first, and the whole word is [UNK] when some
**                  position matches no piece.
**
** Streaming. wp_encode never builds the normalised text. It decodes one
** code point at a time, normalises it into zero or more code points and
** feeds those to the current word, which is buffered (as code points, at
** most max_input_chars_per_word of them) in a stack struct. A whitespace or
** punctuation character ends the word and runs WordPiece over it. A word
** that grows past the limit is emitted as [UNK] at once and the rest of it
** is only skipped, not stored. Encoding stops as soon as nMax-2 pieces are
** out. ASCII takes a table lookup per byte (tables built at open from the
** configuration); everything else goes through utf8proc's properties.
**
** NFD details. utf8proc decomposes one character at a time; NFD also puts
** each run of combining marks (canonical class != 0) into class order. The
** marks that strip_accents drops (Mn) need no ordering, but the kept ones
** (Mc with a class, e.g. U+1D165) are inserted into the word at their
** ordered place, so the result equals NFD-then-filter of the whole text.
**
** Vocabulary. One string pool plus an open-addressing hash table (linear
** probing, power-of-two size, load <= 1/2) of {FNV-1a hash, id, offset,
** length}. A continuation piece is looked up as prefix + bytes without
** copying: the hash of the prefix is precomputed and continued over the
** piece, and the comparison checks the prefix part, then the piece. The
** greedy search first hashes every prefix of the remaining word in one pass
** (up to the longest vocabulary entry), then probes longest to shortest.
**
** Known deviation, by design of the libraries. HF takes its categories
** (Cc/Cf/Co, P*, Mn) from the `unicode_categories` crate, whose tables are
** from Unicode 8.0, and its lowercase mapping from the Rust compiler's
** Unicode version; we use utf8proc's (Unicode 13 for utf8proc 2.6). Only
** characters assigned or re-categorised after Unicode 8 can come out
** differently (new scripts' marks and punctuation, a few new case pairs).
*/
#include "embed/wordpiece.h"
#include "embed/wordpiece_int.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "text/utf8.h"
#include "util/strbuf.h"

#define WP_PREFIX_MAX 16         /* longest continuing_subword_prefix accepted */
#define WP_DECOMP_MAX 8          /* canonical decompositions are at most 4 long */
#define WP_VOCAB_MAX (1 << 24)   /* entries; BERT has 30522, multilingual 120k */
#define WP_FILE_MAX (256u << 20) /* bytes of vocab.txt read */
#define FNV_BASIS 2166136261u
#define FNV_PRIME 16777619u

/* Classes of an ASCII byte after normalisation (aAsciiCls). */
enum { WP_C_WORD = 0, WP_C_DROP, WP_C_SPACE, WP_C_PUNCT };

typedef struct WpSlot {
    uint32_t h;   /* FNV-1a of the entry's bytes */
    int32_t id;   /* token id, or -1 for an empty slot */
    uint32_t off; /* bytes at zPool + off */
    uint32_t len; /* their length */
} WpSlot;

typedef struct WpAdded {
    uint32_t off; /* content at zPool + off */
    uint32_t len; /* its length (> 0) */
    int32_t id;   /* the id it is replaced by */
} WpAdded;

struct Wordpiece {
    char *zPool;                        /* bytes of every vocabulary entry and added token */
    WpSlot *aSlot;                      /* hash table, mask + 1 slots */
    uint32_t mask;                      /* slot count - 1 (a power of two - 1) */
    int nVocab;                         /* largest id + 1 */
    int64_t idCls, idSep, idUnk, idPad; /* the special ids */
    int bClean;                         /* BertNormalizer.clean_text */
    int bChinese;                       /* BertNormalizer.handle_chinese_chars */
    int bStrip;                         /* strip_accents (null already resolved) */
    int bLower;                         /* BertNormalizer.lowercase */
    int nMaxChars;                      /* max_input_chars_per_word, 1..WP_WORD_MAX */
    int nMaxInit;                       /* longest entry, bytes */
    int nMaxCont;                       /* longest continuation entry, bytes after the prefix */
    char zPrefix[WP_PREFIX_MAX];        /* continuing_subword_prefix ("##") */
    int nPrefix;                        /* its length */
    uint32_t hPrefix;                   /* FNV-1a state after the prefix */
    WpAdded *aAdded;                    /* added tokens, by first byte then longest first */
    int nAdded;                         /* their number */
    int aAddedFirst[257];   /* aAdded[aAddedFirst[b]..aAddedFirst[b+1]) start with byte b */
    uint8_t aAsciiCls[128]; /* WP_C_* of each ASCII byte */
    uint8_t aAsciiMap[128]; /* the byte it normalises to (lower-cased) */
};

/* ------------------------------------------------------------ Unicode */

static inline uint32_t fnv(uint32_t h, const unsigned char *z, size_t n) {
    for (size_t i = 0; i < n; i++)
        h = (h ^ z[i]) * FNV_PRIME;
    return h;
}

/* Rust's char::is_whitespace: the White_Space property (stable since
** Unicode 6.3). */
static int is_ws(uint32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* The blocks of tokenizers' is_chinese_char (normalizers/bert.rs). Note the
** gap 0x2B820..0x2B91F that the Rust code has and Google's BERT has not. */
static int is_cjk(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static int is_ascii_punct(uint32_t c) {
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
}

static int cat_is_punct(int cat) {
    return cat == UTF8PROC_CATEGORY_PC || cat == UTF8PROC_CATEGORY_PD ||
           cat == UTF8PROC_CATEGORY_PS || cat == UTF8PROC_CATEGORY_PE ||
           cat == UTF8PROC_CATEGORY_PI || cat == UTF8PROC_CATEGORY_PF ||
           cat == UTF8PROC_CATEGORY_PO;
}

/* HF's is_control: unicode_categories' is_other(), i.e. Cc, Cf, Co
** (surrogates cannot occur in a decoded character). */
static int cat_is_control(int cat) {
    return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
           cat == UTF8PROC_CATEGORY_CO;
}

/* ---------------------------------------------------------- vocabulary */

static inline uint32_t slot_home(uint32_t h) {
    return (h ^ (h >> 15)) * 0x2C1B3C6Du;
}

/* The id of the entry equal to [prefix] + z[0..n) with hash h, or -1. */
static int64_t slot_find(const Wordpiece *wp, uint32_t h, int bCont, const unsigned char *z,
                         size_t n) {
    size_t nNeed = n + (bCont ? (size_t)wp->nPrefix : 0);
    for (uint32_t i = slot_home(h) & wp->mask;; i = (i + 1) & wp->mask) {
        const WpSlot *s = &wp->aSlot[i];
        if (s->id < 0) return -1;
        if (s->h != h || s->len != nNeed) continue;
        const char *p = wp->zPool + s->off;
        if (bCont) {
            if (memcmp(p, wp->zPrefix, (size_t)wp->nPrefix) != 0) continue;
            p += wp->nPrefix;
        }
        if (memcmp(p, z, n) == 0) return s->id;
    }
}

int64_t wp_lookup(const Wordpiece *wp, int bCont, const char *z, size_t n) {
    if (!wp || (!z && n)) return -1;
    uint32_t h = fnv(bCont ? wp->hPrefix : FNV_BASIS, (const unsigned char *)z, n);
    return slot_find(wp, h, bCont, (const unsigned char *)z, n);
}

/* ------------------------------------------------------------- encoding */

/* One wp_encode call: the output and the word being collected. */
typedef struct WpRun {
    const Wordpiece *wp;       /* the tokenizer (not owned) */
    int64_t *aOut;             /* pieces go here (just after [CLS]) */
    int nOut;                  /* pieces written */
    int nRoom;                 /* room for pieces: nMax - 2 */
    int nChar;                 /* characters of the current word so far */
    int bSkip;                 /* the current word was too long: [UNK] is out */
    int iRun;                  /* aCp index where the current run of combining
                               ** marks starts, or -1 outside a run */
    uint32_t aCp[WP_WORD_MAX]; /* the word: aCp[0..min(nChar, nMaxChars)) */
    uint8_t aCcc[WP_WORD_MAX]; /* canonical combining class of each (strip mode) */
} WpRun;

static inline void emit(WpRun *r, int64_t id) {
    if (r->nOut < r->nRoom) r->aOut[r->nOut++] = id;
}

/* WordPiece over the buffered word r->aCp[0..r->nChar). */
static void wordpiece(WpRun *r) {
    const Wordpiece *wp = r->wp;
    const int n = r->nChar;
    unsigned char zW[4 * WP_WORD_MAX];
    uint16_t aOff[WP_WORD_MAX + 1]; /* byte offset of each character */
    uint32_t aH[WP_WORD_MAX + 1];   /* aH[k]: hash of zW[aOff[start]..aOff[k]) */
    int nb = 0;
    for (int k = 0; k < n; k++) {
        aOff[k] = (uint16_t)nb;
        nb += (int)utf8_encode(r->aCp[k], (char *)zW + nb);
    }
    aOff[n] = (uint16_t)nb;

    const int iFirst = r->nOut;
    int start = 0;
    while (start < n) {
        const int bCont = start > 0;
        const int nMaxB = bCont ? wp->nMaxCont : wp->nMaxInit;
        int end = n;
        while (end > start && aOff[end] - aOff[start] > nMaxB)
            end--;
        uint32_t h = bCont ? wp->hPrefix : FNV_BASIS;
        for (int k = start; k < end; k++) {
            h = fnv(h, zW + aOff[k], (size_t)(aOff[k + 1] - aOff[k]));
            aH[k + 1] = h;
        }
        int64_t id = -1;
        for (; end > start; end--) {
            id = slot_find(wp, aH[end], bCont, zW + aOff[start], (size_t)(aOff[end] - aOff[start]));
            if (id >= 0) break;
        }
        if (id < 0) {
            /* No piece starts here: the whole word is [UNK]. */
            r->nOut = iFirst;
            emit(r, wp->idUnk);
            return;
        }
        emit(r, id);
        start = end;
    }
}

static void word_end(WpRun *r) {
    if (r->nChar > 0 && !r->bSkip) wordpiece(r);
    r->nChar = 0;
    r->bSkip = 0;
    r->iRun = -1;
}

/* Appends the normalised character cp (combining class ccc, 0 outside
** strip mode) to the current word. */
static void word_push(WpRun *r, uint32_t cp, int ccc) {
    if (ccc == 0) r->iRun = -1;
    int k = r->nChar++;
    if (r->bSkip) return;
    if (r->nChar > r->wp->nMaxChars) {
        /* Too long whatever follows: [UNK] now, skip the rest of the word. */
        emit(r, r->wp->idUnk);
        r->bSkip = 1;
        return;
    }
    if (ccc != 0 && r->iRun >= 0) {
        /* Canonical ordering: a kept mark moves before the marks of its run
        ** with a higher class (stable, as NFD's reordering). */
        while (k > r->iRun && r->aCcc[k - 1] > ccc) {
            r->aCp[k] = r->aCp[k - 1];
            r->aCcc[k] = r->aCcc[k - 1];
            k--;
        }
    }
    r->aCp[k] = cp;
    r->aCcc[k] = (uint8_t)ccc;
}

/* The pre-tokenizer: cp is a normalised character of category cat. */
static void pretok(WpRun *r, uint32_t cp, int cat, int ccc) {
    if (is_ws(cp)) {
        word_end(r);
    } else if (cat_is_punct(cat) || (cp < 0x80 && is_ascii_punct(cp))) {
        word_end(r);
        word_push(r, cp, 0);
        word_end(r);
    } else {
        word_push(r, cp, ccc);
    }
}

/* strip_accents and lowercase of one (cleaned) character. */
static void strip_lower(WpRun *r, uint32_t cp, const utf8proc_property_t *p) {
    const Wordpiece *wp = r->wp;
    if (!wp->bStrip) {
        if (wp->bLower && cp == 0x130) {
            /* The one unconditional multi-character lowercase mapping. */
            pretok(r, 'i', UTF8PROC_CATEGORY_LL, 0);
            pretok(r, 0x307, UTF8PROC_CATEGORY_MN, 0);
            return;
        }
        uint32_t l = wp->bLower ? (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp) : cp;
        pretok(r, l, p->category, 0);
        return;
    }
    utf8proc_int32_t aD[WP_DECOMP_MAX];
    int bound = 0;
    utf8proc_ssize_t nD = utf8proc_decompose_char((utf8proc_int32_t)cp, aD, WP_DECOMP_MAX,
                                                  UTF8PROC_DECOMPOSE, &bound);
    if (nD < 1 || nD > WP_DECOMP_MAX) {
        aD[0] = (utf8proc_int32_t)cp;
        nD = 1;
    }
    for (utf8proc_ssize_t j = 0; j < nD; j++) {
        uint32_t d = (uint32_t)aD[j];
        const utf8proc_property_t *pd = d == cp ? p : utf8proc_get_property(aD[j]);
        int ccc = pd->combining_class;
        if (ccc == 0) {
            r->iRun = -1;
        } else if (r->iRun < 0) {
            r->iRun = r->nChar;
        }
        if (pd->category == UTF8PROC_CATEGORY_MN) continue;
        uint32_t l = wp->bLower ? (uint32_t)utf8proc_tolower(aD[j]) : d;
        pretok(r, l, pd->category, ccc);
    }
}

/* The whole normaliser for one non-ASCII character. */
static void norm_char(WpRun *r, uint32_t cp) {
    const Wordpiece *wp = r->wp;
    const utf8proc_property_t *p = utf8proc_get_property((utf8proc_int32_t)cp);
    if (wp->bClean) {
        if (cp == 0xFFFD || cat_is_control(p->category)) return;
        if (is_ws(cp)) {
            word_end(r); /* becomes ' ', which splits */
            return;
        }
    }
    if (wp->bChinese && is_cjk(cp)) {
        word_end(r);
        strip_lower(r, cp, p);
        word_end(r);
        return;
    }
    strip_lower(r, cp, p);
}

/* Length of the added token at z[0..n), its id in *pId; 0 if none. */
static size_t match_added(const Wordpiece *wp, const unsigned char *z, size_t n, int64_t *pId) {
    for (int k = wp->aAddedFirst[z[0]]; k < wp->aAddedFirst[z[0] + 1]; k++) {
        const WpAdded *a = &wp->aAdded[k];
        if (a->len <= n && memcmp(wp->zPool + a->off, z, a->len) == 0) {
            *pId = a->id;
            return a->len;
        }
    }
    return 0;
}

int wp_encode_nolimit(const Wordpiece *wp, const char *z, size_t n, int nMax, int64_t *aId) {
    if (!wp || !aId) return 0;
    if (nMax < 2) nMax = 2;
    if (!z) n = 0;
    WpRun r;
    r.wp = wp;
    r.aOut = aId + 1;
    r.nOut = 0;
    r.nRoom = nMax - 2;
    r.nChar = 0;
    r.bSkip = 0;
    r.iRun = -1;
    const unsigned char *p = (const unsigned char *)z;
    size_t i = 0;
    while (i < n && r.nOut < r.nRoom) {
        unsigned c = p[i];
        if (wp->aAddedFirst[c] < wp->aAddedFirst[c + 1]) {
            int64_t id;
            size_t k = match_added(wp, p + i, n - i, &id);
            if (k > 0) {
                word_end(&r);
                emit(&r, id);
                i += k;
                continue;
            }
        }
        if (c < 0x80) {
            switch (wp->aAsciiCls[c]) {
            case WP_C_WORD:
                word_push(&r, wp->aAsciiMap[c], 0);
                break;
            case WP_C_SPACE:
                word_end(&r);
                break;
            case WP_C_PUNCT:
                word_end(&r);
                word_push(&r, wp->aAsciiMap[c], 0);
                word_end(&r);
                break;
            default: /* WP_C_DROP */
                break;
            }
            i++;
            continue;
        }
        uint32_t cp;
        int len = utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            cp = 0xFFFD; /* one invalid byte */
            len = 1;
        }
        i += (size_t)len;
        norm_char(&r, cp);
    }
    if (r.nOut < r.nRoom) word_end(&r);
    aId[0] = wp->idCls;
    aId[1 + r.nOut] = wp->idSep;
    return r.nOut + 2;
}

int wp_encode(const Wordpiece *wp, const char *z, size_t n, int nMax, int64_t *aId) {
    if (nMax > WP_MAX_LEN) nMax = WP_MAX_LEN;
    return wp_encode_nolimit(wp, z, n, nMax, aId);
}

int wp_vocab_size(const Wordpiece *wp) {
    return wp ? wp->nVocab : 0;
}
int64_t wp_cls_id(const Wordpiece *wp) {
    return wp ? wp->idCls : -1;
}
int64_t wp_sep_id(const Wordpiece *wp) {
    return wp ? wp->idSep : -1;
}
int64_t wp_unk_id(const Wordpiece *wp) {
    return wp ? wp->idUnk : -1;
}
int64_t wp_pad_id(const Wordpiece *wp) {
    return wp ? wp->idPad : -1;
}

void wp_config(const Wordpiece *wp, WpConfig *pCfg) {
    memset(pCfg, 0, sizeof(*pCfg));
    if (!wp) return;
    pCfg->bCleanText = wp->bClean;
    pCfg->bChinese = wp->bChinese;
    pCfg->bStripAccents = wp->bStrip;
    pCfg->bLowercase = wp->bLower;
    pCfg->nMaxWordChars = wp->nMaxChars;
    pCfg->nAdded = wp->nAdded;
}

/* -------------------------------------------------------------- loading */

typedef struct WpEnt {
    uint32_t off, len; /* bytes in the pool */
    int32_t id;        /* token id */
} WpEnt;

/* What the loaders collect before wp_build turns it into a Wordpiece. */
typedef struct WpSpec {
    const char *zFile; /* file named in messages */
    StrBuf pool;       /* bytes of entries and added tokens */
    WpEnt *aEnt;       /* vocabulary entries, file order */
    size_t nEnt, nEntAlloc;
    WpEnt *aAdd; /* added tokens, file order */
    size_t nAdd, nAddAlloc;
    int bClean, bChinese, bLower;
    int bStrip; /* -1: null, i.e. follow bLower */
    int nMaxChars;
    char zPrefix[WP_PREFIX_MAX];
    int nPrefix;
    char *zUnk, *zCls, *zSep, *zPad, *zMask; /* token names (malloc'd), or NULL */
    int64_t idCls, idSep, idPad;             /* from the post-processor / padding, or -1 */
} WpSpec;

static void spec_init(WpSpec *s, const char *zFile) {
    memset(s, 0, sizeof(*s));
    s->zFile = zFile;
    s->bClean = 1;
    s->bChinese = 1;
    s->bLower = 1;
    s->bStrip = -1;
    s->nMaxChars = 100;
    memcpy(s->zPrefix, "##", 2);
    s->nPrefix = 2;
    s->idCls = s->idSep = s->idPad = -1;
}

static void spec_free(WpSpec *s) {
    strbuf_free(&s->pool);
    free(s->aEnt);
    free(s->aAdd);
    free(s->zUnk);
    free(s->zCls);
    free(s->zSep);
    free(s->zPad);
    free(s->zMask);
}

static int spec_setname(char **pz, const char *z, LpError *err) {
    char *zNew = strdup(z);
    if (!zNew) return lp_err_set(err, LP_NOMEM, "wordpiece: out of memory");
    free(*pz);
    *pz = zNew;
    return LP_OK;
}

/* Appends an entry (vocabulary when bAdded is 0) with bytes z[0..n). */
static int spec_add(WpSpec *s, int bAdded, const char *z, size_t n, int64_t id, LpError *err) {
    if (id < 0 || id >= INT32_MAX) {
        return lp_err_set(err, LP_CORRUPT, "%s: token id %lld of \"%.*s\" is out of range",
                          s->zFile, (long long)id, (int)(n < 40 ? n : 40), z);
    }
    if (s->pool.n + n >= UINT32_MAX)
        return lp_err_set(err, LP_CORRUPT, "%s: vocabulary too large", s->zFile);
    WpEnt **pa = bAdded ? &s->aAdd : &s->aEnt;
    size_t *pn = bAdded ? &s->nAdd : &s->nEnt, *pnAlloc = bAdded ? &s->nAddAlloc : &s->nEntAlloc;
    if (*pn >= WP_VOCAB_MAX) {
        return lp_err_set(err, LP_CORRUPT, "%s: more than %d vocabulary entries", s->zFile,
                          WP_VOCAB_MAX);
    }
    if (*pn == *pnAlloc) {
        size_t nNew = *pnAlloc ? 2 * *pnAlloc : 1024;
        WpEnt *aNew = realloc(*pa, nNew * sizeof(WpEnt));
        if (!aNew) return lp_err_set(err, LP_NOMEM, "wordpiece: out of memory");
        *pa = aNew;
        *pnAlloc = nNew;
    }
    WpEnt *e = &(*pa)[(*pn)++];
    e->off = (uint32_t)s->pool.n;
    e->len = (uint32_t)n;
    e->id = (int32_t)id;
    strbuf_append(&s->pool, z, n);
    if (s->pool.oom) return lp_err_set(err, LP_NOMEM, "wordpiece: out of memory");
    return LP_OK;
}

static int cmp_added(const void *a, const void *b, void *pool) {
    const WpEnt *x = a, *y = b;
    const unsigned char *z = pool;
    if (z[x->off] != z[y->off]) return z[x->off] < z[y->off] ? -1 : 1;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return 0;
}

/* The id of the vocabulary entry zName, or -1 (wp's table must be built). */
static int64_t find_name(const Wordpiece *wp, const char *zName) {
    return zName ? wp_lookup(wp, 0, zName, strlen(zName)) : -1;
}

/* Turns a complete spec into the tokenizer. */
static Wordpiece *wp_build(WpSpec *s, LpError *err) {
    if (s->nEnt == 0) {
        lp_err_set(err, LP_CORRUPT, "%s: the vocabulary is empty", s->zFile);
        return NULL;
    }
    Wordpiece *wp = calloc(1, sizeof(*wp));
    if (!wp) goto oom;
    size_t nSlot = 16;
    while (nSlot < 2 * s->nEnt)
        nSlot *= 2;
    wp->aSlot = malloc(nSlot * sizeof(WpSlot));
    wp->aAdded = malloc((s->nAdd ? s->nAdd : 1) * sizeof(WpAdded));
    if (!wp->aSlot || !wp->aAdded) goto oom;
    wp->mask = (uint32_t)(nSlot - 1);
    for (size_t i = 0; i < nSlot; i++)
        wp->aSlot[i].id = -1;
    /* The pool moves to wp: entries keep their offsets. */
    wp->zPool = strbuf_detach(&s->pool, NULL);
    if (!wp->zPool) goto oom;
    memcpy(wp->zPrefix, s->zPrefix, (size_t)s->nPrefix);
    wp->nPrefix = s->nPrefix;
    wp->hPrefix = fnv(FNV_BASIS, (const unsigned char *)s->zPrefix, (size_t)s->nPrefix);

    int64_t idMax = -1;
    for (size_t e = 0; e < s->nEnt; e++) {
        const WpEnt *x = &s->aEnt[e];
        const unsigned char *z = (const unsigned char *)wp->zPool + x->off;
        uint32_t h = fnv(FNV_BASIS, z, x->len);
        uint32_t i = slot_home(h) & wp->mask;
        for (;; i = (i + 1) & wp->mask) {
            WpSlot *sl = &wp->aSlot[i];
            if (sl->id < 0) {
                *sl = (WpSlot){h, x->id, x->off, x->len};
                break;
            }
            if (sl->h == h && sl->len == x->len && memcmp(wp->zPool + sl->off, z, x->len) == 0) {
                sl->id = x->id; /* a repeated token: the later id wins, as in Python */
                break;
            }
        }
        if (x->id > idMax) idMax = x->id;
        int bCont = (int)x->len >= wp->nPrefix && memcmp(z, wp->zPrefix, (size_t)wp->nPrefix) == 0;
        /* Longest entries, capped at the longest word wp_encode buffers. */
        int nLen = x->len > 4 * WP_WORD_MAX ? 4 * WP_WORD_MAX : (int)x->len;
        if (nLen > wp->nMaxInit) wp->nMaxInit = nLen;
        if (bCont && nLen - wp->nPrefix > wp->nMaxCont) wp->nMaxCont = nLen - wp->nPrefix;
    }

    /* Added tokens, grouped by first byte, longest first within a group. */
    if (s->nAdd > 1) qsort_r(s->aAdd, s->nAdd, sizeof(WpEnt), cmp_added, wp->zPool);
    for (size_t a = 0; a < s->nAdd; a++) {
        const WpEnt *x = &s->aAdd[a];
        wp->aAdded[a] = (WpAdded){x->off, x->len, x->id};
        if (x->id > idMax) idMax = x->id;
    }
    wp->nAdded = (int)s->nAdd;
    for (int b = 0, a = 0; b <= 256; b++) {
        while (a < wp->nAdded && (unsigned char)wp->zPool[wp->aAdded[a].off] < b)
            a++;
        wp->aAddedFirst[b] = a;
    }

    wp->bClean = s->bClean;
    wp->bChinese = s->bChinese;
    wp->bLower = s->bLower;
    wp->bStrip = s->bStrip < 0 ? s->bLower : s->bStrip;
    wp->nMaxChars = s->nMaxChars;

    /* Special ids: the post-processor's, else the vocabulary's. */
    const char *zUnk = s->zUnk ? s->zUnk : "[UNK]";
    wp->idUnk = find_name(wp, zUnk);
    wp->idCls = s->idCls >= 0 ? s->idCls : find_name(wp, s->zCls ? s->zCls : "[CLS]");
    wp->idSep = s->idSep >= 0 ? s->idSep : find_name(wp, s->zSep ? s->zSep : "[SEP]");
    wp->idPad = s->idPad >= 0 ? s->idPad : find_name(wp, s->zPad ? s->zPad : "[PAD]");
    if (wp->idPad < 0) wp->idPad = 0;
    if (wp->idUnk < 0 || wp->idCls < 0 || wp->idSep < 0) {
        lp_err_set(err, LP_CORRUPT, "%s: the vocabulary has no %s token", s->zFile,
                   wp->idUnk < 0   ? zUnk
                   : wp->idCls < 0 ? (s->zCls ? s->zCls : "[CLS]")
                                   : (s->zSep ? s->zSep : "[SEP]"));
        wp_close(wp);
        return NULL;
    }
    if (wp->idCls > idMax) idMax = wp->idCls;
    if (wp->idSep > idMax) idMax = wp->idSep;
    if (wp->idPad > idMax) idMax = wp->idPad;
    wp->nVocab = (int)(idMax + 1);

    /* ASCII: the same rules as norm_char, tabulated. */
    for (uint32_t c = 0; c < 128; c++) {
        uint32_t x = c;
        int cls = WP_C_WORD;
        int bCtrl = c < 0x20 || c == 0x7F; /* Cc */
        if (wp->bClean && (c == 0 || (bCtrl && c != '\t' && c != '\n' && c != '\r'))) {
            cls = WP_C_DROP;
        } else {
            if (wp->bClean && is_ws(x)) x = ' ';
            if (wp->bLower && x >= 'A' && x <= 'Z') x += 'a' - 'A';
            if (is_ws(x)) {
                cls = WP_C_SPACE;
            } else if (is_ascii_punct(x)) {
                cls = WP_C_PUNCT;
            }
        }
        wp->aAsciiCls[c] = (uint8_t)cls;
        wp->aAsciiMap[c] = (uint8_t)x;
    }
    return wp;

oom:
    wp_close(wp);
    lp_err_set(err, LP_NOMEM, "wordpiece: out of memory building the vocabulary of %s", s->zFile);
    return NULL;
}

/* ------------------------------------------------------ tokenizer.json */

/* A boolean field of obj: absent -> dflt, null -> nullVal, else true/false;
** anything else is LP_CORRUPT. */
static int get_bool(const WpSpec *s, json_t *obj, const char *zWhere, const char *zKey, int dflt,
                    int nullVal, int *pOut, LpError *err) {
    json_t *v = json_object_get(obj, zKey);
    if (!v) {
        *pOut = dflt;
    } else if (json_is_null(v)) {
        *pOut = nullVal;
    } else if (json_is_boolean(v)) {
        *pOut = json_is_true(v);
    } else {
        return lp_err_set(err, LP_CORRUPT, "%s: %s.%s must be true, false or null", s->zFile,
                          zWhere, zKey);
    }
    return LP_OK;
}

/* A special-token setting: a string or an AddedToken object {"content"}. */
static const char *token_name(json_t *v) {
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_object(v)) {
        json_t *c = json_object_get(v, "content");
        if (json_is_string(c)) return json_string_value(c);
    }
    return NULL;
}

static const char *type_of(json_t *obj) {
    json_t *t = json_object_get(obj, "type");
    return json_is_string(t) ? json_string_value(t) : NULL;
}

static int load_normalizer(WpSpec *s, json_t *root, LpError *err) {
    json_t *n = json_object_get(root, "normalizer");
    const char *zType = type_of(n);
    if (!json_is_object(n) || !zType || strcmp(zType, "BertNormalizer") != 0) {
        return lp_err_set(err, LP_UNSUPPORTED,
                          "%s: normalizer is %s, only BertNormalizer is supported", s->zFile,
                          zType                   ? zType
                          : json_is_null(n) || !n ? "null"
                                                  : "malformed");
    }
    int rc;
    if ((rc = get_bool(s, n, "normalizer", "clean_text", 1, 1, &s->bClean, err)) != LP_OK)
        return rc;
    if ((rc = get_bool(s, n, "normalizer", "handle_chinese_chars", 1, 1, &s->bChinese, err)) !=
        LP_OK)
        return rc;
    if ((rc = get_bool(s, n, "normalizer", "lowercase", 1, 1, &s->bLower, err)) != LP_OK) return rc;
    return get_bool(s, n, "normalizer", "strip_accents", -1, -1, &s->bStrip, err);
}

static int load_model(WpSpec *s, json_t *root, LpError *err) {
    json_t *m = json_object_get(root, "model");
    if (!json_is_object(m)) return lp_err_set(err, LP_CORRUPT, "%s: no \"model\" object", s->zFile);
    const char *zType = type_of(m);
    if (!zType || strcmp(zType, "WordPiece") != 0) {
        return lp_err_set(err, LP_UNSUPPORTED, "%s: model type is %s, only WordPiece is supported",
                          s->zFile, zType ? zType : "missing");
    }
    json_t *v = json_object_get(m, "unk_token");
    if (v && !json_is_string(v))
        return lp_err_set(err, LP_CORRUPT, "%s: model.unk_token must be a string", s->zFile);
    int rc;
    if (v && (rc = spec_setname(&s->zUnk, json_string_value(v), err)) != LP_OK) return rc;
    v = json_object_get(m, "continuing_subword_prefix");
    if (v && !json_is_null(v)) {
        if (!json_is_string(v) || json_string_length(v) >= WP_PREFIX_MAX) {
            return lp_err_set(
                err, LP_UNSUPPORTED,
                "%s: model.continuing_subword_prefix must be a string of at most %d bytes",
                s->zFile, WP_PREFIX_MAX - 1);
        }
        s->nPrefix = (int)json_string_length(v);
        memcpy(s->zPrefix, json_string_value(v), (size_t)s->nPrefix);
    }
    v = json_object_get(m, "max_input_chars_per_word");
    if (v && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 1) {
            return lp_err_set(err, LP_CORRUPT,
                              "%s: model.max_input_chars_per_word must be a positive integer",
                              s->zFile);
        }
        if (json_integer_value(v) > WP_WORD_MAX) {
            return lp_err_set(err, LP_UNSUPPORTED,
                              "%s: model.max_input_chars_per_word %lld is above the %d supported",
                              s->zFile, (long long)json_integer_value(v), WP_WORD_MAX);
        }
        s->nMaxChars = (int)json_integer_value(v);
    }
    json_t *voc = json_object_get(m, "vocab");
    if (!json_is_object(voc))
        return lp_err_set(err, LP_CORRUPT, "%s: model.vocab is not an object", s->zFile);
    const char *zKey;
    json_t *id;
    json_object_foreach(voc, zKey, id) {
        if (!json_is_integer(id)) {
            return lp_err_set(err, LP_CORRUPT, "%s: model.vocab[\"%.40s\"] is not an integer id",
                              s->zFile, zKey);
        }
        rc = spec_add(s, 0, zKey, strlen(zKey), json_integer_value(id), err);
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

static int load_added(WpSpec *s, json_t *root, LpError *err) {
    json_t *a = json_object_get(root, "added_tokens");
    if (!a || json_is_null(a)) return LP_OK;
    if (!json_is_array(a))
        return lp_err_set(err, LP_CORRUPT, "%s: added_tokens is not an array", s->zFile);
    size_t i;
    json_t *t;
    json_array_foreach(a, i, t) {
        json_t *c = json_object_get(t, "content"), *id = json_object_get(t, "id");
        if (!json_is_string(c) || !json_is_integer(id)) {
            return lp_err_set(err, LP_CORRUPT,
                              "%s: added_tokens[%zu] needs a string content and an integer id",
                              s->zFile, i);
        }
        int bNorm = 0, bSingle = 0, rc;
        if ((rc = get_bool(s, t, "added_tokens[]", "normalized", 1, 1, &bNorm, err)) != LP_OK)
            return rc;
        if ((rc = get_bool(s, t, "added_tokens[]", "single_word", 0, 0, &bSingle, err)) != LP_OK)
            return rc;
        /* lstrip/rstrip only move whitespace into the token's span: the
        ** pre-tokenizer drops that whitespace anyway, so ids do not change. */
        if (bNorm || bSingle) {
            return lp_err_set(err, LP_UNSUPPORTED,
                              "%s: added token \"%.40s\" is %s, which is not supported", s->zFile,
                              json_string_value(c), bNorm ? "normalized" : "single_word");
        }
        if (json_string_length(c) == 0) continue;
        rc = spec_add(s, 1, json_string_value(c), json_string_length(c), json_integer_value(id),
                      err);
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

/* The id of post_processor.special_tokens[zName] (exactly one id). */
static int template_special(const WpSpec *s, json_t *pp, json_t *piece, int64_t *pId,
                            LpError *err) {
    json_t *st = json_object_get(piece, "SpecialToken");
    json_t *name = json_object_get(st, "id");
    json_t *ids = json_object_get(
        json_object_get(json_object_get(pp, "special_tokens"), json_string_value(name)), "ids");
    if (!json_is_string(name) || !json_is_array(ids) || json_array_size(ids) != 1 ||
        !json_is_integer(json_array_get(ids, 0)) ||
        json_integer_value(json_array_get(ids, 0)) < 0 ||
        json_integer_value(json_array_get(ids, 0)) >= INT32_MAX) {
        return lp_err_set(err, LP_UNSUPPORTED,
                          "%s: post_processor.single must be [CLS] $A [SEP] with one id each",
                          s->zFile);
    }
    *pId = json_integer_value(json_array_get(ids, 0));
    return LP_OK;
}

static int load_post(WpSpec *s, json_t *root, LpError *err) {
    json_t *pp = json_object_get(root, "post_processor");
    if (!pp || json_is_null(pp)) return LP_OK; /* [CLS]/[SEP] from the vocabulary */
    const char *zType = type_of(pp);
    if (zType && strcmp(zType, "TemplateProcessing") == 0) {
        json_t *single = json_object_get(pp, "single");
        json_t *seq = json_object_get(json_array_get(single, 1), "Sequence");
        if (!json_is_array(single) || json_array_size(single) != 3 || !json_is_object(seq) ||
            !json_is_string(json_object_get(seq, "id")) ||
            strcmp(json_string_value(json_object_get(seq, "id")), "A")) {
            return lp_err_set(err, LP_UNSUPPORTED,
                              "%s: post_processor.single must be [CLS] $A [SEP]", s->zFile);
        }
        int rc = template_special(s, pp, json_array_get(single, 0), &s->idCls, err);
        if (rc == LP_OK) rc = template_special(s, pp, json_array_get(single, 2), &s->idSep, err);
        return rc;
    }
    if (zType && strcmp(zType, "BertProcessing") == 0) {
        json_t *cls = json_object_get(pp, "cls"), *sep = json_object_get(pp, "sep");
        json_t *idC = json_array_get(cls, 1), *idS = json_array_get(sep, 1);
        if (!json_is_integer(idC) || !json_is_integer(idS) || json_integer_value(idC) < 0 ||
            json_integer_value(idS) < 0 || json_integer_value(idC) >= INT32_MAX ||
            json_integer_value(idS) >= INT32_MAX) {
            return lp_err_set(err, LP_CORRUPT, "%s: post_processor cls/sep must be [token, id]",
                              s->zFile);
        }
        s->idCls = json_integer_value(idC);
        s->idSep = json_integer_value(idS);
        return LP_OK;
    }
    return lp_err_set(err, LP_UNSUPPORTED,
                      "%s: post_processor %s is not supported (TemplateProcessing, BertProcessing)",
                      s->zFile, zType ? zType : "without a type");
}

static int load_tokenizer_json(WpSpec *s, LpError *err) {
    json_error_t jerr;
    json_t *root = json_load_file(s->zFile, 0, &jerr);
    if (!root) {
        if (jerr.line < 0)
            return lp_err_set(err, LP_IOERR, "%s: cannot read: %s", s->zFile, jerr.text);
        return lp_err_set(err, LP_CORRUPT, "%s: line %d, column %d: %s", s->zFile, jerr.line,
                          jerr.column, jerr.text);
    }
    int rc = LP_OK;
    if (!json_is_object(root)) {
        rc = lp_err_set(err, LP_CORRUPT, "%s: not a JSON object", s->zFile);
        goto done;
    }
    json_t *pre = json_object_get(root, "pre_tokenizer");
    const char *zPre = type_of(pre);
    if (!zPre || strcmp(zPre, "BertPreTokenizer") != 0) {
        rc = lp_err_set(err, LP_UNSUPPORTED,
                        "%s: pre_tokenizer is %s, only BertPreTokenizer is supported", s->zFile,
                        zPre ? zPre : "null or malformed");
        goto done;
    }
    if ((rc = load_normalizer(s, root, err)) != LP_OK) goto done;
    if ((rc = load_model(s, root, err)) != LP_OK) goto done;
    if ((rc = load_added(s, root, err)) != LP_OK) goto done;
    if ((rc = load_post(s, root, err)) != LP_OK) goto done;
    json_t *pad = json_object_get(root, "padding");
    json_t *padId = json_object_get(pad, "pad_id");
    if (json_is_integer(padId) && json_integer_value(padId) >= 0 &&
        json_integer_value(padId) < INT32_MAX) {
        s->idPad = json_integer_value(padId);
    }
done:
    json_decref(root);
    return rc;
}

/* ------------------------------------------------- vocab.txt fallback */

/* tokenizer_config.json (optional), as BertTokenizer reads it, and
** special_tokens_map.json (optional) for the token names. */
static int load_config(WpSpec *s, const char *zPath, int bMap, LpError *err) {
    FILE *f = fopen(zPath, "rb");
    if (!f) {
        if (errno == ENOENT) return LP_OK;
        return lp_err_set(err, LP_IOERR, "%s: cannot open: %s", zPath, strerror(errno));
    }
    fclose(f);
    json_error_t jerr;
    json_t *root = json_load_file(zPath, 0, &jerr);
    if (!root) {
        if (jerr.line < 0)
            return lp_err_set(err, LP_IOERR, "%s: cannot read: %s", zPath, jerr.text);
        return lp_err_set(err, LP_CORRUPT, "%s: line %d, column %d: %s", zPath, jerr.line,
                          jerr.column, jerr.text);
    }
    int rc = LP_OK;
    const char *zSave = s->zFile;
    s->zFile = zPath;
    if (!json_is_object(root)) {
        rc = lp_err_set(err, LP_CORRUPT, "%s: not a JSON object", zPath);
        goto done;
    }
    if (!bMap) {
        int bBasic = 1;
        if ((rc = get_bool(s, root, "config", "do_lower_case", 1, 1, &s->bLower, err)) != LP_OK)
            goto done;
        if ((rc = get_bool(s, root, "config", "strip_accents", -1, -1, &s->bStrip, err)) != LP_OK)
            goto done;
        if ((rc = get_bool(s, root, "config", "tokenize_chinese_chars", 1, 1, &s->bChinese, err)) !=
            LP_OK)
            goto done;
        if ((rc = get_bool(s, root, "config", "do_basic_tokenize", 1, 1, &bBasic, err)) != LP_OK)
            goto done;
        if (!bBasic) {
            rc = lp_err_set(err, LP_UNSUPPORTED, "%s: do_basic_tokenize=false is not supported",
                            zPath);
            goto done;
        }
    }
    static const char *const azKey[] = {"unk_token", "cls_token", "sep_token", "pad_token",
                                        "mask_token"};
    char **apz[] = {&s->zUnk, &s->zCls, &s->zSep, &s->zPad, &s->zMask};
    for (int k = 0; k < 5; k++) {
        const char *z = token_name(json_object_get(root, azKey[k]));
        if (z && (rc = spec_setname(apz[k], z, err)) != LP_OK) goto done;
    }
done:
    s->zFile = zSave;
    json_decref(root);
    return rc;
}

static int load_vocab_txt(WpSpec *s, const char *zDir, LpError *err) {
    FILE *f = fopen(s->zFile, "rb");
    if (!f)
        return lp_err_set(err, errno == ENOENT ? LP_NOTFOUND : LP_IOERR, "%s: cannot open: %s",
                          s->zFile, strerror(errno));
    StrBuf sb = {0};
    char aBuf[65536];
    size_t n;
    int rc = LP_OK;
    while ((n = fread(aBuf, 1, sizeof(aBuf), f)) > 0) {
        strbuf_append(&sb, aBuf, n);
        if (sb.n > WP_FILE_MAX) {
            rc = lp_err_set(err, LP_CORRUPT, "%s: larger than %u bytes", s->zFile, WP_FILE_MAX);
            break;
        }
    }
    if (rc == LP_OK && ferror(f)) rc = lp_err_set(err, LP_IOERR, "%s: read error", s->zFile);
    fclose(f);
    if (rc == LP_OK && sb.oom)
        rc = lp_err_set(err, LP_NOMEM, "wordpiece: out of memory reading %s", s->zFile);
    /* Lines as Python's universal newlines split them (\n, \r\n, \r); line
    ** k (from 0) is id k. A final line terminator ends the last token. */
    size_t i = 0, nLine = 0;
    while (rc == LP_OK && i < sb.n) {
        size_t j = i;
        while (j < sb.n && sb.z[j] != '\n' && sb.z[j] != '\r')
            j++;
        if (utf8_check(sb.z + i, j - i) >= 0) {
            rc =
                lp_err_set(err, LP_CORRUPT, "%s: line %zu is not valid UTF-8", s->zFile, nLine + 1);
            break;
        }
        rc = spec_add(s, 0, sb.z + i, j - i, (int64_t)nLine, err);
        nLine++;
        if (j < sb.n && sb.z[j] == '\r' && j + 1 < sb.n && sb.z[j + 1] == '\n') j++;
        i = j + 1;
    }
    strbuf_free(&sb);
    if (rc != LP_OK) return rc;

    char zPath[4096];
    snprintf(zPath, sizeof(zPath), "%s/tokenizer_config.json", zDir);
    if ((rc = load_config(s, zPath, 0, err)) != LP_OK) return rc;
    snprintf(zPath, sizeof(zPath), "%s/special_tokens_map.json", zDir);
    if ((rc = load_config(s, zPath, 1, err)) != LP_OK) return rc;

    /* The fast tokenizer built from these files registers the special
    ** tokens as added tokens (not normalised): they are matched in the raw
    ** text as with tokenizer.json. [MASK] is among them. */
    const char *azName[] = {s->zUnk ? s->zUnk : "[UNK]", s->zCls ? s->zCls : "[CLS]",
                            s->zSep ? s->zSep : "[SEP]", s->zPad ? s->zPad : "[PAD]",
                            s->zMask ? s->zMask : "[MASK]"};
    for (int k = 0; k < 5; k++) {
        /* Looked up in the entries loaded so far (linear, once per name). */
        size_t nName = strlen(azName[k]);
        int64_t id = -1;
        for (size_t e = 0; e < s->nEnt; e++) {
            if (s->aEnt[e].len == nName &&
                memcmp(s->pool.z + s->aEnt[e].off, azName[k], nName) == 0) {
                id = s->aEnt[e].id;
            }
        }
        if (id >= 0 && nName > 0 && (rc = spec_add(s, 1, azName[k], nName, id, err)) != LP_OK)
            return rc;
    }
    return LP_OK;
}

/* ------------------------------------------------------------ open/close */

Wordpiece *wp_open(const char *zDir, LpError *err) {
    if (!zDir || !*zDir) {
        lp_err_set(err, LP_NOTFOUND, "wordpiece: no model folder given");
        return NULL;
    }
    char zPath[4096];
    /* Room for the longest name joined to it, "special_tokens_map.json". */
    if (strlen(zDir) + 32 >= sizeof(zPath)) {
        lp_err_set(err, LP_NOTFOUND, "wordpiece: model folder name too long: %.80s...", zDir);
        return NULL;
    }
    snprintf(zPath, sizeof(zPath), "%s/tokenizer.json", zDir);
    WpSpec s;
    spec_init(&s, zPath);
    int rc;
    FILE *f = fopen(zPath, "rb");
    if (f) {
        fclose(f);
        rc = load_tokenizer_json(&s, err);
    } else if (errno != ENOENT) {
        rc = lp_err_set(err, LP_IOERR, "%s: cannot open: %s", zPath, strerror(errno));
    } else {
        snprintf(zPath, sizeof(zPath), "%s/vocab.txt", zDir);
        rc = load_vocab_txt(&s, zDir, err);
        if (rc == LP_NOTFOUND) {
            lp_err_set(err, LP_NOTFOUND, "%s: no tokenizer.json or vocab.txt in this folder", zDir);
        }
    }
    Wordpiece *wp = NULL;
    if (rc == LP_OK) wp = wp_build(&s, err);
    spec_free(&s);
    return wp;
}

void wp_close(Wordpiece *wp) {
    if (!wp) return;
    free(wp->zPool);
    free(wp->aSlot);
    free(wp->aAdded);
    free(wp);
}
