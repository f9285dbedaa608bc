/*
** embed.c — see embed.h.
**
** The registry is a short linked list under one mutex: a process loads a
** handful of models at most, and gets/releases happen at CREATE/DROP TABLE
** time, never per row. The embedding path (embed_text, embed_batch) takes
** no lock: it reads the immutable fields of a model, runs ORT on the
** shared session and bumps relaxed atomic counters.
*/
#include "embed/embed.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "embed/ort.h"
#include "util/clock.h"
#include "util/log.h"

enum { POOL_MEAN = 0, POOL_CLS, POOL_MAX };
static const char *const azPoolName[] = {"mean", "cls", "max"};

struct EmbedModel {
    /* Immutable after load. */
    char *zName;              /* the name it was first asked for by */
    char *zPath;              /* real path of the folder: the registry key */
    EmbedOrtSession *pSess;   /* the shared session; Run is called concurrently */
    Wordpiece *pWp;           /* the tokenizer */
    int nDims;                /* output dimension (hidden size) */
    int nMaxLen;              /* tokens per text at most, [CLS] and [SEP] included */
    int ePool;                /* POOL_MEAN, POOL_CLS or POOL_MAX */
    /* Guarded by g_regMutex. */
    int nRef;                 /* references handed out by embed_model_get */
    EmbedModel *pNext;        /* next in the registry */
    /* Counters (relaxed atomics, EmbedStats). */
    atomic_uint_fast64_t nText, nToken, nsRun, nBatchInline, nBatchPool, nTextWorker;
};

static pthread_mutex_t g_regMutex = PTHREAD_MUTEX_INITIALIZER; /* guards the list below */
static EmbedModel *g_pModels;                                  /* loaded models */
static int g_nModels;                                          /* their number */

/* The attention mask (all ones) and token type ids (all zeros) of any
** sequence: shared, read-only (ORT only reads inputs). */
static const int64_t g_aOne[WP_MAX_LEN] = {[0 ... WP_MAX_LEN - 1] = 1};
static const int64_t g_aZero[WP_MAX_LEN];

/* ---- Name resolution and config files -------------------------------- */

/* Whether zName is 'name' or 'org/name' with safe parts. */
static int name_ok(const char *zName) {
    int nPart = 0;
    const char *z = zName;
    for (;;) {
        const char *zEnd = z;
        while (*zEnd && *zEnd != '/') {
            char c = *zEnd;
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-'))
                return 0;
            zEnd++;
        }
        size_t n = (size_t)(zEnd - z);
        if (n == 0 || (n == 1 && z[0] == '.') || (n == 2 && z[0] == '.' && z[1] == '.')) return 0;
        if (++nPart > 2) return 0;
        if (*zEnd == 0) return 1;
        z = zEnd + 1;
    }
}

static int is_dir(const char *z) {
    struct stat st;
    return stat(z, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *z) {
    struct stat st;
    return stat(z, &st) == 0 && S_ISREG(st.st_mode);
}

/* Loads zDir/zFile as a JSON object. *ppObj NULL (and LP_OK) when the file
** does not exist and bOptional; LP_NOTFOUND when it is required. */
static int load_json(const char *zName, const char *zDir, const char *zFile, int bOptional, json_t **ppObj,
                     LpError *err) {
    char zPath[PATH_MAX + 64];
    *ppObj = NULL;
    snprintf(zPath, sizeof(zPath), "%s/%s", zDir, zFile);
    if (!is_file(zPath)) {
        if (bOptional) return LP_OK;
        return lp_err_set(err, LP_NOTFOUND, "model '%s': no %s in %s", zName, zFile, zDir);
    }
    json_error_t je;
    json_t *j = json_load_file(zPath, 0, &je);
    if (j == NULL)
        return lp_err_set(err, LP_CORRUPT, "model '%s': %s: malformed JSON at line %d, column %d: %s", zName,
                          zPath, je.line, je.column, je.text);
    if (!json_is_object(j)) {
        json_decref(j);
        return lp_err_set(err, LP_CORRUPT, "model '%s': %s: expected a JSON object", zName, zPath);
    }
    *ppObj = j;
    return LP_OK;
}

/* Reads an optional integer member into *pVal (unchanged when absent).
** LP_CORRUPT when present but not an integer in [lo, hi]. */
static int json_int(const char *zName, const char *zFile, json_t *o, const char *zKey, long lo, long hi,
                    long *pVal, LpError *err) {
    json_t *v = json_object_get(o, zKey);
    if (v == NULL || json_is_null(v)) return LP_OK;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return lp_err_set(err, LP_CORRUPT, "model '%s': %s: \"%s\" must be an integer from %ld to %ld", zName,
                          zFile, zKey, lo, hi);
    *pVal = (long)json_integer_value(v);
    return LP_OK;
}

/* config.json: the hidden size (required), max_position_embeddings and
** vocab_size (optional, 0 when absent). */
static int read_config(const char *zName, const char *zDir, int *pnHidden, long *pnMaxPos, long *pnVocab,
                       LpError *err) {
    json_t *o;
    int rc = load_json(zName, zDir, "config.json", 0, &o, err);
    if (rc) return rc;
    long nHidden = 0, nMaxPos = 0, nVocab = 0;
    static const char *const azKey[] = {"hidden_size", "dim", "d_model"};
    for (size_t i = 0; rc == LP_OK && nHidden == 0 && i < LP_ARRAY_SIZE(azKey); i++)
        rc = json_int(zName, "config.json", o, azKey[i], 1, 65536, &nHidden, err);
    if (rc == LP_OK) rc = json_int(zName, "config.json", o, "max_position_embeddings", 1, 1 << 30, &nMaxPos, err);
    if (rc == LP_OK) rc = json_int(zName, "config.json", o, "vocab_size", 1, 1 << 30, &nVocab, err);
    if (rc == LP_OK && nHidden == 0)
        rc = lp_err_set(err, LP_CORRUPT, "model '%s': %s/config.json has no \"hidden_size\"", zName, zDir);
    json_decref(o);
    *pnHidden = (int)nHidden;
    *pnMaxPos = nMaxPos;
    *pnVocab = nVocab;
    return rc;
}

/* sentence_bert_config.json: max_seq_length (default, then capped). */
static int read_max_len(const char *zName, const char *zDir, long nMaxPos, int *pnMax, LpError *err) {
    json_t *o;
    int rc = load_json(zName, zDir, "sentence_bert_config.json", 1, &o, err);
    if (rc) return rc;
    long n = EMBED_DEFAULT_MAX_SEQ;
    if (o) rc = json_int(zName, "sentence_bert_config.json", o, "max_seq_length", 2, 1 << 30, &n, err);
    json_decref(o);
    if (n > WP_MAX_LEN) n = WP_MAX_LEN;
    if (nMaxPos > 0 && n > nMaxPos) n = nMaxPos;
    if (rc == LP_OK && n < 2)
        rc = lp_err_set(err, LP_CORRUPT, "model '%s': max_position_embeddings %ld leaves no room for a text",
                        zName, nMaxPos);
    *pnMax = (int)n;
    return rc;
}

/* 1_Pooling/config.json: the pooling mode (mean when absent). */
static int read_pooling(const char *zName, const char *zDir, int nHidden, int *pePool, LpError *err) {
    json_t *o;
    *pePool = POOL_MEAN;
    int rc = load_json(zName, zDir, "1_Pooling/config.json", 1, &o, err);
    if (rc || o == NULL) return rc;
    static const struct {
        const char *zKey;
        int ePool; /* -1: unsupported */
    } aMode[] = {
        {"pooling_mode_mean_tokens", POOL_MEAN},       {"pooling_mode_mean_sqrt_len_tokens", POOL_MEAN},
        {"pooling_mode_cls_token", POOL_CLS},          {"pooling_mode_max_tokens", POOL_MAX},
        {"pooling_mode_weightedmean_tokens", -1},      {"pooling_mode_lasttoken", -1},
    };
    int nOn = 0;
    for (size_t i = 0; rc == LP_OK && i < LP_ARRAY_SIZE(aMode); i++) {
        json_t *v = json_object_get(o, aMode[i].zKey);
        if (v == NULL || json_is_null(v)) continue;
        if (!json_is_boolean(v)) {
            rc = lp_err_set(err, LP_CORRUPT, "model '%s': 1_Pooling/config.json: \"%s\" must be true or false",
                            zName, aMode[i].zKey);
        } else if (json_is_true(v)) {
            if (aMode[i].ePool < 0)
                rc = lp_err_set(err, LP_UNSUPPORTED, "model '%s': pooling mode %s is not supported", zName,
                                aMode[i].zKey);
            else if (nOn++)
                rc = lp_err_set(err, LP_UNSUPPORTED,
                                "model '%s': 1_Pooling/config.json combines several pooling modes; "
                                "only one of mean, cls, max is supported",
                                zName);
            else
                *pePool = aMode[i].ePool;
        }
    }
    long nWord = 0;
    if (rc == LP_OK) rc = json_int(zName, "1_Pooling/config.json", o, "word_embedding_dimension", 1, 65536, &nWord, err);
    if (rc == LP_OK && nWord && nWord != nHidden)
        rc = lp_err_set(err, LP_CORRUPT,
                        "model '%s': 1_Pooling/config.json says word_embedding_dimension %ld, config.json "
                        "hidden_size %d",
                        zName, nWord, nHidden);
    json_decref(o);
    return rc;
}

/* ---- Loading and the registry ---------------------------------------- */

static void model_free(EmbedModel *m) {
    if (m == NULL) return;
    embed_ort_session_close(m->pSess);
    wp_close(m->pWp);
    free(m->zName);
    free(m->zPath);
    free(m);
}

/* Opens the model in folder zReal (a real path). */
static EmbedModel *model_load(const char *zName, const char *zReal, const EmbedOptions *opts, LpError *err) {
    char zFile[PATH_MAX + 32];
    snprintf(zFile, sizeof(zFile), "%s/onnx/model.onnx", zReal);
    if (!is_file(zFile)) snprintf(zFile, sizeof(zFile), "%s/model.onnx", zReal);
    if (!is_file(zFile)) {
        lp_err_set(err, LP_NOTFOUND, "model '%s': no model file in %s (expected onnx/model.onnx or model.onnx)",
                   zName, zReal);
        return NULL;
    }
    int nHidden = 0;
    long nMaxPos = 0, nVocab = 0;
    EmbedModel *m = calloc(1, sizeof(*m));
    if (m == NULL || (m->zName = strdup(zName)) == NULL || (m->zPath = strdup(zReal)) == NULL) {
        model_free(m);
        lp_err_set(err, LP_NOMEM, "model '%s': out of memory", zName);
        return NULL;
    }
    if (read_config(zName, zReal, &nHidden, &nMaxPos, &nVocab, err) ||
        read_max_len(zName, zReal, nMaxPos, &m->nMaxLen, err) || read_pooling(zName, zReal, nHidden, &m->ePool, err))
        goto fail;
    m->nDims = nHidden;
    m->pWp = wp_open(zReal, err);
    if (m->pWp == NULL) {
        lp_err_prefix(err, "model '%s'", zName);
        goto fail;
    }
    if (nVocab > 0 && wp_vocab_size(m->pWp) > nVocab) {
        lp_err_set(err, LP_CORRUPT, "model '%s': the tokenizer has %d tokens but config.json's vocab_size is %ld",
                   zName, wp_vocab_size(m->pWp), nVocab);
        goto fail;
    }
    EmbedOrtOptions oo = {0};
    if (opts) {
        oo.zLib = opts->zOrtLib;
        oo.nIntraThreads = opts->nIntraThreads;
        oo.bGeluApprox = opts->bGeluApprox;
        oo.bSpin = opts->bSpin;
    }
    m->pSess = embed_ort_session_open(zFile, &oo, err);
    if (m->pSess == NULL) {
        lp_err_prefix(err, "model '%s'", zName);
        goto fail;
    }
    int nStatic = embed_ort_session_dims(m->pSess);
    if (nStatic && nStatic != nHidden) {
        lp_err_set(err, LP_CORRUPT, "model '%s': %s outputs %d dimensions but config.json says hidden_size %d",
                   zName, zFile, nStatic, nHidden);
        goto fail;
    }
    /* A trial run: checks the whole path now rather than at the first row. */
    int64_t aId[2] = {wp_cls_id(m->pWp), wp_sep_id(m->pWp)};
    EmbedOrtOutput out;
    if (embed_ort_run(m->pSess, 1, 2, aId, g_aOne, g_aZero, &out, err)) {
        lp_err_prefix(err, "model '%s': trial run", zName);
        goto fail;
    }
    int nOut = (int)out.nDim;
    embed_ort_output_free(&out);
    if (nOut != nHidden) {
        lp_err_set(err, LP_CORRUPT, "model '%s': %s outputs %d dimensions but config.json says hidden_size %d",
                   zName, zFile, nOut, nHidden);
        goto fail;
    }
    LOG_INFO("model '%s' loaded from %s: %d dimensions, %d tokens at most, %s pooling", zName, zReal, m->nDims,
             m->nMaxLen, azPoolName[m->ePool]);
    return m;
fail:
    model_free(m);
    return NULL;
}

EmbedModel *embed_model_get(const char *zName, const char *zDataDir, const EmbedOptions *opts, LpError *err) {
    char zDir[PATH_MAX];
    if (zName == NULL || zName[0] == 0) {
        lp_err_set(err, LP_BADINPUT, "empty MODEL_NAME");
        return NULL;
    }
    if (zName[0] == '/') {
        if (strlen(zName) >= sizeof(zDir)) {
            lp_err_set(err, LP_BADINPUT, "model '%.64s...': path too long", zName);
            return NULL;
        }
        snprintf(zDir, sizeof(zDir), "%s", zName);
    } else {
        if (!name_ok(zName)) {
            lp_err_set(err, LP_BADINPUT,
                       "model '%s': a model name is 'org/name' (letters, digits, '.', '_', '-') or an absolute "
                       "path to a model folder",
                       zName);
            return NULL;
        }
        if (zDataDir == NULL || zDataDir[0] == 0) {
            lp_err_set(err, LP_BADINPUT, "model '%s': no data directory to resolve the name in", zName);
            return NULL;
        }
        if ((size_t)snprintf(zDir, sizeof(zDir), "%s/models/%s", zDataDir, zName) >= sizeof(zDir)) {
            lp_err_set(err, LP_BADINPUT, "model '%s': path too long", zName);
            return NULL;
        }
    }
    if (!is_dir(zDir)) {
        lp_err_set(err, LP_NOTFOUND,
                   "model '%s': no model folder at %s (expected a folder with onnx/model.onnx or model.onnx, "
                   "config.json and tokenizer.json)",
                   zName, zDir);
        return NULL;
    }
    char zReal[PATH_MAX];
    if (realpath(zDir, zReal) == NULL) {
        lp_err_set(err, LP_IOERR, "model '%s': cannot resolve %s: %s", zName, zDir, strerror(errno));
        return NULL;
    }

    pthread_mutex_lock(&g_regMutex);
    EmbedModel *m;
    for (m = g_pModels; m; m = m->pNext)
        if (strcmp(m->zPath, zReal) == 0) break;
    if (m) {
        m->nRef++;
    } else if ((m = model_load(zName, zReal, opts, err)) != NULL) {
        m->nRef = 1;
        m->pNext = g_pModels;
        g_pModels = m;
        g_nModels++;
    }
    pthread_mutex_unlock(&g_regMutex);
    return m;
}

void embed_model_release(EmbedModel *m) {
    if (m == NULL) return;
    int bLast = 0;
    pthread_mutex_lock(&g_regMutex);
    if (ALWAYS(m->nRef > 0) && --m->nRef == 0) {
        EmbedModel **pp = &g_pModels;
        while (*pp && *pp != m) pp = &(*pp)->pNext;
        if (ALWAYS(*pp == m)) *pp = m->pNext;
        g_nModels--;
        bLast = 1;
    }
    pthread_mutex_unlock(&g_regMutex);
    if (bLast) {
        LOG_INFO("model '%s' unloaded", m->zName);
        model_free(m);
    }
}

int embed_registry_count(void) {
    pthread_mutex_lock(&g_regMutex);
    int n = g_nModels;
    pthread_mutex_unlock(&g_regMutex);
    return n;
}

int embed_model_dims(const EmbedModel *m) {
    return m->nDims;
}

int embed_model_max_len(const EmbedModel *m) {
    return m->nMaxLen;
}

const char *embed_model_name(const EmbedModel *m) {
    return m->zName;
}

const char *embed_model_path(const EmbedModel *m) {
    return m->zPath;
}

const Wordpiece *embed_model_tokenizer(const EmbedModel *m) {
    return m->pWp;
}

void embed_model_stats(const EmbedModel *m, EmbedStats *p) {
    EmbedModel *mm = (EmbedModel *)m; /* atomic loads take non-const pointers */
    p->nText = atomic_load_explicit(&mm->nText, memory_order_relaxed);
    p->nToken = atomic_load_explicit(&mm->nToken, memory_order_relaxed);
    p->nsRun = atomic_load_explicit(&mm->nsRun, memory_order_relaxed);
    p->nBatchInline = atomic_load_explicit(&mm->nBatchInline, memory_order_relaxed);
    p->nBatchPool = atomic_load_explicit(&mm->nBatchPool, memory_order_relaxed);
    p->nTextWorker = atomic_load_explicit(&mm->nTextWorker, memory_order_relaxed);
}

/* ---- Embedding ------------------------------------------------------- */

/* Pools the nTok x nDim token vectors at a into aOut and L2-normalises. */
static int pool_normalise(const EmbedModel *m, const float *a, int nTok, float *aOut, LpError *err) {
    const int d = m->nDims;
    enum { BLOCK = 256 };
    double acc[BLOCK];
    double norm2 = 0;
    for (int j0 = 0; j0 < d; j0 += BLOCK) {
        int nj = d - j0 < BLOCK ? d - j0 : BLOCK;
        if (m->ePool == POOL_CLS) {
            for (int j = 0; j < nj; j++) acc[j] = a[j0 + j];
        } else if (m->ePool == POOL_MAX) {
            for (int j = 0; j < nj; j++) acc[j] = a[j0 + j];
            for (int t = 1; t < nTok; t++) {
                const float *row = a + (size_t)t * (size_t)d + j0;
                for (int j = 0; j < nj; j++)
                    if (row[j] > acc[j]) acc[j] = row[j];
            }
        } else {
            /* Mean over the attention mask; the mask is all ones here. */
            for (int j = 0; j < nj; j++) acc[j] = 0;
            for (int t = 0; t < nTok; t++) {
                const float *row = a + (size_t)t * (size_t)d + j0;
                for (int j = 0; j < nj; j++) acc[j] += row[j];
            }
            for (int j = 0; j < nj; j++) acc[j] /= nTok;
        }
        for (int j = 0; j < nj; j++) {
            norm2 += acc[j] * acc[j];
            aOut[j0 + j] = (float)acc[j];
        }
    }
    if (!isfinite(norm2))
        return lp_err_set(err, LP_INTERNAL, "model '%s' produced a non-finite embedding", m->zName);
    if (norm2 > 0) {
        /* Normalise from the pooled values in float, as sentence-transformers. */
        double inv = 1.0 / sqrt(norm2);
        for (int j = 0; j < d; j++) aOut[j] = (float)(aOut[j] * inv);
    }
    return LP_OK;
}

int embed_text(EmbedModel *m, const char *z, size_t n, float *aOut, LpError *err) {
    if (z == NULL && n > 0) return lp_err_set(err, LP_BADINPUT, "NULL text of %zu bytes", n);
    int64_t aId[WP_MAX_LEN];
    int nTok = wp_encode(m->pWp, z ? z : "", z ? n : 0, m->nMaxLen, aId);
    if (NEVER(nTok < 1 || nTok > WP_MAX_LEN))
        return lp_err_set(err, LP_INTERNAL, "the tokenizer returned %d tokens", nTok);
    EmbedOrtOutput out;
    int64_t t0 = lp_now_ns();
    int rc = embed_ort_run(m->pSess, 1, nTok, aId, g_aOne, g_aZero, &out, err);
    int64_t t1 = lp_now_ns();
    if (rc) return rc;
    if (out.nDim != m->nDims) {
        rc = lp_err_set(err, LP_INTERNAL, "model '%s' output %lld dimensions, expected %d", m->zName,
                        (long long)out.nDim, m->nDims);
    } else {
        rc = pool_normalise(m, out.a, nTok, aOut, err);
    }
    embed_ort_output_free(&out);
    atomic_fetch_add_explicit(&m->nText, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->nToken, (uint64_t)nTok, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->nsRun, (uint64_t)(t1 - t0), memory_order_relaxed);
    return rc;
}

/* A batch spread over the pool. Lives on the caller's stack until every
** task of its group has returned. */
typedef struct BatchJob {
    EmbedModel *m;            /* the model */
    const char *const *az;    /* texts */
    const size_t *an;         /* their lengths */
    int nDoc;                 /* number of texts */
    float *aOut;              /* nDoc rows of m->nDims */
    pthread_t caller;         /* the thread that called embed_batch */
    atomic_int iNext;         /* next text to take */
    atomic_int bFailed;       /* set once an error is recorded: stop taking texts */
    pthread_mutex_t mutex;    /* guards iErr and err */
    int iErr;                 /* index of the text that failed first, or -1 */
    LpError err;              /* its error */
} BatchJob;

/* The loop every participant runs: take the next text, embed it. */
static void batch_work(void *arg) {
    BatchJob *job = arg;
    int bWorker = !pthread_equal(pthread_self(), job->caller);
    uint64_t nMine = 0;
    for (;;) {
        if (atomic_load_explicit(&job->bFailed, memory_order_relaxed)) break;
        int i = atomic_fetch_add_explicit(&job->iNext, 1, memory_order_relaxed);
        if (i >= job->nDoc) break;
        LpError e;
        lp_err_clear(&e);
        int rc = embed_text(job->m, job->az[i], job->an[i], job->aOut + (size_t)i * (size_t)job->m->nDims, &e);
        if (rc) {
            pthread_mutex_lock(&job->mutex);
            if (job->iErr < 0) {
                job->iErr = i;
                job->err = e;
            }
            pthread_mutex_unlock(&job->mutex);
            atomic_store(&job->bFailed, 1);
            break;
        }
        nMine++;
    }
    if (bWorker && nMine) atomic_fetch_add_explicit(&job->m->nTextWorker, nMine, memory_order_relaxed);
}

int embed_batch(EmbedModel *m, const char *const *az, const size_t *an, int nDoc, float *aOut, Tpool *pool,
                int nInline, LpError *err) {
    if (nDoc <= 0) return LP_OK;
    if (nInline < 1) nInline = 1;
    const size_t nDim = (size_t)m->nDims;
    if (pool == NULL || nDoc <= nInline) {
        atomic_fetch_add_explicit(&m->nBatchInline, 1, memory_order_relaxed);
        for (int i = 0; i < nDoc; i++) {
            int rc = embed_text(m, az[i], an[i], aOut + (size_t)i * nDim, err);
            if (rc) {
                if (err) lp_err_prefix(err, "text %d of %d", i, nDoc);
                return rc;
            }
        }
        return LP_OK;
    }
    atomic_fetch_add_explicit(&m->nBatchPool, 1, memory_order_relaxed);
    BatchJob job = {.m = m, .az = az, .an = an, .nDoc = nDoc, .aOut = aOut, .caller = pthread_self(), .iErr = -1};
    atomic_init(&job.iNext, 0);
    atomic_init(&job.bFailed, 0);
    pthread_mutex_init(&job.mutex, NULL);
    /* Helpers: one per pool worker, fewer for a short batch (the caller
    ** takes texts too). A submit that fails for want of memory just means
    ** fewer helpers. */
    int nHelp = tpool_size(pool);
    if (nHelp > nDoc - 1) nHelp = nDoc - 1;
    if (nHelp < 1) nHelp = 1;
    TpoolGroup g;
    tpool_group_init(&g, pool);
    for (int i = 0; i < nHelp; i++)
        if (tpool_group_submit(&g, batch_work, &job) != LP_OK) break;
    batch_work(&job);
    tpool_group_wait(&g);
    pthread_mutex_destroy(&job.mutex);
    if (job.iErr >= 0) {
        if (err) {
            *err = job.err;
            lp_err_prefix(err, "text %d of %d", job.iErr, nDoc);
        }
        return job.err.code;
    }
    return LP_OK;
}
