/*
** loupe-inspect — look inside loupe's files, as LMDB ships mdb_stat.
**
**   loupe-inspect fts-info FILE
**       checks a sealed full-text segment (every checksum, block, position
**       list) and prints its counts and section sizes.
**   loupe-inspect fts-build JSONL OUT [--fields a,b] [--morphology M] [--stopwords S]
**       analyses the documents of a JSON-lines file ({"title": ..., "text": ...}
**       per line; --fields names the keys, default title,text) the way a
**       table with those options would, and writes the sealed segment the
**       server would write for them: the on-disk size of the full-text
**       index for a collection (make bench-fulltext reports it).
**
** Exit status: 0 on success, 1 on an error (message on stderr), 2 on bad
** arguments.
*/
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fts/memindex.h"
#include "fts/segflush.h"
#include "fts/segment.h"
#include "text/analyzer.h"
#include "util/clock.h"

static int usage(void) {
    fprintf(stderr,
            "usage: loupe-inspect fts-info FILE\n"
            "       loupe-inspect fts-build JSONL OUT [--fields a,b] [--morphology M] "
            "[--stopwords S]\n");
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
        printf("check           ok\n");
    }
    fts_segr_close(seg);
    return rc == LP_OK ? 0 : fail(&err);
}

static int cmd_build(const char *zIn, const char *zOut, const char *zFields, const char *zMorph,
                     const char *zStop) {
    LpError err;
    AnalyzerConfig cfg = {zMorph, zStop, 0};
    Analyzer *an;
    if (analyzer_new(&cfg, &an, &err)) return fail(&err);
    char *azField[FTS_MAX_FIELDS];
    int nField = 0;
    char *zCopy = strdup(zFields);
    for (char *p = strtok(zCopy, ","); p && nField < FTS_MAX_FIELDS; p = strtok(NULL, ",")) {
        azField[nField++] = p;
    }
    FILE *in = fopen(zIn, "r");
    if (!in) {
        fprintf(stderr, "loupe-inspect: cannot open %s\n", zIn);
        free(zCopy);
        analyzer_free(an);
        return 1;
    }
    FtsMem *m = fts_mem_new(nField);
    FtsDocBuf d = {0};
    char *zLine = NULL;
    size_t cap = 0, nBytes = 0;
    ssize_t n;
    uint32_t nDoc = 0;
    int rc = LP_OK;
    int64_t t0 = lp_now_ns();
    while (rc == LP_OK && (n = getline(&zLine, &cap, in)) > 0) {
        json_error_t jerr;
        json_t *j = json_loadb(zLine, (size_t)n, 0, &jerr);
        if (!j) {
            rc = lp_err_set(&err, LP_BADINPUT, "%s line %u: %s", zIn, nDoc + 1, jerr.text);
            break;
        }
        fts_docbuf_reset(&d);
        for (int f = 0; f < nField && rc == LP_OK; f++) {
            const char *z = json_string_value(json_object_get(j, azField[f]));
            if (!z) continue;
            nBytes += strlen(z);
            rc = fts_docbuf_field(&d, an, f, z, strlen(z), &err);
        }
        json_decref(j);
        if (rc == LP_OK && fts_mem_add(m, nDoc++, &d)) rc = lp_err_set(&err, LP_NOMEM, "out of memory");
    }
    int64_t t1 = lp_now_ns();
    if (rc == LP_OK) rc = fts_seg_write_source(zOut, fts_mem_source(m), NULL, 0, &err);
    int64_t t2 = lp_now_ns();
    if (rc == LP_OK) {
        FILE *f = fopen(zOut, "rb");
        long sz = -1;
        if (f && fseek(f, 0, SEEK_END) == 0) sz = ftell(f);
        if (f) fclose(f);
        printf("{\"documents\": %u, \"text_bytes\": %zu, \"terms\": %zu, \"index_ram_bytes\": %zu, "
               "\"segment_bytes\": %ld, \"analyse_index_s\": %.3f, \"write_s\": %.3f}\n",
               nDoc, nBytes, fts_mem_nterms(m), fts_mem_bytes(m), sz, (double)(t1 - t0) / 1e9,
               (double)(t2 - t1) / 1e9);
    }
    free(zLine);
    fclose(in);
    fts_docbuf_free(&d);
    fts_mem_free(m);
    analyzer_free(an);
    free(zCopy);
    return rc == LP_OK ? 0 : fail(&err);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "fts-info") == 0) return cmd_info(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "fts-build") == 0) {
        const char *zFields = "title,text", *zMorph = NULL, *zStop = NULL;
        for (int i = 4; i < argc; i++) {
            if (i + 1 >= argc) return usage();
            if (strcmp(argv[i], "--fields") == 0) zFields = argv[++i];
            else if (strcmp(argv[i], "--morphology") == 0) zMorph = argv[++i];
            else if (strcmp(argv[i], "--stopwords") == 0) zStop = argv[++i];
            else return usage();
        }
        return cmd_build(argv[2], argv[3], zFields, zMorph, zStop);
    }
    return usage();
}
