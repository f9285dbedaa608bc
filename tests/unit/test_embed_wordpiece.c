/*
** test_embed_wordpiece.c — unit tests for src/embed/wordpiece.c.
**
** The reference is the Hugging Face `tokenizers` library: the 1,905 probes
** of shared/data/tokenizers/all-MiniLM-L6-v2/golden-texts.jsonl and the ids
** it produced for them (golden-ids.jsonl, untruncated). Every probe is
** checked whole (through wp_encode_nolimit, since some need 33k ids), and
** through wp_encode at several nMax values (the model's truncation: the
** first nMax-1 ids, then [SEP]); the same with the vocab.txt fallback and
** with the bert-base-uncased folder, which share the vocabulary.
**
** Single rules (clean_text's drop-before-split, İ, canonical order of
** kept marks, CJK spacing, the word-length limit...) are checked with tiny
** vocabularies written to a temp folder, where each rule decides between
** a vocabulary entry and [UNK]. Plus errors, invalid UTF-8, nMax clamping,
** 10 MB inputs in bounded time, and several threads at once.
**
** The data folder is $LOUPE_SHARED_DATA, else shared/data next to the
** repository (found from this file's path); a missing folder fails the
** test and names both.
*/
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "embed/wordpiece.h"
#include "embed/wordpiece_int.h"

/* ------------------------------------------------------------- helpers */

typedef struct Probe {
    long iId;     /* the probe's id */
    char *z;      /* its text (may contain NUL) */
    size_t n;     /* its length in bytes */
    int64_t *aId; /* the reference ids, untruncated */
    int nId;
} Probe;

static Probe *g_aProbe;
static int g_nProbe;
static char g_zData[4096]; /* .../shared/data */
static char g_zMini[4200]; /* .../tokenizers/all-MiniLM-L6-v2 */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void find_data(void) {
    const char *zEnv = getenv("LOUPE_SHARED_DATA");
    if (zEnv && *zEnv) {
        snprintf(g_zData, sizeof(g_zData), "%s", zEnv);
    } else {
        /* __FILE__ is <repo>/tests/unit/test_embed_wordpiece.c; the data is
        ** <repo>/../shared/data. A relative __FILE__ is taken from the cwd. */
        char zDir[2048];
        snprintf(zDir, sizeof(zDir), "%s", __FILE__);
        char *zSlash = strrchr(zDir, '/');
        if (zSlash) {
            *zSlash = 0;
        } else {
            snprintf(zDir, sizeof(zDir), ".");
        }
        snprintf(g_zData, sizeof(g_zData), "%s/../../../shared/data", zDir);
    }
    snprintf(g_zMini, sizeof(g_zMini), "%s/tokenizers/all-MiniLM-L6-v2", g_zData);
}

/* Reads a JSON-lines file into an array of json_t* (caller decrefs). */
static json_t **read_jsonl(const char *zPath, int *pn) {
    FILE *f = fopen(zPath, "rb");
    if (!f) return NULL;
    json_t **a = NULL;
    int n = 0, nAlloc = 0;
    char *zLine = NULL;
    size_t nLineAlloc = 0;
    ssize_t nLine;
    while ((nLine = getline(&zLine, &nLineAlloc, f)) > 0) {
        json_error_t jerr;
        json_t *j = json_loadb(zLine, (size_t)nLine, JSON_ALLOW_NUL, &jerr);
        if (!j) {
            fprintf(stderr, "%s: line %d: %s\n", zPath, n + 1, jerr.text);
            abort();
        }
        if (n == nAlloc) {
            nAlloc = nAlloc ? 2 * nAlloc : 2048;
            a = realloc(a, sizeof(json_t *) * (size_t)nAlloc);
            if (!a) abort();
        }
        a[n++] = j;
    }
    free(zLine);
    fclose(f);
    *pn = n;
    return a;
}

static int load_probes(void **state) {
    (void)state;
    find_data();
    char zT[4400], zI[4400];
    snprintf(zT, sizeof(zT), "%s/golden-texts.jsonl", g_zMini);
    snprintf(zI, sizeof(zI), "%s/golden-ids.jsonl", g_zMini);
    int nT = 0, nI = 0;
    json_t **aT = read_jsonl(zT, &nT), **aI = read_jsonl(zI, &nI);
    if (!aT || !aI || nT != nI || nT == 0) {
        fprintf(stderr,
                "test_embed_wordpiece: cannot read the reference probes in %s "
                "(set LOUPE_SHARED_DATA to the shared/data folder)\n",
                g_zMini);
        return -1;
    }
    g_aProbe = calloc((size_t)nT, sizeof(Probe));
    for (int i = 0; i < nT; i++) {
        Probe *p = &g_aProbe[i];
        json_t *id = json_object_get(aT[i], "id"), *text = json_object_get(aT[i], "text");
        json_t *ids = json_object_get(aI[i], "ids");
        if (!json_is_integer(id) || !json_is_string(text) || !json_is_array(ids) ||
            !json_equal(id, json_object_get(aI[i], "id"))) {
            fprintf(stderr, "probe line %d: malformed or ids out of step\n", i + 1);
            return -1;
        }
        p->iId = (long)json_integer_value(id);
        p->n = json_string_length(text);
        p->z = malloc(p->n + 1);
        memcpy(p->z, json_string_value(text), p->n + 1);
        p->nId = (int)json_array_size(ids);
        p->aId = malloc(sizeof(int64_t) * (size_t)p->nId);
        for (int k = 0; k < p->nId; k++)
            p->aId[k] = json_integer_value(json_array_get(ids, (size_t)k));
        json_decref(aT[i]);
        json_decref(aI[i]);
    }
    free(aT);
    free(aI);
    g_nProbe = nT;
    return 0;
}

static int free_probes(void **state) {
    (void)state;
    for (int i = 0; i < g_nProbe; i++) {
        free(g_aProbe[i].z);
        free(g_aProbe[i].aId);
    }
    free(g_aProbe);
    return 0;
}

static Wordpiece *open_ok(const char *zDir) {
    LpError err;
    lp_err_clear(&err);
    Wordpiece *wp = wp_open(zDir, &err);
    if (!wp) fail_msg("wp_open(%s): %s %s", zDir, lp_code_name(err.code), err.zMsg);
    return wp;
}

/* Prints a failing probe: id, the start of its text (escaped), the first
** differing position and the ids around it. */
static void report(const char *zWhat, const Probe *p, int nMax, const int64_t *aExp, int nExp,
                   const int64_t *aGot, int nGot) {
    int i = 0;
    while (i < nExp && i < nGot && aExp[i] == aGot[i])
        i++;
    char zText[200];
    int k = 0;
    for (size_t j = 0; j < p->n && k < 150; j++) {
        unsigned char c = (unsigned char)p->z[j];
        if (c >= 0x20 && c < 0x7F) {
            zText[k++] = (char)c;
        } else {
            k += snprintf(zText + k, sizeof(zText) - (size_t)k, "\\x%02x", c);
        }
    }
    zText[k] = 0;
    fprintf(stderr, "%s: probe %ld (nMax %d): %d ids, expected %d; first difference at %d:", zWhat,
            p->iId, nMax, nGot, nExp, i);
    for (int j = i > 2 ? i - 2 : 0; j < i + 4 && (j < nExp || j < nGot); j++) {
        fprintf(stderr, " [%d] exp %lld got %lld;", j, j < nExp ? (long long)aExp[j] : -1LL,
                j < nGot ? (long long)aGot[j] : -1LL);
    }
    fprintf(stderr, "\n  text: \"%s\"\n", zText);
}

/* Checks every probe through wp at full length and at each nMax of aMax
** (public wp_encode, with its WP_MAX_LEN cap). Returns the failures. */
static int check_all(const char *zWhat, const Wordpiece *wp) {
    static const int aMax[] = {2, 3, 4, 7, 16, 64, 128, 255, 256, 257, 384, 511, 512};
    int nFail = 0, nPass = 0;
    int nBuf = 0;
    for (int i = 0; i < g_nProbe; i++) {
        if (g_aProbe[i].nId + 8 > nBuf) nBuf = g_aProbe[i].nId + 8;
    }
    int64_t *aGot = malloc(sizeof(int64_t) * (size_t)nBuf);
    int64_t *aExp = malloc(sizeof(int64_t) * (WP_MAX_LEN + 1));
    for (int i = 0; i < g_nProbe; i++) {
        const Probe *p = &g_aProbe[i];
        int bOk = 1;
        /* Whole, with room to spare: nothing may be cut. */
        int n = wp_encode_nolimit(wp, p->z, p->n, p->nId + 8, aGot);
        if (n != p->nId || memcmp(aGot, p->aId, sizeof(int64_t) * (size_t)n) != 0) {
            if (nFail < 20) report(zWhat, p, p->nId + 8, p->aId, p->nId, aGot, n);
            bOk = 0;
        }
        /* Exactly full. */
        n = wp_encode_nolimit(wp, p->z, p->n, p->nId, aGot);
        if (bOk && (n != p->nId || memcmp(aGot, p->aId, sizeof(int64_t) * (size_t)n) != 0)) {
            if (nFail < 20) report(zWhat, p, p->nId, p->aId, p->nId, aGot, n);
            bOk = 0;
        }
        for (size_t m = 0; bOk && m < sizeof(aMax) / sizeof(aMax[0]); m++) {
            int nMax = aMax[m];
            int nExp = p->nId <= nMax ? p->nId : nMax;
            memcpy(aExp, p->aId, sizeof(int64_t) * (size_t)nExp);
            if (p->nId > nMax) aExp[nMax - 1] = p->aId[p->nId - 1]; /* [SEP] */
            n = wp_encode(wp, p->z, p->n, nMax, aGot);
            if (n != nExp || memcmp(aGot, aExp, sizeof(int64_t) * (size_t)n) != 0) {
                if (nFail < 20) report(zWhat, p, nMax, aExp, nExp, aGot, n);
                bOk = 0;
            }
        }
        if (bOk) {
            nPass++;
        } else {
            nFail++;
        }
    }
    fprintf(stderr, "%s: %d of %d probes identical to the reference (whole and truncated)\n", zWhat,
            nPass, g_nProbe);
    free(aGot);
    free(aExp);
    return nFail;
}

static void copy_file(const char *zFrom, const char *zTo) {
    FILE *f = fopen(zFrom, "rb"), *g = fopen(zTo, "wb");
    assert_non_null(f);
    assert_non_null(g);
    char a[65536];
    size_t n;
    while ((n = fread(a, 1, sizeof(a), f)) > 0)
        assert_int_equal(fwrite(a, 1, n, g), n);
    fclose(f);
    assert_int_equal(fclose(g), 0);
}

static void write_file(const char *zDir, const char *zName, const char *z, size_t n) {
    char zPath[4400];
    snprintf(zPath, sizeof(zPath), "%s/%s", zDir, zName);
    FILE *f = fopen(zPath, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(z, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static char *make_tmpdir(char *zBuf, size_t nBuf) {
    const char *zTmp = getenv("TMPDIR");
    snprintf(zBuf, nBuf, "%s/lp-wp-XXXXXX", zTmp && *zTmp ? zTmp : "/tmp");
    assert_non_null(mkdtemp(zBuf));
    return zBuf;
}

static void rm_tree(const char *zDir) {
    DIR *d = opendir(zDir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char zPath[4400];
        snprintf(zPath, sizeof(zPath), "%s/%s", zDir, e->d_name);
        unlink(zPath);
    }
    closedir(d);
    rmdir(zDir);
}

/* A folder with vocab.txt = the lines of azTok, plus tokenizer_config.json
** = zConfig when non-NULL. */
static Wordpiece *open_tiny(const char *const *azTok, int nTok, const char *zConfig) {
    char zDir[4096];
    make_tmpdir(zDir, sizeof(zDir));
    size_t nAll = 0;
    for (int i = 0; i < nTok; i++)
        nAll += strlen(azTok[i]) + 1;
    char *z = malloc(nAll + 1), *p = z;
    for (int i = 0; i < nTok; i++)
        p += sprintf(p, "%s\n", azTok[i]);
    write_file(zDir, "vocab.txt", z, (size_t)(p - z));
    free(z);
    if (zConfig) write_file(zDir, "tokenizer_config.json", zConfig, strlen(zConfig));
    Wordpiece *wp = open_ok(zDir);
    rm_tree(zDir);
    return wp;
}

/* Encodes z and compares with the ids of aExp (without [CLS]/[SEP]). */
static void expect_ids(const Wordpiece *wp, const char *z, size_t n, const int64_t *aExp,
                       int nExp) {
    int64_t a[WP_MAX_LEN];
    int nGot = wp_encode(wp, z, n, WP_MAX_LEN, a);
    int bOk = nGot == nExp + 2 && a[0] == wp_cls_id(wp) && a[nGot - 1] == wp_sep_id(wp) &&
              memcmp(a + 1, aExp, sizeof(int64_t) * (size_t)nExp) == 0;
    if (!bOk) {
        fprintf(stderr, "text \"%.*s\": got", (int)n, z);
        for (int i = 0; i < nGot; i++)
            fprintf(stderr, " %lld", (long long)a[i]);
        fprintf(stderr, "; expected [CLS]");
        for (int i = 0; i < nExp; i++)
            fprintf(stderr, " %lld", (long long)aExp[i]);
        fprintf(stderr, " [SEP]\n");
        fail_msg("ids differ");
    }
}
#define EXPECT(wp, z, ...)                                                                         \
    do {                                                                                           \
        const int64_t aE_[] = {__VA_ARGS__};                                                       \
        expect_ids(wp, z, sizeof(z) - 1, aE_, (int)(sizeof(aE_) / sizeof(aE_[0])));                \
    } while (0)

/* -------------------------------------------------------------- tests */

static void test_golden_tokenizer_json(void **state) {
    (void)state;
    Wordpiece *wp = open_ok(g_zMini);
    assert_int_equal(wp_vocab_size(wp), 30522);
    assert_int_equal(wp_cls_id(wp), 101);
    assert_int_equal(wp_sep_id(wp), 102);
    assert_int_equal(wp_unk_id(wp), 100);
    assert_int_equal(wp_pad_id(wp), 0);
    WpConfig cfg;
    wp_config(wp, &cfg);
    assert_true(cfg.bCleanText && cfg.bChinese && cfg.bLowercase && cfg.bStripAccents);
    assert_int_equal(cfg.nMaxWordChars, 100);
    assert_int_equal(cfg.nAdded, 5);
    assert_int_equal(g_nProbe, 1905);
    assert_int_equal(check_all("tokenizer.json", wp), 0);
    wp_close(wp);
}

static void test_golden_vocab_fallback(void **state) {
    (void)state;
    char zDir[4096], zFrom[4400], zTo[4400];
    make_tmpdir(zDir, sizeof(zDir));
    const char *azFile[] = {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(zFrom, sizeof(zFrom), "%s/%s", g_zMini, azFile[i]);
        snprintf(zTo, sizeof(zTo), "%s/%s", zDir, azFile[i]);
        copy_file(zFrom, zTo);
    }
    Wordpiece *wp = open_ok(zDir);
    WpConfig cfg;
    wp_config(wp, &cfg);
    assert_true(cfg.bCleanText && cfg.bChinese && cfg.bLowercase && cfg.bStripAccents);
    assert_int_equal(cfg.nAdded, 5);
    assert_int_equal(wp_vocab_size(wp), 30522);
    assert_int_equal(check_all("vocab.txt fallback", wp), 0);
    wp_close(wp);

    /* vocab.txt alone: BertTokenizer's defaults are the same. */
    unlink(zTo);
    snprintf(zTo, sizeof(zTo), "%s/tokenizer_config.json", zDir);
    unlink(zTo);
    wp = open_ok(zDir);
    assert_int_equal(check_all("vocab.txt alone", wp), 0);
    wp_close(wp);
    rm_tree(zDir);
}

static void test_golden_bert_base_uncased(void **state) {
    (void)state;
    char zDir[4400];
    snprintf(zDir, sizeof(zDir), "%s/tokenizers/bert-base-uncased", g_zData);
    Wordpiece *wp = open_ok(zDir);
    assert_int_equal(wp_vocab_size(wp), 30522);
    assert_int_equal(wp_unk_id(wp), 100);
    assert_int_equal(check_all("bert-base-uncased", wp), 0);
    wp_close(wp);
}

/* Rules one at a time, with tiny vocabularies: ids 0..4 are the specials. */
static void test_rules_lowercase_strip(void **state) {
    (void)state;
    const char *az[] = {
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",                            /* 0..4 */
        "ab",                                /* 5 */
        "a",                                 /* 6 */
        "b",                                 /* 7 */
        "i",                                 /* 8 */
        "i\xCC\x87",                         /* 9: i + U+0307 */
        "a\xF0\x9D\x85\xA5\xF0\x9D\x85\xAD", /* 10: a U+1D165 U+1D16D (classes 216, 226) */
        "##b",                               /* 11 */
        "\xE4\xB8\xAD",                      /* 12: 中 */
        "\xE4\xB8\xAD\xE6\x96\x87",          /* 13: 中文 */
        "\xE6\x96\x87",                      /* 14: 文 */
        "ss",                                /* 15 */
        "\xC3\x9F",                          /* 16: ß */
        "e",                                 /* 17 */
        "$",                                 /* 18 */
        "Ab"};                               /* 19 */
    const int nTok = (int)(sizeof(az) / sizeof(az[0]));
    Wordpiece *wp = open_tiny(az, nTok, "{\"do_lower_case\": true}");
    EXPECT(wp, "ab", 5);
    EXPECT(wp, "AB", 5);
    EXPECT(wp, "a b", 6, 7);
    EXPECT(wp, "a\tb", 6, 7);
    /* \v, \f, U+0085: Cc, so clean_text drops them before whitespace is
    ** mapped: the word is not split. */
    EXPECT(wp, "a\vb", 5);
    EXPECT(wp, "a\fb", 5);
    EXPECT(wp,
           "a\xC2\x85"
           "b",
           5);
    /* NUL, U+FFFD, Cf (U+200B, U+00AD, BOM) and Co (U+E000) vanish. */
    EXPECT(wp, "a\0b", 5);
    EXPECT(wp,
           "a\xEF\xBF\xBD"
           "b",
           5);
    EXPECT(wp,
           "a\xE2\x80\x8B"
           "b",
           5);
    EXPECT(wp,
           "a\xC2\xAD"
           "b",
           5);
    EXPECT(wp,
           "\xEF\xBB\xBF"
           "ab",
           5);
    EXPECT(wp,
           "a\xEE\x80\x80"
           "b",
           5);
    /* U+00A0, U+3000, U+2028 are whitespace: they split. */
    EXPECT(wp,
           "a\xC2\xA0"
           "b",
           6, 7);
    EXPECT(wp,
           "a\xE3\x80\x80"
           "b",
           6, 7);
    EXPECT(wp,
           "a\xE2\x80\xA8"
           "b",
           6, 7);
    /* Continuation pieces. */
    EXPECT(wp, "abb", 5, 11);
    EXPECT(wp, "abx", 1);
    /* Accents: NFD, drop Mn; İ strips to I, then lowercases to i. */
    EXPECT(wp,
           "\xC3\xA1"
           "b",
           5); /* áb */
    EXPECT(wp,
           "a\xCC\x81\xCC\xA3"
           "b",
           5);                  /* a + two marks + b */
    EXPECT(wp, "\xC4\xB0", 8);  /* İ */
    EXPECT(wp, "\xC3\xA9", 17); /* é */
    /* Kept marks with a class (Mc) are put in canonical order. */
    EXPECT(wp, "a\xF0\x9D\x85\xAD\xF0\x9D\x85\xA5", 10);
    EXPECT(wp, "a\xF0\x9D\x85\xA5\xF0\x9D\x85\xAD", 10);
    /* ... also across a dropped Mn in the same run. */
    EXPECT(wp, "a\xF0\x9D\x85\xAD\xCC\x81\xF0\x9D\x85\xA5", 10);
    /* ß lower-cases to itself (no full case folding). */
    EXPECT(wp, "\xC3\x9F", 16);
    /* CJK ideographs are words of their own. */
    EXPECT(wp, "\xE4\xB8\xAD\xE6\x96\x87", 12, 14);
    EXPECT(wp,
           "a\xE4\xB8\xAD"
           "b",
           6, 12, 7);
    /* ASCII punctuation includes symbols like $. */
    EXPECT(wp, "a$b", 6, 18, 7);
    /* Special tokens in the raw text are cut out, case-sensitive. */
    EXPECT(wp, "a[SEP]b", 6, 3, 7);
    EXPECT(wp, "[MASK][PAD]", 4, 0);
    EXPECT(wp, "[sep]", 1, 1, 1); /* "[", "sep", "]": not in this vocabulary */
    EXPECT(wp, "[SE\x01P]", 1, 1, 1);
    wp_close(wp);

    /* strip_accents false while lowercasing: İ -> i + U+0307 (kept). */
    wp = open_tiny(az, nTok, "{\"do_lower_case\": true, \"strip_accents\": false}");
    EXPECT(wp, "\xC4\xB0", 9);
    EXPECT(wp, "\xC3\xA9", 1);
    wp_close(wp);

    /* No lower-casing: strip_accents follows (false). */
    wp = open_tiny(az, nTok, "{\"do_lower_case\": false}");
    EXPECT(wp, "Ab", 19);
    EXPECT(wp, "AB", 1);
    EXPECT(wp,
           "\xC3\xA1"
           "b",
           1);
    wp_close(wp);

    /* No lower-casing but accent stripping. */
    wp = open_tiny(az, nTok, "{\"do_lower_case\": false, \"strip_accents\": true}");
    EXPECT(wp,
           "\xC3\x81"
           "b",
           19);
    wp_close(wp);

    /* tokenize_chinese_chars off: a CJK run is one word. */
    wp = open_tiny(az, nTok, "{\"tokenize_chinese_chars\": false}");
    EXPECT(wp, "\xE4\xB8\xAD\xE6\x96\x87", 13);
    wp_close(wp);
}

static void test_rules_word_length(void **state) {
    (void)state;
    /* max_input_chars_per_word counts code points after normalising. */
    char zDir[4096];
    make_tmpdir(zDir, sizeof(zDir));
    const char *zJson =
        "{\"version\":\"1.0\",\"added_tokens\":[{\"id\":1,\"content\":\"[UNK]\",\"single_word\":"
        "false,"
        "\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true}],"
        "\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":"
        "true,"
        "\"strip_accents\":null,\"lowercase\":true},\"pre_tokenizer\":{\"type\":"
        "\"BertPreTokenizer\"},"
        "\"post_processor\":{\"type\":\"BertProcessing\",\"sep\":[\"[SEP]\",3],\"cls\":[\"[CLS]\","
        "2]},"
        "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"continuing_subword_prefix\":"
        "\"@@\","
        "\"max_input_chars_per_word\":5,\"vocab\":{\"[PAD]\":0,\"[UNK]\":1,\"[CLS]\":2,\"[SEP]\":3,"
        "\"a\":4,\"@@a\":5,\"\xC3\xA9\":6,\"aaaaa\":7}}}";
    write_file(zDir, "tokenizer.json", zJson, strlen(zJson));
    Wordpiece *wp = open_ok(zDir);
    WpConfig cfg;
    wp_config(wp, &cfg);
    assert_int_equal(cfg.nMaxWordChars, 5);
    EXPECT(wp, "aaaa", 4, 5, 5, 5);
    EXPECT(wp, "aaaaa", 7);
    EXPECT(wp, "aaaaaa", 1);
    EXPECT(wp, "aaaaaaaaaaaaaaaaaaaaaaaaa a", 1, 4);
    /* 4 characters, 8 bytes: still within the limit. */
    EXPECT(wp, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 1); /* é lowercases+strips to e: not in vocab */
    wp_close(wp);
    rm_tree(zDir);
}

static void test_errors(void **state) {
    (void)state;
    LpError err;
    char zDir[4096];

    lp_err_clear(&err);
    assert_null(wp_open("/nonexistent/loupe-model", &err));
    assert_int_equal(err.code, LP_NOTFOUND);
    assert_non_null(strstr(err.zMsg, "/nonexistent/loupe-model"));

    lp_err_clear(&err);
    assert_null(wp_open(NULL, &err));
    assert_int_equal(err.code, LP_NOTFOUND);
    assert_null(wp_open("", NULL));

    make_tmpdir(zDir, sizeof(zDir));
    lp_err_clear(&err);
    assert_null(wp_open(zDir, &err));
    assert_int_equal(err.code, LP_NOTFOUND);
    assert_non_null(strstr(err.zMsg, zDir));

    /* Corrupt tokenizer.json: not JSON. */
    write_file(zDir, "tokenizer.json", "{\"model\": {\"type\": ", 19);
    lp_err_clear(&err);
    assert_null(wp_open(zDir, &err));
    assert_int_equal(err.code, LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "tokenizer.json"));

    static const struct {
        const char *zJson;
        int code;
        const char *zMsgPart;
    } aCase[] = {
        {"[1,2]", LP_CORRUPT, "not a JSON object"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"model\":{\"type\":\"BPE\",\"vocab\":{}}}",
         LP_UNSUPPORTED, "BPE"},
        {"{\"normalizer\":{\"type\":\"NFC\"},\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}",
         LP_UNSUPPORTED, "NFC"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":\"Whitespace\"}"
         ","
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}",
         LP_UNSUPPORTED, "Whitespace"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[CLS]\":0,\"[SEP]\":1,\"x\":2}}}",
         LP_CORRUPT, "[UNK]"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0,\"[SEP]\":1,\"x\":2}}}",
         LP_CORRUPT, "[CLS]"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":\"zero\"}}}",
         LP_CORRUPT, "[UNK]"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":-4}}}",
         LP_CORRUPT, "out of range"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\",\"lowercase\":\"yes\"},"
         "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},\"model\":{\"type\":\"WordPiece\","
         "\"vocab\":{}}}",
         LP_CORRUPT, "lowercase"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"model\":{\"type\":\"WordPiece\",\"max_input_chars_per_word\":100000,\"vocab\":{}}}",
         LP_UNSUPPORTED, "max_input_chars_per_word"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"post_processor\":{\"type\":\"RobertaProcessing\"},"
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0,\"[CLS]\":1,\"[SEP]\":2}}}",
         LP_UNSUPPORTED, "RobertaProcessing"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"added_tokens\":[{\"id\":3,\"content\":\"<x>\",\"normalized\":true}],"
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0,\"[CLS]\":1,\"[SEP]\":2}}}",
         LP_UNSUPPORTED, "normalized"},
        {"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
         "\"BertPreTokenizer\"},"
         "\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}",
         LP_CORRUPT, "empty"},
    };
    for (size_t i = 0; i < sizeof(aCase) / sizeof(aCase[0]); i++) {
        write_file(zDir, "tokenizer.json", aCase[i].zJson, strlen(aCase[i].zJson));
        lp_err_clear(&err);
        Wordpiece *wp = wp_open(zDir, &err);
        if (wp || err.code != aCase[i].code || !strstr(err.zMsg, aCase[i].zMsgPart)) {
            fail_msg("case %zu: %s %s (expected %s, \"%s\")", i, lp_code_name(err.code), err.zMsg,
                     lp_code_name(aCase[i].code), aCase[i].zMsgPart);
        }
        assert_non_null(strstr(err.zMsg, "tokenizer.json"));
    }
    /* A minimal valid one opens, and the null post-processor takes [CLS]
    ** and [SEP] from the vocabulary. */
    const char *zMin = "{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":"
                       "\"BertPreTokenizer\"},"
                       "\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0,\"[CLS]\":7,\"["
                       "SEP]\":2,\"x\":3}}}";
    write_file(zDir, "tokenizer.json", zMin, strlen(zMin));
    Wordpiece *wp = open_ok(zDir);
    assert_int_equal(wp_cls_id(wp), 7);
    assert_int_equal(wp_vocab_size(wp), 8);
    EXPECT(wp, "x y", 3, 0);
    wp_close(wp);
    rm_tree(zDir);

    /* vocab.txt without [UNK]. */
    make_tmpdir(zDir, sizeof(zDir));
    write_file(zDir, "vocab.txt", "[PAD]\n[CLS]\n[SEP]\nhello\n", 24);
    lp_err_clear(&err);
    assert_null(wp_open(zDir, &err));
    assert_int_equal(err.code, LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "[UNK]"));
    assert_non_null(strstr(err.zMsg, "vocab.txt"));
    /* Empty vocab.txt. */
    write_file(zDir, "vocab.txt", "", 0);
    lp_err_clear(&err);
    assert_null(wp_open(zDir, &err));
    assert_int_equal(err.code, LP_CORRUPT);
    /* Invalid UTF-8 in vocab.txt names the line. */
    write_file(zDir, "vocab.txt", "[UNK]\n[CLS]\n\xFF\n", 14);
    lp_err_clear(&err);
    assert_null(wp_open(zDir, &err));
    assert_int_equal(err.code, LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "line 3"));
    /* A corrupt tokenizer_config.json next to a good vocab.txt. */
    write_file(zDir, "vocab.txt", "[UNK]\r\n[CLS]\r\n[SEP]\r\nhi\r\n", 23);
    write_file(zDir, "tokenizer_config.json", "{\"do_lower_case\": tru", 21);
    lp_err_clear(&err);
    assert_null(wp_open(zDir, &err));
    assert_int_equal(err.code, LP_CORRUPT);
    assert_non_null(strstr(err.zMsg, "tokenizer_config.json"));
    /* CRLF lines are ids 0, 1, 2, 3; custom special names from the config. */
    write_file(zDir, "tokenizer_config.json",
               "{\"do_lower_case\": true, \"unk_token\": {\"content\": \"hi\"}}", 55);
    wp = open_ok(zDir);
    assert_int_equal(wp_unk_id(wp), 3);
    assert_int_equal(wp_cls_id(wp), 1);
    assert_int_equal(wp_sep_id(wp), 2);
    assert_int_equal(wp_pad_id(wp), 0); /* no [PAD]: 0 */
    EXPECT(wp, "HI zz", 3, 3);
    wp_close(wp);
    rm_tree(zDir);
}

static void test_invalid_utf8(void **state) {
    (void)state;
    Wordpiece *wp = open_ok(g_zMini);
    /* Each invalid byte is U+FFFD, which clean_text drops: the result is the
    ** text without those bytes. */
    static const struct {
        const char *zBad, *zClean;
    } aCase[] = {
        {"hel\xFFlo world", "hello world"},
        {"caf\xC3", "caf"},
        {"\xE4\xB8 tokens", " tokens"},
        {"over\xC0\xAFlong", "overlong"},
        {"sur\xED\xA0\x80rogate", "surrogate"},
        {"\x80\x81\x82", ""},
        {"big\xF5\x80\x80\x80num", "bignum"},
        /* The raw match of [CLS] fails, and the dropped byte does not bring
        ** it back: three words, as "[cls]" (lower-cased, not special). */
        {"[CL\xFFS]", "[cls]"},
    };
    for (size_t i = 0; i < sizeof(aCase) / sizeof(aCase[0]); i++) {
        int64_t a[64], b[64];
        int na = wp_encode(wp, aCase[i].zBad, strlen(aCase[i].zBad), 64, a);
        int nb = wp_encode(wp, aCase[i].zClean, strlen(aCase[i].zClean), 64, b);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, sizeof(int64_t) * (size_t)na);
    }
    int64_t a[8];
    assert_int_equal(wp_encode(wp, "[CLS]", 5, 8, a), 3);
    assert_int_equal(a[1], 101);
    assert_true(wp_encode(wp, "[CL\xFFS]", 7, 8, a) > 4);
    wp_close(wp);
}

static void test_nmax_and_edges(void **state) {
    (void)state;
    Wordpiece *wp = open_ok(g_zMini);
    int64_t a[WP_MAX_LEN + 16];
    const char *z = "the quick brown fox jumps over the lazy dog";
    for (int nMax = -3; nMax <= 2; nMax++) {
        for (int i = 0; i < WP_MAX_LEN + 16; i++)
            a[i] = -7;
        assert_int_equal(wp_encode(wp, z, strlen(z), nMax, a), 2);
        assert_int_equal(a[0], 101);
        assert_int_equal(a[1], 102);
        assert_int_equal(a[2], -7);
    }
    /* Empty and NULL text. */
    assert_int_equal(wp_encode(wp, "", 0, 10, a), 2);
    assert_int_equal(wp_encode(wp, NULL, 0, 10, a), 2);
    assert_int_equal(wp_encode(wp, NULL, 5, 10, a), 2);
    assert_int_equal(wp_encode(wp, "   \t\n ", 6, 10, a), 2);
    /* No wp or no output: 0, nothing written. */
    assert_int_equal(wp_encode(NULL, z, strlen(z), 10, a), 0);
    assert_int_equal(wp_encode(wp, z, strlen(z), 10, NULL), 0);
    /* nMax above WP_MAX_LEN is clamped, and nothing past it is written. */
    size_t nBig = 20000;
    char *zBig = malloc(nBig + 1);
    for (size_t i = 0; i < nBig; i += 4)
        memcpy(zBig + i, "dog ", 4);
    for (int i = 0; i < WP_MAX_LEN + 16; i++)
        a[i] = -7;
    assert_int_equal(wp_encode(wp, zBig, nBig, 100000, a), WP_MAX_LEN);
    assert_int_equal(a[WP_MAX_LEN - 1], 102);
    assert_int_equal(a[WP_MAX_LEN - 2], 3899); /* "dog" */
    assert_int_equal(a[WP_MAX_LEN], -7);
    free(zBig);
    /* A word of exactly 100 characters is tokenized; 101 is [UNK]. */
    char zWord[102];
    memset(zWord, 'x', 101);
    zWord[101] = 0;
    int n = wp_encode(wp, zWord, 100, 512, a);
    assert_true(n > 3);
    for (int i = 1; i < n - 1; i++)
        assert_int_not_equal(a[i], 100);
    assert_int_equal(wp_encode(wp, zWord, 101, 512, a), 3);
    assert_int_equal(a[1], 100);
    /* A long word as the last thing that fits: [UNK] then [SEP]. */
    char zLong[300];
    memcpy(zLong, "dog ", 4);
    memset(zLong + 4, 'y', 200);
    assert_int_equal(wp_encode(wp, zLong, 204, 4, a), 4);
    assert_int_equal(a[1], 3899);
    assert_int_equal(a[2], 100);
    assert_int_equal(a[3], 102);
    wp_close(wp);
}

static void test_big_inputs_bounded(void **state) {
    (void)state;
    Wordpiece *wp = open_ok(g_zMini);
    const size_t nBig = 10u << 20;
    char *z = malloc(nBig);
    const char *zSentence =
        "Tokenization of scientific abstracts, e.g. the TGF-\xce\xb2 pathway, in 10 MB. ";
    size_t nS = strlen(zSentence);
    for (size_t i = 0; i < nBig; i++)
        z[i] = zSentence[i % nS];
    int64_t a[WP_MAX_LEN];

    /* Stops once the output is full: about the cost of 512 pieces. */
    double t0 = now_s();
    int n = 0;
    for (int r = 0; r < 100; r++)
        n = wp_encode(wp, z, nBig, 256, a);
    double dt = (now_s() - t0) / 100;
    assert_int_equal(n, 256);
    fprintf(stderr, "10 MB text, nMax 256: %.1f us per call\n", dt * 1e6);
    assert_true(dt < 0.005);

    /* Worst cases scan everything, in linear time: 10 MB of spaces, of
    ** one word (emitted as [UNK] at its 101st character, the rest skipped),
    ** of combining marks that strip_accents drops. */
    memset(z, ' ', nBig);
    t0 = now_s();
    assert_int_equal(wp_encode(wp, z, nBig, 256, a), 2);
    double dtSpace = now_s() - t0;
    memset(z, 'q', nBig);
    t0 = now_s();
    assert_int_equal(wp_encode(wp, z, nBig, 256, a), 3);
    assert_int_equal(a[1], 100);
    double dtWord = now_s() - t0;
    for (size_t i = 0; i + 2 <= nBig; i += 2)
        memcpy(z + i, "\xCC\x81", 2); /* U+0301 only */
    t0 = now_s();
    assert_int_equal(wp_encode(wp, z, nBig, 256, a), 2);
    double dtMarks = now_s() - t0;
    fprintf(stderr,
            "10 MB worst cases: spaces %.0f ms, one word %.0f ms, combining marks %.0f ms\n",
            dtSpace * 1e3, dtWord * 1e3, dtMarks * 1e3);
    /* Generous: sanitizer builds are ~10x slower than release. */
    assert_true(dtSpace < 10 && dtWord < 10 && dtMarks < 10);
    free(z);
    wp_close(wp);
}

/* Tokens per second on the probe set (printed, not asserted). */
static void test_speed(void **state) {
    (void)state;
    double tOpen = now_s();
    Wordpiece *wp = open_ok(g_zMini);
    tOpen = now_s() - tOpen;
    int64_t *a = malloc(sizeof(int64_t) * 40000);
    double tLong = 0, tShort = 0;
    long nTokLong = 0, nTokShort = 0, nCallShort = 0;
    size_t nBytesLong = 0, nBytesShort = 0;
    for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < g_nProbe; i++) {
            const Probe *p = &g_aProbe[i];
            double t0 = now_s();
            int n = wp_encode_nolimit(wp, p->z, p->n, 40000, a);
            double dt = now_s() - t0;
            if (p->n > 50000) {
                tLong += dt, nTokLong += n, nBytesLong += p->n;
            } else {
                tShort += dt, nTokShort += n, nBytesShort += p->n, nCallShort++;
            }
        }
    }
    fprintf(stderr,
            "speed: wp_open %.0f ms; 100 KB probes %.2f M tokens/s (%.0f MB/s); other probes %.2f "
            "M tokens/s "
            "(%.0f MB/s, %.1f us per text of %.0f bytes)\n",
            tOpen * 1e3, nTokLong / tLong / 1e6, nBytesLong / tLong / 1e6, nTokShort / tShort / 1e6,
            nBytesShort / tShort / 1e6, tShort / nCallShort * 1e6,
            (double)nBytesShort / nCallShort);
    free(a);
    wp_close(wp);
}

typedef struct ThreadArg {
    const Wordpiece *wp;
    int iStart;
    int nFail;
} ThreadArg;

static void *thread_main(void *pArg) {
    ThreadArg *t = pArg;
    int64_t a[WP_MAX_LEN];
    for (int k = 0; k < g_nProbe; k++) {
        const Probe *p = &g_aProbe[(t->iStart + k) % g_nProbe];
        int n = wp_encode(t->wp, p->z, p->n, 256, a);
        int nExp = p->nId <= 256 ? p->nId : 256;
        if (n != nExp || memcmp(a, p->aId, sizeof(int64_t) * (size_t)(nExp - 1)) != 0) t->nFail++;
    }
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    Wordpiece *wp = open_ok(g_zMini);
    pthread_t aT[4];
    ThreadArg aArg[4];
    for (int i = 0; i < 4; i++) {
        aArg[i] = (ThreadArg){wp, i * 477, 0};
        assert_int_equal(pthread_create(&aT[i], NULL, thread_main, &aArg[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(aT[i], NULL);
        assert_int_equal(aArg[i].nFail, 0);
    }
    wp_close(wp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_tokenizer_json),
        cmocka_unit_test(test_golden_vocab_fallback),
        cmocka_unit_test(test_golden_bert_base_uncased),
        cmocka_unit_test(test_rules_lowercase_strip),
        cmocka_unit_test(test_rules_word_length),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_nmax_and_edges),
        cmocka_unit_test(test_big_inputs_bounded),
        cmocka_unit_test(test_speed),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, load_probes, free_probes);
}
