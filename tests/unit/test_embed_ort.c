/*
** test_embed_ort.c — unit tests for embed/ort.h and embed/embed.h against
** the real ONNX Runtime and the generated test models.
**
** Needs: the runtime (make ort: vendor/onnxruntime/libonnxruntime.so.1)
** and the test models (make models: models/loupe-test/all-MiniLM-L{6,12}-v2
** with loupe-reference.jsonl, embeddings from an independent NumPy forward
** pass of the same weights). They are looked for in $LOUPE_MODELS_DIR, else
** <repo>/models/loupe-test (from this file's path). A missing prerequisite
** fails the test with a message saying what to run; nothing is skipped
** silently.
**
** The tests that make the runtime fail to load come first: once a runtime
** is loaded it stays for the life of the process (ort.h), so they could no
** longer fail. The "runtime too old" refusal (GetApi(15) == NULL) needs a
** fake library and is not tested here.
**
** LOUPE_EMBED_SOAK=N (default 64) sets how many texts test_soak embeds
** (short ones: the reference texts of at most 40 tokens); the valgrind
** check runs it alone with 1000 or more:
**   LOUPE_EMBED_TEST_FILTER=test_soak LOUPE_EMBED_SOAK=1000 \
**     valgrind --leak-check=full ./test_embed_ort
**
** A deadlock would hang rather than fail, so main() arms alarm().
*/
#include <dirent.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "embed/embed.h"
#include "embed/ort.h"
#include "embed/wordpiece.h"
#include "util/error.h"
#include "util/threadpool.h"

#define WATCHDOG_S 600
#define TOL 1e-4

/* Leaks inside ONNX Runtime. ORT never frees a few small blocks: 14 bytes
** allocated while creating its environment (ort.c keeps LeakSanitizer off
** there), and now and then 152 bytes allocated in a pthread_once by one of
** its own std::threads (seen about once per ten sessions created and
** released, with no loupe code on the stack). ORT is built without frame
** pointers, so ASan's fast unwinder stops at the first ORT frame and a
** suppression can only name the module: allocations made inside ORT are
** not leak-checked here. What that could hide from us, an ORT object we
** forget to release, is checked instead by embed_ort_live_handles() == 0
** once every model is released; loupe's own allocations are checked as
** always. (Valgrind, which unwinds through ORT, confirms: see the report
** of issue 6.) */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
    return "leak:libonnxruntime.so\n";
}

/* Sessions use 1 intra-op thread, the server's setting (ort.h). */
#define N_INTRA 1

/* ---- Fixtures -------------------------------------------------------- */

static char g_zModels[2048];   /* folder holding all-MiniLM-L6-v2 / -L12-v2 */
static char g_zDataDir[2048];  /* when g_zModels is <d>/models/loupe-test: <d> */

static void find_models(void) {
    const char *z = getenv("LOUPE_MODELS_DIR");
    if (z && z[0]) {
        snprintf(g_zModels, sizeof(g_zModels), "%s", z);
    } else {
        /* __FILE__ is <repo>/tests/unit/test_embed_ort.c */
        char zFile[1900];
        snprintf(zFile, sizeof(zFile), "%s", __FILE__);
        for (int i = 0; i < 3; i++) {
            char *p = strrchr(zFile, '/');
            if (p) *p = 0;
        }
        snprintf(g_zModels, sizeof(g_zModels), "%s/models/loupe-test", zFile);
    }
    size_t n = strlen(g_zModels);
    const char *zTail = "/models/loupe-test";
    if (n > strlen(zTail) && strcmp(g_zModels + n - strlen(zTail), zTail) == 0)
        snprintf(g_zDataDir, sizeof(g_zDataDir), "%.*s", (int)(n - strlen(zTail)), g_zModels);
}

static void model_dir(char *zOut, size_t nOut, const char *zModel) {
    snprintf(zOut, nOut, "%s/%s", g_zModels, zModel);
}

/* Fails the test unless the model folder and its reference file exist. */
static void require_model(const char *zModel) {
    char z[4200];
    snprintf(z, sizeof(z), "%s/%s/loupe-reference.jsonl", g_zModels, zModel);
    if (access(z, R_OK) != 0) fail_msg("%s is missing: run `make models` (or set LOUPE_MODELS_DIR)", z);
}

/* Opens a test model by name when the models folder is <d>/models/..., so
** that 'org/name' resolution is exercised, else by absolute path. */
static EmbedModel *open_model(const char *zModel, int nIntra) {
    require_model(zModel);
    EmbedOptions o = {0};
    o.nIntraThreads = nIntra;
    LpError err;
    lp_err_clear(&err);
    EmbedModel *m;
    if (g_zDataDir[0]) {
        char zName[256];
        snprintf(zName, sizeof(zName), "loupe-test/%s", zModel);
        m = embed_model_get(zName, g_zDataDir, &o, &err);
    } else {
        char zDir[4200];
        model_dir(zDir, sizeof(zDir), zModel);
        m = embed_model_get(zDir, NULL, &o, &err);
    }
    if (m == NULL) fail_msg("embed_model_get(%s): %s (%s)", zModel, err.zMsg, lp_code_name(err.code));
    return m;
}

/* One line of loupe-reference.jsonl. */
typedef struct RefLine {
    char *zText;      /* the text (may hold NUL bytes) */
    size_t nText;     /* its length */
    int64_t *aId;     /* the reference token ids */
    int nId;
    float *aEmb;      /* the reference embedding */
    int nEmb;
} RefLine;

/* Reads up to nMax lines (nMax <= 0: all) of a model's reference file. */
static RefLine *read_ref(const char *zModel, int nMax, int *pn) {
    char zPath[4200];
    snprintf(zPath, sizeof(zPath), "%s/%s/loupe-reference.jsonl", g_zModels, zModel);
    FILE *f = fopen(zPath, "r");
    if (f == NULL) fail_msg("cannot open %s", zPath);
    RefLine *a = NULL;
    int n = 0, nAlloc = 0;
    char *zLine = NULL;
    size_t nLineAlloc = 0;
    ssize_t nLine;
    int iLine = 0;
    while ((nMax <= 0 || n < nMax) && (nLine = getline(&zLine, &nLineAlloc, f)) > 0) {
        iLine++;
        if (nLine <= 1) continue;
        json_error_t je;
        json_t *j = json_loadb(zLine, (size_t)nLine, JSON_ALLOW_NUL, &je);
        if (j == NULL) fail_msg("%s line %d: %s", zPath, iLine, je.text);
        json_t *jt = json_object_get(j, "text"), *ji = json_object_get(j, "ids"), *je2 = json_object_get(j, "embedding");
        if (!json_is_string(jt) || !json_is_array(ji) || !json_is_array(je2))
            fail_msg("%s line %d: expected text, ids and embedding", zPath, iLine);
        if (n == nAlloc) {
            nAlloc = nAlloc ? 2 * nAlloc : 64;
            a = realloc(a, (size_t)nAlloc * sizeof(*a));
            assert_non_null(a);
        }
        RefLine *r = &a[n++];
        r->nText = json_string_length(jt);
        r->zText = malloc(r->nText + 1);
        assert_non_null(r->zText);
        memcpy(r->zText, json_string_value(jt), r->nText + 1);
        r->nId = (int)json_array_size(ji);
        r->aId = malloc(sizeof(int64_t) * (size_t)(r->nId + 1));
        for (int i = 0; i < r->nId; i++) r->aId[i] = json_integer_value(json_array_get(ji, (size_t)i));
        r->nEmb = (int)json_array_size(je2);
        r->aEmb = malloc(sizeof(float) * (size_t)(r->nEmb + 1));
        for (int i = 0; i < r->nEmb; i++) r->aEmb[i] = (float)json_number_value(json_array_get(je2, (size_t)i));
        json_decref(j);
    }
    free(zLine);
    fclose(f);
    if (n == 0) fail_msg("%s has no lines", zPath);
    *pn = n;
    return a;
}

static void free_ref(RefLine *a, int n) {
    for (int i = 0; i < n; i++) {
        free(a[i].zText);
        free(a[i].aId);
        free(a[i].aEmb);
    }
    free(a);
}

static int rm_one(const char *z, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(z);
}

static void rm_rf(const char *z) {
    nftw(z, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* zDir/zName into z (n bytes), or the test fails. */
static void path_of(char *z, size_t n, const char *zDir, const char *zName) {
    int m = snprintf(z, n, "%s/%s", zDir, zName);
    if (m < 0 || (size_t)m >= n) fail_msg("path too long: %s/%s", zDir, zName);
}

static void write_file(const char *zDir, const char *zName, const char *zContent) {
    char z[4200];
    path_of(z, sizeof(z), zDir, zName);
    FILE *f = fopen(z, "w");
    assert_non_null(f);
    fputs(zContent, f);
    fclose(f);
}

static void link_file(const char *zDir, const char *zName, const char *zSrcDir) {
    char zTo[4200], zFrom[4200];
    path_of(zTo, sizeof(zTo), zDir, zName);
    path_of(zFrom, sizeof(zFrom), zSrcDir, zName);
    if (symlink(zFrom, zTo) != 0) fail_msg("symlink %s -> %s failed", zTo, zFrom);
}

/* A scratch model folder: the L6 model's files, linked, as flags say. */
enum { F_MODEL = 1, F_CONFIG = 2, F_TOKENIZER = 4, F_ALL = 7 };
static void make_folder(char *zDir, size_t nDir, int flags) {
    char zSrc[4200];
    model_dir(zSrc, sizeof(zSrc), "all-MiniLM-L6-v2");
    snprintf(zDir, nDir, "/tmp/loupe-embed-test-XXXXXX");
    assert_non_null(mkdtemp(zDir));
    if (flags & F_MODEL) {
        char z[4300];
        snprintf(z, sizeof(z), "%s/onnx", zDir);
        assert_int_equal(mkdir(z, 0755), 0);
        link_file(zDir, "onnx/model.onnx", zSrc);
    }
    if (flags & F_CONFIG) link_file(zDir, "config.json", zSrc);
    if (flags & F_TOKENIZER) {
        link_file(zDir, "tokenizer.json", zSrc);
        link_file(zDir, "vocab.txt", zSrc);
    }
}

/* Expects embed_model_get(zName) to fail with code, the message holding
** each of the NULL-terminated strings. */
static void expect_get_error(const char *zName, const char *zDataDir, int code, ...) {
    LpError err;
    lp_err_clear(&err);
    EmbedOptions o = {.nIntraThreads = N_INTRA};
    EmbedModel *m = embed_model_get(zName, zDataDir, &o, &err);
    if (m) {
        embed_model_release(m);
        fail_msg("embed_model_get(%s) succeeded; expected %s", zName, lp_code_name(code));
    }
    if (err.code != code)
        fail_msg("embed_model_get(%s): %s (%s), expected %s", zName, err.zMsg, lp_code_name(err.code),
                 lp_code_name(code));
    va_list ap;
    va_start(ap, code);
    const char *z;
    while ((z = va_arg(ap, const char *)) != NULL)
        if (strstr(err.zMsg, z) == NULL) fail_msg("message \"%s\" lacks \"%s\"", err.zMsg, z);
    va_end(ap);
}

static double max_abs_diff(const float *a, const float *b, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= m)) m = d; /* NaN propagates */
    }
    return m;
}

/* ---- Runtime missing ------------------------------------------------- */

static void test_runtime_missing(void **state) {
    (void)state;
    LpError err;
    assert_null(embed_ort_version());
    /* The caller's own LOUPE_ORT_LIB, if any, is put back for the final load. */
    char zSaved[1024] = "";
    const char *zEnv = getenv("LOUPE_ORT_LIB");
    if (zEnv) snprintf(zSaved, sizeof(zSaved), "%s", zEnv);

    /* LOUPE_ORT_LIB naming nothing. */
    setenv("LOUPE_ORT_LIB", "/nonexistent/libonnxruntime.so.1", 1);
    lp_err_clear(&err);
    assert_int_equal(embed_ort_load(NULL, &err), LP_NOTFOUND);
    assert_non_null(strstr(err.zMsg, "/nonexistent/libonnxruntime.so.1"));
    assert_non_null(strstr(err.zMsg, "LOUPE_ORT_LIB"));
    assert_non_null(strstr(err.zMsg, "No such file")); /* dlerror() */

    /* A model that needs it fails at get() time, clearly. */
    char zDir[4200];
    model_dir(zDir, sizeof(zDir), "all-MiniLM-L6-v2");
    require_model("all-MiniLM-L6-v2");
    expect_get_error(zDir, NULL, LP_NOTFOUND, "ONNX Runtime is not available", "/nonexistent", NULL);
    assert_int_equal(embed_registry_count(), 0);
    unsetenv("LOUPE_ORT_LIB");

    /* An explicit path to a library that is not ONNX Runtime. */
    lp_err_clear(&err);
    assert_int_equal(embed_ort_load("libm.so.6", &err), LP_UNSUPPORTED);
    assert_non_null(strstr(err.zMsg, "OrtGetApiBase"));
    assert_non_null(strstr(err.zMsg, "libm.so.6"));
    assert_null(embed_ort_version());

    /* An explicit path wins over a good environment. */
    lp_err_clear(&err);
    assert_int_equal(embed_ort_load("/nonexistent/x.so", &err), LP_NOTFOUND);
    assert_non_null(strstr(err.zMsg, "ort_lib option"));

    /* Then the default (or the caller's) loads: failures are not remembered. */
    if (zSaved[0]) setenv("LOUPE_ORT_LIB", zSaved, 1);
    lp_err_clear(&err);
    if (embed_ort_load(NULL, &err) != LP_OK) fail_msg("%s: run `make ort`", err.zMsg);
    assert_non_null(embed_ort_version());
    assert_non_null(embed_ort_lib_path());
    /* Loaded is loaded: the environment no longer matters. */
    setenv("LOUPE_ORT_LIB", "/nonexistent/libonnxruntime.so.1", 1);
    assert_int_equal(embed_ort_load(NULL, &err), LP_OK);
    if (zSaved[0]) setenv("LOUPE_ORT_LIB", zSaved, 1);
    else unsetenv("LOUPE_ORT_LIB");
}

/* ---- Model errors ---------------------------------------------------- */

static void test_model_errors(void **state) {
    (void)state;
    require_model("all-MiniLM-L6-v2");
    char zDir[4200];

    /* Names. */
    expect_get_error("", "/tmp", LP_BADINPUT, NULL);
    expect_get_error("../etc", "/tmp", LP_BADINPUT, "'../etc'", NULL);
    expect_get_error("a/b/c", "/tmp", LP_BADINPUT, NULL);
    expect_get_error("org/na me", "/tmp", LP_BADINPUT, NULL);
    expect_get_error("org/name", NULL, LP_BADINPUT, "data directory", NULL);

    /* No such folder: the message names the resolved path and what belongs in it. */
    expect_get_error("nobody/no-such-model", "/tmp/loupe-no-data", LP_NOTFOUND,
                     "/tmp/loupe-no-data/models/nobody/no-such-model", "onnx/model.onnx", "tokenizer.json", NULL);
    expect_get_error("/tmp/loupe-no-such-folder", NULL, LP_NOTFOUND, "/tmp/loupe-no-such-folder", NULL);

    /* A folder without a model file. */
    make_folder(zDir, sizeof(zDir), F_CONFIG | F_TOKENIZER);
    expect_get_error(zDir, NULL, LP_NOTFOUND, "no model file", "model.onnx", NULL);
    rm_rf(zDir);

    /* A folder without config.json. */
    make_folder(zDir, sizeof(zDir), F_MODEL | F_TOKENIZER);
    expect_get_error(zDir, NULL, LP_NOTFOUND, "config.json", NULL);
    rm_rf(zDir);

    /* A folder without a tokenizer. */
    make_folder(zDir, sizeof(zDir), F_MODEL | F_CONFIG);
    expect_get_error(zDir, NULL, LP_NOTFOUND, zDir, NULL);
    rm_rf(zDir);

    /* Malformed config.json: the message names the file and the line. */
    make_folder(zDir, sizeof(zDir), F_MODEL | F_TOKENIZER);
    write_file(zDir, "config.json", "{\n  \"hidden_size\": 384,\n  \"vocab_size\": \n}\n");
    expect_get_error(zDir, NULL, LP_CORRUPT, "config.json", "line 4", NULL);
    write_file(zDir, "config.json", "[384]");
    expect_get_error(zDir, NULL, LP_CORRUPT, "config.json", "object", NULL);
    write_file(zDir, "config.json", "{\"model_type\": \"bert\"}");
    expect_get_error(zDir, NULL, LP_CORRUPT, "hidden_size", NULL);
    write_file(zDir, "config.json", "{\"hidden_size\": \"384\"}");
    expect_get_error(zDir, NULL, LP_CORRUPT, "hidden_size", NULL);
    /* Well-formed but not this model's: the output dimension is checked. */
    write_file(zDir, "config.json", "{\"hidden_size\": 768}");
    expect_get_error(zDir, NULL, LP_CORRUPT, "384", "768", NULL);
    /* A vocabulary larger than the model's embedding table. */
    write_file(zDir, "config.json", "{\"hidden_size\": 384, \"vocab_size\": 1000}");
    expect_get_error(zDir, NULL, LP_CORRUPT, "vocab_size", NULL);
    /* Malformed optional files. */
    write_file(zDir, "config.json", "{\"hidden_size\": 384}");
    write_file(zDir, "sentence_bert_config.json", "{\"max_seq_length\": -3}");
    expect_get_error(zDir, NULL, LP_CORRUPT, "max_seq_length", NULL);
    write_file(zDir, "sentence_bert_config.json", "{\"max_seq_length\": 128}");
    char z[4300];
    snprintf(z, sizeof(z), "%s/1_Pooling", zDir);
    assert_int_equal(mkdir(z, 0755), 0);
    write_file(zDir, "1_Pooling/config.json", "{\"pooling_mode_weightedmean_tokens\": true}");
    expect_get_error(zDir, NULL, LP_UNSUPPORTED, "weightedmean", NULL);
    write_file(zDir, "1_Pooling/config.json", "{\"pooling_mode_cls_token\": true, \"pooling_mode_mean_tokens\": true}");
    expect_get_error(zDir, NULL, LP_UNSUPPORTED, "several", NULL);
    /* Finally valid: CLS pooling and max_seq_length 128 are taken. */
    write_file(zDir, "1_Pooling/config.json", "{\"pooling_mode_cls_token\": true, \"pooling_mode_mean_tokens\": false}");
    LpError err;
    lp_err_clear(&err);
    EmbedOptions o = {.nIntraThreads = N_INTRA};
    EmbedModel *m = embed_model_get(zDir, NULL, &o, &err);
    if (m == NULL) fail_msg("%s", err.zMsg);
    assert_int_equal(embed_model_max_len(m), 128);
    assert_int_equal(embed_model_dims(m), 384);
    embed_model_release(m);
    rm_rf(zDir);

    /* A model file ONNX Runtime cannot parse. */
    make_folder(zDir, sizeof(zDir), F_CONFIG | F_TOKENIZER);
    snprintf(z, sizeof(z), "%s/model.onnx", zDir);
    write_file(zDir, "model.onnx", "this is not a protobuf \x01\x02\x03");
    expect_get_error(zDir, NULL, LP_CORRUPT, "model.onnx", "onnxruntime", NULL);
    rm_rf(zDir);

    assert_int_equal(embed_registry_count(), 0);
    assert_int_equal(embed_ort_live_handles(), 0);
}

/* ---- Reference embeddings -------------------------------------------- */

/* Every (or the first nMax) reference line: ids equal, embedding within TOL. */
static void check_reference(const char *zModel, int nMax) {
    EmbedModel *m = open_model(zModel, N_INTRA);
    int d = embed_model_dims(m);
    assert_int_equal(d, 384);
    int n;
    RefLine *a = read_ref(zModel, nMax, &n);
    float *v = malloc(sizeof(float) * (size_t)d);
    int64_t aId[WP_MAX_LEN];
    double worst = 0;
    for (int i = 0; i < n; i++) {
        RefLine *r = &a[i];
        int nId = wp_encode(embed_model_tokenizer(m), r->zText, r->nText, embed_model_max_len(m), aId);
        if (nId != r->nId || memcmp(aId, r->aId, sizeof(int64_t) * (size_t)nId) != 0)
            fail_msg("%s line %d: our %d token ids differ from the reference's %d", zModel, i + 1, nId, r->nId);
        assert_int_equal(r->nEmb, d);
        LpError err;
        lp_err_clear(&err);
        if (embed_text(m, r->zText, r->nText, v, &err) != LP_OK) fail_msg("line %d: %s", i + 1, err.zMsg);
        double diff = max_abs_diff(v, r->aEmb, d);
        if (!(diff <= TOL)) fail_msg("%s line %d (%d tokens): max abs diff %g > %g", zModel, i + 1, nId, diff, TOL);
        if (diff > worst) worst = diff;
        double norm = 0;
        for (int j = 0; j < d; j++) norm += (double)v[j] * v[j];
        assert_true(fabs(norm - 1) < 1e-5);
    }
    print_message("%s: %d reference texts, worst max abs diff %.3g\n", zModel, n, worst);
    EmbedStats st;
    embed_model_stats(m, &st);
    assert_true(st.nText >= (uint64_t)n);
    free(v);
    free_ref(a, n);
    embed_model_release(m);
}

static void test_reference_l6(void **state) {
    (void)state;
    check_reference("all-MiniLM-L6-v2", 0);
}

static void test_reference_l12(void **state) {
    (void)state;
    check_reference("all-MiniLM-L12-v2", 6);
}

/* ---- Registry -------------------------------------------------------- */

static void test_registry(void **state) {
    (void)state;
    assert_int_equal(embed_registry_count(), 0);
    EmbedModel *a = open_model("all-MiniLM-L6-v2", N_INTRA);
    assert_int_equal(embed_registry_count(), 1);
    /* The same folder by its absolute path (and via a symlink): the same model. */
    char zDir[4200];
    model_dir(zDir, sizeof(zDir), "all-MiniLM-L6-v2");
    LpError err;
    lp_err_clear(&err);
    EmbedModel *b = embed_model_get(zDir, NULL, NULL, &err);
    assert_ptr_equal(a, b);
    char zLink[] = "/tmp/loupe-embed-link-XXXXXX";
    assert_non_null(mkdtemp(zLink));
    char zVia[4300];
    snprintf(zVia, sizeof(zVia), "%s/m", zLink);
    assert_int_equal(symlink(zDir, zVia), 0);
    EmbedModel *c = embed_model_get(zVia, NULL, NULL, &err);
    assert_ptr_equal(a, c);
    assert_int_equal(embed_registry_count(), 1);
    char zReal[4200];
    assert_non_null(realpath(zDir, zReal));
    assert_string_equal(embed_model_path(a), zReal);

    /* Another model is another entry. */
    EmbedModel *l12 = open_model("all-MiniLM-L12-v2", N_INTRA);
    assert_ptr_not_equal(l12, a);
    assert_int_equal(embed_registry_count(), 2);
    embed_model_release(l12);
    assert_int_equal(embed_registry_count(), 1);

    /* Released three times: gone only after the last. */
    embed_model_release(b);
    embed_model_release(c);
    assert_int_equal(embed_registry_count(), 1);
    float v[384];
    assert_int_equal(embed_text(a, "still here", 10, v, &err), LP_OK);
    embed_model_release(a);
    assert_int_equal(embed_registry_count(), 0);
    embed_model_release(NULL);
    remove(zVia);
    rmdir(zLink);

    /* And it loads again. */
    a = open_model("all-MiniLM-L6-v2", N_INTRA);
    assert_int_equal(embed_registry_count(), 1);
    assert_int_equal(embed_ort_live_handles(), 1); /* its session */
    embed_model_release(a);
    assert_int_equal(embed_registry_count(), 0);
    assert_int_equal(embed_ort_live_handles(), 0);
}

/* ---- Texts at the edges ---------------------------------------------- */

static void test_edge_texts(void **state) {
    (void)state;
    EmbedModel *m = open_model("all-MiniLM-L6-v2", N_INTRA);
    int d = embed_model_dims(m);
    float *a = malloc(sizeof(float) * (size_t)d), *b = malloc(sizeof(float) * (size_t)d);
    LpError err;
    lp_err_clear(&err);

    /* Empty: NULL or "", both "[CLS] [SEP]". */
    assert_int_equal(embed_text(m, NULL, 0, a, &err), LP_OK);
    assert_int_equal(embed_text(m, "", 0, b, &err), LP_OK);
    assert_memory_equal(a, b, sizeof(float) * (size_t)d);
    assert_int_equal(embed_text(m, NULL, 5, a, &err), LP_BADINPUT);

    /* Truncation: 1 MB of one word embeds as exactly max_len tokens of it. */
    int nMax = embed_model_max_len(m);
    size_t nBig = 1 << 20;
    char *zBig = malloc(nBig);
    for (size_t i = 0; i < nBig; i++) zBig[i] = "word "[i % 5];
    assert_int_equal(embed_text(m, zBig, nBig, a, &err), LP_OK);
    size_t nShort = (size_t)(nMax - 2) * 5;
    assert_int_equal(embed_text(m, zBig, nShort, b, &err), LP_OK);
    assert_memory_equal(a, b, sizeof(float) * (size_t)d);
    /* One word fewer differs (the test can fail). */
    assert_int_equal(embed_text(m, zBig, nShort - 5, b, &err), LP_OK);
    assert_true(max_abs_diff(a, b, d) > 0);
    free(zBig);

    /* Bytes that are not UTF-8, NULs, controls: no crash, a unit vector. */
    static const char zJunk[] = "\xff\xfe\x80 abc\0def \xc3\x28 \xe2\x82 caf\xc3\xa9 \x01\x1f \xf0\x9f\x98\x80";
    assert_int_equal(embed_text(m, zJunk, sizeof(zJunk) - 1, a, &err), LP_OK);
    double norm = 0;
    for (int j = 0; j < d; j++) norm += (double)a[j] * a[j];
    assert_true(fabs(norm - 1) < 1e-5);

    free(a);
    free(b);
    embed_model_release(m);
}

/* ---- Concurrency ----------------------------------------------------- */

#define N_THREAD 8

typedef struct ConcArg {
    EmbedModel *m;
    RefLine *a;
    int n;
    int iThread;
    float *aOut;   /* n x d, in line order */
    int rc;
} ConcArg;

static void *conc_main(void *p) {
    ConcArg *c = p;
    int d = embed_model_dims(c->m);
    /* Each thread walks the texts in its own order. */
    for (int k = 0; k < c->n; k++) {
        int i = (k * 7 + c->iThread * 5) % c->n;
        LpError err;
        int rc = embed_text(c->m, c->a[i].zText, c->a[i].nText, c->aOut + (size_t)i * (size_t)d, &err);
        if (rc) {
            c->rc = rc;
            break;
        }
    }
    return NULL;
}

static void test_concurrent(void **state) {
    (void)state;
    EmbedModel *m = open_model("all-MiniLM-L6-v2", N_INTRA);
    int d = embed_model_dims(m);
    int nAll;
    RefLine *a = read_ref("all-MiniLM-L6-v2", 24, &nAll);
    int n = nAll % 7 == 0 ? nAll - 1 : nAll; /* keep k*7 mod n a permutation */
    assert_true(n >= 1);
    float *aSeq = calloc((size_t)n * (size_t)d, sizeof(float));
    LpError err;
    for (int i = 0; i < n; i++) assert_int_equal(embed_text(m, a[i].zText, a[i].nText, aSeq + (size_t)i * d, &err), LP_OK);

    pthread_t at[N_THREAD];
    ConcArg ac[N_THREAD];
    for (int t = 0; t < N_THREAD; t++) {
        ac[t] = (ConcArg){.m = m, .a = a, .n = n, .iThread = t, .aOut = calloc((size_t)n * (size_t)d, sizeof(float))};
        assert_int_equal(pthread_create(&at[t], NULL, conc_main, &ac[t]), 0);
    }
    for (int t = 0; t < N_THREAD; t++) {
        pthread_join(at[t], NULL);
        assert_int_equal(ac[t].rc, LP_OK);
        for (int i = 0; i < n; i++)
            if (memcmp(ac[t].aOut + (size_t)i * d, aSeq + (size_t)i * d, sizeof(float) * (size_t)d) != 0)
                fail_msg("thread %d, text %d: not bit-identical to the sequential result", t, i);
        free(ac[t].aOut);
    }
    free(aSeq);
    free_ref(a, nAll);
    embed_model_release(m);
}

/* ---- Batches --------------------------------------------------------- */

static void test_batch(void **state) {
    (void)state;
    EmbedModel *m = open_model("all-MiniLM-L6-v2", N_INTRA);
    int d = embed_model_dims(m);
    int n;
    RefLine *a = read_ref("all-MiniLM-L6-v2", 0, &n);
    /* 40 texts: the reference texts over and over. */
    enum { N = 40 };
    const char *az[N];
    size_t an[N];
    for (int i = 0; i < N; i++) {
        az[i] = a[i % n].zText;
        an[i] = a[i % n].nText;
    }
    float *aSeq = calloc((size_t)N * d, sizeof(float)), *aOut = calloc((size_t)N * d, sizeof(float));
    LpError err;
    lp_err_clear(&err);
    for (int i = 0; i < N; i++) assert_int_equal(embed_text(m, az[i], an[i], aSeq + (size_t)i * d, &err), LP_OK);

    Tpool *pool = tpool_new(2, &err);
    assert_non_null(pool);
    EmbedStats s0, s1;

    /* At most nInline texts: inline on this thread. */
    embed_model_stats(m, &s0);
    assert_int_equal(embed_batch(m, az, an, 4, aOut, pool, 4, &err), LP_OK);
    embed_model_stats(m, &s1);
    assert_int_equal(s1.nBatchInline, s0.nBatchInline + 1);
    assert_int_equal(s1.nBatchPool, s0.nBatchPool);
    assert_int_equal(s1.nTextWorker, s0.nTextWorker);
    assert_memory_equal(aOut, aSeq, sizeof(float) * 4 * (size_t)d);

    /* More: spread over the pool, output in input order. */
    memset(aOut, 0, sizeof(float) * (size_t)N * d);
    embed_model_stats(m, &s0);
    assert_int_equal(embed_batch(m, az, an, N, aOut, pool, 4, &err), LP_OK);
    embed_model_stats(m, &s1);
    assert_int_equal(s1.nBatchPool, s0.nBatchPool + 1);
    assert_int_equal(s1.nText, s0.nText + N);
    assert_true(s1.nTextWorker > s0.nTextWorker); /* the workers did take texts */
    assert_true(s1.nTextWorker - s0.nTextWorker < N);  /* ... and so did the caller, most likely */
    for (int i = 0; i < N; i++)
        if (memcmp(aOut + (size_t)i * d, aSeq + (size_t)i * d, sizeof(float) * (size_t)d) != 0)
            fail_msg("pooled batch: text %d differs from embed_text", i);

    /* No pool: inline whatever the size. */
    embed_model_stats(m, &s0);
    assert_int_equal(embed_batch(m, az, an, 9, aOut, NULL, 4, &err), LP_OK);
    embed_model_stats(m, &s1);
    assert_int_equal(s1.nBatchInline, s0.nBatchInline + 1);
    assert_memory_equal(aOut, aSeq, sizeof(float) * 9 * (size_t)d);
    assert_int_equal(embed_batch(m, az, an, 0, aOut, pool, 4, &err), LP_OK);

    /* The failing text is named by its index, inline and pooled. */
    const char *azBad[N];
    memcpy(azBad, az, sizeof(az));
    azBad[2] = NULL;
    lp_err_clear(&err);
    assert_int_equal(embed_batch(m, azBad, an, 3, aOut, pool, 4, &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "text 2 of 3"));
    azBad[2] = az[2];
    azBad[29] = NULL;
    lp_err_clear(&err);
    assert_int_equal(embed_batch(m, azBad, an, N, aOut, pool, 4, &err), LP_BADINPUT);
    assert_non_null(strstr(err.zMsg, "text 29 of 40"));

    tpool_free(pool);
    free(aSeq);
    free(aOut);
    free_ref(a, n);
    embed_model_release(m);
}

/* ---- Soak: many embeddings, for leak checkers ------------------------ */

static void test_soak(void **state) {
    (void)state;
    const char *z = getenv("LOUPE_EMBED_SOAK");
    int nSoak = z ? atoi(z) : 64;
    if (nSoak < 1) nSoak = 1;
    EmbedModel *m = open_model("all-MiniLM-L6-v2", N_INTRA);
    int d = embed_model_dims(m);
    int nAll, n = 0;
    RefLine *a = read_ref("all-MiniLM-L6-v2", 0, &nAll);
    for (int i = 0; i < nAll; i++) {
        if (a[i].nId > 40) continue;
        RefLine t = a[n];
        a[n++] = a[i];
        a[i] = t;
    }
    assert_true(n >= 8);
    float *aRef = calloc((size_t)n * d, sizeof(float));
    LpError err;
    for (int i = 0; i < n; i++) assert_int_equal(embed_text(m, a[i].zText, a[i].nText, aRef + (size_t)i * d, &err), LP_OK);
    Tpool *pool = tpool_new(2, &err);
    enum { B = 32 };
    const char *az[B];
    size_t an[B];
    float *aOut = calloc((size_t)B * d, sizeof(float));
    int nDone = 0, k = 0;
    while (nDone < nSoak) {
        int nb = nSoak - nDone < B ? nSoak - nDone : B;
        for (int i = 0; i < nb; i++) {
            az[i] = a[(k + i) % n].zText;
            an[i] = a[(k + i) % n].nText;
        }
        assert_int_equal(embed_batch(m, az, an, nb, aOut, pool, 4, &err), LP_OK);
        for (int i = 0; i < nb; i++)
            if (memcmp(aOut + (size_t)i * d, aRef + (size_t)((k + i) % n) * d, sizeof(float) * (size_t)d) != 0)
                fail_msg("soak: text %d differs", nDone + i);
        nDone += nb;
        k += nb;
    }
    EmbedStats st;
    embed_model_stats(m, &st);
    print_message("soak: %d embeddings, %.2f ms per Run on average\n", nDone,
                  st.nText ? (double)st.nsRun / 1e6 / (double)st.nText : 0.0);
    tpool_free(pool);
    free(aOut);
    free(aRef);
    free_ref(a, nAll);
    embed_model_release(m);
    assert_int_equal(embed_registry_count(), 0);
    assert_int_equal(embed_ort_live_handles(), 0);
}

int main(void) {
    const char *zFilter = getenv("LOUPE_EMBED_TEST_FILTER");
    if (zFilter && zFilter[0]) cmocka_set_test_filter(zFilter);
    else alarm(WATCHDOG_S); /* a filtered run is a slow one, under valgrind */
    find_models();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_missing), /* first: see the top of the file */
        cmocka_unit_test(test_model_errors),
        cmocka_unit_test(test_reference_l6),
        cmocka_unit_test(test_reference_l12),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_edge_texts),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_soak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
