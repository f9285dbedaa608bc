/*
** runlat.c — per-document latency of one ONNX Runtime Run, and of one
** embed_text() call, on exactly the texts the INSERT benchmark sends
** (issue 6, benchmark: "single-row INSERT latency <= 1.2x one Run call").
**
** rawrun.c measures its latency on the documents of 45-55 tokens only;
** the INSERT cells of bench/embed/run.py send documents of 10-100 words.
** To compare like with like, run.py writes the texts it inserts to a
** JSONL file (one JSON string per line) and this program times, on one
** thread, for every text:
**   run    tokenize outside the clock, then one embed_ort_run (batch 1,
**          no padding, mask all ones, type ids zero) on a session with
**          1 intra-op thread, spinning off: what a server thread does;
**   text   one embed_text() (tokenize + Run + pooling + normalisation)
**          through the model registry, as the server calls it.
** R rounds after a warm-up round, each a pass of Runs over all texts then
** a pass of embed_text (see main for why not text by text). Per text the
** median of the R samples is kept.
**
** Output: one JSON object on stdout:
**   {"docs":N,"reps":R,"tokens_mean":..,
**    "run_ms":{"mean":..,"p50":..,"p99":..},"text_ms":{...},
**    "per_doc":[{"tokens":T,"run_ms":..,"text_ms":..},...]}
** (per_doc in input order; the summary statistics are over per-text
** medians; p99 is nearest rank.)
**
** With --threads T it measures throughput instead, as rawrun's "raw" mode
** does (one session, 1 intra-op thread, spinning off, shared by T
** threads, each taking the next text and running it alone, tokenized
** before the clock starts), on the given texts, in a few seconds: run.py
** takes this ceiling right before each INSERT cell, so that a cell is
** compared with the machine's speed at that moment (a shared VM's speed
** drifts by 10% over minutes). Output:
**   {"docs":N,"threads":T,"reps":R,"tokens_mean":..,"docs_per_s":best,
**    "docs_per_s_all":[...]}
**
** Usage: runlat MODEL_DIR TEXTS.jsonl [--reps R] [--threads T]
**
** Not built by CMake; bench/embed/run.py compiles it like rawrun.c:
**   cc -O2 -D_GNU_SOURCE -Isrc bench/embed/runlat.c build/liblp_embed.a \
**      build/liblp_text.a build/liblp_util.a -ljansson -lutf8proc -lstemmer \
**      -lxxhash -lm -ldl -lpthread -o build/bench/runlat
** It finds ONNX Runtime as loupe does (LOUPE_ORT_LIB, else the build's
** default vendor/onnxruntime/ path).
*/
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "embed/embed.h"
#include "embed/ort.h"
#include "embed/wordpiece.h"
#include "util/error.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void die(const char *zWhat, const char *zMsg) {
    fprintf(stderr, "runlat: %s: %s\n", zWhat, zMsg ? zMsg : "");
    exit(1);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *a, int n) {
    qsort(a, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

/* mean, p50 (median) and p99 (nearest rank) of a[0..n) into o[3]. */
static void summary(const double *a, int n, double *o) {
    double *s = malloc(sizeof(double) * (size_t)n), sum = 0;
    if (!s) die("memory", "out of memory");
    for (int i = 0; i < n; i++) {
        s[i] = a[i];
        sum += a[i];
    }
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    int r99 = (99 * n + 99) / 100; /* ceil(0.99 n), 1-based */
    o[0] = sum / n;
    o[1] = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    o[2] = s[(r99 < 1 ? 1 : r99) - 1];
    free(s);
}

typedef struct RawJob {
    EmbedOrtSession *s;
    int64_t **aaId;
    const int *anId;
    const int64_t *aMask, *aType;
    int n;
    atomic_int iNext;
} RawJob;

static void *raw_thread(void *p) {
    RawJob *j = p;
    LpError err;
    for (;;) {
        int i = atomic_fetch_add(&j->iNext, 1);
        if (i >= j->n) break;
        EmbedOrtOutput out;
        if (embed_ort_run(j->s, 1, j->anId[i], j->aaId[i], j->aMask, j->aType, &out, &err)) die("run", err.zMsg);
        volatile float x = out.a[0];
        (void)x;
        embed_ort_output_free(&out);
    }
    return NULL;
}

/* docs/s of nThread threads sharing the session over every text once. */
static double run_raw(RawJob *j, int nThread) {
    pthread_t at[256];
    atomic_store(&j->iNext, 0);
    double t0 = now_ms();
    for (int t = 0; t < nThread; t++) pthread_create(&at[t], NULL, raw_thread, j);
    for (int t = 0; t < nThread; t++) pthread_join(at[t], NULL);
    return j->n / ((now_ms() - t0) / 1e3);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: runlat MODEL_DIR TEXTS.jsonl [--reps R] [--threads T]\n");
        return 2;
    }
    const char *zTexts = argv[2];
    char zModel[4096]; /* the registry takes an absolute path */
    if (!realpath(argv[1], zModel)) die(argv[1], "no such model folder");
    int nRep = 3, nThread = 0;
    for (int i = 3; i < argc; i += 2) {
        if (i + 1 < argc && !strcmp(argv[i], "--reps")) nRep = atoi(argv[i + 1]);
        else if (i + 1 < argc && !strcmp(argv[i], "--threads")) nThread = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "runlat: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (nRep < 1) nRep = 1;
    if (nThread < 0 || nThread > 256) die("--threads", "expected 1 to 256");

    /* The texts. */
    FILE *f = fopen(zTexts, "r");
    if (!f) die(zTexts, "cannot open");
    char **az = NULL;
    size_t *an = NULL;
    int n = 0, nAlloc = 0;
    char *zLine = NULL;
    size_t nLine = 0;
    while (getline(&zLine, &nLine, f) > 0) {
        json_error_t je;
        json_t *j = json_loads(zLine, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
        if (!j || !json_is_string(j)) die(zTexts, "every line must be one JSON string");
        if (n == nAlloc) {
            nAlloc = nAlloc ? 2 * nAlloc : 256;
            az = realloc(az, sizeof(char *) * (size_t)nAlloc);
            an = realloc(an, sizeof(size_t) * (size_t)nAlloc);
            if (!az || !an) die("memory", "out of memory");
        }
        an[n] = json_string_length(j);
        az[n] = malloc(an[n] + 1);
        if (!az[n]) die("memory", "out of memory");
        memcpy(az[n], json_string_value(j), an[n] + 1);
        n++;
        json_decref(j);
    }
    free(zLine);
    fclose(f);
    if (n == 0) die(zTexts, "no texts");

    /* The model as the server opens it (1 intra-op thread), and a bare
    ** session on the same file for the Run-only timing. */
    LpError err;
    lp_err_clear(&err);
    EmbedOptions eo = {.nIntraThreads = 1};
    EmbedModel *m = embed_model_get(zModel, NULL, &eo, &err);
    if (!m) die("model", err.zMsg);
    char zFile[4096 + 32];
    snprintf(zFile, sizeof(zFile), "%s/onnx/model.onnx", zModel);
    if (access(zFile, R_OK) != 0) snprintf(zFile, sizeof(zFile), "%s/model.onnx", zModel);
    EmbedOrtOptions oo = {.nIntraThreads = 1};
    EmbedOrtSession *s = embed_ort_session_open(zFile, &oo, &err);
    if (!s) die("session", err.zMsg);
    const Wordpiece *wp = embed_model_tokenizer(m);
    int nMax = embed_model_max_len(m), nDim = embed_model_dims(m);

    int64_t **aaId = malloc(sizeof(int64_t *) * (size_t)n);
    int *anId = malloc(sizeof(int) * (size_t)n);
    int64_t *aOne = malloc(sizeof(int64_t) * WP_MAX_LEN), *aZero = calloc(WP_MAX_LEN, sizeof(int64_t));
    float *aVec = malloc(sizeof(float) * (size_t)nDim);
    double *aRun = malloc(sizeof(double) * (size_t)n * (size_t)nRep);
    double *aText = malloc(sizeof(double) * (size_t)n * (size_t)nRep);
    double *aRunMed = malloc(sizeof(double) * (size_t)n), *aTextMed = malloc(sizeof(double) * (size_t)n);
    if (!aaId || !anId || !aOne || !aZero || !aVec || !aRun || !aText || !aRunMed || !aTextMed)
        die("memory", "out of memory");
    for (int i = 0; i < WP_MAX_LEN; i++) aOne[i] = 1;
    double nTok = 0;
    for (int i = 0; i < n; i++) {
        int64_t aId[WP_MAX_LEN];
        anId[i] = wp_encode(wp, az[i], an[i], nMax, aId);
        if (!(aaId[i] = malloc(sizeof(int64_t) * (size_t)anId[i]))) die("memory", "out of memory");
        memcpy(aaId[i], aId, sizeof(int64_t) * (size_t)anId[i]);
        nTok += anId[i];
    }
    const int64_t *aMask = embed_ort_session_has_mask(s) ? aOne : NULL;
    const int64_t *aType = embed_ort_session_has_type(s) ? aZero : NULL;

    if (nThread > 0) {
        /* Throughput: the model's own session is not needed any more. */
        embed_model_release(m);
        RawJob job = {.s = s, .aaId = aaId, .anId = anId, .aMask = aMask, .aType = aType,
                      .n = n < 2 * nThread ? n : 2 * nThread};
        run_raw(&job, nThread); /* warm-up: arenas of every thread */
        job.n = n;
        double best = 0, aAll[64];
        if (nRep > 64) nRep = 64;
        for (int r = 0; r < nRep; r++) {
            aAll[r] = run_raw(&job, nThread);
            if (aAll[r] > best) best = aAll[r];
        }
        fprintf(stderr, "runlat: %d texts, %.1f tokens mean, %d threads: %.1f docs/s (best of %d)\n", n,
                nTok / n, nThread, best, nRep);
        printf("{\"docs\":%d,\"threads\":%d,\"reps\":%d,\"tokens_mean\":%.2f,\"docs_per_s\":%.2f,"
               "\"docs_per_s_all\":[",
               n, nThread, nRep, nTok / n, best);
        for (int r = 0; r < nRep; r++) printf("%s%.2f", r ? "," : "", aAll[r]);
        printf("]}\n");
        m = NULL;
        goto done;
    }

    /* A warm-up round (arenas, caches), then the timed rounds. Each round
    ** is one pass of Runs over every text, then one pass of embed_text:
    ** the two sessions hold separate copies of the weights, and switching
    ** between them text by text would evict each other's from the caches
    ** (measured: about 10% slower Runs), which no server thread does. */
    for (int r = -1; r < nRep; r++) {
        for (int i = 0; i < n; i++) {
            EmbedOrtOutput out;
            double t0 = now_ms();
            if (embed_ort_run(s, 1, anId[i], aaId[i], aMask, aType, &out, &err)) die("run", err.zMsg);
            volatile float x = out.a[0]; /* touch the output as pooling would */
            (void)x;
            embed_ort_output_free(&out);
            double t1 = now_ms();
            if (r >= 0) aRun[(size_t)i * (size_t)nRep + (size_t)r] = t1 - t0;
        }
        for (int i = 0; i < n; i++) {
            double t0 = now_ms();
            if (embed_text(m, az[i], an[i], aVec, &err)) die("embed_text", err.zMsg);
            double t1 = now_ms();
            if (r >= 0) aText[(size_t)i * (size_t)nRep + (size_t)r] = t1 - t0;
        }
    }
    for (int i = 0; i < n; i++) {
        aRunMed[i] = median(&aRun[(size_t)i * (size_t)nRep], nRep);
        aTextMed[i] = median(&aText[(size_t)i * (size_t)nRep], nRep);
    }
    double sr[3], st[3];
    summary(aRunMed, n, sr);
    summary(aTextMed, n, st);
    fprintf(stderr, "runlat: %d texts, %.1f tokens mean, %d reps: Run %.2f ms mean, %.2f p50; "
                    "embed_text %.2f ms mean, %.2f p50\n",
            n, nTok / n, nRep, sr[0], sr[1], st[0], st[1]);

    printf("{\"docs\":%d,\"reps\":%d,\"tokens_mean\":%.2f,", n, nRep, nTok / n);
    printf("\"run_ms\":{\"mean\":%.4f,\"p50\":%.4f,\"p99\":%.4f},", sr[0], sr[1], sr[2]);
    printf("\"text_ms\":{\"mean\":%.4f,\"p50\":%.4f,\"p99\":%.4f},\"per_doc\":[", st[0], st[1], st[2]);
    for (int i = 0; i < n; i++) {
        printf("%s{\"tokens\":%d,\"run_ms\":%.4f,\"text_ms\":%.4f}", i ? "," : "", anId[i], aRunMed[i],
               aTextMed[i]);
    }
    printf("]}\n");

done:
    for (int i = 0; i < n; i++) {
        free(aaId[i]);
        free(az[i]);
    }
    free(aaId);
    free(anId);
    free(az);
    free(an);
    free(aOne);
    free(aZero);
    free(aVec);
    free(aRun);
    free(aText);
    free(aRunMed);
    free(aTextMed);
    embed_ort_session_close(s);
    embed_model_release(m);
    return 0;
}
