/*
** analyzer.c — see analyzer.h.
**
** One call of analyzer_run() is:
**
**   1. utf8_check() over the whole input; a bad byte fails the call before
**      any term is emitted.
**   2. A single left-to-right scan that finds words. ASCII bytes are
**      classified by a 256-entry table; anything else is decoded and
**      classified by its Unicode category (char_class()):
**        CC_WORD   letters L* and numbers N*: extend the current word;
**        CC_MARK   combining marks M*: extend a word, separate otherwise;
**        CC_SINGLE a letter of a script written without spaces (Han, kana,
**                  Hangul syllables): a word by itself, together with the
**                  combining marks that follow it (か + U+3099 = が);
**        CC_SEP    everything else (spaces, punctuation including
**                  apostrophes and hyphens, symbols, emoji, controls).
**      With charset_table, scan_map() reads the text instead: every
**      character classified by map_class() (named by the table, taken in
**      by an alias, or a separator), no ASCII fast path.
**      So "don't" is "don" + "t" and "e-mail" is "e" + "mail": simple,
**      predictable, and the same on the query side. Scripts written without
**      spaces that are not CJK (Thai, Lao, Khmer, Myanmar) have no
**      dictionary segmentation: a run of them is one word, cut to
**      ANALYZER_MAX_TERM bytes.
**   3. Per word: normalisation, then the stop-word test, then stemming.
**      A pure-ASCII word is lower-cased into a stack buffer (for ASCII,
**      NFKC + case folding is exactly that). Any other word gets NFKC +
**      full case folding (ß → ss, ς → σ, İ → i̇, ﬁ → fi, ① → 1): through
**      a table for words of ASCII and two-byte letters, as is for a lone
**      CJK letter, else through utf8proc into a fixed stack buffer (see
**      "Fast paths" below); never a malloc per word. NFKC may yield
**      characters that would separate words (½ → 1⁄2); the word stays one
**      term. The normalised form is cut to ANALYZER_MAX_TERM bytes at a
**      character boundary.
**   4. Stop words are compared after normalisation and before stemming;
**      a dropped word still takes its position. Stemming goes through a
**      per-thread memo of recent words (StemMemo).
**
** Stemmers. libstemmer's sb_stemmer keeps its working buffer inside the
** object, so one object cannot serve two threads. Each thread therefore
** owns a StemCache (one stemmer per language, created on first use) found
** through a __thread pointer and freed when the thread ends, or at exit()
** for the thread that calls it (util/threadlocal.h). The Analyzer itself
** holds no stemmer and is immutable.
**
** Long words. Only the first NORM_MAX_IN bytes of a non-ASCII word are
** normalised: the term keeps at most ANALYZER_MAX_TERM bytes, and NFKC
** shrinks text at most 3:1 (Hangul jamo L+V+T → one syllable), so the
** term is the same as if the whole word had been normalised, barring a
** run of hundreds of combining marks. Index and query sides run the same
** code, so they agree in any case.
*/
#include "text/analyzer.h"
#include "text/html.h"

#include <libstemmer.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <strings.h>
#include <utf8proc.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "text/charset.h"
#include "text/exceptions.h"
#include "text/metaphone.h"
#include "text/regexp.h"
#include "text/stemdict.h"
#include "text/stoplists.h"
#include "text/utf8.h"
#include "text/wordforms.h"
#include "util/bytes.h"
#include "util/memtune.h"
#include "util/threadlocal.h"

/* ------------------------------------------------------------ languages */

/* The stemmer a "stem_<code>" morphology selects. Codes are ISO 639-1 as
** Manticore's stem_en / stem_ru; "porter" is Porter's original English
** algorithm (the one SQLite FTS5 and Manticore's stem_en use), "english"
** is Snowball's revision of it. An entry is offered only when the linked
** libstemmer lists its algorithm (stem_lang_available()). */
static const StemDict *dict_en(void); /* the English dictionary (below) */

typedef struct StemLang {
    const char *zCode;      /* after "stem_" */
    const char *zAlgo;      /* libstemmer algorithm name */
} StemLang;

static const StemLang aStemLang[] = {
    {"ar", "arabic"},    {"ca", "catalan"},    {"da", "danish"},     {"de", "german"},
    {"el", "greek"},     {"en", "english"},    {"es", "spanish"},    {"eu", "basque"},
    {"fi", "finnish"},   {"fr", "french"},     {"ga", "irish"},      {"hi", "hindi"},
    {"hu", "hungarian"}, {"hy", "armenian"},   {"id", "indonesian"}, {"it", "italian"},
    {"lt", "lithuanian"}, {"ne", "nepali"},    {"nl", "dutch"},      {"no", "norwegian"},
    {"porter", "porter"}, {"pt", "portuguese"}, {"ro", "romanian"},  {"ru", "russian"},
    {"sr", "serbian"},   {"sv", "swedish"},    {"ta", "tamil"},      {"tr", "turkish"},
    {"yi", "yiddish"},
};
#define N_STEM_LANG ((int)LP_ARRAY_SIZE(aStemLang))

/* Snowball's English stop-word list (snowballstem.org, english/stop.txt),
** sorted. Its contracted forms (i'm, don't, let's...) are left out: the
** word splitter breaks them at the apostrophe, so they can never match.
** "cannot", the one contraction written without an apostrophe, is in. */
static const char *const azStopEn[] = {
    "a",       "about",   "above",      "after",    "again",   "against", "all",     "am",
    "an",      "and",     "any",        "are",      "as",      "at",      "be",      "because",
    "been",    "before",  "being",      "below",    "between", "both",    "but",     "by",
    "cannot",  "could",   "did",        "do",       "does",    "doing",   "down",    "during",
    "each",    "few",     "for",        "from",     "further", "had",     "has",     "have",
    "having",  "he",      "her",        "here",     "hers",    "herself", "him",     "himself",
    "his",     "how",     "i",          "if",       "in",      "into",    "is",      "it",
    "its",     "itself",  "me",         "more",     "most",    "my",      "myself",  "no",
    "nor",     "not",     "of",         "off",      "on",      "once",    "only",    "or",
    "other",   "ought",   "our",        "ours",     "ourselves", "out",   "over",    "own",
    "same",    "she",     "should",     "so",       "some",    "such",    "than",    "that",
    "the",     "their",   "theirs",     "them",     "themselves", "then", "there",   "these",
    "they",    "this",    "those",      "through",  "to",      "too",     "under",   "until",
    "up",      "very",    "was",        "we",       "were",    "what",    "when",    "where",
    "which",   "while",   "who",        "whom",     "why",     "with",    "would",   "you",
    "your",    "yours",   "yourself",   "yourselves",
};

/* A stop-word list per language code; another language is one more row.
** Codes are ISO 639-1, as stem_<code>'s; the lists besides English are
** Snowball's (stoplists.h). */
typedef struct StopList {
    const char *zLang;              /* the code that selects it in zStopwords */
    const char *const *azWord;      /* lower case, as written: normalised with the
                                    ** analyzer's options when its table is built */
    int nWord;                      /* entries in azWord */
} StopList;

#define STOP_LIST(code, a) {code, a, (int)LP_ARRAY_SIZE(a)}
static const StopList aStopList[] = {
    STOP_LIST("en", azStopEn),  STOP_LIST("da", azStop_da), STOP_LIST("de", azStop_de),
    STOP_LIST("es", azStop_es), STOP_LIST("fi", azStop_fi), STOP_LIST("fr", azStop_fr),
    STOP_LIST("hu", azStop_hu), STOP_LIST("it", azStop_it), STOP_LIST("ne", azStop_ne),
    STOP_LIST("nl", azStop_nl), STOP_LIST("no", azStop_no), STOP_LIST("pt", azStop_pt),
    STOP_LIST("ru", azStop_ru), STOP_LIST("sv", azStop_sv), STOP_LIST("tr", azStop_tr),
};

/* ------------------------------------------------------------- analyzer */

#define NORM_MAX_IN 256         /* bytes of a non-ASCII word given to utf8proc */
#define NORM_BUF_CP (6 * NORM_MAX_IN + 1) /* U+FDFA: 3 bytes → 18 code points; +1 for NUL */

/* Stop words are looked up as fixed-size keys: the word's bytes,
** zero-padded to STOP_MAX (a term never contains a NUL, so the padding also
** encodes the length). A lookup is a memcpy, three multiplies and a
** compare of six words, where a byte-wise hash and strcmp cost as much
** as the rest of the analysis of an English word. 48 bytes hold the
** longest word of every list (Nepali's: 33). */
#define STOP_MAX 48

typedef struct StopKey {
    uint64_t aw[STOP_MAX / 8];      /* all zero: an empty slot */
} StopKey;

struct Analyzer {
    int nStem;                  /* stemmers (0: no stemming), in order: a word goes */
    int aStem[ANALYZER_MAX_STEMMERS]; /* through them until one changes it; aStemLang indexes */
    const StemDict *apDict[ANALYZER_MAX_STEMMERS]; /* each's precomputed stems, or NULL */
    int minStemLen;             /* min_stemming_len: shorter words are not stemmed */
    int minPrefixLen;           /* as configured (0..ANALYZER_MAX_TERM) */
    int minInfixLen;            /* as configured (0..ANALYZER_MAX_TERM) */
    int minWordLen;             /* as configured (0..ANALYZER_MAX_TERM); 0, 1: off */
    int bStopNoStep;            /* stopword_step='0': a stop word takes no position */
    int bShortNoStep;           /* overshort_step='0': nor does a word under min_word_len */
    int bStopStemmed;           /* stopwords_unstemmed='0' on a stemmed table with stop
                                ** words: aStop holds their stems, compared with stems */
    StopKey *aStop;             /* open-addressing table of stop words, or NULL */
    uint32_t stopMask;          /* its size (a power of two) minus one */
    int nStopMax;               /* longest stop word in bytes: longer terms skip the lookup */
    int bExactWords;            /* index_exact_words: documents also get exact forms */
    int bIndexSp;               /* index_sp: documents also get their boundaries */
    int bHtmlStrip;             /* html_strip: documents are stripped of markup */
    char **azHtmlRemove;        /* html_remove_elements, lower case, NULL-terminated; or NULL */
    char **azHtmlAttr;          /* html_index_attrs: pairs (element, attribute), lower case,
                                ** NULL-terminated; or NULL */
    char **azZone;              /* index_zones: names or "prefix*", lower case,
                                ** NULL-terminated; or NULL */
    int bStrip;                 /* remove_diacritics: marks of Latin and Greek letters go */
    Wordforms *pWf;             /* word forms, or NULL */
    Charset ignore;             /* ignore_chars: dropped from the text before anything */
    Charset pb;                 /* phrase_boundary: separators that end a phrase */
    int bPb;                    /* ... some are named */
    int pbStep;                 /* phrase_boundary_step */
    Exceptions *pExc;           /* exceptions, or NULL */
    int bMap;                   /* charset_table or blend_chars given: scan_map() reads */
    CharMap map;                /* charset_table; without one, aliases as the default */
    uint8_t aMapCls[128];       /* with bMap: map_class() of ASCII ... */
    uint8_t aMapTo[128];        /* ... and its target (0: map_class_slow() knows) */
    int bNgram;                 /* ngram_len 1 with ngram_chars: they are words of one */
    CharMap ngram;              /* character each (named ones mapped; aliases: CJK) */
    int bBlend;                 /* blend_chars given */
    CharMap blend;              /* blend_chars: word characters and separators at once */
    unsigned blendModes;        /* BLEND_* */
    RegexpFilter *pRegexp;      /* regexp_filter, or NULL */
};

/* blend_mode's options (Manticore's), in the order a query prefers them */
enum {
    BLEND_TRIM_NONE = 1,
    BLEND_TRIM_BOTH = 2,
    BLEND_TRIM_HEAD = 4,
    BLEND_TRIM_TAIL = 8,
    BLEND_TRIM_ALL = 16,
    BLEND_SKIP_PURE = 32
};
static const struct {
    const char *zName;
    unsigned bit;
} aBlendMode[] = {{"trim_none", BLEND_TRIM_NONE}, {"trim_both", BLEND_TRIM_BOTH}, {"trim_head", BLEND_TRIM_HEAD},
                  {"trim_tail", BLEND_TRIM_TAIL}, {"trim_all", BLEND_TRIM_ALL},   {"skip_pure", BLEND_SKIP_PURE}};

/* blend_mode z into a->blendModes: a list of aBlendMode's names; with no
** trim_* among them, trim_none. */
static int blend_mode_parse(Analyzer *a, const char *z, LpError *err) {
    a->blendModes = 0;
    for (const char *p = z ? z : ""; *p;) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        const char *q = p;
        while (*q && *q != ',' && *q != ' ' && *q != '\t') q++;
        if (q == p) break;
        size_t k = 0;
        while (k < LP_ARRAY_SIZE(aBlendMode) &&
               !(strlen(aBlendMode[k].zName) == (size_t)(q - p) && strncasecmp(p, aBlendMode[k].zName, (size_t)(q - p)) == 0)) {
            k++;
        }
        if (k == LP_ARRAY_SIZE(aBlendMode)) {
            return lp_err_set(err, LP_BADINPUT,
                              "blend_mode: '%.*s': expected trim_none, trim_head, trim_tail, trim_both, trim_all or "
                              "skip_pure (a comma-separated list)",
                              (int)(q - p > 40 ? 40 : q - p), p);
        }
        a->blendModes |= aBlendMode[k].bit;
        p = q;
    }
    if (!(a->blendModes & ~(unsigned)BLEND_SKIP_PURE)) a->blendModes |= BLEND_TRIM_NONE;
    return LP_OK;
}

static void stop_key(const char *z, int n, StopKey *k) {
    memset(k, 0, sizeof(*k));
    memcpy(k->aw, z, (size_t)n);
}

static uint32_t stop_hash(const StopKey *k) {
    return (uint32_t)((k->aw[0] * 0x9E3779B97F4A7C15ull ^ k->aw[1] * 0xC2B2AE3D27D4EB4Full ^
                       k->aw[2] * 0x165667B19E3779F9ull) >> 32);
}

/* The slot of key k in a's table: where it is, or the empty slot that ends
** its probe sequence. */
static StopKey *stop_slot(const Analyzer *a, const StopKey *k) {
    uint32_t h = stop_hash(k) & a->stopMask;
    for (;; h = (h + 1) & a->stopMask) {
        StopKey *p = &a->aStop[h];
        if (p->aw[0] == 0 || memcmp(p->aw, k->aw, sizeof(k->aw)) == 0) return p;
    }
}

static int norm_word(const char *z, size_t n, int bStrip, char *zOut);
static int stem_plain(const Analyzer *a, char *z, int *pn, LpError *err);
static int chars_below(const char *z, int n, int nMin);

/* Builds a's stop-word table from the nList lists of apList, each word
** normalised as a's analysis normalises a text's words (so, with
** remove_diacritics, "für" is "fur"), and the nExtra words of the table's
** own list at zExtra (normalised already, each followed by a NUL).
** LP_NOMEM; LP_INTERNAL for a list entry that is empty or longer than
** STOP_MAX once normalised; LP_BADINPUT for such a word of the table's. */
static int stop_build(Analyzer *a, const StopList *const *apList, int nList, const char *zExtra, uint32_t nExtra,
                      LpError *err) {
    uint32_t nWord = nExtra;
    for (int i = 0; i < nList; i++) nWord += (uint32_t)apList[i]->nWord;
    uint32_t nSlot = 16;
    while (nSlot < 4 * nWord) nSlot *= 2; /* load <= 1/4: short probes */
    a->aStop = calloc(nSlot, sizeof(StopKey));
    if (!a->aStop) return lp_err_set(err, LP_NOMEM, "out of memory building the stop-word table");
    a->stopMask = nSlot - 1;
    for (int i = 0; i < nList; i++) {
        const StopList *pList = apList[i];
        for (int j = 0; j < pList->nWord; j++) {
            const char *zWord = pList->azWord[j];
            char zNorm[ANALYZER_MAX_TERM];
            int n = (int)strlen(zWord), bAscii = 1;
            for (int k = 0; k < n; k++) bAscii &= (unsigned char)zWord[k] < 0x80;
            if (!bAscii) {
                n = norm_word(zWord, (size_t)n, a->bStrip, zNorm);
                zWord = zNorm;
            }
            if (a->bStopStemmed) {
                if (zWord != zNorm) memcpy(zNorm, zWord, (size_t)n);
                int rc = stem_plain(a, zNorm, &n, err);
                if (rc != LP_OK) return rc;
                zWord = zNorm;
            }
            if (NEVER(n < 1 || n > STOP_MAX)) {
                return lp_err_set(err, LP_INTERNAL, "stop word '%s' of list '%s' is empty or longer than %d bytes",
                                  pList->azWord[j], pList->zLang, STOP_MAX);
            }
            if (n > a->nStopMax) a->nStopMax = n;
            StopKey k;
            stop_key(zWord, n, &k);
            *stop_slot(a, &k) = k;
        }
    }
    for (uint32_t j = 0; j < nExtra; j++) {
        int n = (int)strlen(zExtra);
        if (n > STOP_MAX) {
            return lp_err_set(err, LP_BADINPUT, "stop word '%s' is longer than %d bytes", zExtra, STOP_MAX);
        }
        const char *zWord = zExtra;
        char zStem[ANALYZER_MAX_TERM];
        if (a->bStopStemmed) {
            memcpy(zStem, zExtra, (size_t)n);
            int rc = stem_plain(a, zStem, &n, err);
            if (rc != LP_OK) return rc;
            zWord = zStem;
        }
        if (n > a->nStopMax) a->nStopMax = n;
        StopKey k;
        stop_key(zWord, n, &k);
        *stop_slot(a, &k) = k;
        zExtra += n + 1;
    }
    return LP_OK;
}

static int stop_contains(const Analyzer *a, const char *z, int n) {
    if (n > a->nStopMax) return 0;
    StopKey k;
    stop_key(z, n, &k);
    return stop_slot(a, &k)->aw[0] != 0;
}

/* Whether the linked libstemmer offers aStemLang[i]. */
static int stem_lang_available(int i) {
    for (const char **pz = sb_stemmer_list(); *pz; pz++) {
        if (strcmp(*pz, aStemLang[i].zAlgo) == 0) return 1;
    }
    return 0;
}

/* "none, stem_ar, stem_da, ..." into z[0..nz). */
static void stem_supported(char *z, size_t nz) {
    size_t k = (size_t)snprintf(z, nz, "none");
    for (int i = 0; i < N_STEM_LANG && k < nz; i++) {
        if (stem_lang_available(i)) k += (size_t)snprintf(z + k, nz - k, ", stem_%s", aStemLang[i].zCode);
    }
    if (k < nz) snprintf(z + k, nz - k, ", soundex, metaphone");
}

/* ------------------------------------------------- per-thread stemmers */

/* Stemming costs ~130 ns a word while word frequencies are Zipfian, so each
** thread remembers recent results per language: a table keyed by the
** normalised word, for words and stems of at most STEM_MEMO_MAX bytes
** (longer ones are stemmed every time). Entries come in sets of two, the
** one used last first (two-way set-associative; the set is the top bits of
** the word's hash): on cisi it calls the stemmer 30% less often than a
** direct-mapped table of the same size. The table has room for
** 2^STEM_MEMO_MAX_BITS entries of 46 bytes (368 KiB, mapped, so pages not
** yet used cost nothing) but uses the first 2^nBits: it starts at
** 2^STEM_MEMO_MIN_BITS (3 pages) and doubles in place (set i goes to 2i or
** 2i+1) each time it has missed half as many words as it has entries since
** it last grew. Words of a language with a built-in dictionary
** (stemdict.h: most English words) are looked up there first and never
** reach the memo, so it grows only with the rest of the vocabulary; a
** first touch of a page costs more than stemming ten words on some
** virtual machines. */
#define STEM_MEMO_MIN_BITS 8
#define STEM_MEMO_MAX_BITS 13
#define STEM_MEMO_MAX 22

typedef struct StemMemo {
    uint8_t nWord;                  /* 0 = empty slot */
    uint8_t nStem;
    char zWord[STEM_MEMO_MAX];      /* normalised word */
    char zStem[STEM_MEMO_MAX];      /* its stem */
} StemMemo;

typedef struct StemMemoTable {
    StemMemo *a;                    /* 2^STEM_MEMO_MAX_BITS entries, mapped; 2^nBits used */
    int nBits;
    uint32_t nMiss;                 /* words stemmed since it last grew */
} StemMemoTable;

#define MEMO_BYTES (sizeof(StemMemo) << STEM_MEMO_MAX_BITS)

typedef struct StemCache {
    struct sb_stemmer *apStem[N_STEM_LANG]; /* by aStemLang index; NULL until first use */
    StemMemoTable aMemo[N_STEM_LANG];       /* with apStem */
} StemCache;

static __thread StemCache *t_pStemCache;   /* this thread's cache, or NULL */

static void stem_cache_free(void *p) {
    StemCache *c = p;
    for (int i = 0; i < N_STEM_LANG; i++) {
        sb_stemmer_delete(c->apStem[i]);
        if (c->aMemo[i].a) munmap(c->aMemo[i].a, MEMO_BYTES);
    }
    free(c);
    if (t_pStemCache == c) t_pStemCache = NULL;
}

static ThreadLocal g_stemCaches = THREAD_LOCAL_INIT(stem_cache_free);

/* The processors morphology='soundex' and 'metaphone' name, in
** Analyzer.aStem beside aStemLang's indexes: no libstemmer, no memo (each
** is cheaper than a lookup). */
#define STEM_SOUNDEX (-1)
#define STEM_METAPHONE (-2)

/* Sphinx's and Manticore's soundex: a word of the letters a..z only keeps
** its first letter, then each later letter's digit (b f p v: 1; c g j k
** q s x z: 2; d t: 3; l: 4; m n: 5; r: 6; vowels, h, w and y: none), a
** digit never twice in a row (vowels between do not part them), then 0s
** up to four characters but never past the word's own length, and no cut:
** "robert" r163, "tymczak" t520, "ashcraft" a2613, "ab" a1, "a" a. Any
** other word is left as it is. In place in z[0..n) (the code is never
** longer than the word); returns its length. */
static int stem_soundex(char *z, int n) {
    static const char aDigit[26] = {0,   '1', '2', '3', 0,   '1', '2', 0,   0,   '2', '2', '4', '5',
                                    '5', 0,   '1', '2', '6', '2', '3', 0,   '1', 0,   '2', 0,   '2'};
    for (int i = 0; i < n; i++) {
        if (z[i] < 'a' || z[i] > 'z') return n;
    }
    int o = 1;
    for (int i = 1; i < n; i++) {
        char d = aDigit[z[i] - 'a'];
        if (d && z[o - 1] != d) z[o++] = d;
    }
    while (o < 4 && o < n) z[o++] = '0';
    return o;
}

/* A phonetic processor's code of z[0..*pn) (ANALYZER_MAX_TERM bytes of
** room), in place: 1 when it changed the word. */
static int stem_phonetic(int iProc, char *z, int *pn) {
    char zCode[ANALYZER_MAX_TERM];
    memcpy(zCode, z, (size_t)*pn);
    int m = iProc == STEM_SOUNDEX ? stem_soundex(zCode, *pn) : metaphone_code(z, *pn, zCode, ANALYZER_MAX_TERM);
    if (m == 0 || (m == *pn && memcmp(zCode, z, (size_t)m) == 0)) return 0;
    memcpy(z, zCode, (size_t)m);
    *pn = m;
    return 1;
}

/* This thread's stemmer for aStemLang[iLang] and its memo, created on
** first use (both NULL for the phonetic processors). LP_NOMEM, or
** LP_LIMIT when the process is out of thread keys. */
static int stem_get(int iLang, struct sb_stemmer **ppStem, StemMemoTable **ppMemo, LpError *err) {
    if (iLang < 0) {
        *ppStem = NULL;
        *ppMemo = NULL;
        return LP_OK;
    }
    StemCache *c = t_pStemCache;
    if (c && c->apStem[iLang]) {
        *ppStem = c->apStem[iLang];
        *ppMemo = &c->aMemo[iLang];
        return LP_OK;
    }
    if (!c) {
        c = calloc(1, sizeof(*c));
        if (!c) return lp_err_set(err, LP_NOMEM, "out of memory creating a stemmer cache");
        if (thread_local_set(&g_stemCaches, c) != LP_OK) {
            free(c);
            return lp_err_set(err, LP_LIMIT, "cannot create a thread key for stemmers");
        }
        t_pStemCache = c;
    }
    /* The algorithm was checked against sb_stemmer_list() in analyzer_new,
    ** so NULL here means out of memory. */
    StemMemo *a = mmap(NULL, MEMO_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) a = NULL;
    struct sb_stemmer *pStem = a ? sb_stemmer_new(aStemLang[iLang].zAlgo, NULL) : NULL;
    if (!pStem) {
        if (a) munmap(a, MEMO_BYTES);
        return lp_err_set(err, LP_NOMEM, "out of memory creating the %s stemmer", aStemLang[iLang].zAlgo);
    }
    c->apStem[iLang] = *ppStem = pStem;
    c->aMemo[iLang] = (StemMemoTable){a, STEM_MEMO_MIN_BITS, 0};
    lp_prefault(a, sizeof(StemMemo) << STEM_MEMO_MIN_BITS);
    *ppMemo = &c->aMemo[iLang];
    return LP_OK;
}

/* ---------------------------------------------------------- new / free */

/* The stem of the normalised word z[0..*pn) (ANALYZER_MAX_TERM bytes of
** room), in place: through a's stemmers until one changes it, as
** stem_term() stems a run's words (none under min_stemming_len). */
static int stem_plain(const Analyzer *a, char *z, int *pn, LpError *err) {
    if (a->minStemLen > 1 && chars_below(z, *pn, a->minStemLen)) return LP_OK;
    for (int k = 0; k < a->nStem; k++) {
        struct sb_stemmer *pStem = NULL; /* set when stem_get succeeds (-O3 cannot tell) */
        StemMemoTable *pMemo = NULL;
        if (a->aStem[k] < 0) {
            if (stem_phonetic(a->aStem[k], z, pn)) return LP_OK;
            continue;
        }
        int rc = stem_get(a->aStem[k], &pStem, &pMemo, err);
        if (rc != LP_OK) return rc;
        const sb_symbol *zOut = sb_stemmer_stem(pStem, (const sb_symbol *)z, *pn);
        if (!zOut) return lp_err_set(err, LP_NOMEM, "out of memory stemming");
        int m = sb_stemmer_length(pStem);
        if (m > ANALYZER_MAX_TERM) m = ANALYZER_MAX_TERM;
        if (m > 0 && (m != *pn || memcmp(zOut, z, (size_t)m) != 0)) {
            memcpy(z, zOut, (size_t)m);
            *pn = m;
            return LP_OK;
        }
    }
    return LP_OK;
}

static int is_none(const char *z) {
    return z == NULL || z[0] == 0 || strcasecmp(z, "none") == 0;
}

/* The next item of a list of names separated by commas or blanks
** ("stem_en, stem_ru"): skips to it from *pz, sets *pz to its start and
** returns its length (0: the list ended). */
static size_t list_item(const char **pz) {
    *pz += strspn(*pz, ", \t");
    return strcspn(*pz, ", \t");
}

/* Adds the stemmer of "stem_<code>" z[0..n) to a (once): 1; 0 when there
** is no such stemmer; -1 when a has ANALYZER_MAX_STEMMERS already.
** Manticore's stem_enru is stem_en, stem_ru; its libstemmer_<algorithm>
** (libstemmer_fr, libstemmer_french) is the Snowball stemmer loupe's
** stem_<code> runs already. */
static int stem_add(Analyzer *a, const char *z, size_t n) {
    if (n == 9 && strncasecmp(z, "stem_enru", 9) == 0) {
        int rc = stem_add(a, "stem_en", 7);
        return rc == 1 ? stem_add(a, "stem_ru", 7) : rc;
    }
    if (n > 11 && strncasecmp(z, "libstemmer_", 11) == 0) {
        const char *zName = z + 11;
        size_t nName = n - 11;
        for (int i = 0; i < N_STEM_LANG; i++) {
            const StemLang *l = &aStemLang[i];
            if ((strlen(l->zCode) == nName && strncasecmp(zName, l->zCode, nName) == 0) ||
                (strlen(l->zAlgo) == nName && strncasecmp(zName, l->zAlgo, nName) == 0)) {
                char zStem[32];
                int nStem = snprintf(zStem, sizeof(zStem), "stem_%s", l->zCode);
                return stem_add(a, zStem, (size_t)nStem);
            }
        }
        return 0;
    }
    int iPhon = n == 7 && strncasecmp(z, "soundex", 7) == 0     ? STEM_SOUNDEX
                : n == 9 && strncasecmp(z, "metaphone", 9) == 0 ? STEM_METAPHONE
                                                                : 0;
    if (iPhon) {
        for (int k = 0; k < a->nStem; k++) {
            if (a->aStem[k] == iPhon) return 1;
        }
        if (a->nStem == ANALYZER_MAX_STEMMERS) return -1;
        a->aStem[a->nStem] = iPhon;
        a->apDict[a->nStem++] = NULL;
        return 1;
    }
    if (n <= 5 || strncasecmp(z, "stem_", 5) != 0) return 0;
    for (int i = 0; i < N_STEM_LANG; i++) {
        if (strlen(aStemLang[i].zCode) != n - 5 || strncasecmp(z + 5, aStemLang[i].zCode, n - 5) != 0 ||
            !stem_lang_available(i)) {
            continue;
        }
        for (int k = 0; k < a->nStem; k++) {
            if (a->aStem[k] == i) return 1;
        }
        if (a->nStem == ANALYZER_MAX_STEMMERS) return -1;
        a->aStem[a->nStem] = i;
        /* Snowball's English: stems of common words are built in. */
        a->apDict[a->nStem++] = strcmp(aStemLang[i].zAlgo, "english") == 0 ? dict_en() : NULL;
        return 1;
    }
    return 0;
}

static int morphology_fail(const char *zMorph, const char *z, size_t n, const char *zList, LpError *err);

/* Resolves cfg->zMorphology, one processor or several separated by commas
** ("stem_en, stem_ru"), into a->aStem. */
static int morphology_parse(Analyzer *a, const char *zMorph, LpError *err) {
    if (is_none(zMorph)) return LP_OK;
    char zList[512];
    stem_supported(zList, sizeof(zList));
    const char *p = zMorph;
    for (size_t n; (n = list_item(&p)) != 0; p += n) {
        int rc = stem_add(a, p, n);
        if (rc < 0) {
            return lp_err_set(err, LP_BADINPUT, "morphology '%s': at most %d stemmers", zMorph,
                              ANALYZER_MAX_STEMMERS);
        }
        if (rc == 0) return morphology_fail(zMorph, p, n, zList, err);
    }
    if (a->nStem == 0) return lp_err_set(err, LP_BADINPUT, "morphology '%s' names no processor (supported: %s)",
                                         zMorph, zList);
    return LP_OK;
}

/* The error for the processor z[0..n) of zMorph, which is none loupe has. */
static int morphology_fail(const char *zMorph, const char *z, size_t n, const char *zList, LpError *err) {
    int m = (int)(n > 64 ? 64 : n);
    if (n >= 10 && strncasecmp(z, "lemmatize_", 10) == 0) {
        return lp_err_set(err, LP_BADINPUT,
                          "morphology '%s': lemmatizers are not supported (they need dictionaries "
                          "loupe does not ship); use a stemmer instead (supported: %s)",
                          zMorph, zList);
    }
    if (n >= 11 && strncasecmp(z, "libstemmer_", 11) == 0) {
        return lp_err_set(err, LP_BADINPUT,
                          "morphology '%s': no Snowball stemmer for '%.*s' (libstemmer_<language code or "
                          "name>, or stem_<language code>; supported: %s)",
                          zMorph, m, z, zList);
    }
    if (m == (int)strlen(zMorph)) {
        return lp_err_set(err, LP_BADINPUT, "unknown morphology '%s' (supported: %s)", zMorph, zList);
    }
    return lp_err_set(err, LP_BADINPUT, "morphology '%s': unknown processor '%.*s' (supported: %s)", zMorph, m, z,
                      zList);
}

/* stopwords: "none", or language codes separated by commas or spaces
** ("en, de"): their lists, in apList (room for every list), *pnList. */
static int stopwords_parse(const char *zStop, const StopList **apList, int *pnList, LpError *err) {
    *pnList = 0;
    if (is_none(zStop)) return LP_OK;
    int nList = 0;
    const char *p = zStop;
    for (size_t n; (n = list_item(&p)) != 0; p += n) {
        size_t i = 0;
        while (i < LP_ARRAY_SIZE(aStopList) &&
               !(strlen(aStopList[i].zLang) == n && strncasecmp(p, aStopList[i].zLang, n) == 0)) {
            i++;
        }
        if (i == LP_ARRAY_SIZE(aStopList)) {
            char zList[256];
            size_t k = (size_t)snprintf(zList, sizeof(zList), "none");
            for (size_t j = 0; j < LP_ARRAY_SIZE(aStopList) && k < sizeof(zList); j++) {
                k += (size_t)snprintf(zList + k, sizeof(zList) - k, ", %s", aStopList[j].zLang);
            }
            return lp_err_set(err, LP_BADINPUT, "unknown stop-word list '%.*s' (supported: %s; several "
                              "separated by commas: 'en, de')", (int)(n > 64 ? 64 : n), p, zList);
        }
        int bHave = 0;
        for (int j = 0; j < nList; j++) bHave |= apList[j] == &aStopList[i];
        if (!bHave) apList[nList++] = &aStopList[i];
    }
    if (nList == 0) return lp_err_set(err, LP_BADINPUT, "stopwords '%s' names no list", zStop);
    *pnList = nList;
    return LP_OK;
}

/* The table's own stop words (stopwords_list): the words of the text z
** as a's analysis splits and normalises them (no stop words, no
** stemming), into sb each followed by a NUL, their count in *pn. */
typedef struct StopWords {
    StrBuf sb;
    uint32_t n;
} StopWords;

static int stop_word(void *ctx, const Token *t) {
    StopWords *w = ctx;
    strbuf_append(&w->sb, t->z, (size_t)t->n);
    strbuf_appendc(&w->sb, 0);
    w->n++;
    return w->sb.oom ? LP_NOMEM : LP_OK;
}

static int run(const Analyzer *a, int mode, const char *z, size_t n, uint32_t iPosBase, TokenFn xToken,
               void *ctx, uint32_t *piPosEnd, LpError *err);

/* Adds the words of the text z (zWhat names it in errors), as a's
** analysis splits and normalises them, to *pOwn. */
static int stop_split(const Analyzer *a, const char *z, const char *zWhat, StopWords *pOwn, LpError *err) {
    LpError e;
    lp_err_clear(&e);
    int rc = run(a, ANALYZE_UNSTEMMED, z, strlen(z), 0, stop_word, pOwn, NULL, &e);
    if (rc == LP_NOMEM || pOwn->sb.oom) return lp_err_set(err, LP_NOMEM, "out of memory reading %s", zWhat);
    return rc == LP_OK ? LP_OK : lp_err_setpos(err, rc, e.pos, "%s: %s", zWhat, e.zMsg);
}

/* "script, style": element names (letters and digits, the first a letter)
** separated by commas and spaces, kept in lower case. */
/* An element or attribute name: a letter, then letters, digits, '-' or
** '_' (at most 32 bytes). */
static int name_ok(const char *z, size_t n) {
    if (n == 0 || n > 32 || !((z[0] | 0x20) >= 'a' && (z[0] | 0x20) <= 'z')) return 0;
    for (size_t i = 0; i < n; i++) {
        if (!((z[i] >= '0' && z[i] <= '9') || ((z[i] | 0x20) >= 'a' && (z[i] | 0x20) <= 'z') ||
              z[i] == '-' || z[i] == '_')) {
            return 0;
        }
    }
    return 1;
}

/* z[0..n), ASCII lower-cased, malloc'd; NULL when out of memory. */
static char *lower_dup(const char *z, size_t n) {
    char *p = malloc(n + 1);
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++) p[i] = (char)(z[i] >= 'A' && z[i] <= 'Z' ? z[i] | 0x20 : z[i]);
    p[n] = 0;
    return p;
}

/* A list of element names, separated by commas or spaces ("script,
** style"), into *pazOut: malloc'd, lower case, NULL-terminated; NULL for
** an empty list. bStar: a name may end in '*' (a prefix: index_zones).
** zOption and zExample name the option in an error. */
static int elements_parse(const char *z, int bStar, const char *zOption, const char *zExample,
                          char ***pazOut, LpError *err) {
    size_t n = strlen(z), nName = 0;
    for (size_t i = 0; i < n; i++) nName += (i == 0 || z[i - 1] == ',' || z[i - 1] == ' ') && z[i] != ',' && z[i] != ' ';
    if (nName == 0) return LP_OK;
    char **az = calloc(nName + 1, sizeof(char *));
    if (!(*pazOut = az)) return lp_err_set(err, LP_NOMEM, "out of memory creating an analyzer");
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (z[i] == ',' || z[i] == ' ') {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && z[j] != ',' && z[j] != ' ') j++;
        size_t m = j - i - (bStar && z[j - 1] == '*'); /* the name, without a star */
        int bOk = m >= 1 && m <= ANALYZER_ZONE_NAME_MAX && ((z[i] | 0x20) >= 'a' && (z[i] | 0x20) <= 'z');
        for (size_t t = i; t < i + m && bOk; t++) bOk = (z[t] >= '0' && z[t] <= '9') || ((z[t] | 0x20) >= 'a' && (z[t] | 0x20) <= 'z');
        if (!bOk) {
            return lp_err_set(err, LP_BADINPUT, "%s: '%.*s' is not an element name%s (expected %s)", zOption,
                              (int)(j - i), z + i, bStar ? " or a prefix ending in '*'" : "", zExample);
        }
        if (!(az[k++] = lower_dup(z + i, j - i))) return lp_err_set(err, LP_NOMEM, "out of memory creating an analyzer");
        i = j;
    }
    return LP_OK;
}

static int html_remove_parse(Analyzer *a, const char *z, LpError *err) {
    if (!z) return LP_OK;
    return elements_parse(z, 0, "html_remove_elements", "names such as 'script, style'", &a->azHtmlRemove, err);
}

/* html_index_attrs: "img=alt,title; a=title" into a->azHtmlAttr, pairs of
** lower-cased names (element, attribute), NULL-terminated. */
static int html_attrs_parse(Analyzer *a, const char *z, LpError *err) {
    if (!z) return LP_OK;
    size_t n = strlen(z), cap = 1;
    for (size_t i = 0; i < n; i++) cap += z[i] == ',' || z[i] == ';' || z[i] == '=';
    if (!(a->azHtmlAttr = calloc(2 * cap + 1, sizeof(char *)))) {
        return lp_err_set(err, LP_NOMEM, "out of memory creating an analyzer");
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        /* one entry: tag '=' attr {',' attr} */
        size_t e = i;
        while (e < n && z[e] != ';') e++;
        size_t t0 = i;
        while (t0 < e && z[t0] == ' ') t0++;
        if (t0 == e) { /* an empty entry ("a=b;") */
            i = e + 1;
            continue;
        }
        size_t t1 = t0;
        while (t1 < e && z[t1] != '=' && z[t1] != ' ') t1++;
        size_t q = t1;
        while (q < e && z[q] == ' ') q++;
        int bOk = q < e && z[q] == '=' && name_ok(z + t0, t1 - t0);
        size_t nAttr = 0;
        for (size_t j = q + 1; bOk && j <= e;) {
            while (j < e && (z[j] == ' ' || z[j] == ',')) j++;
            if (j == e) break;
            size_t j1 = j;
            while (j1 < e && z[j1] != ' ' && z[j1] != ',') j1++;
            if (!(bOk = name_ok(z + j, j1 - j))) break;
            char *zTag = lower_dup(z + t0, t1 - t0), *zAttr = lower_dup(z + j, j1 - j);
            if (!zTag || !zAttr) {
                free(zTag);
                free(zAttr);
                return lp_err_set(err, LP_NOMEM, "out of memory creating an analyzer");
            }
            a->azHtmlAttr[k++] = zTag;
            a->azHtmlAttr[k++] = zAttr;
            nAttr++;
            j = j1;
        }
        if (!bOk || nAttr == 0) {
            return lp_err_set(err, LP_BADINPUT, "html_index_attrs: '%.*s' is not "
                                                "element=attribute[,attribute] (expected such as "
                                                "'img=alt,title; a=title')",
                              (int)(e - i), z + i);
        }
        i = e + 1;
    }
    return LP_OK;
}

/* index_zones: "h*, th, title" into a->azZone (lower case). Each entry is
** an element name or a prefix of one followed by '*'. */
static int zones_parse(Analyzer *a, const char *z, LpError *err) {
    if (!z) return LP_OK;
    int rc = elements_parse(z, 1, "index_zones", "such as 'h*, th, title'", &a->azZone, err);
    if (rc == LP_OK && a->azZone && !a->bHtmlStrip) {
        rc = lp_err_set(err, LP_BADINPUT, "index_zones needs html_strip='1': zones are HTML elements");
    }
    return rc;
}

static pthread_once_t g_fold2Once = PTHREAD_ONCE_INIT;
static void fold2_build(void); /* the folding table (below) */

/* The English dictionary as analyzers use it (dict_en): its lookups land
** at random in 850 KiB, and the first read of each of those 4 KiB pages
** costs a fault, or on a virtual machine's shadow page tables ~6 us even
** when mapped in advance, about 200 of them over a collection's first
** hundred documents (a third of analysing adi, 82 documents). So the
** first analyzer that stems English copies the table into memory of
** huge pages, where those reads cost nothing more: one copy for the
** process, made once (~1 ms), never freed. Where the system gives no
** huge pages, the executable's own pages are mapped at once instead
** (each first read then still pays the ~6 us). */
static pthread_once_t g_dictEnOnce = PTHREAD_ONCE_INIT;
static StemDict g_dictEnCopy;                  /* the copy, when made */
static const StemDict *g_pDictEn = &lp_stemdict_en; /* what analyzers use */

static void dict_en_map(void) {
    const StemDict *d = &lp_stemdict_en;
    if (!d->nBits) return;
    size_t nBucket = sizeof(uint32_t) * (((size_t)1 << d->nBits) + 1);
    size_t nPool = d->aBucket[(size_t)1 << d->nBits];
    uint8_t *p = lp_huge_pages() ? lp_map_huge(nBucket + nPool) : NULL;
    if (!p) {
        lp_prefault_read(d->aBucket, nBucket);
        lp_prefault_read(d->aPool, nPool);
        return;
    }
    memcpy(p, d->aBucket, nBucket);
    memcpy(p + nBucket, d->aPool, nPool);
    g_dictEnCopy = *d;
    g_dictEnCopy.aBucket = (const uint32_t *)(void *)p;
    g_dictEnCopy.aPool = p + nBucket;
    g_pDictEn = &g_dictEnCopy;
}

/* The English dictionary analyzers read: the copy, once made. */
static const StemDict *dict_en(void) {
    pthread_once(&g_dictEnOnce, dict_en_map);
    return g_pDictEn;
}

static int wordforms_build(Analyzer *a, const char *z, LpError *err);
static int run(const Analyzer *a, int mode, const char *z, size_t n, uint32_t iPosBase, TokenFn xToken,
               void *ctx, uint32_t *piPosEnd, LpError *err);
static int exceptions_build(Analyzer *a, const char *z, LpError *err);

/* Does m make c a word character's target (some character becomes c)? */
static int charmap_makes(const CharMap *m, uint32_t c) {
    for (int i = 0; i < m->n; i++) {
        const CharMapEntry *e = &m->a[i];
        if (e->one != UINT32_MAX) {
            if (c == e->one) return 1;
        } else if (e->base != UINT32_MAX) {
            if (c >= e->lo && c <= e->hi && ((c - e->base) & 1u)) return 1;
        } else if ((int64_t)c >= (int64_t)e->lo + e->delta && (int64_t)c <= (int64_t)e->hi + e->delta) {
            return 1;
        }
    }
    return 0;
}

static void map_ascii_build(Analyzer *a);

/* Refuses a map m (of option zOption) whose targets would collide with
** the index's own terms: '.' with index_sp (a boundary's term), '<' with
** index_zones (a zone's). */
static int map_targets_check(const Analyzer *a, const CharMap *m, const char *zOption, LpError *err) {
    if (a->bIndexSp && charmap_makes(m, '.')) {
        return lp_err_set(err, LP_BADINPUT, "%s: '.' cannot be a word character in a table with "
                                            "index_sp='1' (the sentence boundary's term is '.')", zOption);
    }
    if (a->azZone && charmap_makes(m, '<')) {
        return lp_err_set(err, LP_BADINPUT, "%s: '<' cannot be a word character in a table with "
                                            "index_zones (a zone's terms start with '<')", zOption);
    }
    return LP_OK;
}

/* charset_table and blend_chars (either may be NULL) into a, after
** index_sp and index_zones are set. Without a charset_table, blend_chars
** reads the text as the default does (the aliases non_cjk and cjk). */
static int charset_table_parse(Analyzer *a, const AnalyzerConfig *cfg, LpError *err) {
    const char *zTable = cfg->zCharsetTable, *zBlend = cfg->zBlendChars, *zMode = cfg->zBlendMode;
    int rc = LP_OK;
    if (zTable) {
        rc = charmap_parse(zTable, "charset_table", 1, &a->map, err);
        if (rc == LP_OK) rc = map_targets_check(a, &a->map, "charset_table", err);
        if (rc != LP_OK) return rc;
        a->bMap = 1;
    }
    if (cfg->nNgramLen < 0 || cfg->nNgramLen > 1) {
        return lp_err_set(err, LP_BADINPUT, "ngram_len %d: only 0 and 1 are supported, as in Manticore",
                          cfg->nNgramLen);
    }
    if (cfg->zNgramChars && cfg->zNgramChars[0]) {
        if (cfg->nNgramLen != 1) {
            return lp_err_set(err, LP_BADINPUT, "ngram_chars needs ngram_len='1' (each of them is then a word of "
                                                "one character)");
        }
        rc = charmap_parse(cfg->zNgramChars, "ngram_chars", 1, &a->ngram, err);
        if (rc == LP_OK && (a->ngram.aliases & CHARMAP_NON_CJK)) {
            rc = lp_err_set(err, LP_BADINPUT, "ngram_chars: non_cjk and non_cont are no n-gram characters: it takes "
                                              "characters, ranges, mappings and cjk, cont, chinese, japanese or korean");
        }
        if (rc == LP_OK) rc = map_targets_check(a, &a->ngram, "ngram_chars", err);
        if (rc != LP_OK) return rc;
        a->bNgram = 1;
    }
    if (zBlend) {
        rc = charmap_parse(zBlend, "blend_chars", 0, &a->blend, err);
        if (rc == LP_OK) rc = map_targets_check(a, &a->blend, "blend_chars", err);
        if (rc != LP_OK) return rc;
        a->bBlend = a->blend.n > 0;
    }
    if ((a->bBlend || a->bNgram) && !a->bMap) {
        /* no charset_table: the default's classes, as its aliases */
        a->map.aliases = CHARMAP_NON_CJK | CHARMAP_CJK;
        for (int c = 0; c < 128; c++) a->map.aAscii[c] = -1;
        a->bMap = 1;
    }
    if (a->bMap) map_ascii_build(a);
    return blend_mode_parse(a, zMode, err);
}

AnalyzerConfig analyzer_split_config(const AnalyzerConfig *cfg) {
    AnalyzerConfig c;
    memset(&c, 0, sizeof(c));
    c.bRemoveDiacritics = cfg->bRemoveDiacritics;
    c.zIgnoreChars = cfg->zIgnoreChars;
    c.zCharsetTable = cfg->zCharsetTable;
    c.zBlendChars = cfg->zBlendChars;
    c.zBlendMode = cfg->zBlendMode;
    c.nNgramLen = cfg->nNgramLen;
    c.zNgramChars = cfg->zNgramChars;
    return c;
}

static int phrase_boundary_parse(Analyzer *a, const AnalyzerConfig *cfg, LpError *err);

int analyzer_new(const AnalyzerConfig *cfg, Analyzer **ppOut, LpError *err) {
    static const AnalyzerConfig cfgDefault = {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    if (!cfg) cfg = &cfgDefault;
    *ppOut = NULL;
    if (cfg->minPrefixLen < 0 || cfg->minPrefixLen > ANALYZER_MAX_TERM) {
        return lp_err_set(err, LP_BADINPUT, "min_prefix_len %d is out of range 0..%d", cfg->minPrefixLen,
                          ANALYZER_MAX_TERM);
    }
    if (cfg->minWordLen < 0 || cfg->minWordLen > ANALYZER_MAX_TERM) {
        return lp_err_set(err, LP_BADINPUT, "min_word_len %d is out of range 0..%d", cfg->minWordLen,
                          ANALYZER_MAX_TERM);
    }
    if (cfg->minStemmingLen < 0 || cfg->minStemmingLen > ANALYZER_MAX_TERM) {
        return lp_err_set(err, LP_BADINPUT, "min_stemming_len %d is out of range 0..%d", cfg->minStemmingLen,
                          ANALYZER_MAX_TERM);
    }
    if (cfg->minInfixLen < 0 || cfg->minInfixLen > ANALYZER_MAX_TERM) {
        return lp_err_set(err, LP_BADINPUT, "min_infix_len %d is out of range 0..%d", cfg->minInfixLen,
                          ANALYZER_MAX_TERM);
    }
    Analyzer *a = calloc(1, sizeof(*a));
    if (!a) return lp_err_set(err, LP_NOMEM, "out of memory creating an analyzer");
    /* The process-wide folding table, built here once rather than by the
    ** first document analysed. */
    pthread_once(&g_fold2Once, fold2_build);
    a->minPrefixLen = cfg->minPrefixLen;
    a->minInfixLen = cfg->minInfixLen;
    a->minWordLen = cfg->minWordLen;
    a->bStopNoStep = cfg->bStopwordNoStep != 0;
    a->bShortNoStep = cfg->bOvershortNoStep != 0;
    a->minStemLen = cfg->minStemmingLen;
    a->bExactWords = cfg->bExactWords != 0;
    a->bIndexSp = cfg->bIndexSp != 0;
    a->bHtmlStrip = cfg->bHtmlStrip != 0;
    a->bStrip = cfg->bRemoveDiacritics != 0;
    int rc = morphology_parse(a, cfg->zMorphology, err);
    const StopList *apStop[LP_ARRAY_SIZE(aStopList)];
    int nStop = 0;
    if (rc == LP_OK) rc = stopwords_parse(cfg->zStopwords, apStop, &nStop, err);
    if (rc == LP_OK) rc = html_remove_parse(a, cfg->zHtmlRemove, err);
    if (rc == LP_OK) rc = html_attrs_parse(a, cfg->zHtmlIndexAttrs, err);
    if (rc == LP_OK) rc = zones_parse(a, cfg->zIndexZones, err);
    if (rc == LP_OK) rc = regexp_filter_new(cfg->zRegexpFilter, &a->pRegexp, err);
    if (rc == LP_OK && a->pRegexp && a->azZone) {
        /* zones are read off the text before the rules would move it */
        rc = lp_err_set(err, LP_BADINPUT, "regexp_filter cannot be used with index_zones");
    }
    if (rc == LP_OK && cfg->zIgnoreChars) rc = charset_parse(cfg->zIgnoreChars, "ignore_chars", &a->ignore, err);
    if (rc == LP_OK) rc = charset_table_parse(a, cfg, err);
    /* The table's own stop words are split as its text is (ignored
    ** characters included, before word forms and exceptions exist); with
    ** a charset_table, the built-in lists' words too, as Manticore reads
    ** stop words through the table's tokenizer (a table that keeps "ü"
    ** finds German's "für" as written). */
    StopWords own = {{0}, 0};
    if (rc == LP_OK && cfg->zStopwordsList) rc = stop_split(a, cfg->zStopwordsList, "stopwords_list", &own, err);
    for (int i = 0; rc == LP_OK && a->bMap && i < nStop; i++) {
        for (int j = 0; rc == LP_OK && j < apStop[i]->nWord; j++) {
            rc = stop_split(a, apStop[i]->azWord[j], "a built-in stop list", &own, err);
        }
    }
    if (a->bMap) nStop = 0;
    /* stopwords_unstemmed='0' means something only where words are stemmed */
    a->bStopStemmed = cfg->bStopwordsStemmed && a->nStem > 0 && (nStop || own.n);
    if (rc == LP_OK && (nStop || own.n)) rc = stop_build(a, apStop, nStop, own.sb.z, own.n, err);
    strbuf_free(&own.sb);
    if (rc == LP_OK) rc = wordforms_build(a, cfg->zWordforms, err);
    if (rc == LP_OK) rc = exceptions_build(a, cfg->zExceptions, err);
    if (rc == LP_OK) rc = phrase_boundary_parse(a, cfg, err);
    for (int k = 0; rc == LP_OK && k < a->nStem; k++) {
        /* Create this thread's stemmers now, so an allocation failure or a
        ** broken libstemmer shows here rather than on the first document. */
        struct sb_stemmer *pStem;
        StemMemoTable *pMemo;
        rc = stem_get(a->aStem[k], &pStem, &pMemo, err);
    }
    if (rc != LP_OK) {
        analyzer_free(a);
        return rc;
    }
    *ppOut = a;
    return LP_OK;
}

void analyzer_free(Analyzer *a) {
    if (!a) return;
    free(a->aStop);
    for (char **pz = a->azHtmlRemove; pz && *pz; pz++) free(*pz);
    free(a->azHtmlRemove);
    for (char **pz = a->azHtmlAttr; pz && *pz; pz++) free(*pz);
    free(a->azHtmlAttr);
    for (char **pz = a->azZone; pz && *pz; pz++) free(*pz);
    free(a->azZone);
    wordforms_free(a->pWf);
    charset_free(&a->ignore);
    charset_free(&a->pb);
    charmap_free(&a->map);
    charmap_free(&a->blend);
    charmap_free(&a->ngram);
    exceptions_free(a->pExc);
    regexp_filter_free(a->pRegexp);
    free(a);
}

int analyzer_min_prefix_len(const Analyzer *a) {
    return a->minPrefixLen;
}

int analyzer_min_infix_len(const Analyzer *a) {
    return a->minInfixLen;
}

int analyzer_prefix_ok(const Analyzer *a, const char *z, int n) {
    int nChars = 0;
    for (int i = 0; i < n; i++) nChars += (z[i] & 0xC0) != 0x80;
    return nChars > 0 && nChars >= a->minPrefixLen;
}

int analyzer_is_stemmed(const Analyzer *a) {
    return a->nStem > 0;
}

int analyzer_has_wordforms(const Analyzer *a) {
    return a->pWf != NULL;
}

int analyzer_renumbers(const Analyzer *a) {
    return a->pWf != NULL || a->bStopNoStep || a->bShortNoStep;
}

int analyzer_has_blend(const Analyzer *a) {
    return a->bBlend;
}

int analyzer_has_exceptions(const Analyzer *a) {
    return a->pExc != NULL;
}

int analyzer_exact_words(const Analyzer *a) {
    return a->bExactWords;
}

int analyzer_has_exact_forms(const Analyzer *a) {
    return a->bExactWords && a->nStem > 0;
}

int analyzer_html_strip(const Analyzer *a) {
    return a->bHtmlStrip;
}

int analyzer_index_sp(const Analyzer *a) {
    return a->bIndexSp;
}

int analyzer_has_zones(const Analyzer *a) {
    return a->azZone != NULL;
}

int analyzer_zone_indexed(const Analyzer *a, const char *z, size_t n) {
    for (char **pz = a->azZone; pz && *pz; pz++) {
        size_t m = strlen(*pz);
        if ((*pz)[m - 1] == '*' ? n >= m - 1 && memcmp(*pz, z, m - 1) == 0 : m == n && memcmp(*pz, z, n) == 0) {
            return 1;
        }
    }
    return 0;
}

int analyzer_doc_text(const Analyzer *a, const char *z, size_t n, StrBuf *buf, const char **pz,
                      size_t *pn, LpError *err) {
    return analyzer_doc_text_as(a, a->bHtmlStrip, 1, z, n, buf, pz, pn, NULL, err);
}

int analyzer_doc_text_as(const Analyzer *a, int bHtml, int bRules, const char *z, size_t n, StrBuf *buf,
                         const char **pz, size_t *pn, uint32_t *aMap, LpError *err) {
    *pz = z;
    *pn = n;
    if (aMap && (!bHtml || (bRules && a->pRegexp))) {
        return lp_err_set(err, LP_BADINPUT, "an offset map needs HTML stripped and no regexp_filter rules");
    }
    if (!bHtml) return bRules ? analyzer_query_text(a, z, n, buf, pz, pn, err) : LP_OK;
    int64_t iBad = utf8_check(z, n);
    if (iBad >= 0) return lp_err_setpos(err, LP_BADINPUT, iBad, "invalid UTF-8 at byte %lld", (long long)iBad);
    if (n > UINT32_MAX) {
        return lp_err_set(err, LP_LIMIT, "text of %zu bytes is longer than the 4 GiB a field may hold", n);
    }
    strbuf_reset(buf);
    html_strip_map(z, n, (const char *const *)a->azHtmlRemove, (const char *const *)a->azHtmlAttr, aMap, buf);
    if (buf->oom) return lp_err_set(err, LP_NOMEM, "out of memory stripping HTML");
    *pz = buf->z ? buf->z : "";
    *pn = buf->n;
    if (!a->pRegexp || !bRules) return LP_OK;
    /* then the rules, over the text as stripped; where one matched, their
    ** result becomes buf (no copy) */
    StrBuf out = {0};
    int rc = regexp_filter_apply(a->pRegexp, *pz, *pn, &out, pz, pn, err);
    if (rc == LP_OK && *pz == out.z) {
        StrBuf x = *buf;
        *buf = out;
        out = x;
    }
    strbuf_free(&out);
    return rc;
}

int analyzer_query_text(const Analyzer *a, const char *z, size_t n, StrBuf *buf, const char **pz, size_t *pn,
                        LpError *err) {
    *pz = z;
    *pn = n;
    if (!a->pRegexp) return LP_OK;
    return regexp_filter_apply(a->pRegexp, z, n, buf, pz, pn, err);
}

int analyzer_rules_map(const Analyzer *a, const char *z, size_t n, StrBuf *buf, const char **pz, size_t *pn,
                       uint32_t **paMap, LpError *err) {
    return regexp_filter_apply_map(a->pRegexp, z, n, buf, pz, pn, paMap, err);
}

int analyzer_has_regexp(const Analyzer *a) {
    return a->pRegexp != NULL;
}

/* --------------------------------------------------------- word scanner */

enum {
    CC_SEP = 0,
    CC_WORD,
    CC_MARK,
    CC_SINGLE,
    CC_MAPPED, /* named by charset_table */
    CC_BLEND,  /* named by blend_chars */
    CC_NGRAM   /* named by ngram_chars: a word of its own */
};

/* ASCII letters and digits; every byte >= 0x80 is 0 here and takes the
** Unicode path. */
static const uint8_t aAsciiWord[256] = {['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1};

/* ASCII separators a run may have to look at: a query's '*', and what
** ends a sentence or a paragraph (index_sp). Any other separator is
** skipped with one test. */
static const uint8_t aAsciiAttn[256] = {['*'] = 1, ['.'] = 1, ['?'] = 1, ['!'] = 1, ['\n'] = 1};

/* Letters of scripts written without spaces between words: each is a word
** by itself. Han (unified, extensions A..H, compatibility), Hiragana,
** Katakana (with phonetic extensions, half-width forms and the kana
** supplements), Hangul syllables. */
static int is_single_script(uint32_t cp) {
    if (cp < 0x3040) return 0;
    return cp <= 0x30FF                       /* Hiragana, Katakana */
           || (cp >= 0x31F0 && cp <= 0x31FF)  /* Katakana phonetic extensions */
           || (cp >= 0x3400 && cp <= 0x4DBF)  /* CJK extension A */
           || (cp >= 0x4E00 && cp <= 0x9FFF)  /* CJK unified ideographs */
           || (cp >= 0xAC00 && cp <= 0xD7AF)  /* Hangul syllables */
           || (cp >= 0xF900 && cp <= 0xFAFF)  /* CJK compatibility ideographs */
           || (cp >= 0xFF66 && cp <= 0xFF9F)  /* half-width Katakana */
           || (cp >= 0x1B000 && cp <= 0x1B16F) /* kana supplement, extended-A, small kana */
           || (cp >= 0x20000 && cp <= 0x3FFFF); /* CJK extensions B..H, compatibility supplement */
}

static int char_class(uint32_t cp) {
    /* Half-width (semi-)voiced sound marks are letters (Lm), but NFKC turns
    ** them into combining U+3099/309A: they belong to the kana before them. */
    if (cp == 0xFF9E || cp == 0xFF9F) return CC_MARK;
    switch (utf8proc_category((utf8proc_int32_t)cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
        return is_single_script(cp) ? CC_SINGLE : CC_WORD;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
        return CC_MARK;
    default:
        return CC_SEP;
    }
}

/* Decodes one character of input that utf8_check() accepted. */
static int decode_valid(const unsigned char *p, size_t n, uint32_t *pCp) {
    int len = utf8_decode(p, n, pCp);
    if (NEVER(len == 0)) {
        *pCp = 0xFFFD; /* unreachable after utf8_check; a separator keeps the scan moving */
        len = 1;
    }
    return len;
}

/* Is cp an invisible character that joins the letters around it rather
** than separating them: SOFT HYPHEN, ZERO WIDTH JOINER, WORD JOINER, ZERO
** WIDTH NO-BREAK SPACE? Under remove_diacritics (bJoin) a word runs
** through them and its term leaves them out ("re­sume" is "resume");
** otherwise, as every format character, they separate words. */
static int is_joiner(uint32_t cp) {
    return cp == 0x00AD || cp == 0x200D || cp == 0x2060 || cp == 0xFEFF;
}

/* The end of the word whose characters so far end at p[i]: extends it over
** letters, digits and marks (and, when bJoin, joiners). Clears *pbAscii if
** it takes a non-ASCII one. */
static size_t scan_word(const unsigned char *p, size_t n, size_t i, int bJoin, int *pbAscii) {
    while (i < n) {
        if (p[i] < 0x80) {
            if (!aAsciiWord[p[i]]) break;
            i++;
            continue;
        }
        uint32_t cp;
        int len = decode_valid(p + i, n - i, &cp);
        int cls = char_class(cp);
        if (cls != CC_WORD && cls != CC_MARK && !(bJoin && is_joiner(cp))) break;
        *pbAscii = 0;
        i += (size_t)len;
    }
    return i;
}

/* Skips the combining marks at p[i..). */
static size_t scan_marks(const unsigned char *p, size_t n, size_t i) {
    while (i < n && p[i] >= 0x80) {
        uint32_t cp;
        int len = decode_valid(p + i, n - i, &cp);
        if (char_class(cp) != CC_MARK) break;
        i += (size_t)len;
    }
    return i;
}

/* --------------------------------------------------------- normalising */

#define NORM_OPTIONS (UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD)

/* Is cp, a base letter, in a Latin or Greek block (remove_diacritics drops
** the marks on such letters)? */
static int is_latin_greek(uint32_t cp) {
    return cp < 0x0250                          /* Basic Latin .. Latin Extended-B */
           || (cp >= 0x0370 && cp <= 0x03FF)    /* Greek and Coptic */
           || (cp >= 0x1E00 && cp <= 0x1FFF)    /* Latin Extended Additional, Greek Extended */
           || (cp >= 0x2C60 && cp <= 0x2C7F)    /* Latin Extended-C */
           || (cp >= 0xA720 && cp <= 0xA7FF)    /* Latin Extended-D */
           || (cp >= 0xAB30 && cp <= 0xAB6F);   /* Latin Extended-E */
}

/* The letter a Latin letter with a stroke (no decomposition: its stroke is
** not a mark) stands for under remove_diacritics, or cp itself. Lower case
** only: it runs after case folding. */
static uint32_t strip_stroke(uint32_t cp) {
    switch (cp) {
    case 0x00F8: return 'o'; /* ø */
    case 0x0111: return 'd'; /* đ */
    case 0x0127: return 'h'; /* ħ */
    case 0x0142: return 'l'; /* ł */
    case 0x0167: return 't'; /* ŧ */
    default: return cp;
    }
}

static int combining_class(utf8proc_int32_t cp) {
    return utf8proc_get_property(cp)->combining_class;
}

/* Puts the marks of a[0..n) back in canonical order (Unicode's canonical
** ordering: each run of characters of non-zero combining class sorted by
** class, stable), as decomposition left them before strip_marks dropped a
** joiner between two runs: U+094D U+200D U+093C decomposes as written
** (the joiner, of class 0, keeps the virama, 9, and the nukta, 7, apart),
** and without the joiner the nukta goes first, as it does in the same
** text written without one. Else the term would not be its own normal
** form: analysed again, it would become another. */
static void reorder_marks(utf8proc_int32_t *a, utf8proc_ssize_t n) {
    for (utf8proc_ssize_t i = 1; i < n; i++) {
        int c = combining_class(a[i]);
        if (c == 0) continue;
        utf8proc_int32_t x = a[i];
        utf8proc_ssize_t j = i;
        for (; j > 0 && combining_class(a[j - 1]) > c; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

/* remove_diacritics over the decomposed, case-folded code points a[0..n),
** in place: drops the marks whose base is Latin or Greek and the joiners,
** maps the stroke letters. Returns the new count. */
static utf8proc_ssize_t strip_marks(utf8proc_int32_t *a, utf8proc_ssize_t n) {
    utf8proc_ssize_t k = 0;
    int bBase = 0;   /* the last base letter is Latin or Greek */
    int bJoined = 0; /* a joiner was dropped */
    for (utf8proc_ssize_t i = 0; i < n; i++) {
        uint32_t cp = (uint32_t)a[i];
        utf8proc_category_t cat = utf8proc_category(a[i]);
        if (cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC || cat == UTF8PROC_CATEGORY_ME) {
            if (bBase) continue;
        } else if (is_joiner(cp)) {
            bJoined = 1;
            continue; /* inside a word only where scan_word let it in */
        } else {
            bBase = is_latin_greek(cp);
            cp = strip_stroke(cp);
        }
        a[k++] = (utf8proc_int32_t)cp;
    }
    if (bJoined) reorder_marks(a, k);
    return k;
}

/* NFKC + case folding of the word z[0..n) through utf8proc (and, when
** bStrip, remove_diacritics), into zOut (at least ANALYZER_MAX_TERM bytes),
** cut at a character boundary. Returns the length, or a negative utf8proc
** error code (none is expected: the input is valid and the buffer is
** large enough). */
static int norm_utf8proc(const char *z, size_t n, int bStrip, char *zOut) {
    utf8proc_int32_t aCp[NORM_BUF_CP];
    if (n > NORM_MAX_IN) n = utf8_floor(z, NORM_MAX_IN);
    utf8proc_ssize_t nCp;
    for (;;) {
        nCp = utf8proc_decompose_custom((const utf8proc_uint8_t *)z, (utf8proc_ssize_t)n, aCp,
                                        NORM_BUF_CP - 1, NORM_OPTIONS, NULL, NULL);
        if (nCp < 0) return (int)nCp;
        if (nCp <= NORM_BUF_CP - 1) break;
        /* More than 6 code points per byte: not in Unicode 15; halving keeps
        ** the buffer bounded should a later Unicode version do it. */
        n = utf8_floor(z, n / 2);
    }
    if (bStrip) nCp = strip_marks(aCp, nCp);
    /* utf8proc_reencode composes, then writes UTF-8 over the code points
    ** (it never overtakes its reading position) and a NUL after them. */
    utf8proc_ssize_t nByte = utf8proc_reencode(aCp, nCp, NORM_OPTIONS);
    if (nByte < 0) return (int)nByte;
    size_t m = utf8_floor((const char *)aCp, nByte > ANALYZER_MAX_TERM ? ANALYZER_MAX_TERM : (size_t)nByte);
    memcpy(zOut, aCp, m);
    return (int)m;
}

/* Fast paths. utf8proc costs ~100 ns a word, most of it generic machinery
** that European and CJK words do not need:
**  - aFold2: for each two-byte character U+0080..U+07FF (Latin, Greek,
**    Cyrillic, Armenian, Hebrew, Arabic letters) that is a letter or digit
**    and whose NFKC + case folding is ONE character of combining class 0,
**    that character; else 0. A word made only of ASCII and such characters
**    is normalised character by character: no two of these characters
**    compose with each other (compositions need a combining mark, or Hangul
**    or Indic vowels, none of which qualify), so the result is exactly
**    utf8proc's. aFold2[1] is the same under remove_diacritics (é → e):
**    what it drops are marks, which a word of these characters has none
**    of once each is folded. The tables are built once from utf8proc
**    itself.
**  - A CJK ideograph, Hangul syllable or kana letter standing alone is its
**    own normal form (the ranges in norm_is_identity() hold no compatibility
**    or case mappings).
** test_analyzer checks both against utf8proc for every such code point. */
static uint16_t aFold2[2][0x800 - 0x80];
static void fold2_build(void) {
    for (int bStrip = 0; bStrip < 2; bStrip++) {
        for (uint32_t cp = 0x80; cp < 0x800; cp++) {
            if (char_class(cp) != CC_WORD) continue;
            char zIn[2] = {(char)(0xC0 | (cp >> 6)), (char)(0x80 | (cp & 0x3F))};
            char zOut[ANALYZER_MAX_TERM];
            int n = norm_utf8proc(zIn, 2, bStrip, zOut);
            uint32_t r;
            if (n <= 0 || utf8_decode((const unsigned char *)zOut, (size_t)n, &r) != n) continue;
            if (r > 0xFFFF || utf8proc_get_property((utf8proc_int32_t)r)->combining_class != 0) continue;
            aFold2[bStrip][cp - 0x80] = (uint16_t)r;
        }
    }
}

static int norm_is_identity(uint32_t cp) {
    return (cp >= 0x3041 && cp <= 0x3096)      /* Hiragana letters */
           || (cp >= 0x30A1 && cp <= 0x30FA)   /* Katakana letters */
           || (cp >= 0x3400 && cp <= 0x4DBF)   /* CJK extension A */
           || (cp >= 0x4E00 && cp <= 0x9FFF)   /* CJK unified ideographs */
           || (cp >= 0xAC00 && cp <= 0xD7A3);  /* Hangul syllables */
}

/* The aFold2[bStrip] path: the term's length, or -1 when the word has a
** character the table does not cover. */
static int norm_fold2(const unsigned char *p, size_t n, int bStrip, char *zOut) {
    const uint16_t *aFold = aFold2[bStrip];
    int k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c = p[i];
        if (c < 0x80) {
            if (k == ANALYZER_MAX_TERM) break;
            zOut[k++] = (char)(c + (((c - 'A') < 26u) << 5));
            i++;
            continue;
        }
        if (c >= 0xE0) return -1;
        uint32_t r = aFold[(((c & 0x1F) << 6) | (p[i + 1] & 0x3F)) - 0x80];
        /* Look the character up before testing the space left: a character
        ** outside the table might compose with the one before. */
        if (r == 0) return -1;
        if (r < 0x80) {
            if (k + 1 > ANALYZER_MAX_TERM) break;
            zOut[k++] = (char)r;
        } else if (r < 0x800) {
            if (k + 2 > ANALYZER_MAX_TERM) break;
            zOut[k++] = (char)(0xC0 | (r >> 6));
            zOut[k++] = (char)(0x80 | (r & 0x3F));
        } else {
            if (k + 3 > ANALYZER_MAX_TERM) break;
            zOut[k++] = (char)(0xE0 | (r >> 12));
            zOut[k++] = (char)(0x80 | ((r >> 6) & 0x3F));
            zOut[k++] = (char)(0x80 | (r & 0x3F));
        }
        i += 2;
    }
    return k;
}

/* NFKC + case folding (and, when bStrip, remove_diacritics) of a word with
** at least one non-ASCII character: as norm_utf8proc(), through a fast
** path where one applies. */
static int norm_word(const char *z, size_t n, int bStrip, char *zOut) {
    const unsigned char *p = (const unsigned char *)z;
    if (n == 3 && p[0] >= 0xE0) {
        uint32_t cp;
        if (utf8_decode(p, 3, &cp) == 3 && norm_is_identity(cp)) {
            memcpy(zOut, z, 3);
            return 3;
        }
    }
    int k = norm_fold2(p, n, bStrip, zOut);
    return k >= 0 ? k : norm_utf8proc(z, n, bStrip, zOut);
}

/* --------------------------------------------------------------- runner */

/* What a run is for (RunState.mode); the first three are analyzer_collect's
** ANALYZE_* modes. */
enum {
    RUN_UNSTEMMED = ANALYZE_UNSTEMMED,  /* normalised words only */
    RUN_QUERY = ANALYZE_QUERY,          /* a query: stop words, stems; '=word' exact */
    RUN_QUERY_EXACT = ANALYZE_QUERY_EXACT, /* a query whose every word is exact (="a b") */
    RUN_INDEX                           /* a document: stop words, stems, exact forms */
};

/* A word normalised, waiting to be filtered, stemmed and handed over. */
typedef struct PendWord {
    char aTerm[ANALYZER_MAX_TERM];
    int nTerm;
    uint32_t iPos, iStart, iEnd;
    uint32_t h;                 /* stemdict_hash of the term (dictionary runs) */
    int bExact;                 /* RUN_QUERY: written '=word' */
} PendWord;

/* The words of a run that may start a multi-word source of a word-forms
** rule, waiting for the words after them. */
typedef struct WfRun {
    PendWord a[WF_MAX_WORDS];
    int n;
} WfRun;

typedef struct RunState {
    const Analyzer *a;          /* configuration */
    int mode;                   /* RUN_*; not RUN_UNSTEMMED: stop words and stemming */
    int nStem;                  /* stemmers (the analyzer's; 0 when not stemming) ... */
    struct sb_stemmer *apStem[ANALYZER_MAX_STEMMERS]; /* ... this thread's ... */
    StemMemoTable *apMemo[ANALYZER_MAX_STEMMERS];      /* ... and their memos */
    const StemDict *pDict;      /* the first's dictionary (grouped lookups), or NULL */
    TokenFn xToken;             /* the caller's callback and its context */
    void *ctx;
    uint32_t iPos;              /* position of the next word */
    const char *zText;          /* the text analysed (for error messages) */
    LpError *err;
    size_t nText;               /* its bytes */
    int spKind;                 /* index_sp: SP_* boundary seen since the last word */
    int bIndexSp;               /* index_sp, and a document: boundaries are read */
    int bPbSeen;                /* a phrase boundary since the last word */
    int64_t pbAdj;              /* the phrase boundaries' steps so far */
    uint32_t spStart, spEnd;    /* its terminator's bytes */
    const Wordforms *pWf;       /* word forms (not RUN_UNSTEMMED), or NULL */
    int bWfPost;                /* some of them are matched after stemming */
    WfRun *pWfRun;              /* with pWf: the words waiting */
    int64_t posAdj;             /* added to every position handed over: what word
                                ** forms' destinations took more (or fewer) than
                                ** their sources, less the dropped words that
                                ** took no position (bSteps) */
    int bSteps;                 /* stopword_step or overshort_step is 0 */
    int bHeld;                  /* blend variants went out at the next word's position:
                                ** dropped, it still takes it */
    int bWfAlone;               /* a blend token's parts are going out: one-word forms
                                ** only, no runs (wf_feed) */
    size_t iScanFrom, iScanTo;  /* the bytes scan() reads: [from, to) */
    size_t iWord, iWordEnd;     /* the last word's bytes (iWordEnd SIZE_MAX: none yet) */
} RunState;

/* Set i of the memo is entries 2i (the one used last) and 2i+1, picked by
** the top nBits-1 bits of the word's hash. */
static uint32_t memo_set(uint32_t h, int nBits) {
    /* h is the word's hash (stemdict_hash); a multiplicative mix makes
    ** its top bits pick the set. */
    return (h * 0x9E3779B1u) >> (32 - (nBits - 1));
}

static int memo_is(const StemMemo *e, const char *z, int n) {
    return e->nWord == n && lp_bytes_eq(e->zWord, z, (size_t)n);
}

/* Doubles the memo in place, keeping what it holds: from the last set
** down, the entries of set i move to set 2i or 2i+1 (sets past the old
** end, or emptied when their own entries moved up), the one used last
** first. */
static void memo_grow(StemMemoTable *m) {
    int nBits = m->nBits + 1;
    /* the pages about to be written, in one call rather than a fault each */
    lp_prefault(m->a, sizeof(StemMemo) << nBits);
    for (size_t i = (size_t)1 << (m->nBits - 1); i-- > 0;) {
        StemMemo e[2] = {m->a[2 * i], m->a[2 * i + 1]};
        m->a[2 * i].nWord = m->a[2 * i + 1].nWord = 0;
        for (int k = 0; k < 2; k++) {
            if (!e[k].nWord) continue;
            StemMemo *w = &m->a[2 * (size_t)memo_set(stemdict_hash(e[k].zWord, e[k].nWord), nBits)];
            w[w[0].nWord != 0] = e[k];
        }
    }
    m->nBits = nBits;
    m->nMiss = 0;
}

/* A dictionary stem is made in the word's buffer (ANALYZER_MAX_TERM bytes). */
_Static_assert(STEMDICT_MAX_WORD + STEMDICT_MAX_SUFFIX <= ANALYZER_MAX_TERM, "stem room");

/* Replaces t's term by its stem by the run's k-th stemmer: from its
** language's dictionary pDict (in place in zTerm, the buffer t->z points
** to), else through the thread's memo of the stemmer's results (a
** phonetic processor: its code, in place). Dictionary words do not go
** into the memo: its pages are the thread's own and cost a fault each on
** first touch, the dictionary's are the executable's, already in memory,
** and a memo that only sees the rest stays small. h is the word's
** stemdict_hash. */
static int stem_with(RunState *s, int k, const StemDict *pDict, Token *t, char *zTerm, uint32_t h) {
    struct sb_stemmer *pStem = s->apStem[k];
    StemMemoTable *pm = s->apMemo[k];
    if (!pStem) { /* a phonetic processor: in place, as a dictionary stems */
        if (t->z != zTerm) memmove(zTerm, t->z, (size_t)t->n);
        t->z = zTerm;
        stem_phonetic(s->a->aStem[k], zTerm, &t->n);
        return LP_OK;
    }
    if (pDict) {
        int n = stemdict_find(pDict, zTerm, t->n, h); /* in place: t->z is zTerm */
        if (n > 0) {
            t->n = n;
            return LP_OK;
        }
    }
    StemMemo *w = NULL;
    if (t->n <= STEM_MEMO_MAX) {
        w = &pm->a[2 * (size_t)memo_set(h, pm->nBits)];
        int bHit = memo_is(&w[0], t->z, t->n);
        if (!bHit && memo_is(&w[1], t->z, t->n)) {
            StemMemo x = w[0]; /* the one used last goes first */
            w[0] = w[1];
            w[1] = x;
            bHit = 1;
        }
        if (bHit) {
            t->z = w[0].zStem;
            t->n = w[0].nStem;
            return LP_OK;
        }
    }
    const sb_symbol *zOut = sb_stemmer_stem(pStem, (const sb_symbol *)t->z, t->n);
    if (!zOut) return lp_err_set(s->err, LP_NOMEM, "out of memory stemming a word");
    const char *zStem = (const char *)zOut;
    int nStem = sb_stemmer_length(pStem);
    if (nStem > ANALYZER_MAX_TERM) nStem = (int)utf8_floor(zStem, ANALYZER_MAX_TERM);
    /* A stemmer never empties a word in practice; keep the word if one did. */
    if (nStem == 0) return LP_OK;
    if (w && nStem <= STEM_MEMO_MAX) {
        if (++pm->nMiss > (1u << pm->nBits) / 2 && pm->nBits < STEM_MEMO_MAX_BITS) {
            memo_grow(pm);
            w = &pm->a[2 * (size_t)memo_set(h, pm->nBits)];
        }
        w[1] = w[0]; /* the older one is dropped */
        StemMemo *m = &w[0];
        m->nWord = (uint8_t)t->n;
        memcpy(m->zWord, t->z, (size_t)t->n);
        m->nStem = (uint8_t)nStem;
        memcpy(m->zStem, zStem, (size_t)nStem);
        zStem = m->zStem;
    }
    t->z = zStem;
    t->n = nStem;
    return LP_OK;
}

/* Replaces t's term (in zTerm) by its stem: the first stemmer's, else,
** where it leaves the word as it is, the next one's, and so on (Sphinx's
** and Manticore's rule for several stemmers). */
static int stem_term(RunState *s, Token *t, char *zTerm, uint32_t h) {
    const StemDict *const *apDict = s->a->apDict;
    if (s->nStem == 1) return stem_with(s, 0, apDict[0], t, zTerm, h);
    char zWord[ANALYZER_MAX_TERM];
    int nWord = t->n;
    memcpy(zWord, zTerm, (size_t)nWord);
    int rc = stem_with(s, 0, apDict[0], t, zTerm, h);
    for (int k = 1; k < s->nStem && rc == LP_OK && t->n == nWord && memcmp(t->z, zWord, (size_t)nWord) == 0; k++) {
        memcpy(zTerm, zWord, (size_t)nWord); /* a dictionary stems in place */
        t->z = zTerm;
        rc = stem_with(s, k, apDict[k], t, zTerm, h);
    }
    return rc;
}

/* '=' right before z[iStart], itself at the start or after a byte that
** cannot end a word: the query's exact form operator ('a=b' is two words). */
static int exact_mark_before(const char *z, size_t iStart) {
    if (iStart == 0 || z[iStart - 1] != '=') return 0;
    if (iStart == 1) return 1;
    unsigned char c = (unsigned char)z[iStart - 2];
    return c < 0x80 && !aAsciiWord[c];
}

/* The exact-form term of the normalised word z[0..n): ANALYZER_EXACT_MARK
** and the word, cut to ANALYZER_MAX_TERM bytes at a character boundary.
** Returns its length. */
static int exact_term(const char *z, int n, char *zOut) {
    if (n > ANALYZER_MAX_TERM - 1) n = (int)utf8_floor(z, ANALYZER_MAX_TERM - 1);
    zOut[0] = ANALYZER_EXACT_MARK;
    memcpy(zOut + 1, z, (size_t)n);
    return n + 1;
}

/* Lower-cases the ASCII word z[0..m) into zOut (ANALYZER_MAX_TERM bytes;
** m at most that), where z has nAvail bytes readable. Sixteen at a time
** while the text holds sixteen more: the bytes past the word are written
** too, within zOut, and ignored. */
static inline void lower_ascii(const char *z, size_t m, size_t nAvail, char *zOut) {
    size_t k = 0;
#ifdef __SSE2__
    _Static_assert(ANALYZER_MAX_TERM % 16 == 0, "whole vectors");
    /* c + (128 - 'A') is below -128 + 26, as a signed byte, for 'A'..'Z'. */
    const __m128i vShift = _mm_set1_epi8((char)(128 - 'A')), vLimit = _mm_set1_epi8(-128 + 26);
    const __m128i vCase = _mm_set1_epi8(0x20);
    for (; k < m && nAvail - k >= 16; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(z + k));
        __m128i bUpper = _mm_cmplt_epi8(_mm_add_epi8(v, vShift), vLimit);
        _mm_storeu_si128((__m128i *)(void *)(zOut + k), _mm_or_si128(v, _mm_and_si128(bUpper, vCase)));
    }
#else
    (void)nAvail;
#endif
    for (; k < m; k++) {
        unsigned c = (unsigned char)z[k];
        zOut[k] = (char)(c + (((c - 'A') < 26u) << 5));
    }
}

/* Gives w, normalised, the next position and the bytes [iStart, iEnd)
** of z. */
static inline __attribute__((always_inline)) void word_place(RunState *s, const char *z, size_t iStart,
                                                             size_t iEnd, PendWord *w) {
    w->iPos = s->iPos++;
    w->iStart = (uint32_t)iStart;
    w->iEnd = (uint32_t)iEnd;
    w->bExact = s->mode == RUN_QUERY_EXACT || (s->mode == RUN_QUERY && exact_mark_before(z, iStart));
}

static int map_word_prepare(RunState *s, const char *z, size_t iStart, size_t iEnd, PendWord *w);

/* Normalises the word z[iStart..iEnd) into w and gives it the next
** position. */
static inline __attribute__((always_inline)) int word_prepare(RunState *s, const char *z, size_t iStart,
                                                              size_t iEnd, int bAscii, PendWord *w) {
    if (bAscii) {
        size_t m = iEnd - iStart;
        if (m > ANALYZER_MAX_TERM) m = ANALYZER_MAX_TERM;
        lower_ascii(z + iStart, m, s->nText - iStart, w->aTerm);
        w->nTerm = (int)m;
    } else {
        w->nTerm = norm_word(z + iStart, iEnd - iStart, s->a->bStrip, w->aTerm);
        if (w->nTerm < 0) {
            return lp_err_setpos(s->err, LP_INTERNAL, (int64_t)iStart, "normalising the word at byte %zu: %s",
                                 iStart, utf8proc_errmsg(w->nTerm));
        }
    }
    word_place(s, z, iStart, iEnd, w);
    return LP_OK;
}

/* Has the UTF-8 word z[0..n) fewer than nMin characters? */
static int chars_below(const char *z, int n, int nMin) {
    if (n >= 4 * nMin) return 0; /* no character takes more than 4 bytes */
    int nChars = 0;
    for (int i = 0; i < n; i++) nChars += (z[i] & 0xC0) != 0x80;
    return nChars < nMin;
}

/* Is the normalised word z[0..n) dropped: DROP_STOP for a stop word,
** DROP_SHORT for one shorter than min_word_len characters, else 0? */
enum { DROP_STOP = 1, DROP_SHORT = 2 };
static int word_dropped(const Analyzer *a, const char *z, int n) {
    if (a->aStop && stop_contains(a, z, n)) return DROP_STOP;
    return a->minWordLen > 1 && chars_below(z, n, a->minWordLen) ? DROP_SHORT : 0;
}

int analyzer_word_indexed(const Analyzer *a, const char *z, int n) {
    if (n <= 0 || n > ANALYZER_MAX_TERM) return n > 0;
    if (!a->bStopStemmed) return !word_dropped(a, z, n);
    if (a->minWordLen > 1 && chars_below(z, n, a->minWordLen)) return 0;
    char zStem[ANALYZER_MAX_TERM];
    memcpy(zStem, z, (size_t)n);
    LpError err;
    return stem_plain(a, zStem, &n, &err) != LP_OK || !stop_contains(a, zStem, n);
}

/* Where the run wants exact forms, hands over the exact form of t (whose
** term is still unstemmed) before it: exact forms exist only where words
** are stemmed (unstemmed, a word is its own exact form), for a document
** with index_exact_words, and for a query's '=word' (w: the word, or a
** word form's first source word). *pbOnly: only the exact form is wanted
** (the query's '=word'), not t. LP_BADINPUT when the query asks for one
** on a table without them. */
static inline __attribute__((always_inline)) int exact_form(RunState *s, const PendWord *w, const Token *t,
                                                            int *pbOnly) {
    *pbOnly = 0;
    if (!(s->nStem && (w->bExact || (s->mode == RUN_INDEX && s->a->bExactWords)))) return LP_OK;
    if (!s->a->bExactWords) {
        return lp_err_setpos(s->err, LP_BADINPUT, (int64_t)w->iStart - (s->mode == RUN_QUERY),
                             "the exact form '=%.*s' needs the table option index_exact_words='1' (words are "
                             "indexed stemmed only)",
                             (int)(w->iEnd - w->iStart), s->zText + w->iStart);
    }
    char aExact[ANALYZER_MAX_TERM];
    Token e = *t;
    e.z = aExact;
    e.n = exact_term(t->z, t->n, aExact);
    *pbOnly = w->bExact;
    return s->xToken(s->ctx, &e);
}

/* The '~' word form (matched after stemming) of the stem t, if any, into
** t. */
static void post_form(const RunState *s, Token *t) {
    const WfEntry *e = wordforms_find(s->pWf, 1, t->z, (size_t)t->n);
    if (e && e->zDst) {
        t->z = e->zDst;
        t->n = e->nDst;
    }
}

/* word_out_as for a table whose stop words are stems (stopwords_unstemmed
** '0'): min_word_len before stemming, the stop words after, then the
** exact form (of the word as written) and the stem. */
static int word_out_stopstem(RunState *s, PendWord *w, Token *t, int bHashed, int bShift) {
    const Analyzer *a = s->a;
    int bHeld = bShift && s->bHeld;
    if (bShift) s->bHeld = 0;
    int drop = a->minWordLen > 1 && chars_below(w->aTerm, w->nTerm, a->minWordLen) ? DROP_SHORT : 0;
    char aWord[ANALYZER_MAX_TERM];
    int nWord = w->nTerm;
    memcpy(aWord, w->aTerm, (size_t)nWord);
    if (!drop && !(a->minStemLen > 1 && chars_below(w->aTerm, w->nTerm, a->minStemLen))) {
        int rc = stem_term(s, t, w->aTerm, bHashed ? w->h : stemdict_hash(w->aTerm, w->nTerm));
        if (rc != LP_OK) return rc;
    }
    if (!drop && stop_contains(a, t->z, t->n)) drop = DROP_STOP;
    if (drop) {
        if (bShift && !bHeld && (drop == DROP_STOP ? a->bStopNoStep : a->bShortNoStep)) s->posAdj--;
        return LP_OK;
    }
    Token u = *t;
    u.z = aWord;
    u.n = nWord;
    int bOnly, rc = exact_form(s, w, &u, &bOnly);
    if (rc != LP_OK || bOnly) return rc;
    if (bShift && s->bWfPost) post_form(s, t);
    return s->xToken(s->ctx, t);
}

/* Filters, stems and hands over a prepared word (w->h is set when
** bHashed). bShift (a constant where inlined): positions may shift (the
** run has word forms, whose '~' rules apply too, or dropped words that
** take no position: RunState.posAdj); without, the common path tests
** none of that. */
static inline __attribute__((always_inline)) int word_out_as(RunState *s, PendWord *w, int bHashed,
                                                             const int bShift) {
    Token t;
    t.iPos = bShift ? (uint32_t)(w->iPos + s->posAdj) : w->iPos;
    t.iStart = w->iStart;
    t.iEnd = w->iEnd;
    t.z = w->aTerm;
    t.n = w->nTerm;
    /* NFKC + case folding maps a letter or digit to at least one character;
    ** an empty result would be a utf8proc change: count the word, emit nothing. */
    if (NEVER(w->nTerm == 0)) return LP_OK;
    if (s->mode != RUN_UNSTEMMED) {
        if (s->a->bStopStemmed) return word_out_stopstem(s, w, &t, bHashed, bShift);
        int drop = word_dropped(s->a, w->aTerm, w->nTerm);
        int bHeld = bShift && s->bHeld;
        if (bShift) s->bHeld = 0;
        if (drop) {
            /* stopword_step, overshort_step 0: the words after it move up */
            if (bShift && !bHeld && (drop == DROP_STOP ? s->a->bStopNoStep : s->a->bShortNoStep)) s->posAdj--;
            return LP_OK;
        }
        /* The exact form goes first, as the stemmer may rewrite aTerm in
        ** place. */
        int bOnly, rc = exact_form(s, w, &t, &bOnly);
        if (rc != LP_OK || bOnly) return rc;
        if (s->nStem && !(s->a->minStemLen > 1 && chars_below(w->aTerm, w->nTerm, s->a->minStemLen))) {
            rc = stem_term(s, &t, w->aTerm, bHashed ? w->h : stemdict_hash(w->aTerm, w->nTerm));
            if (rc != LP_OK) return rc;
        }
        if (bShift && s->bWfPost) post_form(s, &t);
    }
    return s->xToken(s->ctx, &t);
}

/* word_out_as for a run with word forms or position steps. */
static int word_out(RunState *s, PendWord *w, int bHashed) {
    return word_out_as(s, w, bHashed, 1);
}

static int wf_feed(RunState *s, PendWord *w);

/* Filters, stems and hands over a prepared word, or with word forms
** feeds it to them. */
static inline int word_finish(RunState *s, PendWord *w, int bHashed) {
    if (s->pWf) return wf_feed(s, w);
    return s->bSteps ? word_out(s, w, bHashed) : word_out_as(s, w, bHashed, 0);
}

/* Hands over the destination of entry e for the source words
** w[0..nSrc) (consecutive positions): its words at consecutive positions
** from the first source word's, each with the whole run's bytes, not
** dropped and not stemmed; exact forms as for any word. */
static int wf_emit(RunState *s, const PendWord *w, int nSrc, const WfEntry *e) {
    int64_t iPos = (int64_t)w[0].iPos + s->posAdj;
    if (iPos + e->nDstWords > (int64_t)UINT32_MAX) {
        return lp_err_set(s->err, LP_LIMIT, "word forms would take the text past %u word positions", UINT32_MAX);
    }
    const char *z = e->zDst, *zEnd = e->zDst + e->nDst;
    for (int k = 0; k < e->nDstWords; k++) {
        const char *p = memchr(z, ' ', (size_t)(zEnd - z));
        if (!p) p = zEnd;
        Token t = {z, (int)(p - z), (uint32_t)(iPos + k), w[0].iStart, w[nSrc - 1].iEnd};
        int bOnly, rc = exact_form(s, &w[0], &t, &bOnly);
        if (rc == LP_OK && !bOnly) rc = s->xToken(s->ctx, &t);
        if (rc != LP_OK) return rc;
        z = p + 1;
    }
    s->posAdj += e->nDstWords - nSrc;
    return LP_OK;
}

/* The key of words w[0..n) (terms joined by spaces) into zKey; its length. */
static size_t wf_key(const PendWord *w, int n, char *zKey) {
    size_t m = 0;
    for (int k = 0; k < n; k++) {
        if (k) zKey[m++] = ' ';
        memcpy(zKey + m, w[k].aTerm, (size_t)w[k].nTerm);
        m += (size_t)w[k].nTerm;
    }
    return m;
}

/* Resolves the first of the waiting words: the longest run of them from
** the first that is a rule's source is replaced; none: the first goes out
** as it is. The words after are fed again. */
static int wf_resolve(RunState *s) {
    WfRun *r = s->pWfRun;
    PendWord aw[WF_MAX_WORDS];
    int n = r->n;
    memcpy(aw, r->a, sizeof(PendWord) * (size_t)n);
    r->n = 0;
    char zKey[WF_MAX_WORDS * (ANALYZER_MAX_TERM + 1)];
    int k = n, rc = LP_OK;
    const WfEntry *e = NULL;
    for (; k > 0; k--) {
        e = wordforms_find(s->pWf, 0, zKey, wf_key(aw, k, zKey));
        if (e && e->zDst) break;
    }
    if (k > 0) {
        rc = wf_emit(s, aw, k, e);
    } else {
        rc = word_out(s, &aw[0], 0);
        k = 1;
    }
    for (; k < n && rc == LP_OK; k++) rc = wf_feed(s, &aw[k]);
    return rc;
}

/* Hands over every waiting word. */
static int wf_drain(RunState *s) {
    int rc = LP_OK;
    while (rc == LP_OK && s->pWfRun->n > 0) rc = wf_resolve(s);
    return rc;
}

/* The rule for w alone when it maps one word to one, else NULL. Sphinx
** applies such rules to every token, a blend token's variants and parts
** too, and the others (several words on either side) to runs of plain
** words only. A query's prefix (a '*' right after the word) takes none. */
static const WfEntry *wf_one(const RunState *s, const PendWord *w) {
    if (s->mode != RUN_INDEX && w->iEnd < s->nText && s->zText[w->iEnd] == '*') return NULL;
    const WfEntry *e = wordforms_find(s->pWf, 0, w->aTerm, (size_t)w->nTerm);
    return e && e->zDst && e->nDstWords == 1 ? e : NULL;
}

/* Takes the next word w through the word forms: it joins the waiting
** words while they and it start some rule's source, else they are
** resolved; a word that starts none goes out at once. */
static int wf_feed(RunState *s, PendWord *w) {
    WfRun *r = s->pWfRun;
    if (s->bWfAlone) {
        const WfEntry *e = wf_one(s, w);
        return e ? wf_emit(s, w, 1, e) : word_out(s, w, 0);
    }
    /* A query's prefix (a '*' right after the word) takes part in none. */
    int bPrefix = s->mode != RUN_INDEX && w->iEnd < s->nText && s->zText[w->iEnd] == '*';
    char zKey[WF_MAX_WORDS * (ANALYZER_MAX_TERM + 1)];
    while (r->n > 0) {
        if (!bPrefix && r->n < WF_MAX_WORDS && w->iPos == r->a[r->n - 1].iPos + 1) {
            r->a[r->n] = *w;
            const WfEntry *e = wordforms_find(s->pWf, 0, zKey, wf_key(r->a, r->n + 1, zKey));
            if (e) {
                r->n++;
                return e->bPrefix ? LP_OK : wf_resolve(s);
            }
        }
        int rc = wf_resolve(s);
        if (rc != LP_OK) return rc;
    }
    const WfEntry *e = bPrefix ? NULL : wordforms_find(s->pWf, 0, w->aTerm, (size_t)w->nTerm);
    if (!e) return word_out(s, w, 0);
    if (e->bPrefix) {
        r->a[r->n++] = *w;
        return LP_OK;
    }
    return wf_emit(s, w, 1, e);
}

/* Words wait in groups of ANALYZER_PEND when a stem dictionary is used: a
** collection's first pass meets most words for the first time, and each
** then costs a cache miss or two in the dictionary (its bucket offset, then
** its entries). Looked up one at a time, the misses come one after the
** other; a group's lookups are prefetched together (every bucket offset,
** then every word's entries) and their misses overlap. */
#define ANALYZER_PEND 8

typedef struct PendRun {
    PendWord a[ANALYZER_PEND];
    int n;
} PendRun;

/* Hands over the pending words, in order. */
static int pend_flush(RunState *s, PendRun *pr) {
    const StemDict *d = s->pDict;
    int n = pr->n;
    pr->n = 0;
    for (int k = 0; k < n; k++) {
        uint32_t b = stemdict_bucket(pr->a[k].h, d->nBits);
        __builtin_prefetch(d->aPool + d->aBucket[b]);
    }
    for (int k = 0; k < n; k++) {
        int rc = word_finish(s, &pr->a[k], 1);
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

/* Normalises, filters, stems and hands over the word z[iStart..iEnd), or
** with a stem dictionary (pr not NULL) queues it, handing over a full
** group. bMap (a constant where inlined): normalised as charset_table
** says. */
static inline __attribute__((always_inline)) int emit_word(RunState *s, PendRun *pr, const char *z,
                                                           size_t iStart, size_t iEnd, int bAscii,
                                                           const int bMap) {
    if (!pr) {
        PendWord w;
        int rc = bMap ? map_word_prepare(s, z, iStart, iEnd, &w) : word_prepare(s, z, iStart, iEnd, bAscii, &w);
        return rc == LP_OK ? word_finish(s, &w, 0) : rc;
    }
    PendWord *w = &pr->a[pr->n];
    int rc = bMap ? map_word_prepare(s, z, iStart, iEnd, w) : word_prepare(s, z, iStart, iEnd, bAscii, w);
    if (rc != LP_OK) {
        /* The words before it go out first, as they would one by one. */
        int rc2 = pend_flush(s, pr);
        return rc2 != LP_OK ? rc2 : rc;
    }
    w->h = stemdict_hash(w->aTerm, w->nTerm);
    __builtin_prefetch(&s->pDict->aBucket[stemdict_bucket(w->h, s->pDict->nBits)]);
    return ++pr->n == ANALYZER_PEND ? pend_flush(s, pr) : LP_OK;
}

/* ---------------------------------------- sentences and paragraphs */

enum { SP_NONE = 0, SP_SENTENCE, SP_PARAGRAPH }; /* a paragraph's end outranks a sentence's */

/* The character at p[j] (j < n): its code point, and its length. */
static int char_at(const unsigned char *p, size_t n, size_t j, uint32_t *pCp) {
    if (p[j] < 0x80) {
        *pCp = p[j];
        return 1;
    }
    return decode_valid(p + j, n - j, pCp);
}

static int is_word_char(uint32_t cp) {
    if (cp < 0x80) return aAsciiWord[cp];
    int cls = char_class(cp);
    return cls == CC_WORD || cls == CC_SINGLE;
}

/* Does the '.' at p[i] end a sentence? Not, by Sphinx's rules (as searchd 2.2.11 reads them):
**   - inside a word: a word's character, '-', '_' or ',' right after it
**     ("S.p.A.", "3.14", "S.p.A., founded");
**   - inside a phrase: a space, then an ASCII lower-case letter, or '('
**     and one ("Corp. announced", "Inc. (the company)");
**   - after what looks like an initial, a title or a salutation, the word
**     characters right before it being one capital letter ("John D. Doe"), two
**     characters, a capital and no capital ("Mr. Doe", "Dr.") or MR, MS,
**     DR, or three that fold to mrs or drs ("Mrs. Doe"). Sphinx reads
**     those characters as bytes, so a letter beyond ASCII is no capital. */
static int dot_ends_sentence(const unsigned char *p, size_t n, size_t i) {
    if (i + 1 >= n) return 1;
    uint32_t cp;
    char_at(p, n, i + 1, &cp);
    unsigned char c1 = p[i + 1];
    if (is_word_char(cp) || c1 == ',' || c1 == '-' || c1 == '_') return 0;
    if (c1 == ' ' || c1 == '\t' || c1 == '\n' || c1 == '\r') {
        unsigned char c2 = i + 2 < n ? p[i + 2] : 0, c3 = i + 3 < n ? p[i + 3] : 0;
        if ((c2 >= 'a' && c2 <= 'z') || (c2 == '(' && c3 >= 'a' && c3 <= 'z')) return 0;
    }
    /* the word characters right before it, as Sphinx counts its token so
    ** far (up to 4) */
    size_t j = i;
    int nChars = 0;
    while (j > 0 && nChars < 4) {
        size_t k = j - 1;
        while (k > 0 && (p[k] & 0xC0) == 0x80) k--;
        char_at(p, n, k, &cp);
        if (!is_word_char(cp)) break;
        nChars++;
        j = k;
    }
#define LP_CAP(c) ((c) >= 'A' && (c) <= 'Z')
    if (nChars == 1 && LP_CAP(p[i - 1])) return 0;
    if (nChars == 2 && LP_CAP(p[i - 2]) &&
        (!LP_CAP(p[i - 1]) || (p[i - 2] == 'M' && (p[i - 1] == 'R' || p[i - 1] == 'S')) ||
         (p[i - 2] == 'D' && p[i - 1] == 'R'))) {
        return 0;
    }
#undef LP_CAP
    if (nChars == 3 && i - j == 3 && ((p[j] | 0x20) == 'm' || (p[j] | 0x20) == 'd') && (p[j + 1] | 0x20) == 'r' &&
        (p[j + 2] | 0x20) == 's') {
        return 0;
    }
    return 1;
}

/* Is the line break at p[i] followed by another, with only spaces, tabs
** and '\r' between them (a blank line)? */
static int blank_line_at(const unsigned char *p, size_t n, size_t i) {
    for (size_t j = i + 1; j < n; j++) {
        if (p[j] == '\n') return 1;
        if (p[j] != ' ' && p[j] != '\t' && p[j] != '\r') return 0;
    }
    return 0;
}

static int scan_class(const Analyzer *a, uint32_t cp);

/* Does the character at p[i] (i < n) not start a word for a's scan: a
** separator, or a mark with nothing to attach to? */
static int sep_at(const Analyzer *a, const unsigned char *p, size_t n, size_t i) {
    uint32_t cp = p[i];
    if (cp >= 0x80) decode_valid(p + i, n - i, &cp);
    int cls = scan_class(a, cp);
    return cls == CC_SEP || cls == CC_MARK;
}

/* A phrase boundary character, after a word, ends before p[i]: it is a
** boundary when a separator (or the end) follows it. */
static void pb_note(RunState *s, const unsigned char *p, size_t n, size_t i) {
    if (i >= n || sep_at(s->a, p, n, i)) s->bPbSeen = 1;
}

/* The phrase boundary characters in the valid UTF-8 z[0..n): a bound on
** the steps a run of it takes. */
static uint64_t pb_count(const Analyzer *a, const char *z, size_t n) {
    const unsigned char *p = (const unsigned char *)z;
    uint64_t k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp = p[i];
        i += cp < 0x80 ? 1 : (size_t)decode_valid(p + i, n - i, &cp);
        k += charset_has(&a->pb, cp);
    }
    return k;
}

/* A phrase boundary came before the word about to go out: it goes the
** step further on (and the steps are counted, to leave them out of the
** length). */
static void pb_step(RunState *s) {
    s->iPos += (uint32_t)s->a->pbStep;
    s->pbAdj += s->a->pbStep;
    s->bPbSeen = 0;
}

/* The separator cp at p[i..i+len), after the word [iWord, iWordEnd): a
** boundary, if it is one, joins the one pending in s. */
static void sp_note(RunState *s, const unsigned char *p, size_t n, size_t i, int len, uint32_t cp,
                    size_t iWord, size_t iWordEnd) {
    int kind = SP_NONE;
    switch (cp) {
    case '?':
    case '!':
    case 0x3002: /* 。 */
    case 0xFF01: /* ！ */
    case 0xFF1F: /* ？ */
        kind = SP_SENTENCE;
        break;
    case '.':
        kind = dot_ends_sentence(p, n, i) ? SP_SENTENCE : SP_NONE;
        break;
    case '\n':
        kind = blank_line_at(p, n, i) ? SP_PARAGRAPH : SP_NONE;
        break;
    case 0x2029: /* PARAGRAPH SEPARATOR */
        kind = SP_PARAGRAPH;
        break;
    }
    if (kind > s->spKind) {
        s->spKind = kind;
        s->spStart = (uint32_t)i;
        s->spEnd = (uint32_t)(i + (size_t)len);
    }
}

/* Hands over every word waiting: the dictionary group (pr, may be NULL),
** then word forms'. */
static int pending_out(RunState *s, PendRun *pr) {
    int rc = pr && pr->n ? pend_flush(s, pr) : LP_OK;
    return rc == LP_OK && s->pWf ? wf_drain(s) : rc;
}

/* Hands over the pending boundary, after the words queued before it, at
** a position of its own. */
static int sp_emit(RunState *s, PendRun *pr) {
    int rc = pending_out(s, pr);
    if (rc != LP_OK) return rc;
    const char *z = s->spKind == SP_PARAGRAPH ? ANALYZER_PARAGRAPH : ANALYZER_SENTENCE;
    Token t = {z, (int)strlen(z), (uint32_t)(s->iPos++ + s->posAdj), s->spStart, s->spEnd};
    s->spKind = SP_NONE;
    return s->xToken(s->ctx, &t);
}

/* A word found at z[iStart..iEnd): the boundary before it (bSp), then
** the word, handed over (emit_word). */
static inline __attribute__((always_inline)) int word_found(RunState *s, PendRun *pr, const char *z,
                                                            size_t iStart, size_t iEnd, int bAscii,
                                                            const int bMap, const int bSp) {
    if (bSp && s->bPbSeen) pb_step(s);
    if (bSp && s->spKind) {
        int rc = sp_emit(s, pr);
        if (rc != LP_OK) return rc;
    }
    return emit_word(s, pr, z, iStart, iEnd, bAscii, bMap);
}

/* The words (and, with bSp, the boundaries) of s's text, handed over in
** order. Inlined twice: with bStars and bSp constant 0, the common case
** (a document without index_sp) tests no separator beyond the word table. */
static inline __attribute__((always_inline)) int scan(RunState *s, PendRun *pr, const int bStars,
                                                      const int bSp) {
    const char *z = s->zText;
    const unsigned char *p = (const unsigned char *)z;
    size_t n = s->iScanTo, i = s->iScanFrom;
    size_t iWord = s->iWord, iWordEnd = s->iWordEnd; /* the last word's bytes */
    while (i < n) {
        size_t iStart = i;
        int bAscii = 1;
        if (p[i] < 0x80) {
            /* The hot loop: runs of ASCII separators and letters. */
            if (!aAsciiWord[p[i]]) {
                if (aAsciiAttn[p[i]]) {
                    if (p[i] == '*') {
                        if (bStars && i != iWordEnd) s->iPos++;
                    } else if (bSp && s->bIndexSp && iWordEnd != SIZE_MAX) {
                        sp_note(s, p, n, i, 1, p[i], iWord, iWordEnd);
                    }
                }
                if (bSp && s->a->pb.aAscii[p[i]] && iWordEnd != SIZE_MAX) pb_note(s, p, n, i + 1);
                i++;
                continue;
            }
            i++;
            while (i < n && aAsciiWord[p[i]]) i++;
            if (i < n && p[i] >= 0x80) i = scan_word(p, n, i, s->a->bStrip, &bAscii);
        } else {
            uint32_t cp;
            int len = decode_valid(p + i, n - i, &cp);
            int cls = char_class(cp);
            if (cls == CC_SEP && bSp && iWordEnd != SIZE_MAX) {
                if (s->bIndexSp) sp_note(s, p, n, i, len, cp, iWord, iWordEnd);
                if (charset_has(&s->a->pb, cp)) pb_note(s, p, n, i + (size_t)len);
            }
            i += (size_t)len;
            if (cls == CC_SEP || cls == CC_MARK) continue; /* a mark with nothing to attach to */
            bAscii = 0;
            i = cls == CC_SINGLE ? scan_marks(p, n, i) : scan_word(p, n, i, s->a->bStrip, &bAscii);
        }
        int rc = word_found(s, pr, z, iStart, i, bAscii, 0, bSp);
        if (rc != LP_OK) return rc;
        iWord = iStart;
        iWordEnd = i;
    }
    s->iWord = iWord;
    s->iWordEnd = iWordEnd;
    return LP_OK;
}

/* ------------------------------------------------ charset_table */

/* The class of cp under the analyzer's charset_table, blend_chars and
** ngram_chars: CC_BLEND, CC_NGRAM or CC_MAPPED (its target in *pTo) where
** an item of one names it (in that order); else, where an alias takes in
** the class char_class() gives it (ngram_chars' CJK aliases take in
** CC_SINGLE), that class; else CC_SEP. */
static int map_class_slow(const Analyzer *a, uint32_t cp, uint32_t *pTo) {
    if (a->bBlend && charmap_get(&a->blend, cp, pTo)) return CC_BLEND;
    if (a->bNgram && charmap_get(&a->ngram, cp, pTo)) return CC_NGRAM;
    if (charmap_get(&a->map, cp, pTo)) return CC_MAPPED;
    int cls = cp < 0x80 ? (aAsciiWord[cp] ? CC_WORD : CC_SEP) : char_class(cp);
    if (cls == CC_SINGLE) return ((a->map.aliases | a->ngram.aliases) & CHARMAP_CJK) ? CC_SINGLE : CC_SEP;
    if (cls == CC_WORD || cls == CC_MARK) return (a->map.aliases & CHARMAP_NON_CJK) ? cls : CC_SEP;
    return CC_SEP;
}

/* Does class cls come with a target (a character an item names)? */
static inline int cls_named(int cls) {
    return cls == CC_MAPPED || cls == CC_BLEND || cls == CC_NGRAM;
}

/* map_class_slow() through a->aMapTo and a->aMapCls for ASCII (built by
** map_ascii_build). */
static inline int map_class(const Analyzer *a, uint32_t cp, uint32_t *pTo) {
    if (cp < 0x80 && a->aMapTo[cp]) {
        *pTo = a->aMapTo[cp];
        return a->aMapCls[cp];
    }
    return map_class_slow(a, cp, pTo);
}

/* cp's class as a's scan reads it: under charset_table (map_class), else
** by the default tables. */
static int scan_class(const Analyzer *a, uint32_t cp) {
    uint32_t to;
    if (a->bMap) return map_class(a, cp, &to);
    return cp < 0x80 ? (aAsciiWord[cp] ? CC_WORD : CC_SEP) : char_class(cp);
}

/* The ASCII tables of map_class(): each character's class and target (its
** own code for a separator or an alias's letter or digit); target 0 where
** a character maps beyond ASCII (map_class_slow() answers). */
static void map_ascii_build(Analyzer *a) {
    for (uint32_t c = 1; c < 0x80; c++) {
        uint32_t to = c;
        int cls = map_class_slow(a, c, &to);
        a->aMapCls[c] = (uint8_t)cls;
        a->aMapTo[c] = (uint8_t)(cls_named(cls) ? (to < 0x80 ? to : 0) : c);
    }
}

/* The end of the word whose characters so far end at p[i], under
** charset_table: over the characters that extend a word (a named
** character, or a letter, digit or mark an alias takes in, or with
** remove_diacritics a joiner) and blend characters (*pbBlend set when it
** takes one). */
static size_t map_scan_word(const Analyzer *a, const unsigned char *p, size_t n, size_t i, int *pbBlend) {
    while (i < n) {
        uint32_t cp, to;
        int len = char_at(p, n, i, &cp);
        int cls = map_class(a, cp, &to);
        if (cls == CC_BLEND) {
            *pbBlend = 1;
        } else if (!(cls == CC_MAPPED || cls == CC_WORD || cls == CC_MARK ||
                     (a->bStrip && (a->map.aliases & CHARMAP_NON_CJK) && is_joiner(cp)))) {
            break; /* a separator, or a character that is a word by itself */
        }
        i += (size_t)len;
    }
    return i;
}

/* Appends the bytes z[0..m) to the term w at most (cut at a character
** boundary where it fills up); 0 once the term is full. */
static int term_append(PendWord *w, const char *z, int m) {
    int nRoom = ANALYZER_MAX_TERM - w->nTerm;
    if (m > nRoom) m = (int)utf8_floor(z, (size_t)nRoom);
    memcpy(w->aTerm + w->nTerm, z, (size_t)m);
    w->nTerm += m;
    return w->nTerm < ANALYZER_MAX_TERM;
}

/* The term of z[iStart..iEnd) under charset_table into w->aTerm: each
** named character (blend_chars' too, or with bSkipBlend none of those)
** becomes its target, as is; each stretch of the others (the aliases'
** letters, digits and marks) is normalised as without the table. */
static int map_term(RunState *s, const char *z, size_t iStart, size_t iEnd, int bSkipBlend, PendWord *w) {
    const Analyzer *a = s->a;
    const unsigned char *p = (const unsigned char *)z;
    w->nTerm = 0;
    size_t i = iStart;
    while (i < iEnd) {
        uint32_t cp, to;
        int len = char_at(p, iEnd, i, &cp);
        int cls = map_class(a, cp, &to);
        if (cls == CC_BLEND && bSkipBlend) {
            i += (size_t)len;
            continue;
        }
        if (cls_named(cls)) {
            utf8proc_uint8_t aEnc[4];
            int m = (int)utf8proc_encode_char((utf8proc_int32_t)to, aEnc);
            i += (size_t)len;
            if (!term_append(w, (const char *)aEnc, m)) break;
            continue;
        }
        size_t j = i + (size_t)len;
        int bAscii = cp < 0x80;
        while (j < iEnd) {
            int len2 = char_at(p, iEnd, j, &cp);
            if (cls_named(map_class(a, cp, &to))) break;
            bAscii &= cp < 0x80;
            j += (size_t)len2;
        }
        char aNorm[ANALYZER_MAX_TERM];
        int m;
        if (bAscii) {
            /* NFKC and case folding of ASCII letters and digits: lower case */
            m = j - i > ANALYZER_MAX_TERM ? ANALYZER_MAX_TERM : (int)(j - i);
            for (int k = 0; k < m; k++) {
                unsigned c = p[i + (size_t)k];
                aNorm[k] = (char)(c + (((c - 'A') < 26u) << 5));
            }
        } else {
            m = norm_word(z + i, j - i, a->bStrip, aNorm);
        }
        if (m < 0) {
            return lp_err_setpos(s->err, LP_INTERNAL, (int64_t)i, "normalising the word at byte %zu: %s", i,
                                 utf8proc_errmsg(m));
        }
        i = j;
        if (!term_append(w, aNorm, m)) break;
    }
    return LP_OK;
}

/* As word_prepare, under charset_table. */
static int map_word_prepare(RunState *s, const char *z, size_t iStart, size_t iEnd, PendWord *w) {
    int rc = map_term(s, z, iStart, iEnd, 0, w);
    if (rc == LP_OK) word_place(s, z, iStart, iEnd, w);
    return rc;
}

/* ------------------------------------------------ blend_chars */

/* A token of blend_chars: a run of word characters and blend characters
** holding at least one of the latter. Its parts are its runs of word
** characters (the words it holds with the blend characters read as
** separators); a variant is the token trimmed as a blend_mode option says:
** [iFrom, iTo), without its blend characters at all for trim_all
** (bSkipBlend). A variant is its own term only where it differs from
** every part: it holds a blend character, or (trim_all) joins two parts. */
typedef struct BlendVariant {
    size_t iFrom, iTo;
    int bSkipBlend;
} BlendVariant;

/* Is the character at p[i] (< n) a blend character? Its length in *pLen. */
static int blend_at(const Analyzer *a, const unsigned char *p, size_t n, size_t i, int *pLen) {
    uint32_t cp, to;
    *pLen = char_at(p, n, i, &cp);
    return map_class(a, cp, &to) == CC_BLEND;
}

/* The variant of the token p[iStart..iEnd) (nParts parts) that the option
** bit gives, in *v; 0 when it is no term of its own. */
static int blend_variant(const Analyzer *a, const unsigned char *p, size_t iStart, size_t iEnd, int nParts,
                         unsigned bit, BlendVariant *v) {
    size_t i = iStart, j = iEnd;
    int len;
    if (bit & (BLEND_TRIM_HEAD | BLEND_TRIM_BOTH | BLEND_TRIM_ALL)) {
        while (i < j && blend_at(a, p, j, i, &len)) i += (size_t)len;
    }
    if (bit & (BLEND_TRIM_TAIL | BLEND_TRIM_BOTH | BLEND_TRIM_ALL)) {
        while (j > i) {
            size_t k = j - 1;
            while (k > i && (p[k] & 0xC0) == 0x80) k--;
            if (!blend_at(a, p, j, k, &len)) break;
            j = k;
        }
    }
    *v = (BlendVariant){i, j, bit == BLEND_TRIM_ALL};
    if (i == j) return 0;
    if (v->bSkipBlend) return nParts > 1;
    for (size_t k = i; k < j; k += (size_t)len) {
        if (blend_at(a, p, j, k, &len)) return 1;
    }
    return 0;
}

/* Hands over the variant v of the token z[iStart..iEnd) (the bytes it
** carries, whatever it trims) at position iPos (the position its first
** part takes, or would take), after what is pending: it takes no position
** of its own, and of the word forms only one-word rules apply (wf_one).
** *pbDropped: it is a stop word or too short (in a query: not looked
** for). */
static int blend_variant_out(RunState *s, PendRun *pr, const BlendVariant *v, size_t iStart, size_t iEnd,
                             uint32_t iPos, int *pbDropped) {
    int rc = pending_out(s, pr);
    if (rc != LP_OK) return rc;
    PendWord w;
    rc = map_term(s, s->zText, v->iFrom, v->iTo, v->bSkipBlend, &w);
    if (rc != LP_OK) return rc;
    /* its bytes are the whole token's, whatever it trims */
    word_place(s, s->zText, iStart, iEnd, &w);
    s->iPos--;
    w.iPos = iPos;
    s->bHeld = 1; /* dropped, it moves nothing */
    const WfEntry *e = s->pWf ? wf_one(s, &w) : NULL;
    if (e) {
        *pbDropped = 0;
        return wf_emit(s, &w, 1, e);
    }
    *pbDropped = s->mode != RUN_UNSTEMMED && !analyzer_word_indexed(s->a, w.aTerm, w.nTerm);
    return word_out(s, &w, 0);
}

/* The token z[iStart..iEnd) holding blend characters: in a document, each
** variant blend_mode asks for at the first part's position, then the
** parts as words; in a query, the variant that is the token as written
** where blend_mode makes one, else its first variant in aBlendMode's order
** that is a term of its own, the positions of its parts passed over (so
** a phrase "AT&T company" has company two places on, as documents have
** it), or where none is (a stop word is none), its parts. A token of
** blend characters only (pure) is one word as written, in every mode
** (as in Sphinx), unless skip_pure. */
static int blend_token(RunState *s, PendRun *pr, size_t iStart, size_t iEnd, const int bSp) {
    const Analyzer *a = s->a;
    const unsigned char *p = (const unsigned char *)s->zText;
    int nParts = 0, bIn = 0, len;
    for (size_t i = iStart; i < iEnd; i += (size_t)len) {
        int bBlend = blend_at(a, p, iEnd, i, &len);
        nParts += !bBlend && !bIn;
        bIn = !bBlend;
    }
    if (nParts == 0) {
        /* in every mode, as Sphinx indexes one: trimming would leave nothing */
        if (a->blendModes & BLEND_SKIP_PURE) return LP_OK;
        return word_found(s, pr, s->zText, iStart, iEnd, 0, 1, bSp);
    }
    if (bSp && s->spKind) {
        int rc = sp_emit(s, pr);
        if (rc != LP_OK) return rc;
    }
    BlendVariant aDone[LP_ARRAY_SIZE(aBlendMode)];
    int nDone = 0;
    /* A query looks first for the token as written, where a variant is
    ** that (as Sphinx does), then for the others in order; a document
    ** takes them all, in order. */
    for (int k = s->mode == RUN_INDEX ? (int)LP_ARRAY_SIZE(aBlendMode) : 0;
         k < 2 * (int)LP_ARRAY_SIZE(aBlendMode); k++) {
        int bWhole = k < (int)LP_ARRAY_SIZE(aBlendMode);
        unsigned bit = aBlendMode[k % (int)LP_ARRAY_SIZE(aBlendMode)].bit;
        BlendVariant v;
        if (!(a->blendModes & bit) || bit == BLEND_SKIP_PURE) continue;
        if (!blend_variant(a, p, iStart, iEnd, nParts, bit, &v)) continue;
        if (bWhole && (v.iFrom != iStart || v.iTo != iEnd || v.bSkipBlend)) continue;
        int bSeen = 0;
        for (int d = 0; d < nDone; d++) {
            bSeen |= aDone[d].iFrom == v.iFrom && aDone[d].iTo == v.iTo && aDone[d].bSkipBlend == v.bSkipBlend;
        }
        if (bSeen) continue;
        int bDropped;
        int rc = blend_variant_out(s, pr, &v, iStart, iEnd, (uint32_t)s->iPos, &bDropped);
        if (rc != LP_OK) return rc;
        if (s->mode != RUN_INDEX && !bDropped) {
            s->iPos += nParts;
            return LP_OK;
        }
        aDone[nDone++] = v;
    }
    /* the first part keeps the variants' position even where it is dropped */
    s->bHeld = nDone > 0;
    /* The parts, as words; with word forms, each alone (wf_one), handed
    ** over at once, after the words before the token: no run of several
    ** words takes a part in (as in Sphinx). */
    int rc = s->pWf ? pending_out(s, pr) : LP_OK;
    s->bWfAlone = s->pWf != NULL;
    for (size_t i = iStart; i < iEnd && rc == LP_OK;) {
        if (blend_at(a, p, iEnd, i, &len)) {
            i += (size_t)len;
            continue;
        }
        size_t j = i;
        while (j < iEnd && !blend_at(a, p, iEnd, j, &len)) j += (size_t)len;
        rc = emit_word(s, pr, s->zText, i, j, 0, 1);
        if (rc == LP_OK && s->pWf) rc = pending_out(s, pr);
        i = j;
    }
    s->bWfAlone = 0;
    return rc;
}

/* scan() under charset_table: every character classified by map_class(),
** none by the ASCII tables. */
static int scan_map(RunState *s, PendRun *pr, const int bStars, const int bSp) {
    const Analyzer *a = s->a;
    const char *z = s->zText;
    const unsigned char *p = (const unsigned char *)z;
    size_t n = s->iScanTo, i = s->iScanFrom;
    size_t iWord = s->iWord, iWordEnd = s->iWordEnd;
    while (i < n) {
        size_t iStart = i;
        uint32_t cp, to;
        int len = char_at(p, n, i, &cp);
        int cls = map_class(a, cp, &to);
        i += (size_t)len;
        if (cls == CC_SEP || cls == CC_MARK) {
            if (cp == '*') {
                if (bStars && iStart != iWordEnd) s->iPos++;
            } else if (cls == CC_SEP && bSp && iWordEnd != SIZE_MAX) {
                if (s->bIndexSp) sp_note(s, p, n, iStart, len, cp, iWord, iWordEnd);
                if (charset_has(&a->pb, cp)) pb_note(s, p, n, i);
            }
            continue;
        }
        int rc;
        if (cls == CC_SINGLE || cls == CC_NGRAM) {
            i = scan_marks(p, n, i);
            rc = word_found(s, pr, z, iStart, i, 0, 1, bSp);
        } else {
            int bBlend = cls == CC_BLEND;
            i = map_scan_word(a, p, n, i, &bBlend);
            rc = bBlend ? blend_token(s, pr, iStart, i, bSp) : word_found(s, pr, z, iStart, i, 0, 1, bSp);
        }
        if (rc != LP_OK) return rc;
        iWord = iStart;
        iWordEnd = i;
    }
    s->iWord = iWord;
    s->iWordEnd = iWordEnd;
    return LP_OK;
}

/* scan() over s's bytes [iFrom, iTo), inlined for the cases run() uses. */
static int scan_range(RunState *s, PendRun *pr, int bStars, int bSp, size_t iFrom, size_t iTo) {
    s->iScanFrom = iFrom;
    s->iScanTo = iTo;
    if (s->a->bMap) return scan_map(s, pr, bStars, bSp);
    if (bStars) return scan(s, pr, 1, 0);
    return bSp ? scan(s, pr, 0, 1) : scan(s, pr, 0, 0);
}

/* Hands over the exception keyword m that the text has at [iStart,
** m->iEnd), at a position of its own, after what is pending before it. */
static int exc_emit(RunState *s, PendRun *pr, int bSp, size_t iStart, const ExcMatch *m) {
    int rc = LP_OK;
    if (bSp && s->bPbSeen) pb_step(s); /* as word_found */
    if (bSp && s->spKind) rc = sp_emit(s, pr);
    if (rc == LP_OK) rc = pending_out(s, pr);
    if (rc != LP_OK) return rc;
    Token t = {m->zDst, m->nDst, (uint32_t)(s->iPos++ + s->posAdj), (uint32_t)iStart, (uint32_t)m->iEnd};
    s->iWord = iStart;
    s->iWordEnd = m->iEnd;
    return s->xToken(s->ctx, &t);
}

/* The text with exceptions: the keywords they match, and scan() between
** them. */
static int scan_exceptions(RunState *s, PendRun *pr, int bStars, int bSp) {
    const Exceptions *e = s->a->pExc;
    const uint8_t *aFirst = exceptions_first_bytes(e);
    const unsigned char *p = (const unsigned char *)s->zText;
    size_t n = s->nText, i = 0, iGap = 0;
    for (;;) {
        /* to the next byte a source starts with: never inside a character */
        while (i < n && !aFirst[p[i]]) i++;
        if (i == n) break;
        ExcMatch m;
        if (exceptions_match(e, s->zText, n, i, &m)) {
            int rc = scan_range(s, pr, bStars, bSp, iGap, i);
            if (rc == LP_OK) rc = exc_emit(s, pr, bSp, i, &m);
            if (rc != LP_OK) return rc;
            i = iGap = m.iEnd;
        } else {
            i++;
        }
    }
    return scan_range(s, pr, bStars, bSp, iGap, n);
}

/* ignore_chars: a text's characters in the set are dropped before it is
** read (so "e-mail" is one word, "email", when '-' is ignored), and the
** tokens of what is left get the bytes of the text as given. */
typedef struct IgnoreMap {
    TokenFn xToken;      /* the caller's callback */
    void *ctx;
    uint32_t *aOrig;     /* aOrig[i]: where byte i of the kept text was */
} IgnoreMap;

static int ignore_token(void *ctx, const Token *t) {
    const IgnoreMap *m = ctx;
    Token u = *t;
    u.iStart = m->aOrig[t->iStart];
    u.iEnd = m->aOrig[t->iEnd - 1] + 1;
    return m->xToken(m->ctx, &u);
}

/* The valid UTF-8 text z[0..n) without the characters of set: in *pzKept
** (malloc'd; *pnKept bytes) with *paOrig, or *pzKept NULL when it has
** none of them. LP_OK or LP_NOMEM. */
static int ignore_filter(const Charset *set, const char *z, size_t n, char **pzKept, size_t *pnKept,
                         uint32_t **paOrig) {
    *pzKept = NULL;
    const unsigned char *p = (const unsigned char *)z;
    size_t i = 0;
    uint32_t cp = 0;
    int len = 0;
    for (; i < n; i += (size_t)len) {
        len = p[i] < 0x80 ? 1 : decode_valid(p + i, n - i, &cp);
        if (charset_has(set, p[i] < 0x80 ? p[i] : cp)) break;
    }
    if (i == n) return LP_OK;
    char *zKept = malloc(n ? n : 1);
    uint32_t *aOrig = malloc(sizeof(uint32_t) * (n ? n : 1));
    if (!zKept || !aOrig) {
        free(zKept);
        free(aOrig);
        return LP_NOMEM;
    }
    memcpy(zKept, z, i);
    for (size_t k = 0; k < i; k++) aOrig[k] = (uint32_t)k;
    size_t m = i;
    for (; i < n; i += (size_t)len) {
        len = p[i] < 0x80 ? 1 : decode_valid(p + i, n - i, &cp);
        if (charset_has(set, p[i] < 0x80 ? p[i] : cp)) continue;
        for (int k = 0; k < len; k++) {
            zKept[m] = z[i + (size_t)k];
            aOrig[m++] = (uint32_t)(i + (size_t)k);
        }
    }
    *pzKept = zKept;
    *pnKept = m;
    *paOrig = aOrig;
    return LP_OK;
}

static int run(const Analyzer *a, int mode, const char *z, size_t n, uint32_t iPosBase, TokenFn xToken,
               void *ctx, uint32_t *piPosEnd, LpError *err) {
    /* Offsets are uint32_t. A text of n bytes holds at most (n+1)/2 words (a
    ** one-byte word is followed by a separator byte or by a CJK letter of at
    ** least three bytes), so checking both limits up front means a limit
    ** never stops a run half way. */
    if (n > UINT32_MAX) {
        return lp_err_set(err, LP_LIMIT, "text of %zu bytes is longer than the 4 GiB a field may hold", n);
    }
    pthread_once(&g_fold2Once, fold2_build);
    int64_t iBad = utf8_check(z, n);
    if (iBad >= 0) return lp_err_setpos(err, LP_BADINPUT, iBad, "invalid UTF-8 at byte %lld", (long long)iBad);
    /* With boundaries, each takes a position between two words: at most n
    ** positions in all; a phrase boundary's step at most once per word, and
    ** once per boundary character (counted only when the first bound is
    ** too loose: a large text with a large step). */
    int bSp = mode == RUN_INDEX && (a->bIndexSp || a->bPb);
    uint64_t nMaxPos = a->bIndexSp ? n : (n + 1) / 2;
    if (bSp && a->pbStep) {
        uint64_t nSteps = (n + 1) / 2;
        if ((uint64_t)iPosBase + nMaxPos + nSteps * (uint64_t)a->pbStep > UINT32_MAX) nSteps = pb_count(a, z, n);
        nMaxPos += nSteps * (uint64_t)a->pbStep;
    }
    if ((uint64_t)iPosBase + nMaxPos > UINT32_MAX) {
        return lp_err_set(err, LP_LIMIT, "text of %zu bytes starting at word position %u would overflow positions",
                          n, iPosBase);
    }
    if (!charset_empty(&a->ignore)) {
        IgnoreMap m = {xToken, ctx, NULL};
        char *zKept = NULL;
        size_t nKept = 0;
        if (ignore_filter(&a->ignore, z, n, &zKept, &nKept, &m.aOrig) != LP_OK) {
            return lp_err_set(err, LP_NOMEM, "out of memory analysing a text of %zu bytes", n);
        }
        if (zKept) {
            /* the text without its ignored characters, its tokens' bytes
            ** mapped back (it holds none now, so this run filters nothing) */
            int rc = run(a, mode, zKept, nKept, iPosBase, ignore_token, &m, piPosEnd, err);
            if (rc != LP_OK && err->pos >= 0 && (size_t)err->pos < nKept) err->pos = m.aOrig[err->pos];
            free(zKept);
            free(m.aOrig);
            return rc;
        }
    }

    RunState s = {.a = a, .mode = mode, .xToken = xToken, .ctx = ctx, .iPos = iPosBase, .zText = z,
                  .err = err, .nText = n, .spKind = SP_NONE, .bIndexSp = mode == RUN_INDEX && a->bIndexSp};
    WfRun wfRun;
    s.bSteps = mode != RUN_UNSTEMMED && (a->bStopNoStep || a->bShortNoStep);
    if (mode != RUN_UNSTEMMED && a->pWf) {
        s.pWf = a->pWf;
        s.bWfPost = wordforms_has_post(a->pWf);
        s.pWfRun = &wfRun;
        wfRun.n = 0;
    }
    if (mode != RUN_UNSTEMMED && a->nStem > 0) {
        for (int k = 0; k < a->nStem; k++) {
            int rc = stem_get(a->aStem[k], &s.apStem[k], &s.apMemo[k], err);
            if (rc != LP_OK) return rc;
        }
        s.nStem = a->nStem;
        s.pDict = a->apDict[0];
    }
    /* Dictionary lookups are grouped (PendRun) only where a dictionary has
    ** entries to miss in. */
    PendRun pend;
    pend.n = 0;
    PendRun *pr = s.pDict && s.pDict->nBits ? &pend : NULL;
    /* In a query, a '*' that does not end a word ("a * b", the query
    ** language's any-word position) takes a position; a query's positions
    ** stay within n. */
    int bStars = mode == RUN_QUERY || mode == RUN_QUERY_EXACT;
    s.iScanTo = n;
    s.iWordEnd = SIZE_MAX;
    int rc = a->pExc ? scan_exceptions(&s, pr, bStars, bSp)
             : a->bMap ? scan_map(&s, pr, bStars, bSp)
             : bStars || bSp ? scan(&s, pr, bStars, bSp) : scan(&s, pr, 0, 0);
    if (rc != LP_OK) return rc;
    if (pr && pr->n) {
        int rc = pend_flush(&s, pr);
        if (rc != LP_OK) return rc;
    }
    if (s.pWf && (rc = wf_drain(&s)) != LP_OK) return rc;
    if (piPosEnd) *piPosEnd = (uint32_t)(s.iPos + s.posAdj - s.pbAdj);
    return LP_OK;
}

int analyzer_run(const Analyzer *a, const char *z, size_t n, uint32_t iPosBase, TokenFn xToken, void *ctx,
                 uint32_t *piPosEnd, LpError *err) {
    return run(a, RUN_INDEX, z, n, iPosBase, xToken, ctx, piPosEnd, err);
}

int analyzer_run_query(const Analyzer *a, const char *z, size_t n, int bAllExact, TokenFn xToken,
                       void *ctx, LpError *err) {
    return run(a, bAllExact ? RUN_QUERY_EXACT : RUN_QUERY, z, n, 0, xToken, ctx, NULL, err);
}

int analyzer_run_unstemmed(const Analyzer *a, const char *z, size_t n, TokenFn xToken, void *ctx,
                           LpError *err) {
    return run(a, RUN_UNSTEMMED, z, n, 0, xToken, ctx, NULL, err);
}

static int collect_token(void *ctx, const Token *t) {
    TokenList *l = ctx;
    Token c = *t;
    c.z = (const char *)(uintptr_t)l->buf.n; /* an offset until the run ends */
    strbuf_append(&l->buf, t->z, (size_t)t->n);
    strbuf_appendc(&l->buf, 0);
    return l->buf.oom || VEC_PUSH(&l->a, c) ? LP_NOMEM : LP_OK;
}

int analyzer_collect(const Analyzer *a, const char *z, size_t n, int mode, TokenList *l,
                     LpError *err) {
    if (mode < ANALYZE_UNSTEMMED || mode > ANALYZE_QUERY_EXACT) {
        return lp_err_set(err, LP_INTERNAL, "analyzer_collect: unknown mode %d", mode);
    }
    int rc = run(a, mode, z, n, 0, collect_token, l, NULL, err);
    if (rc != LP_OK) return rc;
    for (size_t i = 0; i < l->a.n; i++) l->a.a[i].z = l->buf.z + (uintptr_t)l->a.a[i].z;
    return LP_OK;
}

static int skip_token(void *ctx, const Token *t) {
    (void)ctx;
    (void)t;
    return LP_OK;
}

int analyzer_query_span(const Analyzer *a, const char *z, size_t n, int mode, uint32_t *pnPos, LpError *err) {
    if (mode != ANALYZE_QUERY && mode != ANALYZE_QUERY_EXACT) {
        return lp_err_set(err, LP_INTERNAL, "analyzer_query_span: mode %d is no query's", mode);
    }
    *pnPos = 0;
    return run(a, mode, z, n, 0, skip_token, NULL, pnPos, err);
}

void token_list_free(TokenList *l) {
    VEC_FREE(&l->a);
    strbuf_free(&l->buf);
}

/* ---------------------------------------------------------- word forms */

/* A side of a word-forms rule as words: normalised, joined by spaces. */
typedef struct WfSide {
    StrBuf sb;
    int nWord;
} WfSide;

static int wf_side_word(void *ctx, const Token *t) {
    WfSide *w = ctx;
    if (w->nWord) strbuf_appendc(&w->sb, ' ');
    strbuf_append(&w->sb, t->z, (size_t)t->n);
    w->nWord++;
    return w->sb.oom ? LP_NOMEM : LP_OK;
}

typedef struct WfBuild {
    Analyzer *a;
    WfSide side[2];
    LpError *err;
} WfBuild;

/* wordforms_split's xRule: the rule's sides analysed as words (without
** stop words or stemming) and added. */
static int wf_rule(void *ctx, int iRule, int iLine, size_t iOff, int bPost, const char *zSrc, size_t nSrc, const char *zDst,
                   size_t nDst) {
    WfBuild *b = ctx;
    static const char *const azSide[2] = {"source", "destination"};
    const char *az[2] = {zSrc, zDst};
    size_t an[2] = {nSrc, nDst};
    for (int k = 0; k < 2; k++) {
        WfSide *w = &b->side[k];
        strbuf_reset(&w->sb);
        w->nWord = 0;
        LpError e;
        lp_err_clear(&e);
        int rc = run(b->a, RUN_UNSTEMMED, az[k], an[k], 0, wf_side_word, w, NULL, &e);
        if (rc == LP_NOMEM || w->sb.oom) return lp_err_set(b->err, LP_NOMEM, "out of memory reading wordforms");
        if (rc != LP_OK) {
            return lp_err_setpos(b->err, rc, (int64_t)iOff, "wordforms rule %d (line %d, byte %zu): its %s: %s",
                                 iRule, iLine, iOff, azSide[k], e.zMsg);
        }
        if (w->nWord == 0 || w->nWord > WF_MAX_WORDS || (bPost && w->nWord > 1)) {
            return lp_err_setpos(b->err, LP_BADINPUT, (int64_t)iOff,
                                 "wordforms rule %d (line %d, byte %zu): its %s has %s", iRule, iLine, iOff, azSide[k],
                                 w->nWord == 0 ? "no word"
                                 : bPost       ? "more than one word (a '~' rule maps one word to one)"
                                               : "more than " WF_MAX_WORDS_TEXT " words");
        }
    }
    if (wordforms_add(b->a->pWf, bPost, b->side[0].sb.z, b->side[0].sb.n, b->side[0].nWord, b->side[1].sb.z,
                      b->side[1].sb.n, b->side[1].nWord) != LP_OK) {
        return lp_err_set(b->err, LP_NOMEM, "out of memory reading wordforms");
    }
    return LP_OK;
}

/* Reads the word-forms rules z (NULL or blank: none) into a->pWf, each
** side analysed as a's documents are (the rest of a is set up). */
static int wordforms_build(Analyzer *a, const char *z, LpError *err) {
    if (!z) return LP_OK;
    if (!(a->pWf = wordforms_new())) return lp_err_set(err, LP_NOMEM, "out of memory reading wordforms");
    WfBuild b = {a, {{{0}, 0}, {{0}, 0}}, err};
    int rc = wordforms_split(z, strlen(z), WF_SPLIT_COMMENTS | WF_SPLIT_TILDE, wf_rule, &b, err);
    strbuf_free(&b.side[0].sb);
    strbuf_free(&b.side[1].sb);
    if (rc == LP_OK && wordforms_count(a->pWf) == 0) {
        wordforms_free(a->pWf); /* nothing but blanks and comments */
        a->pWf = NULL;
    }
    return rc;
}

/* ---------------------------------------------------------- exceptions */

typedef struct ExcBuild {
    Analyzer *a;
    LpError *err;
} ExcBuild;

static int exc_rule(void *ctx, int iRule, int iLine, size_t iOff, int bPost, const char *zSrc, size_t nSrc,
                    const char *zDst, size_t nDst) {
    ExcBuild *b = ctx;
    (void)bPost; /* not read: exceptions have no '~' */
    LpError e;
    lp_err_clear(&e);
    int rc = exceptions_add(b->a->pExc, zSrc, nSrc, zDst, nDst, &e);
    if (rc == LP_NOMEM) return lp_err_set(b->err, LP_NOMEM, "%s", e.zMsg);
    if (rc != LP_OK) {
        return lp_err_setpos(b->err, rc, (int64_t)iOff, "exceptions rule %d (line %d, byte %zu): %s", iRule, iLine,
                             iOff, e.zMsg);
    }
    return LP_OK;
}

/* Reads the exceptions z (NULL or blank: none) into a->pExc. */
/* Is cp a word's character, for where an exception's source may start
** and end (text/exceptions.h)? */
static int exc_word_char(const void *ctx, uint32_t cp) {
    int cls = scan_class(ctx, cp);
    return cls == CC_WORD || cls == CC_SINGLE || cls == CC_MAPPED || cls == CC_NGRAM;
}

static int exceptions_build(Analyzer *a, const char *z, LpError *err) {
    if (!z) return LP_OK;
    if (!(a->pExc = exceptions_new(exc_word_char, a))) return lp_err_set(err, LP_NOMEM, "out of memory reading exceptions");
    ExcBuild b = {a, err};
    int rc = wordforms_split(z, strlen(z), 0, exc_rule, &b, err);
    exceptions_seal(a->pExc);
    if (rc == LP_OK && exceptions_count(a->pExc) == 0) {
        exceptions_free(a->pExc);
        a->pExc = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------ zones */

/* A zone tag html_strip_zones met. */
typedef struct ZoneTag {
    uint32_t iOut;              /* offset in the stripped text */
    uint32_t iSeq;              /* order met */
    uint8_t bClose;
    uint8_t nName;
    char zName[ANALYZER_ZONE_NAME_MAX];  /* lower case, not NUL-terminated */
} ZoneTag;

/* A span, in word positions, first and last inclusive. */
typedef struct ZoneSpan {
    uint32_t lo, hi;
} ZoneSpan;

typedef struct ZoneRun {
    VEC(ZoneTag) tags;
    VEC(Token) words;           /* the run's tokens (z unused): offsets, positions */
    VEC(ZoneSpan) spans;        /* of one name at a time */
    TokenFn xToken;             /* the caller's */
    void *ctx;
    int bOom;
} ZoneRun;

static void zone_tag(void *ctx, const char *zName, size_t nName, size_t iOut, int bClose) {
    ZoneRun *r = ctx;
    if (nName > ANALYZER_ZONE_NAME_MAX || r->bOom) return;
    ZoneTag t = {(uint32_t)iOut, (uint32_t)r->tags.n, (uint8_t)(bClose != 0), (uint8_t)nName, {0}};
    for (size_t i = 0; i < nName; i++) t.zName[i] = (char)(zName[i] >= 'A' && zName[i] <= 'Z' ? zName[i] | 0x20 : zName[i]);
    if (VEC_PUSH(&r->tags, t)) r->bOom = 1;
}

/* Each token is passed on, and its offsets and position kept. */
static int zone_word(void *ctx, const Token *t) {
    ZoneRun *r = ctx;
    if (VEC_PUSH(&r->words, *t)) return LP_NOMEM;
    return r->xToken(r->ctx, t);
}

static int tag_cmp(const void *x, const void *y) {
    const ZoneTag *a = x, *b = y;
    int c = memcmp(a->zName, b->zName, a->nName < b->nName ? a->nName : b->nName);
    if (c || a->nName != b->nName) return c ? c : a->nName < b->nName ? -1 : 1;
    return a->iSeq < b->iSeq ? -1 : 1;
}

static int word_cmp(const void *x, const void *y) {
    const Token *a = x, *b = y;
    if (a->iStart != b->iStart) return a->iStart < b->iStart ? -1 : 1;
    return (a->iPos > b->iPos) - (a->iPos < b->iPos);
}

static int span_cmp(const void *x, const void *y) {
    const ZoneSpan *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return (a->hi > b->hi) - (a->hi < b->hi);
}

/* The span of the words whose text lies in [iOpen, iClose) of the
** stripped text, into r->spans (none when it holds no word). */
static int zone_span(ZoneRun *r, uint32_t iOpen, uint32_t iClose) {
    const Token *w = r->words.a;
    size_t lo = 0, hi = r->words.n;
    while (lo < hi) { /* the first word starting at or after iOpen */
        size_t mid = (lo + hi) / 2;
        if (w[mid].iStart < iOpen) lo = mid + 1; else hi = mid;
    }
    size_t first = lo;
    hi = r->words.n;
    while (lo < hi) { /* the first word ending after iClose */
        size_t mid = (lo + hi) / 2;
        if (w[mid].iEnd <= iClose) lo = mid + 1; else hi = mid;
    }
    if (lo == first) return LP_OK;
    /* sorted by offset, the words' positions grow too */
    uint32_t a = w[first].iPos, b = w[lo - 1].iPos;
    ZoneSpan s = {a, b};
    return VEC_PUSH(&r->spans, s) ? LP_NOMEM : LP_OK;
}

/* Emits the terms of the spans of the tags t[0..n), all of one name:
** opening and closing tags paired as a stack, an opening tag left open
** closed at nText; overlapping spans merged. */
static int zone_emit(ZoneRun *r, const ZoneTag *t, size_t n, uint32_t nText) {
    r->spans.n = 0;
    size_t nOpen = 0; /* the open tags are the first nOpen of stack */
    uint32_t *aStack = malloc(sizeof(uint32_t) * (n ? n : 1));
    if (!aStack) return LP_NOMEM;
    int rc = LP_OK;
    for (size_t i = 0; i < n && rc == LP_OK; i++) {
        if (!t[i].bClose) {
            aStack[nOpen++] = t[i].iOut;
        } else if (nOpen) { /* a closing tag with nothing open is ignored */
            rc = zone_span(r, aStack[--nOpen], t[i].iOut);
        }
    }
    while (nOpen && rc == LP_OK) rc = zone_span(r, aStack[--nOpen], nText);
    free(aStack);
    if (rc != LP_OK || r->spans.n == 0) return rc;
    ZoneSpan *s = r->spans.a;
    qsort(s, r->spans.n, sizeof(*s), span_cmp);
    size_t m = 0;
    for (size_t i = 1; i < r->spans.n; i++) {
        if (s[i].lo <= s[m].hi) {
            if (s[i].hi > s[m].hi) s[m].hi = s[i].hi;
        } else {
            s[++m] = s[i];
        }
    }
    r->spans.n = m + 1;
    char zOpen[ANALYZER_ZONE_NAME_MAX + 1], zClose[ANALYZER_ZONE_NAME_MAX + 2];
    zOpen[0] = zClose[0] = ANALYZER_ZONE_MARK;
    zClose[1] = '/';
    memcpy(zOpen + 1, t[0].zName, t[0].nName);
    memcpy(zClose + 2, t[0].zName, t[0].nName);
    for (size_t i = 0; i < r->spans.n && rc == LP_OK; i++) {
        Token k = {zOpen, t[0].nName + 1, s[i].lo, 0, 0};
        rc = r->xToken(r->ctx, &k);
    }
    for (size_t i = 0; i < r->spans.n && rc == LP_OK; i++) {
        Token k = {zClose, t[0].nName + 2, s[i].hi, 0, 0};
        rc = r->xToken(r->ctx, &k);
    }
    return rc;
}

int analyzer_run_doc(const Analyzer *a, const char *z, size_t n, uint32_t iPosBase, TokenFn xToken,
                     void *ctx, uint32_t *piPosEnd, LpError *err) {
    StrBuf html = {0};
    int rc;
    if (!a->azZone) {
        rc = analyzer_doc_text(a, z, n, &html, &z, &n, err);
        if (rc == LP_OK) rc = analyzer_run(a, z, n, iPosBase, xToken, ctx, piPosEnd, err);
        strbuf_free(&html);
        return rc;
    }
    int64_t iBad = utf8_check(z, n);
    if (iBad >= 0) return lp_err_setpos(err, LP_BADINPUT, iBad, "invalid UTF-8 at byte %lld", (long long)iBad);
    if (n > UINT32_MAX) {
        return lp_err_set(err, LP_LIMIT, "text of %zu bytes is longer than the 4 GiB a field may hold", n);
    }
    ZoneRun r;
    memset(&r, 0, sizeof(r));
    r.xToken = xToken;
    r.ctx = ctx;
    HtmlZones hz = {(const char *const *)a->azZone, zone_tag, &r};
    html_strip_zones(z, n, (const char *const *)a->azHtmlRemove, (const char *const *)a->azHtmlAttr, &hz,
                     &html);
    if (html.oom || r.bOom) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory stripping HTML");
        goto done;
    }
    rc = analyzer_run(a, html.z ? html.z : "", html.n, iPosBase, zone_word, &r, piPosEnd, err);
    if (rc != LP_OK || r.tags.n == 0) goto done;
    if (r.words.n) qsort(r.words.a, r.words.n, sizeof(Token), word_cmp);
    qsort(r.tags.a, r.tags.n, sizeof(ZoneTag), tag_cmp);
    for (size_t i = 0; i < r.tags.n && rc == LP_OK;) {
        size_t j = i + 1;
        while (j < r.tags.n && r.tags.a[j].nName == r.tags.a[i].nName &&
               memcmp(r.tags.a[j].zName, r.tags.a[i].zName, r.tags.a[i].nName) == 0) {
            j++;
        }
        rc = zone_emit(&r, r.tags.a + i, j - i, (uint32_t)html.n);
        i = j;
    }
    if (rc == LP_NOMEM) lp_err_set(err, LP_NOMEM, "out of memory indexing zones");
done:
    VEC_FREE(&r.tags);
    VEC_FREE(&r.words);
    VEC_FREE(&r.spans);
    strbuf_free(&html);
    return rc;
}

/* ------------------------------------------------ phrase_boundary */

static int phrase_boundary_parse(Analyzer *a, const AnalyzerConfig *cfg, LpError *err) {
    if (cfg->phraseBoundaryStep < 0 || cfg->phraseBoundaryStep > ANALYZER_MAX_PHRASE_STEP) {
        return lp_err_set(err, LP_BADINPUT, "phrase_boundary_step must be from 0 to %d, not %d",
                          ANALYZER_MAX_PHRASE_STEP, cfg->phraseBoundaryStep);
    }
    a->pbStep = cfg->phraseBoundaryStep;
    if (!cfg->zPhraseBoundary) return LP_OK;
    int rc = charset_parse(cfg->zPhraseBoundary, "phrase_boundary", &a->pb, err);
    if (rc != LP_OK) return rc;
    /* each must be a separator, as the table reads text: nothing else */
    for (int r = 0; r < a->pb.nRange; r++) {
        for (uint32_t cp = a->pb.aRange[2 * r]; cp <= a->pb.aRange[2 * r + 1]; cp++) {
            int cls = scan_class(a, cp);
            const char *zWhat = charset_has(&a->ignore, cp) ? "an ignored character (ignore_chars)"
                                : cls == CC_BLEND           ? "a blend character (blend_chars)"
                                : cls == CC_SEP             ? NULL
                                : a->bMap                   ? "a character of words (charset_table)"
                                                            : "a character of words";
            if (zWhat) {
                return lp_err_set(err, LP_BADINPUT, "phrase_boundary: U+%04X is %s; a boundary must be a separator",
                                  (unsigned)cp, zWhat);
            }
        }
    }
    a->bPb = a->pb.nRange > 0;
    return LP_OK;
}

int analyzer_has_phrase_boundary(const Analyzer *a) {
    return a->bPb;
}

int analyzer_phrase_boundary_step(const Analyzer *a) {
    return a->pbStep;
}

int analyzer_gap_is_phrase_boundary(const Analyzer *a, const char *z, size_t from, size_t to) {
    const unsigned char *p = (const unsigned char *)z;
    for (size_t i = from; a->bPb && i < to;) {
        uint32_t cp = p[i];
        int len = cp < 0x80 ? 1 : decode_valid(p + i, to - i, &cp);
        i += (size_t)len;
        if (charset_has(&a->pb, cp) && i < to) return 1; /* a separator of the gap follows */
    }
    return 0;
}
