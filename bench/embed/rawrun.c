/*
** rawrun.c — the raw ceiling of embedding with ONNX Runtime, and the naive
** padded-batch way for contrast (issue 6, benchmark parts (a) and (c)).
**
** Texts: documents of a JSONL corpus (default ../shared/data/scifact/
** docs.jsonl, "title" + " " + "text"), each cut to a deterministic number
** of words from 10 to 100 (10 + (i * 37) % 91 for the i-th document), then
** tokenized with the model's WordPiece tokenizer before any timing, so
** only ONNX Runtime is measured.
**
** Modes, in one run:
**   latency   one thread, one document per Run, texts of 45-55 tokens:
**             ms per Run (mean and p50), with 1 intra-op thread and with
**             all cores as intra-op threads.
**   raw       the ceiling: ONE session with 1 intra-op thread, spinning
**             off, shared by T caller threads (T in --threads, default
**             1,2); each takes the next document from an atomic counter
**             and runs it alone (batch 1, no padding). docs/s.
**   padded    the contrast: one session with all cores as intra-op
**             threads and intra-op spinning ON, one caller, documents in
**             batches of B (B in --batch, default 8,32) padded to the
**             longest of the batch (attention mask 0 on padding). docs/s.
**
** Output: a human table on stderr and one JSON object on stdout:
**   {"model":..,"docs":N,"tokens_mean":..,"ort":"1.30.0","cpus":2,
**    "latency":{"intra1_ms_mean":..,"intra1_ms_p50":..,"intraall_ms_mean":..,
**               "intraall_ms_p50":..,"tokens":..},
**    "raw":[{"threads":1,"docs_per_s":..},...],
**    "padded":[{"batch":8,"docs_per_s":..},...]}
**
** Usage: rawrun MODEL_DIR [--corpus FILE] [--docs N] [--threads 1,2]
**                         [--batch 8,32] [--reps R]
**
** Not built by CMake. Build it against a release build's libraries
** (cmake --build build --target lp_embed), from the repository root:
**
**   cc -O2 -D_GNU_SOURCE -Isrc bench/embed/rawrun.c build/liblp_embed.a \
**      build/liblp_text.a build/liblp_util.a -ljansson -lutf8proc -lstemmer \
**      -lxxhash -lm -ldl -lpthread -o build/rawrun
**   build/rawrun models/loupe-test/all-MiniLM-L12-v2
**
** It finds ONNX Runtime as loupe does (LOUPE_ORT_LIB, else the compiled-in
** vendor/onnxruntime/ path of the build).
*/
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "embed/ort.h"
#include "embed/wordpiece.h"
#include "util/error.h"

typedef struct Doc {
    int64_t *aId;   /* token ids, [CLS] ... [SEP] */
    int nId;
} Doc;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *zWhat, const LpError *err) {
    fprintf(stderr, "rawrun: %s: %s\n", zWhat, err ? err->zMsg : "");
    exit(1);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Parses "1,2,4" into a (at most nMax values); returns the count. */
static int parse_list(const char *z, int *a, int nMax) {
    int n = 0;
    while (*z && n < nMax) {
        a[n++] = atoi(z);
        const char *p = strchr(z, ',');
        if (!p) break;
        z = p + 1;
    }
    return n;
}

/* Loads nDoc documents of the corpus, cut and tokenized. */
static Doc *load_docs(const char *zCorpus, const Wordpiece *wp, int nDoc, int *pn) {
    FILE *f = fopen(zCorpus, "r");
    if (!f) {
        fprintf(stderr, "rawrun: cannot open %s\n", zCorpus);
        exit(1);
    }
    Doc *a = calloc((size_t)nDoc, sizeof(Doc));
    char *zLine = NULL;
    size_t nAlloc = 0;
    int n = 0;
    char *zText = malloc(1 << 20);
    while (n < nDoc && getline(&zLine, &nAlloc, f) > 0) {
        json_t *j = json_loads(zLine, 0, NULL);
        if (!j) continue;
        const char *zT = json_string_value(json_object_get(j, "title"));
        const char *zB = json_string_value(json_object_get(j, "text"));
        snprintf(zText, 1 << 20, "%s %s", zT ? zT : "", zB ? zB : "");
        json_decref(j);
        /* Cut to nWord words. */
        int nWord = 10 + (n * 37) % 91, w = 0;
        char *p = zText;
        while (*p && w < nWord) {
            while (*p == ' ') p++;
            if (!*p) break;
            while (*p && *p != ' ') p++;
            w++;
        }
        *p = 0;
        if (w < 10) continue; /* too short a document */
        int64_t aId[WP_MAX_LEN];
        int nId = wp_encode(wp, zText, strlen(zText), 256, aId);
        a[n].aId = malloc(sizeof(int64_t) * (size_t)nId);
        memcpy(a[n].aId, aId, sizeof(int64_t) * (size_t)nId);
        a[n].nId = nId;
        n++;
    }
    free(zText);
    free(zLine);
    fclose(f);
    *pn = n;
    return a;
}

static int64_t g_aOne[WP_MAX_LEN * 64], g_aZero[WP_MAX_LEN * 64];

/* One Run of one document. */
static void run_one(EmbedOrtSession *s, const Doc *d) {
    EmbedOrtOutput out;
    LpError err;
    if (embed_ort_run(s, 1, d->nId, d->aId, g_aOne, g_aZero, &out, &err)) die("run", &err);
    /* Touch the output as pooling would. */
    volatile float x = out.a[0];
    (void)x;
    embed_ort_output_free(&out);
}

typedef struct RawJob {
    EmbedOrtSession *s;
    const Doc *a;
    int n;
    atomic_int iNext;
} RawJob;

static void *raw_thread(void *p) {
    RawJob *j = p;
    for (;;) {
        int i = atomic_fetch_add(&j->iNext, 1);
        if (i >= j->n) break;
        run_one(j->s, &j->a[i]);
    }
    return NULL;
}

/* docs/s of T threads sharing session s over the documents. */
static double run_raw(EmbedOrtSession *s, const Doc *a, int n, int nThread) {
    RawJob job = {.s = s, .a = a, .n = n};
    atomic_init(&job.iNext, 0);
    pthread_t at[64];
    double t0 = now_s();
    for (int t = 0; t < nThread; t++) pthread_create(&at[t], NULL, raw_thread, &job);
    for (int t = 0; t < nThread; t++) pthread_join(at[t], NULL);
    return n / (now_s() - t0);
}

/* docs/s of padded batches of nBatch on one caller thread. */
static double run_padded(EmbedOrtSession *s, const Doc *a, int n, int nBatch) {
    int64_t *aId = malloc(sizeof(int64_t) * (size_t)nBatch * WP_MAX_LEN);
    int64_t *aMask = malloc(sizeof(int64_t) * (size_t)nBatch * WP_MAX_LEN);
    double t0 = now_s();
    for (int i0 = 0; i0 < n; i0 += nBatch) {
        int nb = n - i0 < nBatch ? n - i0 : nBatch;
        int nSeq = 0;
        for (int i = 0; i < nb; i++)
            if (a[i0 + i].nId > nSeq) nSeq = a[i0 + i].nId;
        for (int i = 0; i < nb; i++) {
            const Doc *d = &a[i0 + i];
            for (int t = 0; t < nSeq; t++) {
                aId[i * nSeq + t] = t < d->nId ? d->aId[t] : 0;
                aMask[i * nSeq + t] = t < d->nId;
            }
        }
        EmbedOrtOutput out;
        LpError err;
        if (embed_ort_run(s, nb, nSeq, aId, aMask, g_aZero, &out, &err)) die("padded run", &err);
        embed_ort_output_free(&out);
    }
    double dt = now_s() - t0;
    free(aId);
    free(aMask);
    return n / dt;
}

/* ms per Run over the documents of 45-55 tokens, one thread. */
static void latency(EmbedOrtSession *s, const Doc *a, int n, int nRep, double *pMean, double *pP50,
                    double *pTok) {
    double *aT = malloc(sizeof(double) * (size_t)(n * nRep + 1));
    int k = 0;
    double nTok = 0;
    for (int r = 0; r < nRep; r++)
        for (int i = 0; i < n; i++) {
            if (a[i].nId < 45 || a[i].nId > 55) continue;
            double t0 = now_s();
            run_one(s, &a[i]);
            aT[k++] = (now_s() - t0) * 1e3;
            nTok += a[i].nId;
        }
    double sum = 0;
    for (int i = 0; i < k; i++) sum += aT[i];
    qsort(aT, (size_t)k, sizeof(double), cmp_double);
    *pMean = k ? sum / k : 0;
    *pP50 = k ? aT[k / 2] : 0;
    *pTok = k ? nTok / k : 0;
    free(aT);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: rawrun MODEL_DIR [--corpus FILE] [--docs N] [--threads 1,2] [--batch 8,32] [--reps R]\n");
        return 2;
    }
    const char *zModel = argv[1];
    const char *zCorpus = "../shared/data/scifact/docs.jsonl";
    int nDoc = 256, nRep = 3;
    int aThread[16] = {1, 2}, nThreadOpt = 2;
    int aBatch[16] = {8, 32}, nBatchOpt = 2;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--corpus")) zCorpus = argv[i + 1];
        else if (!strcmp(argv[i], "--docs")) nDoc = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) nThreadOpt = parse_list(argv[i + 1], aThread, 16);
        else if (!strcmp(argv[i], "--batch")) nBatchOpt = parse_list(argv[i + 1], aBatch, 16);
        else if (!strcmp(argv[i], "--reps")) nRep = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "rawrun: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    for (size_t i = 0; i < sizeof(g_aOne) / sizeof(g_aOne[0]); i++) g_aOne[i] = 1;

    LpError err;
    lp_err_clear(&err);
    Wordpiece *wp = wp_open(zModel, &err);
    if (!wp) die("tokenizer", &err);
    int n;
    Doc *a = load_docs(zCorpus, wp, nDoc, &n);
    double nTokAll = 0;
    for (int i = 0; i < n; i++) nTokAll += a[i].nId;
    char zFile[4096];
    snprintf(zFile, sizeof(zFile), "%s/onnx/model.onnx", zModel);
    if (access(zFile, R_OK) != 0) snprintf(zFile, sizeof(zFile), "%s/model.onnx", zModel);
    cpu_set_t cs;
    int nCpu = sched_getaffinity(0, sizeof(cs), &cs) == 0 ? CPU_COUNT(&cs) : 1;

    EmbedOrtOptions o1 = {.nIntraThreads = 1};
    EmbedOrtOptions oAll = {.nIntraThreads = 0};
    EmbedOrtOptions oSpin = {.nIntraThreads = 0, .bSpin = 1};
    EmbedOrtSession *s1 = embed_ort_session_open(zFile, &o1, &err);
    if (!s1) die("session", &err);
    fprintf(stderr, "rawrun: %s, ONNX Runtime %s, %d CPUs, %d docs, %.1f tokens per doc\n", zModel,
            embed_ort_version(), nCpu, n, nTokAll / n);

    /* Warm-up: every document once (arena, caches). */
    run_raw(s1, a, n, 1);

    double lm1, lp1, lt1, lmA, lpA, ltA;
    latency(s1, a, n, nRep, &lm1, &lp1, &lt1);
    EmbedOrtSession *sAll = embed_ort_session_open(zFile, &oAll, &err);
    if (!sAll) die("session", &err);
    run_raw(sAll, a, n < 32 ? n : 32, 1);
    latency(sAll, a, n, nRep, &lmA, &lpA, &ltA);
    embed_ort_session_close(sAll);
    fprintf(stderr, "latency (%.1f tokens): intra 1: %.2f ms mean, %.2f p50; intra %d: %.2f ms mean, %.2f p50\n",
            lt1, lm1, lp1, nCpu, lmA, lpA);

    double aRaw[16];
    for (int k = 0; k < nThreadOpt; k++) {
        double best = 0;
        for (int r = 0; r < nRep; r++) {
            double v = run_raw(s1, a, n, aThread[k]);
            if (v > best) best = v;
        }
        aRaw[k] = best;
        fprintf(stderr, "raw: %d thread(s), 1 intra-op thread each, batch 1: %.1f docs/s\n", aThread[k], best);
    }
    embed_ort_session_close(s1);

    EmbedOrtSession *sSpin = embed_ort_session_open(zFile, &oSpin, &err);
    if (!sSpin) die("session", &err);
    run_padded(sSpin, a, n < 64 ? n : 64, 8);
    double aPad[16];
    for (int k = 0; k < nBatchOpt; k++) {
        double best = 0;
        for (int r = 0; r < nRep; r++) {
            double v = run_padded(sSpin, a, n, aBatch[k]);
            if (v > best) best = v;
        }
        aPad[k] = best;
        fprintf(stderr, "padded: batch %d, %d intra-op threads, spinning on: %.1f docs/s\n", aBatch[k], nCpu, best);
    }
    embed_ort_session_close(sSpin);

    printf("{\"model\":\"%s\",\"docs\":%d,\"tokens_mean\":%.2f,\"ort\":\"%s\",\"cpus\":%d,", zModel, n, nTokAll / n,
           embed_ort_version(), nCpu);
    printf("\"latency\":{\"tokens\":%.1f,\"intra1_ms_mean\":%.3f,\"intra1_ms_p50\":%.3f,\"intraall_ms_mean\":%.3f,"
           "\"intraall_ms_p50\":%.3f},",
           lt1, lm1, lp1, lmA, lpA);
    printf("\"raw\":[");
    for (int k = 0; k < nThreadOpt; k++) printf("%s{\"threads\":%d,\"docs_per_s\":%.2f}", k ? "," : "", aThread[k], aRaw[k]);
    printf("],\"padded\":[");
    for (int k = 0; k < nBatchOpt; k++) printf("%s{\"batch\":%d,\"docs_per_s\":%.2f}", k ? "," : "", aBatch[k], aPad[k]);
    printf("]}\n");
    for (int i = 0; i < n; i++) free(a[i].aId);
    free(a);
    wp_close(wp);
    return 0;
}
