/*
** loupe-inspect — look inside loupe's files, as LMDB ships mdb_stat.
**
**   loupe-inspect fts-info FILE
**       checks a sealed full-text segment (every checksum, block, position
**       list) and prints its counts and section sizes.
**   loupe-inspect fts-build JSONL OUT [--fields a,b] [--morphology M] [--stopwords S]
**                 [--threads N] [--exact-words 0|1] [--infix 0|1]
**                 [--remove-diacritics 0|1] [--wordforms FILE] [--exceptions FILE]
**                 [--charset-table T] [--blend-chars B]
**       analyses the documents of a JSON-lines file ({"title": ..., "text": ...}
**       per line; --fields names the keys, default title,text) the way a
**       table with those options would, and writes the sealed segment the
**       server would write for them (--remove-diacritics: default 1, as a
**       table created without the option): the on-disk size of the full-text
**       index for a collection (make bench-fulltext reports it); --infix 1
**       stores the infix filter, as for a table with min_infix_len;
**       --wordforms and --exceptions take a file's text as a table's
**       wordforms_list or exceptions_list (rules on lines); --charset-table
**       and --blend-chars are the table options of those names. The file is
**       read and parsed first (parse_s); then, timed (analyse_index_s,
**       write_s), batches of 128 documents are analysed on N threads
**       (default: one per CPU, as the server's work pool analyses a large
**       INSERT; on one when the 1000 documents around the batch, an INSERT
**       of the benchmark's load, hold less than 64 KiB of text, as the
**       server analyses a small write; no thread is started when every
**       write is that small, and threads then reports 1) and added to
**       the index in order, and the segment is written (a large one
**       encoded in parts on the same threads, as the server flushes). Also reported:
**       page_faults, the process's minor page faults in the timed part,
**       and the parts of analyse_index_s: analyse_s (documents into their
**       buffers), reserve_s and append_s (the buffers into the in-memory
**       index).
**   loupe-inspect fts-bench SEGMENT QUERYFILE [--k 10] [--seconds S] [--warmup N]
**                 [--fields a,b] [--morphology M] [--stopwords S] [--hard-stop S]
**                 [--ranker NAME | --ranker-expr EXPR] [--min-infix-len N]
**                 [--exact-words 0|1] [--expand-keywords 0|1|exact|star]
**                 [--remove-diacritics 0|1]
**       times full-text queries on a sealed segment in this process, for the
**       benchmark's in-process table (bench/fulltext/run.py): each line of
**       QUERYFILE is a MATCH expression, parsed, planned and run for the top
**       k as the server runs `SELECT ... WHERE MATCH('<line>') ORDER BY
**       WEIGHT() DESC LIMIT k` (src/query/select.c), with the analyzer
**       fts-build used (same --morphology/--stopwords/--exact-words/
**       --remove-diacritics: with
**       exact forms, prefixes expand over them) and the default rank
**       parameters (BM25F, or the --ranker OPTION ranker= names, or
**       --ranker-expr as OPTION ranker=expr('EXPR')). The loop is the one of bench/fulltext/passes.h
**       (warm-up, whole passes for at least --seconds, a pass cut at
**       --hard-stop, default 10 x seconds); markers "loupe-inspect:
**       measuring" / "loupe-inspect: done" on stderr; on stdout
**       {"queries":..,"seconds":..,"rows":..,"cut_short":..,"cpu_seconds":..}.
**
** Exit status: 0 on success, 1 on an error (message on stderr), 2 on bad
** arguments.
*/
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fts/match.h"
#include "fts/memindex.h"
#include "fts/memindex_int.h"
#include "fts/rankexpr.h"
#include "fts/search.h"
#include "fts/segflush.h"
#include "fts/segment.h"
#include "text/analyzer.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/memtune.h"
#include "util/strbuf.h"
#include "util/threadpool.h"

static int usage(void) {
    fprintf(stderr,
            "usage: loupe-inspect fts-info FILE\n"
            "       loupe-inspect fts-build JSONL OUT [--fields a,b] [--morphology M] "
            "[--stopwords S] [--threads N]\n"
            "                     [--exact-words 0|1] [--infix 0|1] [--remove-diacritics 0|1]\n"
            "                     [--wordforms FILE] [--exceptions FILE] [--charset-table T] [--blend-chars B]\n"
            "       loupe-inspect fts-bench SEGMENT QUERYFILE [--k 10] [--seconds S] [--warmup N]\n"
            "                     [--fields a,b] [--morphology M] [--stopwords S] [--hard-stop S]\n"
            "                     [--ranker NAME | --ranker-expr EXPR] [--expand-keywords 0|1|exact|star]\n"
            "                     [--min-infix-len N] [--exact-words 0|1] [--remove-diacritics 0|1]\n"
            "                     (as fts-build's)\n");
    return 2;
}

static int fail(const LpError *err) {
    fprintf(stderr, "loupe-inspect: %s\n", err->zMsg);
    return 1;
}

static int cmd_info(const char *zPath) {
    LpError err;
    FtsSegment *seg;
    if (fts_segr_open(zPath, &seg, &err)) return fail(&err);
    FtsSegInfo info;
    int rc = fts_segr_info(seg, &info, &err);
    if (rc == LP_OK) rc = fts_segr_check(seg, &err);
    if (rc == LP_OK) {
        printf("file            %s\n", zPath);
        printf("documents       %u\n", info.nDocs);
        printf("fields          %d\n", info.nFields);
        printf("terms           %llu\n", (unsigned long long)info.nTerms);
        printf("postings        %llu\n", (unsigned long long)info.nPostings);
        printf("positions       %llu\n", (unsigned long long)info.nPositions);
        printf("bytes           %llu\n", (unsigned long long)info.szFile);
        printf("  postings      %llu\n", (unsigned long long)(info.szData - info.szPositions));
        printf("  positions     %llu\n", (unsigned long long)info.szPositions);
        printf("  dictionary    %llu\n", (unsigned long long)(info.szDict + info.szDictIndex));
        printf("  doc lengths   %llu\n", (unsigned long long)info.szDocLens);
        if (info.szInfix) printf("  infix         %llu\n", (unsigned long long)info.szInfix);
        printf("check           ok\n");
    }
    fts_segr_close(seg);
    return rc == LP_OK ? 0 : fail(&err);
}

/* The documents of a JSON-lines file: nField strings per document (NULL
** where a key is missing), parsed before any timing starts. */
typedef struct Docs {
    char **azText;          /* nDoc * nField */
    uint32_t nDoc;
    size_t nBytes;          /* text bytes */
} Docs;

static void docs_free(Docs *x, int nField) {
    for (size_t i = 0; i < (size_t)x->nDoc * (size_t)nField; i++) free(x->azText[i]);
    free(x->azText);
}

static int docs_read(const char *zIn, char *const *azField, int nField, Docs *x, LpError *err) {
    FILE *in = fopen(zIn, "r");
    if (!in) return lp_err_set(err, LP_IOERR, "cannot open %s: %s", zIn, strerror(errno));
    char *zLine = NULL;
    size_t cap = 0, nCap = 0;
    ssize_t n;
    int rc = LP_OK;
    memset(x, 0, sizeof(*x));
    while (rc == LP_OK && (n = getline(&zLine, &cap, in)) > 0) {
        json_error_t jerr;
        json_t *j = json_loadb(zLine, (size_t)n, 0, &jerr);
        if (!j) {
            rc = lp_err_set(err, LP_BADINPUT, "%s line %u: %s", zIn, x->nDoc + 1, jerr.text);
            break;
        }
        if (x->nDoc == nCap) {
            nCap = nCap ? nCap * 2 : 1024;
            char **a = realloc(x->azText, sizeof(char *) * nCap * (size_t)nField);
            if (!a) rc = lp_err_set(err, LP_NOMEM, "out of memory");
            else x->azText = a;
        }
        for (int f = 0; f < nField && rc == LP_OK; f++) {
            const char *z = json_string_value(json_object_get(j, azField[f]));
            char **pz = &x->azText[(size_t)x->nDoc * (size_t)nField + (size_t)f];
            *pz = z ? strdup(z) : NULL;
            if (z && !*pz) rc = lp_err_set(err, LP_NOMEM, "out of memory");
            if (z) x->nBytes += strlen(z);
        }
        json_decref(j);
        if (rc == LP_OK) x->nDoc++;
    }
    free(zLine);
    fclose(in);
    if (rc != LP_OK) docs_free(x, nField);
    return rc;
}

/* Analyses documents [iFrom, iTo) of a batch into their buffers, as a
** table analyses the rows of a large INSERT on its pool. */
typedef struct BuildJob {
    const Docs *x;
    int nField;
    const Analyzer *an;
    FtsDocBuf *aDoc;        /* the batch's buffers; aDoc[0] is document iBase */
    uint32_t iBase, iFrom, iTo;
    int rc;
    LpError err;
} BuildJob;

static void build_range(void *arg) {
    BuildJob *j = arg;
    for (uint32_t i = j->iFrom; i < j->iTo && j->rc == LP_OK; i++) {
        FtsDocBuf *d = &j->aDoc[i - j->iBase];
        fts_docbuf_reset(d);
        for (int f = 0; f < j->nField && j->rc == LP_OK; f++) {
            const char *z = j->x->azText[(size_t)i * (size_t)j->nField + (size_t)f];
            if (z) j->rc = fts_docbuf_field(d, j->an, f, z, strlen(z), &j->err);
        }
    }
}

/* Page faults of this process so far (first touches of fresh memory are
** a large part of indexing a small collection). */
static long minor_faults(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

#define BUILD_BATCH 128
/* The documents are taken as writes of BUILD_WRITE_ROWS rows (the INSERTs
** of bench-fulltext's load: engines.py INSERT_ROWS), analysed in batches
** of BUILD_BATCH. A write with less text than table.c's
** PREP_PARALLEL_BYTES is analysed on this thread alone, as the server
** analyses it. */
#define BUILD_WRITE_ROWS 1000
#define BUILD_PARALLEL_BYTES (64 * 1024)

/* Does write iWrite (documents iWrite * BUILD_WRITE_ROWS ..) hold enough
** text to be shared out over the pool? */
static int write_is_shared(const Docs *x, int nField, uint32_t iWrite) {
    uint32_t iFrom = iWrite * BUILD_WRITE_ROWS;
    uint32_t iEnd = x->nDoc - iFrom < BUILD_WRITE_ROWS ? x->nDoc : iFrom + BUILD_WRITE_ROWS;
    size_t nText = 0;
    for (size_t k = (size_t)iFrom * (size_t)nField; k < (size_t)iEnd * (size_t)nField; k++) {
        if (x->azText[k]) nText += strlen(x->azText[k]);
    }
    return nText >= BUILD_PARALLEL_BYTES;
}

static int cmd_build(const char *zIn, const char *zOut, const char *zFields, const char *zMorph,
                     const char *zStop, int bExact, int bStrip, unsigned writeFlags, int nThread,
                     const char *zWordforms, const char *zExceptions, const char *zCharset, const char *zBlend) {
    LpError err;
    AnalyzerConfig cfg = {zMorph, zStop, 0, bExact, 0, 0, NULL, 0, NULL, 0, NULL, bStrip, 0, zWordforms, NULL,
                          zExceptions, NULL, 0, 0, zCharset, zBlend, NULL, 0, 0, NULL, NULL, NULL, 0};
    Analyzer *an;
    if (analyzer_new(&cfg, &an, &err)) return fail(&err);
    /* as a table's flush: exact forms only in the filter where wildcards
    ** expand over them */
    if ((writeFlags & FTS_SEGW_INFIX) && analyzer_has_exact_forms(an)) writeFlags |= FTS_SEGW_INFIX_EXACT;
    char *azField[FTS_MAX_FIELDS];
    int nField = 0;
    char *zCopy = strdup(zFields);
    for (char *p = strtok(zCopy, ","); p && nField < FTS_MAX_FIELDS; p = strtok(NULL, ",")) {
        azField[nField++] = p;
    }
    Docs x;
    int64_t tp0 = lp_now_ns();
    int rc = docs_read(zIn, azField, nField, &x, &err);
    int64_t tp1 = lp_now_ns();
    if (rc != LP_OK) {
        free(zCopy);
        analyzer_free(an);
        return fail(&err);
    }
    /* The pool's workers plus this thread make nThread analysers. Its
    ** threads are started only when some write will be shared out: a
    ** process with idle threads pays for them (glibc's malloc locks, a
    ** stack), and a small collection would pay for nothing else. */
    int bAnyShare = 0;
    for (uint32_t iWrite = 0; nThread > 1 && !bAnyShare && iWrite * BUILD_WRITE_ROWS < x.nDoc; iWrite++) {
        bAnyShare = write_is_shared(&x, nField, iWrite);
    }
    if (!bAnyShare) nThread = 1;
    Tpool *pool = nThread > 1 ? tpool_new(nThread - 1, &err) : NULL;
    FtsMem *m = fts_mem_new(nField);
    FtsDocBuf *aDoc = calloc(BUILD_BATCH, sizeof(FtsDocBuf));
    FtsDocBuf *apBatch[BUILD_BATCH];
    uint32_t aOrd[BUILD_BATCH];
    if (m) fts_mem_set_pool(m, pool);
    enum { JOBS_PER_THREAD = 4 };
    int nJob = nThread > 1 ? nThread * JOBS_PER_THREAD : 1;
    BuildJob *aJob = calloc((size_t)nJob, sizeof(BuildJob));
    if ((nThread > 1 && !pool) || !m || !aDoc || !aJob) {
        if (!(nThread > 1 && !pool)) lp_err_set(&err, LP_NOMEM, "out of memory");
        rc = err.code;
    }
    int64_t nsAnalyse = 0, nsReserve = 0, nsAppend = 0;
    uint32_t iWrite = UINT32_MAX; /* the write of the current batch ... */
    int bShare = 0;               /* ... is shared out over the pool */
    long f0 = minor_faults();
    int64_t t0 = lp_now_ns();
    for (uint32_t iBase = 0; rc == LP_OK && iBase < x.nDoc; iBase += BUILD_BATCH) {
        uint32_t n = x.nDoc - iBase < BUILD_BATCH ? x.nDoc - iBase : BUILD_BATCH;
        /* As the server shares a write out: only when the write (the
        ** BUILD_WRITE_ROWS documents around this batch) has enough text;
        ** measured once per write. */
        if (iBase / BUILD_WRITE_ROWS != iWrite) {
            iWrite = iBase / BUILD_WRITE_ROWS;
            bShare = pool && write_is_shared(&x, nField, iWrite);
        }
        int nBatchJob = bShare ? nJob : 1;
        int64_t ta = lp_now_ns();
        TpoolGroup g;
        if (bShare) tpool_group_init(&g, pool);
        for (int k = 0; k < nBatchJob; k++) {
            aJob[k] = (BuildJob){&x, nField, an, aDoc, iBase,
                                 iBase + (uint32_t)((uint64_t)n * (uint64_t)k / (uint64_t)nBatchJob),
                                 iBase + (uint32_t)((uint64_t)n * (uint64_t)(k + 1) / (uint64_t)nBatchJob), LP_OK, {0}};
            if (!bShare || tpool_group_submit(&g, build_range, &aJob[k]) != LP_OK) build_range(&aJob[k]);
        }
        if (bShare) tpool_group_wait(&g);
        int64_t tr = lp_now_ns();
        nsAnalyse += tr - ta;
        for (int k = 0; k < nBatchJob && rc == LP_OK; k++) {
            if (aJob[k].rc != LP_OK) {
                rc = aJob[k].rc;
                lp_err_set(&err, rc, "%s document %u: %s", zIn, aJob[k].iFrom + 1, aJob[k].err.zMsg);
            }
        }
        if (rc == LP_OK) {
            /* Added as table_apply adds a batch: reserve, then append; a
            ** large batch is shared out over the pool by term shard. */
            for (uint32_t i = 0; i < n; i++) {
                apBatch[i] = &aDoc[i];
                aOrd[i] = iBase + i;
            }
            if (fts_mem_reserve(m, apBatch, (int)n, iBase + n - 1)) {
                rc = lp_err_set(&err, LP_NOMEM, "out of memory");
            } else {
                int64_t tp = lp_now_ns();
                nsReserve += tp - tr;
                fts_mem_append_batch(m, aOrd, apBatch, (int)n);
                nsAppend += lp_now_ns() - tp;
            }
            /* Freed as the server frees a write's buffers once it is
            ** applied; kept, each would grow to the largest document it
            ** ever held. */
            for (uint32_t i = 0; i < n; i++) fts_docbuf_free(&aDoc[i]);
        }
    }
    int64_t t1 = lp_now_ns();
    if (rc == LP_OK) rc = fts_seg_write_source_flags(zOut, fts_mem_source(m), NULL, 0, pool, writeFlags, &err);
    int64_t t2 = lp_now_ns();
    long f2 = minor_faults();
    if (rc == LP_OK) {
        FILE *f = fopen(zOut, "rb");
        long sz = -1;
        if (f && fseek(f, 0, SEEK_END) == 0) sz = ftell(f);
        if (f) fclose(f);
        printf("{\"documents\": %u, \"text_bytes\": %zu, \"terms\": %zu, \"index_ram_bytes\": %zu, "
               "\"segment_bytes\": %ld, \"threads\": %d, \"parse_s\": %.6f, \"analyse_index_s\": %.6f, "
               "\"write_s\": %.6f, \"page_faults\": %ld, \"analyse_s\": %.6f, \"reserve_s\": %.6f, "
               "\"append_s\": %.6f}\n",
               x.nDoc, x.nBytes, fts_mem_nterms(m), fts_mem_bytes(m), sz, nThread,
               (double)(tp1 - tp0) / 1e9, (double)(t1 - t0) / 1e9, (double)(t2 - t1) / 1e9, f2 - f0,
               (double)nsAnalyse / 1e9, (double)nsReserve / 1e9, (double)nsAppend / 1e9);
    }
    for (int i = 0; i < BUILD_BATCH && aDoc; i++) fts_docbuf_free(&aDoc[i]);
    free(aDoc);
    free(aJob);
    tpool_free(pool);
    fts_mem_free(m);
    docs_free(&x, nField);
    analyzer_free(an);
    free(zCopy);
    return rc == LP_OK ? 0 : fail(&err);
}

/* ------------------------------------------------------------- fts-bench */

typedef struct BenchCfg {
    const char *zFields, *zMorph, *zStop;
    int k;                      /* top k per query */
    double seconds;             /* minimum measured seconds (whole passes) */
    double hardStop;            /* a pass is cut after this many seconds */
    int nWarmup;                /* queries run before measuring */
    int ranker;                 /* FtsRanker (--ranker NAME), default BM25F */
    int expand;                 /* FTS_EXPAND_* (--expand-keywords), default 0 */
    const char *zExpr;          /* --ranker-expr, or NULL */
    int minInfixLen;            /* --min-infix-len: wildcard queries ('*abc*'), default 0 */
    int bExact;                 /* --exact-words: the segment holds exact forms */
    int bStrip;                 /* --remove-diacritics, default 1 */
} BenchCfg;

/* What one query needs: the segment's source, the analyzer, the field
** names MATCH may scope to and a reusable hit buffer of k. */
typedef struct BenchCtx {
    FtsSource *src;
    const Analyzer *an;
    const char *const *azField;
    int nField;
    uint32_t nDocs;
    FtsRankParams rank;
    int k;
    FtsHit *aHit;
    Arena exprArena;            /* the compiled --ranker-expr */
} BenchCtx;

/* The server's accept check (select.c accept_doc) minus what a segment
** file has no use for (deleted rows, WHERE): the ordinal is in range. */
static int bench_accept(void *ctx, uint32_t doc) {
    const BenchCtx *x = ctx;
    return doc < x->nDocs;
}

/* Parses, plans and runs one MATCH text for the top k, in an arena of its
** own as the server does per statement. Returns the hits, or -1 with err
** filled. */
static long bench_one(BenchCtx *x, const char *z, size_t n, LpError *err) {
    Arena a;
    arena_init(&a, 8192);
    FtsNode *root = NULL;
    FtsQuery *q = NULL;
    FtsStats st;
    int nHit = 0;
    int rc = fts_match_parse(&a, z, n, x->azField, x->nField, &root, err);
    if (rc == LP_OK) rc = fts_query_new(&a, root, z, x->an, x->src, &x->rank, &q, err);
    if (rc == LP_OK) rc = fts_query_topk(q, x->k, bench_accept, x, x->aHit, &nHit, &st, err);
    if (q) fts_query_free(q);
    arena_free(&a);
    return rc == LP_OK ? nHit : -1;
}

static int cmd_bench(const char *zSeg, const char *zQueries, const BenchCfg *c) {
    LpError err;
    char *azField[FTS_MAX_FIELDS];
    int nField = 0;
    char *zCopy = strdup(c->zFields);
    int rc = zCopy ? LP_OK : lp_err_set(&err, LP_NOMEM, "out of memory");
    for (char *p = zCopy ? strtok(zCopy, ",") : NULL; p && nField < FTS_MAX_FIELDS; p = strtok(NULL, ",")) {
        azField[nField++] = p;
    }
    /* The queries, one a line (blank lines skipped). */
    char **azQ = NULL;
    size_t *anQ = NULL;
    int nQ = 0, nAlloc = 0;
    FILE *in = rc == LP_OK ? fopen(zQueries, "r") : NULL;
    if (rc == LP_OK && !in) rc = lp_err_set(&err, LP_IOERR, "cannot open %s", zQueries);
    char *zLine = NULL;
    size_t cap = 0;
    ssize_t n;
    while (rc == LP_OK && (n = getline(&zLine, &cap, in)) >= 0) {
        while (n > 0 && (zLine[n - 1] == '\n' || zLine[n - 1] == '\r')) zLine[--n] = 0;
        if (n == 0) continue;
        if (nQ == nAlloc) {
            nAlloc = nAlloc ? 2 * nAlloc : 64;
            char **az = realloc(azQ, (size_t)nAlloc * sizeof *az);
            if (az) azQ = az;
            size_t *an = realloc(anQ, (size_t)nAlloc * sizeof *an);
            if (an) anQ = an;
            if (!az || !an) rc = lp_err_set(&err, LP_NOMEM, "out of memory");
        }
        if (rc == LP_OK && !(azQ[nQ] = strdup(zLine))) rc = lp_err_set(&err, LP_NOMEM, "out of memory");
        if (rc == LP_OK) anQ[nQ++] = (size_t)n;
    }
    if (in) {
        if (rc == LP_OK && ferror(in)) rc = lp_err_set(&err, LP_IOERR, "reading %s failed", zQueries);
        fclose(in);
    }
    free(zLine);
    if (rc == LP_OK && nQ == 0) rc = lp_err_set(&err, LP_BADINPUT, "%s holds no query", zQueries);

    FtsSegment *seg = NULL;
    Analyzer *an = NULL;
    /* as the segment was built: with exact forms, '=word' and
    ** expand_keywords=exact look them up and prefixes expand over them */
    AnalyzerConfig acfg = {c->zMorph, c->zStop, 0, c->bExact, 0, 0, NULL, c->minInfixLen, NULL, 0, NULL, c->bStrip, 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    BenchCtx x = {.azField = (const char *const *)azField, .nField = nField, .k = c->k};
    arena_init(&x.exprArena, 0);
    FtsSegInfo info;
    if (rc == LP_OK) rc = fts_segr_open(zSeg, &seg, &err);
    if (rc == LP_OK) rc = fts_segr_info(seg, &info, &err);
    if (rc == LP_OK && info.nFields != nField) {
        rc = lp_err_set(&err, LP_BADINPUT, "%s has %d full-text fields, --fields names %d", zSeg,
                        info.nFields, nField);
    }
    if (rc == LP_OK) rc = analyzer_new(&acfg, &an, &err);
    if (rc == LP_OK) {
        x.src = fts_segr_source(seg);
        x.an = an;
        x.nDocs = info.nDocs;
        /* As the server: k is LIMIT capped at the documents there are. */
        if ((uint32_t)x.k > info.nDocs) x.k = (int)info.nDocs;
        fts_rank_defaults(&x.rank);
        x.rank.ranker = (FtsRanker)c->ranker;
        x.rank.expand = c->expand;
        if (c->zExpr) {
            FtsRankExpr *e;
            rc = fts_rankexpr_compile_fields(&x.exprArena, c->zExpr, strlen(c->zExpr), x.azField, x.nField, &e,
                                             &err);
            x.rank.ranker = FTS_RANK_EXPR;
            x.rank.pExpr = e;
        }
        if (!(x.aHit = malloc(sizeof(FtsHit) * (size_t)(x.k ? x.k : 1)))) {
            rc = lp_err_set(&err, LP_NOMEM, "out of memory");
        }
    }
    int iFail = -1;
    for (int i = 0; rc == LP_OK && i < c->nWarmup && i < nQ; i++) {
        if (bench_one(&x, azQ[i], anQ[i], &err) < 0) rc = err.code, iFail = i;
    }
    uint64_t nQuery = 0, nRow = 0;
    int bCut = 0;
    int64_t t0 = 0, t = 0, cpu0 = 0, cpu1 = 0;
    if (rc == LP_OK) {
        fprintf(stderr, "loupe-inspect: measuring\n");
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        cpu0 = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        t = t0 = lp_now_ns();
        int64_t tMin = t0 + (int64_t)(c->seconds * 1e9), tCut = t0 + (int64_t)(c->hardStop * 1e9);
        /* Whole passes, as bench/fulltext/passes.h: every engine answers
        ** the same multiset of queries unless the hard stop cuts a pass. */
        while (rc == LP_OK && t < tMin && !bCut) {
            for (int i = 0; i < nQ; i++) {
                long nHit = bench_one(&x, azQ[i], anQ[i], &err);
                if (nHit < 0) {
                    rc = err.code;
                    iFail = i;
                    break;
                }
                nQuery++;
                nRow += (uint64_t)nHit;
                t = lp_now_ns();
                if (t >= tCut) {
                    bCut = 1;
                    break;
                }
            }
        }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        cpu1 = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        fprintf(stderr, "loupe-inspect: done\n");
    }
    if (rc == LP_OK) {
        printf("{\"queries\":%llu,\"seconds\":%.6f,\"rows\":%llu,\"cut_short\":%s,\"cpu_seconds\":%.6f}\n",
               (unsigned long long)nQuery, (double)(t - t0) / 1e9, (unsigned long long)nRow,
               bCut ? "true" : "false", (double)(cpu1 - cpu0) / 1e9);
    } else if (iFail >= 0) {
        fprintf(stderr, "loupe-inspect: query %d: %.300s\n", iFail + 1, azQ[iFail]);
    }
    free(x.aHit);
    arena_free(&x.exprArena);
    analyzer_free(an);
    fts_segr_close(seg);
    for (int i = 0; i < nQ; i++) free(azQ[i]);
    free(azQ);
    free(anQ);
    free(zCopy);
    return rc == LP_OK ? 0 : fail(&err);
}

/* The whole file at zPath, NUL-terminated (malloc'd), or NULL with a
** message on stderr. */
static char *read_text_file(const char *zPath) {
    FILE *f = fopen(zPath, "rb");
    StrBuf sb = {0};
    char aBuf[65536];
    size_t n;
    while (f && (n = fread(aBuf, 1, sizeof(aBuf), f)) > 0) strbuf_append(&sb, aBuf, n);
    if (!f || ferror(f) || sb.oom) {
        fprintf(stderr, "loupe-inspect: cannot read %s\n", zPath);
        if (f) fclose(f);
        strbuf_free(&sb);
        return NULL;
    }
    fclose(f);
    strbuf_appendc(&sb, 0);
    return sb.oom ? NULL : sb.z;
}

int main(int argc, char **argv) {
    lp_memtune();
    if (argc == 3 && strcmp(argv[1], "fts-info") == 0) return cmd_info(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "fts-build") == 0) {
        const char *zFields = "title,text", *zMorph = NULL, *zStop = NULL;
        const char *zWfPath = NULL, *zExcPath = NULL, *zCharset = NULL, *zBlend = NULL;
        long nThread = sysconf(_SC_NPROCESSORS_ONLN), bExact = 0, bInfix = 0, bStrip = 1;
        for (int i = 4; i < argc; i++) {
            if (i + 1 >= argc) return usage();
            if (strcmp(argv[i], "--fields") == 0) zFields = argv[++i];
            else if (strcmp(argv[i], "--wordforms") == 0) zWfPath = argv[++i];
            else if (strcmp(argv[i], "--exceptions") == 0) zExcPath = argv[++i];
            else if (strcmp(argv[i], "--charset-table") == 0) zCharset = argv[++i];
            else if (strcmp(argv[i], "--blend-chars") == 0) zBlend = argv[++i];
            else if (strcmp(argv[i], "--morphology") == 0) zMorph = argv[++i];
            else if (strcmp(argv[i], "--stopwords") == 0) zStop = argv[++i];
            else if (strcmp(argv[i], "--threads") == 0) nThread = strtol(argv[++i], NULL, 10);
            else if (strcmp(argv[i], "--exact-words") == 0) bExact = strtol(argv[++i], NULL, 10);
            else if (strcmp(argv[i], "--infix") == 0) bInfix = strtol(argv[++i], NULL, 10);
            else if (strcmp(argv[i], "--remove-diacritics") == 0) bStrip = strtol(argv[++i], NULL, 10);
            else return usage();
        }
        if (nThread < 1 || nThread > TPOOL_MAX_THREADS || bExact < 0 || bExact > 1 || bInfix < 0 || bInfix > 1 ||
            bStrip < 0 || bStrip > 1) {
            return usage();
        }
        char *zWf = zWfPath ? read_text_file(zWfPath) : NULL;
        char *zExc = zExcPath ? read_text_file(zExcPath) : NULL;
        if ((zWfPath && !zWf) || (zExcPath && !zExc)) {
            free(zWf);
            free(zExc);
            return 1;
        }
        int rc = cmd_build(argv[2], argv[3], zFields, zMorph, zStop, (int)bExact, (int)bStrip,
                           bInfix ? FTS_SEGW_INFIX : 0, (int)nThread, zWf, zExc, zCharset, zBlend);
        free(zWf);
        free(zExc);
        return rc;
    }
    if (argc >= 4 && strcmp(argv[1], "fts-bench") == 0) {
        BenchCfg c = {"title,text", NULL, NULL, 10, 1.0, 0, 0, FTS_RANK_BM25F, 0, NULL, 0, 0, 1};
        for (int i = 4; i < argc; i++) {
            if (i + 1 >= argc) return usage();
            const char *zOpt = argv[i], *zVal = argv[++i];
            if (strcmp(zOpt, "--fields") == 0) c.zFields = zVal;
            else if (strcmp(zOpt, "--morphology") == 0) c.zMorph = zVal;
            else if (strcmp(zOpt, "--stopwords") == 0) c.zStop = zVal;
            else if (strcmp(zOpt, "--k") == 0) c.k = atoi(zVal);
            else if (strcmp(zOpt, "--seconds") == 0) c.seconds = strtod(zVal, NULL);
            else if (strcmp(zOpt, "--hard-stop") == 0) c.hardStop = strtod(zVal, NULL);
            else if (strcmp(zOpt, "--warmup") == 0) c.nWarmup = atoi(zVal);
            else if (strcmp(zOpt, "--ranker") == 0) {
                if ((c.ranker = fts_ranker_from_name(zVal)) < 0) return usage();
            } else if (strcmp(zOpt, "--ranker-expr") == 0) {
                c.zExpr = zVal;
            } else if (strcmp(zOpt, "--expand-keywords") == 0) {
                if ((c.expand = fts_expand_from_name(zVal)) < 0) return usage();
            } else if (strcmp(zOpt, "--min-infix-len") == 0) {
                c.minInfixLen = atoi(zVal);
            } else if (strcmp(zOpt, "--exact-words") == 0) {
                c.bExact = atoi(zVal);
            } else if (strcmp(zOpt, "--remove-diacritics") == 0) {
                c.bStrip = atoi(zVal);
            } else return usage();
        }
        if (c.bExact < 0 || c.bExact > 1 || c.bStrip < 0 || c.bStrip > 1) return usage();
        if (c.hardStop == 0) c.hardStop = 10 * c.seconds;
        if (c.k < 1 || c.k > 100000 || c.seconds <= 0 || c.hardStop < c.seconds || c.nWarmup < 0) {
            return usage();
        }
        return cmd_bench(argv[2], argv[3], &c);
    }
    return usage();
}
