/*
** table.c — the in-memory table (see table.h for the contract).
**
** Rows. Each row is one immutable heap block:
**
**   OFFSET  SIZE        DESCRIPTION
**   0       8           id
**   8       4           total size of the block in bytes
**   12      4           iStored: 0, or (rows of sealed segments) the
**                       stored block holding the row's TEXT values + 1
**   16      8*nCol      one slot per column:
**                         INT, BIGINT, BOOL, TIMESTAMP  the int64 value
**                         FLOAT                         the double's bits
**                         STRING, TEXT, JSON, VECTOR,   offset<<32 | length
**                         MULTI, MULTI64                (bytes, floats, or
**                                                       int64 items)
**   ..      8*nNullW    NULL bitmap, bit i set = column i is NULL
**   ..      ...         tail: variable-length payloads; strings are
**                       NUL-terminated, vectors 4-byte aligned, multi-
**                       values 8-byte aligned int64s, ascending, no
**                       repeats (an empty one: length 0, its offset
**                       still inside the block)
**
** Packed rows. In a sealed segment's rows file a row with TEXT values is
** "packed": they are not in its tail but in a stored block (zstd, about
** 16 KiB of text, consecutive rows), each NUL-terminated, the row's in
** column order; a TEXT slot's offset is then into the decompressed block.
** The other columns stay in place, so filters and sorts read the mmap'd
** row as it is and only output and highlighting decompress (RowReader).
**
** A row is never modified after it is built: UPDATE builds a new row and
** swaps the pointer, so one allocation and one free per row version.
**
** The table keeps rows in a slot array (insertion order; a deleted row
** leaves a NULL slot) and an IdMap from id to slot number. A slot number
** is also the document's ordinal in the full-text index, so a row whose
** text changes (REPLACE) gets a new slot and its old one becomes a
** tombstone; UPDATE, which cannot change text, keeps the slot. When the
** dead slots outnumber the living, the slots are compacted and the
** full-text index rebuilt from the live rows (amortised: each write pays
** for at most one re-analysis).
**
** Full-text analysis runs before the write lock is taken (table_apply's
** first phase), so indexing a large batch does not block readers longer
** than appending its postings.
**
** Durability. With a write-ahead log attached (table_open_wal), a batch's
** effect is appended to the log under the write lock, after every check
** that can fail and before anything changes, so log order is apply order;
** the fsync (shared with concurrent writers: wal_commit) happens after the
** lock is released. WAL record payloads, little-endian (the row blocks are
** the in-memory blocks above, written as they are: x86-64 and arm64 are
** little-endian, and a big-endian build refuses to compile):
**
**   u8 type           1 = batch, 2 = truncate
**   batch: u32 nEntry, then nEntry entries:
**     u8 kind         1 = put (INSERT / REPLACE: a new version, new slot)
**                     2 = update (UPDATE of a stored row: new version, same slot)
**                     3 = delete
**     put, update:    u32 nByte, then the row block (nByte bytes; id inside)
**     delete:         i64 id
**
** Replay re-applies each batch as one atomic table_apply: puts as REPLACE,
** updates as UPDATE of every column a graph does not index, deletes as
** DELETE. Row blocks read back are checked (sizes, offsets, terminators,
** vector lengths, finite components) before use.
**
** Concurrency. One pthread rwlock per table: snapshots hold it for reading,
** table_apply for writing (writer-preferring, so a stream of readers cannot
** starve a writer). Everything below the lock is only touched with it held.
*/
#include "table/table.h"
#include "table/table_int.h"

#include <assert.h>
#include <pthread.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fts/memindex.h"
#include "fts/memindex_int.h"
#include "util/hashmap.h"
#include "util/vec.h"
#include "embed/embed.h"
#include "text/utf8.h"
#include "util/bytes.h"
#include "util/log.h"
#include "vec/hnsw.h"

static size_t null_words(int nCol) {
    return ((size_t)nCol + 63) / 64;
}

static int row_isnull(const MemRow *r, int nCol, int i) {
    const uint64_t *aNull = r->aSlot + nCol;
    return (aNull[i / 64] >> (i % 64)) & 1;
}

/* An empty graph for the vector column c. */
VecHnsw *table_new_graph(const ColumnSchema *c, LpError *err) {
    VecHnswConfig cfg;
    VecMetric m = c->vec.sim == VSIM_L2 ? VEC_L2 : c->vec.sim == VSIM_IP ? VEC_IP : VEC_COSINE;
    vec_hnsw_config_init(&cfg, (uint32_t)c->vec.nDims, m);
    if (c->vec.hnswM > 0) cfg.M = (uint32_t)c->vec.hnswM;
    if (c->vec.efConstruction > 0) cfg.efConstruction = (uint32_t)c->vec.efConstruction;
    return vec_hnsw_new(&cfg, err);
}

int table_graph_repair(const Table *t, VecHnsw *h, int iCol, uint64_t segId, LpError *err) {
    uint32_t nFound, nLeft;
    int rc = vec_hnsw_repair(h, &nFound, &nLeft, err);
    if (rc == LP_OK && nFound) {
        char zSeg[32] = "RAM segment";
        if (segId != UINT64_MAX) snprintf(zSeg, sizeof(zSeg), "segment %llu", (unsigned long long)segId);
        LOG_INFO("table '%s', %s, column %s: %u of %u graph rows had no in-link; %u linked back",
                 t->zName, zSeg, t->pSchema->aCol[iCol].zName, nFound, vec_hnsw_count(h), nFound - nLeft);
    }
    return rc;
}

/* A graph per vector column with knn_type='hnsw' and knn_dims. */
static int make_graphs(Table *t, LpError *err) {
    const Schema *s = t->pSchema;
    int n = 0;
    for (int i = 0; i < s->nCol; i++) {
        n += s->aCol[i].type == COL_VECTOR && s->aCol[i].vec.bHnsw && s->aCol[i].vec.nDims > 0;
    }
    if (!n) return LP_OK;
    if (!(t->aVec = calloc((size_t)n, sizeof(TableVec)))) {
        return lp_err_set(err, LP_NOMEM, "out of memory creating table '%s'", t->zName);
    }
    for (int i = 0; i < s->nCol; i++) {
        const ColumnSchema *c = &s->aCol[i];
        if (c->type != COL_VECTOR || !c->vec.bHnsw || c->vec.nDims <= 0) continue;
        TableVec *tv = &t->aVec[t->nVec++];
        tv->iCol = i;
        if (!(tv->h = table_new_graph(c, err))) return err ? err->code : LP_NOMEM;
    }
    return LP_OK;
}

static void free_graphs(Table *t) {
    for (int j = 0; j < t->nVec; j++) {
        vec_hnsw_free(t->aVec[j].h);
        VEC_FREE(&t->aVec[j].nodeSlot);
    }
    free(t->aVec);
    t->aVec = NULL;
    t->nVec = 0;
}

void table_analyzer_config(const Schema *s, AnalyzerConfig *cfg) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->zMorphology = schema_option(s, "morphology");
    cfg->zStopwords = schema_option(s, "stopwords");
    const char *z = schema_option(s, "min_prefix_len");
    if (z) cfg->minPrefixLen = atoi(z);
    z = schema_option(s, "min_infix_len");
    if (z) cfg->minInfixLen = atoi(z);
    z = schema_option(s, "min_word_len");
    if (z) cfg->minWordLen = atoi(z);
    z = schema_option(s, "min_stemming_len");
    if (z) cfg->minStemmingLen = atoi(z);
    z = schema_option(s, "stopword_step");
    if (z) cfg->bStopwordNoStep = atoi(z) == 0;
    z = schema_option(s, "overshort_step");
    if (z) cfg->bOvershortNoStep = atoi(z) == 0;
    z = schema_option(s, "index_exact_words");
    if (z) cfg->bExactWords = atoi(z);
    z = schema_option(s, "index_sp");
    if (z) cfg->bIndexSp = atoi(z);
    z = schema_option(s, "html_strip");
    if (z) cfg->bHtmlStrip = atoi(z);
    z = schema_option(s, "remove_diacritics");
    if (z) cfg->bRemoveDiacritics = atoi(z);
    cfg->zHtmlRemove = schema_option(s, "html_remove_elements");
    cfg->zHtmlIndexAttrs = schema_option(s, "html_index_attrs");
    cfg->zIndexZones = schema_option(s, "index_zones");
    cfg->zWordforms = schema_option(s, "wordforms_list");
    cfg->zIgnoreChars = schema_option(s, "ignore_chars");
    cfg->zCharsetTable = schema_option(s, "charset_table");
    cfg->zBlendChars = schema_option(s, "blend_chars");
    cfg->zBlendMode = schema_option(s, "blend_mode");
    z = schema_option(s, "stopwords_unstemmed");
    cfg->bStopwordsStemmed = z && atoi(z) == 0;
    z = schema_option(s, "ngram_len");
    if (z) cfg->nNgramLen = atoi(z);
    cfg->zNgramChars = schema_option(s, "ngram_chars");
    cfg->zExceptions = schema_option(s, "exceptions_list");
    cfg->zStopwordsList = schema_option(s, "stopwords_list");
    cfg->zRegexpFilter = schema_option(s, "regexp_filter");
    cfg->zPhraseBoundary = schema_option(s, "phrase_boundary");
    z = schema_option(s, "phrase_boundary_step");
    if (z) cfg->phraseBoundaryStep = atoi(z);
}

/* The analyzer the table's options ask for. */
static int make_analyzer(const Schema *s, Analyzer **pp, LpError *err) {
    AnalyzerConfig cfg;
    table_analyzer_config(s, &cfg);
    return analyzer_new(&cfg, pp, err);
}


/* ------------------------------------------------------------------ */
/* Embedding models                                                    */

/* A source field contributes at most this many bytes to the text that is
** embedded: a model reads at most 512 tokens, and this many bytes hold
** them however the text is made, short of megabytes of blank space. So a
** 10 MB field costs what a long document costs. */
#define EMBED_MAX_FIELD_BYTES (64 * 1024)

/* The bytes of a source text that are embedded: at most
** EMBED_MAX_FIELD_BYTES, never ending inside a character. */
static size_t field_cut(const char *z, size_t n) {
    return n > EMBED_MAX_FIELD_BYTES ? utf8_floor(z, EMBED_MAX_FIELD_BYTES) : n;
}

/* Fills e->aFrom from the column's from='a,b' (empty: every TEXT column). */
static int parse_from(const Table *t, TableEmbed *e, LpError *err) {
    const Schema *s = t->pSchema;
    const ColumnSchema *c = &s->aCol[e->iCol];
    if (!(e->aFrom = calloc((size_t)s->nCol + 1, sizeof(int)))) {
        return lp_err_set(err, LP_NOMEM, "out of memory creating table '%s'", t->zName);
    }
    char zBad[128];
    e->nFrom = schema_embed_sources(s, e->iCol, e->aFrom, zBad, sizeof(zBad));
    if (e->nFrom < 0) {
        e->nFrom = 0;
        return lp_err_set(err, LP_BADINPUT, "column '%s': from names '%s', which is not a text "
                          "or string column of table '%s'", c->zName, zBad, t->zName);
    }
    if (!e->nFrom) {
        return lp_err_set(err, LP_BADINPUT, "column '%s': from='' means every text field, and "
                          "table '%s' has none", c->zName, t->zName);
    }
    return LP_OK;
}

/* Loads the models of t's model columns. bStrict (CREATE TABLE): any
** failure fails, and a column without knn_dims takes the model's
** dimension. Otherwise (a stored table being opened) a model that cannot
** load is remembered with the reason, and only the writes and queries
** that need it fail. */
static int attach_models(Table *t, const TableModelEnv *env, int bStrict, LpError *err) {
    Schema *s = t->pSchema;
    int n = 0;
    for (int i = 0; i < s->nCol; i++) n += s->aCol[i].type == COL_VECTOR && s->aCol[i].vec.zModel;
    if (!n) return LP_OK;
    if (!(t->aEmb = calloc((size_t)n, sizeof(TableEmbed)))) {
        return lp_err_set(err, LP_NOMEM, "out of memory creating table '%s'", t->zName);
    }
    t->nEmbedInline = env && env->nInline > 0 ? env->nInline : EMBED_DEFAULT_INLINE;
    for (int i = 0; i < s->nCol; i++) {
        ColumnSchema *c = &s->aCol[i];
        if (c->type != COL_VECTOR || !c->vec.zModel) continue;
        TableEmbed *e = &t->aEmb[t->nEmb++];
        e->iCol = i;
        int rc = parse_from(t, e, err);
        if (rc != LP_OK) return rc;
        LpError e2;
        lp_err_clear(&e2);
        if (!env) {
            lp_err_set(&e2, LP_UNSUPPORTED, "model '%s': models are not available here", c->vec.zModel);
        } else if ((e->pModel = embed_model_get(c->vec.zModel, env->zDataDir, env->pOpts, &e2)) != NULL) {
            int nDims = embed_model_dims(e->pModel);
            if (c->vec.nDims == 0 && bStrict) c->vec.nDims = nDims;
            if (c->vec.nDims != nDims) {
                lp_err_set(&e2, LP_BADINPUT, "column '%s': knn_dims is %d but model '%s' gives "
                           "vectors of %d dimensions", c->zName, c->vec.nDims, c->vec.zModel, nDims);
                embed_model_release(e->pModel);
                e->pModel = NULL;
            }
        }
        if (!e->pModel) {
            if (bStrict) {
                if (err) *err = e2;
                return e2.code;
            }
            LOG_WARN("table '%s': column '%s' cannot compute embeddings until its model loads: %s",
                     t->zName, c->zName, e2.zMsg);
            if (!(e->zWhy = strdup(e2.zMsg))) {
                return lp_err_set(err, LP_NOMEM, "out of memory creating table '%s'", t->zName);
            }
        }
    }
    return LP_OK;
}

static void free_models(Table *t) {
    for (int i = 0; i < t->nEmb; i++) {
        embed_model_release(t->aEmb[i].pModel);
        free(t->aEmb[i].aFrom);
        free(t->aEmb[i].zWhy);
    }
    free(t->aEmb);
}

/* The model of vector column iCol, or NULL with err: the column has none,
** or it could not be loaded. */
static EmbedModel *model_of(const Table *t, int iCol, LpError *err) {
    for (int i = 0; i < t->nEmb; i++) {
        const TableEmbed *e = &t->aEmb[i];
        if (e->iCol != iCol) continue;
        if (!e->pModel) {
            lp_err_set(err, LP_UNSUPPORTED, "column '%s' needs a model that could not be loaded: %s",
                       t->pSchema->aCol[iCol].zName, e->zWhy ? e->zWhy : "?");
        }
        return e->pModel;
    }
    lp_err_set(err, LP_BADINPUT, "column '%s' has no model_name: give a vector, not a text",
               iCol >= 0 && iCol < t->pSchema->nCol ? t->pSchema->aCol[iCol].zName : "?");
    return NULL;
}

int table_embed_text(const Table *t, int iCol, const char *z, size_t n, float *aOut, LpError *err) {
    EmbedModel *m = model_of(t, iCol, err);
    if (!m) return err ? err->code : LP_BADINPUT;
    return embed_text(m, z, field_cut(z, n), aOut, err);
}

int table_column_model(const Table *t, int iCol) {
    for (int i = 0; i < t->nEmb; i++) {
        if (t->aEmb[i].iCol == iCol) return 1;
    }
    return 0;
}

/* The text embedding e computes for a row with values aVal: the source
** fields, each cut to EMBED_MAX_FIELD_BYTES, joined by single spaces, in
** the malloc'd *pz (*pn bytes). A full-text field of a table with
** html_strip is read as the index reads it, without its markup (stripped
** before the cut, so the cut keeps the text's first bytes, not its tags).
** LP_OK; LP_NOMEM, or analyzer_doc_text's LP_BADINPUT (invalid UTF-8),
** with err. */
static int embed_source(const Table *t, const TableEmbed *e, const Value *aVal, char **pz, size_t *pn,
                        LpError *err) {
    StrBuf out = {0}, html = {0};
    int rc = LP_OK;
    for (int f = 0; f < e->nFrom && rc == LP_OK; f++) {
        const Value *v = &aVal[e->aFrom[f]];
        if (v->kind != VAL_STR || v->u.s.n == 0) continue;
        const char *z = v->u.s.z;
        size_t n = v->u.s.n;
        const ColumnSchema *c = &t->pSchema->aCol[e->aFrom[f]];
        if ((c->type == COL_TEXT || schema_col_is_field(c)) &&
            (rc = analyzer_doc_text(t->pAnalyzer, z, n, &html, &z, &n, err)) != LP_OK) {
            break;
        }
        if (out.n) strbuf_appendc(&out, ' ');
        strbuf_append(&out, z, field_cut(z, n));
    }
    strbuf_appendc(&out, 0);
    strbuf_free(&html);
    if (rc == LP_OK && out.oom) rc = lp_err_set(err, LP_NOMEM, "out of memory");
    if (rc != LP_OK) {
        strbuf_free(&out);
        return rc;
    }
    *pz = strbuf_detach(&out, pn);
    (*pn)--;
    return LP_OK;
}

Table *table_new(const char *zName, Schema *pSchema, LpError *err) {
    return table_new_ex(zName, pSchema, NULL, 0, err);
}

Table *table_new_ex(const char *zName, Schema *pSchema, const TableModelEnv *env, int bStrict,
                    LpError *err) {
    Table *t = calloc(1, sizeof(*t));
    if (!t || !(t->zName = strdup(zName))) {
        free(t);
        schema_free(pSchema);
        lp_err_set(err, LP_NOMEM, "out of memory creating table '%s'", zName);
        return NULL;
    }
    t->pSchema = pSchema;
    t->walFileBytes = TABLE_WAL_FILE_BYTES;
    atomic_init(&t->nRef, 1);
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&t->lock, &attr);
    pthread_rwlock_init(&t->graphLock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&t->flushMu, NULL);
    pthread_mutex_init(&t->mergeMu, NULL);
    idmap_init(&t->idx);
    t->nextId = 1;
    t->bSorted = 1;
    for (int i = 0; i < pSchema->nCol; i++) {
        t->nFts += schema_col_is_field(&pSchema->aCol[i]);
    }
    if (t->nFts > FTS_MAX_FIELDS) {
        lp_err_set(err, LP_BADINPUT, "table '%s' has %d indexed text fields; at most %d are allowed",
                   zName, t->nFts, FTS_MAX_FIELDS);
        goto fail;
    }
    if (make_analyzer(pSchema, &t->pAnalyzer, err) != LP_OK) goto fail;
    if (attach_models(t, env, bStrict, err) != LP_OK) goto fail;
    if (make_graphs(t, err) != LP_OK) goto fail;
    if (t->nFts) {
        t->aFtsCol = calloc((size_t)t->nFts, sizeof(int));
        t->azFtsField = calloc((size_t)t->nFts, sizeof(char *));
        t->pFts = fts_mem_new(t->nFts);
        if (!t->aFtsCol || !t->azFtsField || !t->pFts) {
            lp_err_set(err, LP_NOMEM, "out of memory creating table '%s'", zName);
            goto fail;
        }
        int k = 0;
        for (int i = 0; i < pSchema->nCol; i++) {
            if (schema_col_is_field(&pSchema->aCol[i])) {
                t->aFtsCol[k] = i;
                t->azFtsField[k++] = pSchema->aCol[i].zName;
            }
        }
    }
    return t;
fail:
    table_unref(t);
    return NULL;
}

static void free_rows(Table *t) {
    for (size_t i = 0; i < t->slots.n; i++) free(t->slots.a[i]);
    VEC_FREE(&t->slots);
    idmap_free(&t->idx);
    t->nLive = 0;
    t->nBytes = 0;
    t->lastId = 0;
    t->bSorted = 1;
}

void table_ref(Table *t) {
    atomic_fetch_add(&t->nRef, 1);
}

void table_unref(Table *t) {
    if (!t || atomic_fetch_sub(&t->nRef, 1) != 1) return;
    wal_close(t->pWal);
    free_models(t);
    free_rows(t);
    pthread_rwlock_destroy(&t->lock);
    pthread_rwlock_destroy(&t->graphLock);
    pthread_mutex_destroy(&t->flushMu);
    pthread_mutex_destroy(&t->mergeMu);
    for (int i = 0; i < t->nPart; i++) table_part_free(t->apPart[i]);
    free(t->apPart);
    idfence_free(t->pFence);
    free(t->zDir);
    fts_mem_free(t->pFts);
    free_graphs(t);
    analyzer_free(t->pAnalyzer);
    free(t->aFtsCol);
    free(t->azFtsField);
    schema_free(t->pSchema);
    free(t->zName);
    free(t);
}

int table_commit(Table *t, uint64_t lsn, LpError *err) {
    return t->pWal && lsn ? wal_commit(t->pWal, lsn, err) : LP_OK;
}

Tpool *table_pool(const Table *t) {
    return t->pPool;
}

const char *table_name(const Table *t) {
    return t->zName;
}

const Schema *table_schema(const Table *t) {
    return t->pSchema;
}

void table_set_pool(Table *t, Tpool *pool) {
    t->pPool = pool;
    if (t->pFts) fts_mem_set_pool(t->pFts, pool);
}

const Analyzer *table_analyzer(const Table *t) {
    return t->pAnalyzer;
}

int table_fts_fields(const Table *t, const char *const **pazName, const int **paCol) {
    if (pazName) *pazName = t->azFtsField;
    if (paCol) *paCol = t->aFtsCol;
    return t->nFts;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                */

int64_t row_id(const MemRow *r) {
    return r->id;
}

uint32_t row_nbyte(const MemRow *r) {
    return r->nByte;
}

/* The value of numeric column iCol stored as slot. */
static Value slot_value(const Schema *s, int iCol, uint64_t slot) {
    if (s->aCol[iCol].type == COL_FLOAT) {
        Value v;
        v.kind = VAL_FLOAT;
        memcpy(&v.u.f, &slot, sizeof(double));
        return v;
    }
    return value_int((int64_t)slot);
}

Value row_get(const Schema *s, const MemRow *r, int iCol) {
    if (iCol == SCHEMA_ID_COL) return value_int(r->id);
    if (row_isnull(r, s->nCol, iCol)) return value_null();
    if (r->iStored && s->aCol[iCol].type == COL_TEXT) {
        assert(!"row_get of a packed TEXT value: use row_read");
        return value_null();
    }
    uint64_t slot = r->aSlot[iCol];
    Value v;
    switch (s->aCol[iCol].type) {
    case COL_STRING:
    case COL_TEXT:
    case COL_JSON:
        return value_str((const char *)r + (slot >> 32), (uint32_t)slot);
    case COL_VECTOR:
        v.kind = VAL_VEC;
        /* The tail offset of a vector is 4-byte aligned (row_build). */
        v.u.v.a = (const float *)(const void *)((const char *)r + (slot >> 32)); // cppcheck-suppress invalidPointerCast
        v.u.v.n = (uint32_t)slot;
        return v;
    case COL_MULTI:
    case COL_MULTI64:
        v.kind = VAL_MVA;
        /* The tail offset of a multi-value is 8-byte aligned (row_build). */
        v.u.m.a = (const int64_t *)(const void *)((const char *)r + (slot >> 32)); // cppcheck-suppress invalidPointerCast
        v.u.m.n = (uint32_t)slot;
        return v;
    default:
        return slot_value(s, iCol, slot);
    }
}

/* Builds a row block for id from one value per column (already coerced).
** NULL when out of memory or the row would exceed 4 GiB. */
static MemRow *row_build(const Schema *s, int64_t id, const Value *aVal) {
    int nCol = s->nCol;
    size_t nHead = sizeof(MemRow) + 8 * ((size_t)nCol + null_words(nCol));
    size_t nTail = 0;
    for (int i = 0; i < nCol; i++) {
        const Value *v = &aVal[i];
        if (v->kind == VAL_STR) nTail += (size_t)v->u.s.n + 1;
        if (v->kind == VAL_VEC) nTail = ((nTail + 3) & ~(size_t)3) + 4 * (size_t)v->u.v.n;
        if (v->kind == VAL_MVA) nTail = ((nTail + 7) & ~(size_t)7) + 8 * (size_t)v->u.m.n;
    }
    size_t nByte = nHead + nTail;
    if (nByte > UINT32_MAX) return NULL;
    MemRow *r = malloc(nByte);
    if (!r) return NULL;
    r->id = id;
    r->nByte = (uint32_t)nByte;
    r->iStored = 0;
    uint64_t *aNull = r->aSlot + nCol;
    memset(aNull, 0, 8 * null_words(nCol));
    size_t off = nHead;
    for (int i = 0; i < nCol; i++) {
        const Value *v = &aVal[i];
        switch (v->kind) {
        case VAL_NULL:
            aNull[i / 64] |= 1ull << (i % 64);
            r->aSlot[i] = 0;
            break;
        case VAL_INT:
            r->aSlot[i] = (uint64_t)v->u.i;
            break;
        case VAL_FLOAT:
            memcpy(&r->aSlot[i], &v->u.f, sizeof(double));
            break;
        case VAL_STR:
            memcpy((char *)r + off, v->u.s.z, v->u.s.n);
            ((char *)r)[off + v->u.s.n] = 0;
            r->aSlot[i] = ((uint64_t)off << 32) | v->u.s.n;
            off += (size_t)v->u.s.n + 1;
            break;
        case VAL_VEC:
            off = (off + 3) & ~(size_t)3;
            memcpy((char *)r + off, v->u.v.a, 4 * (size_t)v->u.v.n);
            r->aSlot[i] = ((uint64_t)off << 32) | v->u.v.n;
            off += 4 * (size_t)v->u.v.n;
            break;
        case VAL_MVA:
            off = (off + 7) & ~(size_t)7;
            if (v->u.m.n) memcpy((char *)r + off, v->u.m.a, 8 * (size_t)v->u.m.n);
            r->aSlot[i] = ((uint64_t)off << 32) | v->u.m.n;
            off += 8 * (size_t)v->u.m.n;
            break;
        }
    }
    return r;
}

/* A new version of row old of t with the columns flagged in aSet
** replaced (a packed old row's text read from t's parts: under t's lock). */
static MemRow *row_build_update(const Table *t, const MemRow *old, const Value *aVal,
                                const uint8_t *aSet) {
    const Schema *s = t->pSchema;
    Value aStack[32] = {{0}};
    Value *a = s->nCol <= 32 ? aStack : calloc((size_t)s->nCol, sizeof(Value));
    if (!a) return NULL;
    RowReader rd;
    row_reader_init_parts(&rd, t->apPart, t->nPart);
    for (int i = 0; i < s->nCol; i++) a[i] = aSet[i] ? aVal[i] : row_read(&rd, s, old, i);
    MemRow *r = row_build(s, old->id, a);
    row_reader_free(&rd);
    if (a != aStack) free(a);
    return r;
}

/* ------------------------------------------------------------------ */
/* Packed rows and their reader                                        */

void row_reader_init_parts(RowReader *rd, Part *const *ap, int n) {
    memset(rd, 0, sizeof(*rd));
    rd->apPart = (void *const *)ap;
    rd->nPart = n;
    rd->iBlock = UINT32_MAX;
}

void row_reader_init(RowReader *rd, const TableSnap *s) {
    row_reader_init_parts(rd, s->t->apPart, s->t->nPart);
}

static void reader_unpin(RowReader *rd) {
    if (rd->pBlk) rowfile_block_unpin(((const Part *)rd->pPart)->pRows, rd->iBlock);
    rd->pBlk = NULL;
    rd->iBlock = UINT32_MAX;
}

void row_reader_free(RowReader *rd) {
    if (rd->pPart) reader_unpin(rd);
    rowfile_dctx_free(rd->pDctx);
    memset(rd, 0, sizeof(*rd));
}

/* The sealed part packed row r is in, with its stored block pinned in
** rd->pBlk; NULL (logged) when that fails. */
static const Part *reader_load(RowReader *rd, const MemRow *r) {
    const Part *p = rd->pPart;
    uint32_t b = r->iStored - 1;
    if (p && rd->pBlk && rd->iBlock == b && rowfile_owns(p->pRows, r)) return p;
    if (!p || !rowfile_owns(p->pRows, r)) {
        p = NULL;
        for (int i = 0; i < rd->nPart && !p; i++) {
            const Part *q = rd->apPart[i];
            if (q->pRows && rowfile_owns(q->pRows, r)) p = q;
        }
        if (!p) {
            LOG_ERROR("row %lld: packed row outside the segments of its reader", (long long)r->id);
            return NULL;
        }
    }
    if (rd->pPart) reader_unpin(rd);
    rd->pPart = p;
    LpError err;
    if (!(rd->pBlk = rowfile_block_pin(p->pRows, b, &rd->pDctx, &err))) {
        LOG_ERROR("row %lld: %s", (long long)r->id, err.zMsg);
        return NULL;
    }
    rd->iBlock = b;
    rd->nBlk = rowfile_block_raw(p->pRows, b);
    return p;
}

Value row_read(RowReader *rd, const Schema *s, const MemRow *r, int iCol) {
    if (iCol == SCHEMA_ID_COL || !r->iStored || s->aCol[iCol].type != COL_TEXT ||
        row_isnull(r, s->nCol, iCol)) {
        return row_get(s, r, iCol);
    }
    if (!reader_load(rd, r)) return value_null();
    uint64_t slot = r->aSlot[iCol];
    uint64_t off = slot >> 32, len = (uint32_t)slot;
    if (off + len >= rd->nBlk || rd->pBlk[off + len] != 0) {
        LOG_ERROR("row %lld: text of column %d does not fit its stored block", (long long)r->id, iCol);
        return value_null();
    }
    return value_str((const char *)rd->pBlk + off, (uint32_t)len);
}

MemRow *row_read_copy(RowReader *rd, const Schema *s, const MemRow *r) {
    if (!r->iStored) {
        MemRow *c = malloc(r->nByte);
        if (c) memcpy(c, r, r->nByte);
        return c;
    }
    if (!reader_load(rd, r)) return NULL;
    Value aStack[32] = {{0}};
    Value *a = s->nCol <= 32 ? aStack : calloc((size_t)s->nCol, sizeof(Value));
    if (!a) return NULL;
    for (int i = 0; i < s->nCol; i++) a[i] = row_read(rd, s, r, i);
    MemRow *c = row_build(s, r->id, a);
    if (a != aStack) free(a);
    return c;
}

MemRow *table_row_copy(const Table *t, const MemRow *r) {
    RowReader rd;
    row_reader_init_parts(&rd, t->apPart, t->nPart);
    MemRow *c = row_read_copy(&rd, t->pSchema, r);
    row_reader_free(&rd);
    return c;
}

/* Bytes r's TEXT values take in a stored block (each NUL-terminated);
** 0 when it has none, and is then written as it is. */
size_t row_text_bytes(const Schema *s, const MemRow *r) {
    size_t n = 0;
    for (int i = 0; i < s->nCol; i++) {
        if (s->aCol[i].type == COL_TEXT && !row_isnull(r, s->nCol, i)) n += (size_t)(uint32_t)r->aSlot[i] + 1;
    }
    return n;
}

/* Copies r's TEXT values (row_text_bytes of them) to dst. */
int row_text_copy(RowReader *rd, const Schema *s, const MemRow *r, uint8_t *dst) {
    for (int i = 0; i < s->nCol; i++) {
        if (s->aCol[i].type != COL_TEXT || row_isnull(r, s->nCol, i)) continue;
        Value v = row_read(rd, s, r, i);
        if (v.kind != VAL_STR) return LP_CORRUPT;
        memcpy(dst, v.u.s.z, v.u.s.n);
        dst[v.u.s.n] = 0;
        dst += (size_t)v.u.s.n + 1;
    }
    return LP_OK;
}

uint32_t row_convert(const Schema *so, const Schema *sn, const int *aMap, const MemRow *r,
                     const RowTextAt *pAt, MemRow *dst) {
    int nCol = sn->nCol;
    size_t nHead = sizeof(MemRow) + 8 * ((size_t)nCol + null_words(nCol));
    uint32_t off = pAt ? pAt->off : 0; /* where the next TEXT value goes in the block */
    if (dst) {
        memset(dst, 0, nHead);
        dst->id = r->id;
        dst->iStored = pAt ? pAt->iBlock + 1 : r->iStored;
    }
    size_t at = nHead;
    for (int j = 0; j < nCol; j++) {
        int i = aMap ? aMap[j] : j;
        if (i < 0 || row_isnull(r, so->nCol, i)) {
            if (dst) dst->aSlot[nCol + j / 64] |= 1ull << (j % 64);
            continue;
        }
        uint64_t slot = r->aSlot[i];
        uint32_t len = (uint32_t)slot;
        const char *src = (const char *)r + (slot >> 32);
        size_t nCopy = 0;
        int bTail = 0; /* the value moves to dst's tail (an empty multi-value too) */
        switch (sn->aCol[j].type) {
        case COL_TEXT:
            if (pAt) { /* into the block, in column order */
                slot = ((uint64_t)off << 32) | len;
                off += len + 1;
                break;
            }
            if (r->iStored) break; /* stays where it is */
            /* fall through */
        case COL_STRING:
        case COL_JSON:
            nCopy = (size_t)len + 1;
            break;
        case COL_VECTOR:
            while (at % 4) {
                if (dst) ((char *)dst)[at] = 0;
                at++;
            }
            nCopy = 4 * (size_t)len;
            break;
        case COL_MULTI:
        case COL_MULTI64:
            while (at % 8) {
                if (dst) ((char *)dst)[at] = 0;
                at++;
            }
            nCopy = 8 * (size_t)len;
            bTail = 1;
            break;
        default:
            break;
        }
        if (dst) {
            if (nCopy) memcpy((char *)dst + at, src, nCopy);
            dst->aSlot[j] = nCopy || bTail ? ((uint64_t)at << 32) | len : slot;
        }
        at += nCopy;
    }
    if (dst) dst->nByte = (uint32_t)at;
    return (uint32_t)at;
}

/* Do so and sn analyse text alike: the same options, but for those that
** only tune queries or memory? */
static int same_analysis(const Schema *so, const Schema *sn) {
    static const char *const azFree[] = {"rt_mem_limit", "rank_profile", "expand_keywords", "type"};
    for (int pass = 0; pass < 2; pass++) {
        const Schema *a = pass ? sn : so, *b = pass ? so : sn;
        for (int i = 0; i < a->nOpt; i++) {
            const char *zName = a->aOpt[i].zName;
            size_t k = 0;
            while (k < LP_ARRAY_SIZE(azFree) && strcmp(zName, azFree[k]) != 0) k++;
            if (k < LP_ARRAY_SIZE(azFree)) continue;
            const char *zOther = schema_option(b, zName);
            if (!zOther || strcmp(zOther, a->aOpt[i].zValue) != 0) return 0;
        }
    }
    return 1;
}

int table_alter_keeps(Table *old, const Schema *sn, const int *aMap) {
    const Schema *so = old->pSchema;
    if (!same_analysis(so, sn)) return 0; /* every text to index again */
    int iText = 0, bSealed = 1;
    pthread_rwlock_rdlock(&old->lock);
    for (int i = 0; i < old->nPart; i++) bSealed &= old->apPart[i]->pRows != NULL;
    pthread_rwlock_unlock(&old->lock);
    if (!bSealed) return 0; /* a flush that failed left a part in memory */
    for (int j = 0; j < sn->nCol; j++) {
        const ColumnSchema *cn = &sn->aCol[j];
        int i = aMap[j];
        if (i < 0) {
            if (cn->type == COL_TEXT || schema_col_is_field(cn)) return 0; /* a new field: text to index */
            continue;
        }
        const ColumnSchema *co = &so->aCol[i];
        if (co->type != cn->type || co->flags != cn->flags) return 0;
        if (cn->type == COL_VECTOR) {
            const VectorOpts *a = &co->vec, *b = &cn->vec;
            if (a->bHnsw != b->bHnsw || a->nDims != b->nDims || a->sim != b->sim || a->hnswM != b->hnswM ||
                a->efConstruction != b->efConstruction) {
                return 0;
            }
        }
        if (cn->type == COL_TEXT) { /* the same fields in the same order */
            while (iText < so->nCol && so->aCol[iText].type != COL_TEXT) iText++;
            if (iText != i) return 0;
            iText++;
        }
    }
    while (iText < so->nCol && so->aCol[iText].type != COL_TEXT) iText++;
    if (iText != so->nCol) return 0; /* a text column dropped */
    /* the same full-text fields in the same order (strings indexed too) */
    int iField = 0;
    for (int j = 0; j < sn->nCol; j++) {
        if (!schema_col_is_field(&sn->aCol[j])) continue;
        while (iField < so->nCol && !schema_col_is_field(&so->aCol[iField])) iField++;
        if (iField != aMap[j]) return 0;
        iField++;
    }
    while (iField < so->nCol && !schema_col_is_field(&so->aCol[iField])) iField++;
    return iField == so->nCol; /* no field dropped */
}

/* ------------------------------------------------------------------ */
/* Snapshots                                                           */

/* ------------------------------------------------------------------ */
/* Parts (table_int.h)                                                 */

void table_part_free(Part *p) {
    if (!p) return;
    for (uint32_t i = 0; p->apRow && i < p->nOrd; i++) free(p->apRow[i]);
    free(p->apRow);
    free(p->aRun);
    idmap_free(&p->idx);
    fts_mem_free(p->pFtsMem);
    fts_segr_close(p->pFtsSeg);
    rowfile_close(p->pRows);
    bitset_free(&p->dead);
    bitset_free(&p->patched);
    for (int v = 0; p->aVec && v < p->nVec; v++) {
        vec_hnsw_free(p->aVec[v].h);
        free(p->aVec[v].aOwnNode);
    }
    free(p->aVec);
    free(p);
}

/* The row at ordinal i of part p, or NULL (none, or deleted). */
static inline const MemRow *part_row(const Part *p, uint32_t i) {
    if (bitset_test(&p->dead, i)) return NULL;
    return p->pRows ? rowfile_row(p->pRows, i) : p->apRow[i];
}

/* The ordinal of id's live row in p, or -1. */
static int64_t part_find(const Part *p, int64_t id) {
    int64_t ord;
    if (id < p->minId || id > p->maxId) return -1;
    if (p->pRows) {
        ord = rowfile_find(p->pRows, id);
    } else {
        uint64_t v;
        ord = idmap_get(&p->idx, (uint64_t)id, &v) ? (int64_t)v : -1;
    }
    return ord >= 0 && !bitset_test(&p->dead, (size_t)ord) ? ord : -1;
}

void table_parts_changed(Table *t) {
    uint64_t base = 0;
    size_t nLive = 0;
    for (int i = 0; i < t->nPart; i++) {
        t->apPart[i]->base = base;
        base += t->apPart[i]->nOrd;
        nLive += t->apPart[i]->nLive;
    }
    t->ramBase = base;
    t->nLiveParts = nLive;
    /* Which parts may hold an id, for lookups in O(log parts): each
    ** part's id runs (a frozen part's [minId, maxId] covers every id). */
    idfence_free(t->pFence);
    t->pFence = NULL;
    const IdRun **apRun = malloc(sizeof(IdRun *) * (size_t)(t->nPart ? t->nPart : 1));
    uint32_t *anRun = malloc(sizeof(uint32_t) * (size_t)(t->nPart ? t->nPart : 1));
    IdRun *aWhole = malloc(sizeof(IdRun) * (size_t)(t->nPart ? t->nPart : 1));
    if (apRun && anRun && aWhole) {
        for (int i = 0; i < t->nPart; i++) {
            const Part *p = t->apPart[i];
            aWhole[i] = (IdRun){p->minId < 1 ? 1 : p->minId, p->maxId};
            apRun[i] = p->aRun ? p->aRun : &aWhole[i];
            anRun[i] = p->aRun ? p->nRun : p->maxId > 0; /* maxId 0: no rows */
        }
        t->pFence = idfence_build(apRun, anRun, t->nPart);
    }
    free(apRun);
    free(anRun);
    free(aWhole);
}

void table_id_fence_stats(Table *t, uint32_t *pnCell, uint32_t *pnMaxParts) {
    pthread_rwlock_rdlock(&t->lock);
    if (t->pFence || t->nPart == 0) {
        idfence_stats(t->pFence, pnCell, pnMaxParts);
    } else { /* no fence (out of memory): every part is asked */
        *pnCell = 0;
        *pnMaxParts = (uint32_t)t->nPart;
    }
    pthread_rwlock_unlock(&t->lock);
}

/* Where the live row with this id is: the RAM segment (*piPart -1, *pOrd
** its slot) or part *piPart at ordinal *pOrd. NULL when there is none. */
static const MemRow *locate(const Table *t, int64_t id, int *piPart, uint64_t *pOrd) {
    uint64_t slot;
    if (idmap_get(&t->idx, (uint64_t)id, &slot)) {
        if (piPart) *piPart = -1;
        if (pOrd) *pOrd = slot;
        return t->slots.a[slot];
    }
    /* Only the parts that may hold id (all of them without a fence),
    ** newest first. */
    uint32_t n = (uint32_t)t->nPart;
    const uint16_t *aSrc = t->pFence ? idfence_lookup(t->pFence, id, &n) : NULL;
    for (uint32_t k = 0; k < n; k++) {
        int i = aSrc ? aSrc[k] : t->nPart - 1 - (int)k;
        int64_t ord = part_find(t->apPart[i], id);
        if (ord < 0) continue;
        if (piPart) *piPart = i;
        if (pOrd) *pOrd = (uint64_t)ord;
        return part_row(t->apPart[i], (uint32_t)ord);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Snapshots                                                           */

TableSnap *table_snapshot(Table *t) {
    TableSnap *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    table_ref(t);
    s->t = t;
    pthread_rwlock_rdlock(&t->lock);
    return s;
}

void table_snapshot_release(TableSnap *s) {
    if (!s) return;
    fts_multi_free(s->pMulti);
    pthread_rwlock_unlock(&s->t->lock);
    table_unref(s->t);
    free(s);
}

size_t table_snap_count(const TableSnap *s) {
    return s->t->nLive + s->t->nLiveParts;
}

size_t table_snap_nslot(const TableSnap *s) {
    return s->t->ramBase + s->t->slots.n;
}

/* The sealed or frozen part holding slot i (< ramBase, nPart > 0): the
** last one whose base <= i (an empty part shares its base with the next). */
static const Part *part_of_slot(const Table *t, size_t i) {
    int lo = 0, hi = t->nPart - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (t->apPart[mid]->base <= i) lo = mid;
        else hi = mid - 1;
    }
    return t->apPart[lo];
}

const MemRow *table_snap_slot(const TableSnap *s, size_t i) {
    const Table *t = s->t;
    if (i >= t->ramBase) return t->slots.a[i - t->ramBase];
    const Part *p = part_of_slot(t, i);
    return part_row(p, (uint32_t)(i - p->base));
}

const uint64_t *table_snap_column(const TableSnap *s, size_t i, int iCol, size_t *pLo, size_t *pHi,
                                  const uint64_t **paNull) {
    const Table *t = s->t;
    if (i >= t->ramBase || !t->nPart) {
        *pLo = t->ramBase;
        *pHi = t->ramBase + t->slots.n;
        return NULL;
    }
    const Part *p = part_of_slot(t, i);
    *pLo = p->base;
    *pHi = p->base + p->nOrd;
    if (!p->pRows || iCol < 0 || iCol >= t->pSchema->nCol) return NULL;
    return rowfile_column(p->pRows, (uint32_t)iCol, paNull);
}

const uint8_t *table_snap_id_index(const TableSnap *s, size_t lo, size_t *pn) {
    const Table *t = s->t;
    *pn = 0;
    if (lo >= t->ramBase || !t->nPart) return NULL;
    const Part *p = part_of_slot(t, lo);
    if (p->base != lo || !p->pRows) return NULL;
    uint32_t n;
    const uint8_t *pIds = rowfile_ids(p->pRows, &n);
    *pn = n;
    return pIds;
}

void table_snap_keep_live(const TableSnap *s, size_t lo, size_t n, uint64_t *aBits) {
    const Part *p = part_of_slot(s->t, lo);
    size_t ord0 = lo - p->base;
    assert(p->pRows && ord0 % 64 == 0 && ord0 + n <= p->nOrd);
    const uint64_t *aDead = p->dead.nBit ? p->dead.aWord + ord0 / 64 : NULL;
    const uint64_t *aNoRow = rowfile_norow(p->pRows);
    if (aNoRow) aNoRow += ord0 / 64;
    for (size_t w = 0; w * 64 < n; w++) {
        aBits[w] &= ~((aDead ? aDead[w] : 0) | (aNoRow ? aNoRow[w] : 0));
    }
}

int table_snap_sorted(const TableSnap *s) {
    return s->t->bSorted;
}

size_t table_snap_bytes(const TableSnap *s) {
    size_t n = s->t->nBytes;
    for (int i = 0; i < s->t->nPart; i++) n += s->t->apPart[i]->nBytes;
    return n;
}

int table_snap_knn_parts(const TableSnap *s, int iCol, TableKnnPart *a, int nMax) {
    const Table *t = s->t;
    int v = 0;
    while (v < t->nVec && t->aVec[v].iCol != iCol) v++;
    if (v == t->nVec) return 0;
    int n = 0;
    for (int i = 0; i < t->nPart && n < nMax; i++) {
        const Part *p = t->apPart[i];
        if (!p->aVec || !p->aVec[v].h || !p->nLive) continue;
        a[n++] = (TableKnnPart){p->aVec[v].h, p->aVec[v].aNode, p->aVec[v].nNode, p->base, p->nLive};
    }
    const TableVec *tv = &t->aVec[v];
    if (n < nMax && t->nLive) {
        a[n++] = (TableKnnPart){tv->h, tv->nodeSlot.a, (uint32_t)tv->nodeSlot.n, t->ramBase, t->nLive};
    }
    return n;
}

int table_snap_nparts(const TableSnap *s) {
    return s->t->nPart + 1;
}

FtsSource *table_snap_fts(TableSnap *s) {
    Table *t = s->t;
    if (!t->pFts) return NULL;
    if (!t->nPart) return fts_mem_source(t->pFts);
    if (s->pMulti) return fts_multi_source(s->pMulti);
    FtsSource *aSrc[t->nPart + 1];
    uint32_t aBase[t->nPart + 1];
    for (int i = 0; i < t->nPart; i++) {
        const Part *p = t->apPart[i];
        aSrc[i] = p->pFtsSeg ? fts_segr_source(p->pFtsSeg) : fts_mem_source(p->pFtsMem);
        aBase[i] = (uint32_t)p->base;
    }
    aSrc[t->nPart] = fts_mem_source(t->pFts);
    aBase[t->nPart] = (uint32_t)t->ramBase;
    s->pMulti = fts_multi_new(aSrc, aBase, t->nPart + 1, NULL);
    return s->pMulti ? fts_multi_source(s->pMulti) : NULL;
}

size_t table_snap_fts_bytes(const TableSnap *s, size_t *pnTerms) {
    if (pnTerms) *pnTerms = s->t->pFts ? fts_mem_nterms(s->t->pFts) : 0;
    size_t n = s->t->pFts ? fts_mem_bytes(s->t->pFts) : 0;
    for (int i = 0; i < s->t->nPart; i++) {
        if (s->t->apPart[i]->pFtsMem) n += fts_mem_bytes(s->t->apPart[i]->pFtsMem);
    }
    return n;
}

const MemRow *table_snap_get(const TableSnap *s, int64_t id) {
    return locate(s->t, id, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

/* The batch's effect on one id, built before anything is changed. */
typedef struct Pending {
    int64_t id;
    MemRow *pNew;           /* the row's new version, or NULL: deleted */
    int iDoc;               /* the op whose text pNew carries (new slot), or -1:
                            ** an UPDATE of a stored row (same slot) */
    int iVecOp;             /* a TOP_SETVEC op whose graph nodes pNew gets, or -1 */
    int bPatch;             /* pNew changes only numeric attributes of a sealed row,
                            ** which phase 3 writes in place (iDoc -1) ... */
    int iPart;              /* ... the row at ordinal ord of part iPart */
    uint32_t ord;
} Pending;

typedef struct Overlay {
    VEC(Pending) a;
    IdMap idx;              /* id -> index in a */
} Overlay;

static void overlay_free(Overlay *o, int bFreeRows) {
    if (bFreeRows) {
        for (size_t i = 0; i < o->a.n; i++) free(o->a.a[i].pNew);
    }
    VEC_FREE(&o->a);
    idmap_free(&o->idx);
}

/* The current version of id as the batch sees it so far. *ppP is set to
** the overlay's entry for id when the batch has already touched it; else
** *piPart tells where the stored version is (-1: the RAM segment, >= 0:
** that part). */
static const MemRow *overlay_lookup(const Table *t, Overlay *o, int64_t id, Pending **ppP,
                                    int *piPart, uint64_t *pOrd) {
    uint64_t k;
    *piPart = -1;
    *pOrd = 0;
    if (idmap_get(&o->idx, (uint64_t)id, &k)) {
        *ppP = &o->a.a[k];
        return o->a.a[k].pNew;
    }
    *ppP = NULL;
    return locate(t, id, piPart, pOrd);
}

/* A row of an older part changed by UPDATE (or SETVEC) gets a new slot
** in the RAM segment, like a REPLACE: its text is analysed into aDoc[k]
** and its vectors go into the RAM graphs (aNode[k*nVec+v]; a node phase 0
** added already is kept). Normally done in phase 0 (prepare_moves); under
** the write lock only when the row changed in between. */
static int move_prepare(Table *t, size_t k, const MemRow *pNew, FtsDocBuf *aDoc, uint32_t *aNode,
                        LpError *err) {
    const Schema *s = t->pSchema;
    for (int f = 0; aDoc && f < t->nFts; f++) {
        Value v = row_get(s, pNew, t->aFtsCol[f]);
        if (v.kind != VAL_STR) continue;
        int rc = fts_docbuf_field(&aDoc[k], t->pAnalyzer, f, v.u.s.z, v.u.s.n, err);
        if (rc != LP_OK) return rc;
    }
    for (int v = 0; v < t->nVec; v++) {
        uint32_t *pNode = &aNode[k * (size_t)t->nVec + (size_t)v];
        Value val = row_get(s, pNew, t->aVec[v].iCol);
        if (*pNode != UINT32_MAX || val.kind != VAL_VEC) continue;
        int rc = vec_hnsw_add(t->aVec[v].h, val.u.v.a, pNode, err);
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

/* Does UPDATE op set only numeric columns? */
static int numeric_only(const Schema *s, const TableOp *op) {
    for (int i = 0; i < s->nCol; i++) {
        if (op->aSet[i] && !coltype_is_numeric(s->aCol[i].type)) return 0;
    }
    return 1;
}

/* The UPDATE and SETVEC targets stored in older parts, prepared before
** the write lock like the rows of INSERT (analysis and graph inserts are
** the expensive part of a move): a copy of the stored version
** (m->apOld[k]), the new version built from it (m->apNew[k]), its text in
** aDoc[k], its vectors' nodes in m->aNode. Phase 1 uses them only when the
** stored version is still byte for byte the copy; otherwise it moves the
** row itself. */
typedef struct Moves {
    const TableOp *aOp;     /* the batch */
    MemRow **apOld, **apNew;
    uint32_t *aNode;        /* nOp * nVec, UINT32_MAX: none */
} Moves;

static void moves_free(Moves *m, size_t nOp) {
    for (size_t k = 0; m->apOld && k < nOp; k++) {
        free(m->apOld[k]);
        free(m->apNew[k]);
    }
    free(m->apOld);
    free(m->apNew);
    free(m->aNode);
    memset(m, 0, sizeof(*m));
}

static int row_identical(const MemRow *a, const MemRow *b) {
    return a->nByte == b->nByte && memcmp(a, b, a->nByte) == 0;
}

static int prepare_moves(Table *t, const TableOp *aOp, size_t nOp, FtsDocBuf *aDoc,
                         const uint32_t *aNode, Moves *m, LpError *err) {
    m->aOp = aOp;
    size_t nUpd = 0;
    for (size_t k = 0; k < nOp; k++) nUpd += aOp[k].kind == TOP_UPDATE || aOp[k].kind == TOP_SETVEC;
    if (!nUpd) return LP_OK;
    size_t nNode = nOp * (size_t)t->nVec;
    if (!(m->apOld = calloc(nOp, sizeof(MemRow *))) || !(m->apNew = calloc(nOp, sizeof(MemRow *))) ||
        (nNode && !(m->aNode = malloc(sizeof(uint32_t) * nNode)))) {
        return lp_err_set(err, LP_NOMEM, "out of memory writing to table '%s'", t->zName);
    }
    /* Starting from phase 0's nodes (a SETVEC's own vector is in its graph
    ** already), so that move_prepare inserts only the others. */
    if (nNode) memcpy(m->aNode, aNode, sizeof(uint32_t) * nNode);
    size_t nCopied = 0;
    pthread_rwlock_rdlock(&t->lock);
    for (size_t k = 0; k < nOp && t->nPart; k++) {
        if (aOp[k].kind != TOP_UPDATE && aOp[k].kind != TOP_SETVEC) continue;
        int iPart;
        const MemRow *r = locate(t, aOp[k].id, &iPart, NULL);
        if (!r || iPart < 0) continue;
        /* An UPDATE of numeric columns only of a row in a sealed segment no
        ** merge reads is made in place: nothing to prepare (should a merge
        ** start meanwhile, phase 1 moves the row itself). */
        const Part *pt = t->apPart[iPart];
        if (aOp[k].kind == TOP_UPDATE && numeric_only(t->pSchema, &aOp[k]) && pt->pRows && !pt->bMerging) continue;
        if (!(m->apOld[k] = malloc(r->nByte))) continue;
        memcpy(m->apOld[k], r, r->nByte);
        /* Built here: a packed row's text is read from its segment. */
        if (!(m->apNew[k] = row_build_update(t, r, aOp[k].aVal, aOp[k].aSet))) {
            free(m->apOld[k]);
            m->apOld[k] = NULL;
            continue;
        }
        nCopied++;
    }
    pthread_rwlock_unlock(&t->lock);
    for (size_t k = 0; k < nOp && nCopied; k++) {
        if (!m->apOld[k]) continue;
        int rc = move_prepare(t, k, m->apNew[k], aDoc, m->aNode, err);
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

/* Takes the prepared move of op k: its new version, and its nodes where
** phase 0 left none. */
static MemRow *take_move(Table *t, Moves *m, size_t k, uint32_t *aNode) {
    MemRow *pNew = m->apNew[k];
    m->apNew[k] = NULL;
    for (int v = 0; v < t->nVec; v++) {
        size_t i = k * (size_t)t->nVec + (size_t)v;
        if (aNode[i] == UINT32_MAX) aNode[i] = m->aNode[i];
    }
    return pNew;
}

/* The new version of the row cur that UPDATE or SETVEC op k changes (p:
** the batch's pending entry for it, else iPart: where it is stored). Text
** is unchanged, so it keeps the pending version's document (*piDoc), or
** the stored slot (-1); a row of an older part moves to the RAM segment
** (*piDoc = k), as phase 0 prepared it if cur is still what it copied,
** else here. NULL when out of memory (*prc LP_OK: the caller reports it)
** or on *prc's error. */
static MemRow *changed_version(Table *t, Moves *mv, size_t k, const MemRow *cur, const Pending *p,
                               int iPart, FtsDocBuf *aDoc, uint32_t *aNode, int *piDoc, int *prc,
                               LpError *err) {
    const TableOp *op = &mv->aOp[k];
    /* A row of an older part (or its change in place pending): it moves. */
    int bFromPart = (!p && iPart >= 0) || (p && p->bPatch);
    *piDoc = p && !p->bPatch ? p->iDoc : -1;
    if (!p && iPart >= 0 && mv->apNew && mv->apNew[k] && row_identical(cur, mv->apOld[k])) {
        *piDoc = (int)k;
        return take_move(t, mv, k, aNode); /* prepared in phase 0 */
    }
    MemRow *pNew = row_build_update(t, cur, op->aVal, op->aSet);
    if (bFromPart && pNew) {
        if (aDoc) fts_docbuf_reset(&aDoc[k]);
        if ((*prc = move_prepare(t, k, pNew, aDoc, aNode, err)) != LP_OK) {
            free(pNew);
            return NULL;
        }
        *piDoc = (int)k;
    }
    return pNew;
}

/* Are a and b the same value, bit for bit? */
static int value_identical(const Value *a, const Value *b) {
    if (a->kind != b->kind) return 0;
    switch (a->kind) {
    case VAL_INT:
        return a->u.i == b->u.i;
    case VAL_FLOAT:
        return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
    case VAL_STR:
        return a->u.s.n == b->u.s.n && memcmp(a->u.s.z, b->u.s.z, a->u.s.n) == 0;
    case VAL_VEC:
        return a->u.v.n == b->u.v.n && memcmp(a->u.v.a, b->u.v.a, 4 * (size_t)a->u.v.n) == 0;
    case VAL_MVA:
        return a->u.m.n == b->u.m.n && memcmp(a->u.m.a, b->u.m.a, 8 * (size_t)a->u.m.n) == 0;
    default:
        return 1;
    }
}

/* Can UPDATE op change row cur in place: its row is in sealed part pt, no
** merge is reading that part, and every column op sets either is numeric
** (a fixed-width slot) or keeps its value (a replayed UPDATE sets them
** all)? */
static int in_place_ok(const Table *t, const Part *pt, const MemRow *cur, const TableOp *op) {
    if (!pt->pRows || pt->bMerging) return 0;
    const Schema *s = t->pSchema;
    RowReader rd;
    row_reader_init_parts(&rd, t->apPart, t->nPart);
    int ok = 1;
    for (int i = 0; i < s->nCol && ok; i++) {
        if (!op->aSet[i] || coltype_is_numeric(s->aCol[i].type)) continue;
        Value v = row_read(&rd, s, cur, i);
        ok = value_identical(&v, &op->aVal[i]);
    }
    row_reader_free(&rd);
    return ok;
}

void row_patch_numeric(const Schema *s, MemRow *r, const uint64_t *a) {
    int nCol = s->nCol;
    uint64_t *aNull = r->aSlot + nCol;
    const uint64_t *aNullNew = a + nCol;
    for (int i = 0; i < nCol; i++) {
        if (!coltype_is_numeric(s->aCol[i].type)) continue;
        uint64_t bit = 1ull << (i % 64);
        r->aSlot[i] = a[i];
        aNull[i / 64] = (aNull[i / 64] & ~bit) | (aNullNew[i / 64] & bit);
    }
}

/* The columns a rows file keeps as arrays: every numeric attribute. */
static int is_fixed_column(const Schema *s, int i) {
    return coltype_is_numeric(s->aCol[i].type);
}

int row_declare_columns(RowFileWriter *w, const Schema *s, LpError *err) {
    uint32_t ai[s->nCol ? s->nCol : 1];
    int n = 0;
    for (int i = 0; i < s->nCol; i++) {
        if (is_fixed_column(s, i)) ai[n++] = (uint32_t)i;
    }
    return rowfile_writer_columns(w, ai, n, err);
}

void row_put_columns(RowFileWriter *w, const Schema *s, uint32_t ord, const MemRow *r) {
    for (int i = 0, j = 0; i < s->nCol; i++) {
        if (!is_fixed_column(s, i)) continue;
        rowfile_writer_value(w, j++, ord, r->aSlot[i], row_isnull(r, s->nCol, i));
    }
}

void part_sync_columns(Part *p, const Schema *s, uint32_t ord) {
    const MemRow *r = rowfile_row(p->pRows, ord);
    for (int i = 0; r && i < s->nCol; i++) {
        uint64_t *aNull;
        uint64_t *a = is_fixed_column(s, i) ? rowfile_column_mut(p->pRows, (uint32_t)i, &aNull) : NULL;
        if (!a) continue;
        int bNull = row_isnull(r, s->nCol, i);
        a[ord] = bNull ? 0 : r->aSlot[i];
        if (bNull) aNull[ord / 64] |= 1ull << (ord % 64);
        else aNull[ord / 64] &= ~(1ull << (ord % 64));
    }
}

/* A byte copy of row r (packed or not) with op's numeric columns set:
** what a change in place writes (and logs). NULL when out of memory. */
static MemRow *numeric_copy(const Schema *s, const MemRow *r, const TableOp *op) {
    MemRow *c = malloc(r->nByte);
    if (!c) return NULL;
    memcpy(c, r, r->nByte);
    uint64_t *aNull = c->aSlot + s->nCol;
    for (int i = 0; i < s->nCol; i++) {
        if (!op->aSet[i] || !coltype_is_numeric(s->aCol[i].type)) continue;
        const Value *v = &op->aVal[i];
        uint64_t bit = 1ull << (i % 64);
        aNull[i / 64] &= ~bit;
        if (v->kind == VAL_NULL) {
            aNull[i / 64] |= bit;
            c->aSlot[i] = 0;
        } else if (v->kind == VAL_FLOAT) {
            memcpy(&c->aSlot[i], &v->u.f, sizeof(double));
        } else {
            c->aSlot[i] = (uint64_t)v->u.i;
        }
    }
    return c;
}

/* A change in place pending in this batch that a later op of the batch
** turns into a move: its full new version (the stored row, read from its
** segment, with the pending numeric slots). NULL when out of memory. */
static MemRow *patch_materialize(Table *t, Pending *p) {
    const MemRow *r = rowfile_row(t->apPart[p->iPart]->pRows, p->ord); /* unchanged till phase 3 */
    MemRow *full = r ? table_row_copy(t, r) : NULL;
    if (!full) return NULL;
    row_patch_numeric(t->pSchema, full, p->pNew->aSlot);
    free(p->pNew);
    p->pNew = full;
    return full;
}

/* Marks ordinal ord of part iPart deleted. */
static void part_kill(Table *t, int iPart, uint64_t ord) {
    Part *p = t->apPart[iPart];
    bitset_set(&p->dead, (size_t)ord);
    p->nLive--;
    p->deadVer++;
    t->nLiveParts--;
}

/* Records id's new version (pNew NULL = deleted) in the overlay. */
/* (A change in place is first made with p NULL: iPart and ord are its
** row's, kept by the batch's later changes in place of it.) */
static int overlay_set(Overlay *o, Pending *p, int64_t id, MemRow *pNew, int iDoc, int bPatch, int iPart,
                       uint64_t ord) {
    if (p) {
        if (p->pNew != pNew) free(p->pNew); /* a version made earlier in this batch */
        p->pNew = pNew;
        p->iDoc = iDoc;
        p->bPatch = bPatch;
        return LP_OK;
    }
    Pending np = {id, pNew, iDoc, -1, bPatch, iPart, (uint32_t)ord};
    if (VEC_PUSH(&o->a, np)) return LP_NOMEM;
    if (idmap_put(&o->idx, (uint64_t)id, o->a.n - 1)) {
        o->a.n--; /* not indexed: drop it again; the caller frees pNew */
        return LP_NOMEM;
    }
    return LP_OK;
}

/* Analyses the indexed text columns of one row's values into d. */
static int analyse_values(const Table *t, const Value *aVal, FtsDocBuf *d, LpError *err) {
    for (int f = 0; f < t->nFts; f++) {
        const Value *v = &aVal[t->aFtsCol[f]];
        if (v->kind != VAL_STR) continue;
        int rc = fts_docbuf_field(d, t->pAnalyzer, f, v->u.s.z, v->u.s.n, err);
        if (rc != LP_OK) return rc;
    }
    return LP_OK;
}

/* Drops NULL slots, renumbers the index and rebuilds the full-text index
** for the new ordinals. Called with the write lock. Best effort: when
** memory runs out it leaves everything as it was. */
static void compact(Table *t) {
    FtsMem *pNewFts = NULL;
    /* Old slot -> new slot, for the graphs' node maps (nodes of dropped
    ** rows become unmapped; the graphs themselves stay as they are). */
    uint32_t *aNewSlot = NULL;
    if (t->nVec && !(aNewSlot = malloc(sizeof(uint32_t) * (t->slots.n ? t->slots.n : 1)))) return;
    if (t->pFts) {
        pNewFts = fts_mem_new(t->nFts);
        FtsDocBuf d = {0};
        uint32_t ord = 0;
        int ok = pNewFts != NULL;
        for (size_t i = 0; i < t->slots.n && ok; i++) {
            const MemRow *r = t->slots.a[i];
            if (!r) continue;
            fts_docbuf_reset(&d);
            for (int f = 0; f < t->nFts && ok; f++) {
                Value v = row_get(t->pSchema, r, t->aFtsCol[f]);
                if (v.kind == VAL_STR) {
                    ok = fts_docbuf_field(&d, t->pAnalyzer, f, v.u.s.z, v.u.s.n, NULL) == LP_OK;
                }
            }
            ok = ok && fts_mem_add(pNewFts, ord++, &d) == LP_OK;
        }
        fts_docbuf_free(&d);
        if (!ok) {
            fts_mem_free(pNewFts);
            free(aNewSlot);
            return;
        }
    }
    size_t j = 0;
    for (size_t i = 0; i < t->slots.n; i++) {
        MemRow *r = t->slots.a[i];
        if (aNewSlot) aNewSlot[i] = r ? (uint32_t)j : UINT32_MAX;
        if (!r) continue;
        t->slots.a[j] = r;
        /* The id is present, so this overwrite cannot need to grow. */
        idmap_put(&t->idx, (uint64_t)r->id, j);
        j++;
    }
    t->slots.n = j;
    for (int v = 0; v < t->nVec; v++) {
        TableVec *tv = &t->aVec[v];
        for (size_t n = 0; n < tv->nodeSlot.n; n++) {
            uint32_t s = tv->nodeSlot.a[n];
            if (s != UINT32_MAX) tv->nodeSlot.a[n] = aNewSlot[s];
        }
    }
    free(aNewSlot);
    if (pNewFts) {
        fts_mem_free(t->pFts);
        t->pFts = pNewFts;
        fts_mem_set_pool(t->pFts, t->pPool);
    }
}

/* Phase 0 of table_apply for the operations [iFrom, iTo): builds the new
** rows of INSERT and REPLACE into apRow and analyses their text into aDoc.
** A job stops at its first failure. */
typedef struct PrepJob {
    const Table *t;
    const TableOp *aOp;
    size_t iFrom, iTo;
    MemRow **apRow;
    FtsDocBuf *aDoc;
    uint32_t *aNode;        /* nOp * nVec: the graph node of each new row's vector */
    int flags;              /* TABLE_APPLY_* */
    int rc;
    LpError err;
} PrepJob;

/* Computes the model columns of op's row that it leaves NULL: *paVal is
** then a copy of the op's values (in *paOwn, with the vectors in *paVec)
** where they are set. */
static int embed_row(const Table *t, const TableOp *op, size_t k, const Value **paVal, Value **paOwn,
                     float **paVec, LpError *err) {
    int nCol = t->pSchema->nCol;
    for (int i = 0; i < t->nEmb; i++) {
        const TableEmbed *e = &t->aEmb[i];
        if (op->aVal[e->iCol].kind != VAL_NULL) continue; /* given: kept as is */
        EmbedModel *m = model_of(t, e->iCol, err);
        if (!m) return err->code;
        int nDims = embed_model_dims(m);
        if (!*paOwn) {
            size_t nVec = 0;
            for (int w = 0; w < t->nEmb; w++) {
                nVec += t->aEmb[w].pModel ? (size_t)embed_model_dims(t->aEmb[w].pModel) : 0;
            }
            if (!(*paOwn = malloc(sizeof(Value) * (size_t)nCol)) ||
                !(*paVec = malloc(sizeof(float) * (nVec ? nVec : 1)))) {
                return lp_err_set(err, LP_NOMEM, "out of memory embedding a row of table '%s'",
                                  t->zName);
            }
        }
        if (*paVal != *paOwn) {
            memcpy(*paOwn, op->aVal, sizeof(Value) * (size_t)nCol);
            *paVal = *paOwn;
        }
        size_t off = 0;
        for (int w = 0; w < i; w++) {
            off += t->aEmb[w].pModel ? (size_t)embed_model_dims(t->aEmb[w].pModel) : 0;
        }
        char *z = NULL;
        size_t n = 0;
        LpError e2;
        lp_err_clear(&e2);
        int rc = embed_source(t, e, op->aVal, &z, &n, &e2);
        if (rc == LP_OK) rc = embed_text(m, z, n, *paVec + off, &e2);
        free(z);
        if (rc != LP_OK) {
            return lp_err_set(err, rc, "column '%s' of row %zu: %s", t->pSchema->aCol[e->iCol].zName,
                              k + 1, e2.zMsg);
        }
        Value v = {0};
        v.kind = VAL_VEC;
        v.u.v.a = *paVec + off;
        v.u.v.n = (uint32_t)nDims;
        (*paOwn)[e->iCol] = v;
    }
    return LP_OK;
}

static void prepare_range(void *arg) {
    PrepJob *j = arg;
    const Table *t = j->t;
    Value *aOwn = NULL;     /* values with computed vectors, reused row to row */
    float *aVec = NULL;
    for (size_t k = j->iFrom; k < j->iTo && j->rc == LP_OK; k++) {
        const TableOp *op = &j->aOp[k];
        if (op->kind == TOP_SETVEC) {
            /* Only the new vector goes into its graph now. */
            for (int v = 0; v < t->nVec && j->rc == LP_OK; v++) {
                const Value *val = &op->aVal[t->aVec[v].iCol];
                uint32_t *pNode = &j->aNode[k * (size_t)t->nVec + (size_t)v];
                if (op->aSet[t->aVec[v].iCol] && val->kind == VAL_VEC) {
                    j->rc = vec_hnsw_add(t->aVec[v].h, val->u.v.a, pNode, &j->err);
                }
            }
            continue;
        }
        if (op->kind != TOP_INSERT && op->kind != TOP_REPLACE) continue;
        const Value *aVal = op->aVal;
        if (t->nEmb && !(j->flags & TABLE_APPLY_NO_EMBED) &&
            (j->rc = embed_row(t, op, k, &aVal, &aOwn, &aVec, &j->err)) != LP_OK) {
            break;
        }
        if (!(j->apRow[k] = row_build(t->pSchema, 0, aVal))) {
            j->rc = lp_err_set(&j->err, LP_NOMEM, "out of memory building a row of table '%s'",
                               t->zName);
        } else if (j->aDoc) {
            j->rc = analyse_values(t, aVal, &j->aDoc[k], &j->err);
        }
        /* The vectors go into the graphs now, outside the lock: inserting
        ** is the expensive part and the graph takes concurrent inserts. A
        ** node whose row is not applied in the end stays unmapped. */
        for (int v = 0; v < t->nVec && j->rc == LP_OK; v++) {
            const Value *val = &aVal[t->aVec[v].iCol];
            uint32_t *pNode = &j->aNode[k * (size_t)t->nVec + (size_t)v];
            if (val->kind == VAL_VEC) j->rc = vec_hnsw_add(t->aVec[v].h, val->u.v.a, pNode, &j->err);
        }
    }
    free(aOwn);
    free(aVec);
}

/* UPDATE may not change a vector that is in a graph: the node keeps the
** old one. REPLACE writes a new row (and node) instead. */
static int refuse_vector_updates(const Table *t, const TableOp *aOp, size_t nOp, int flags,
                                 LpError *err) {
    for (size_t k = 0; k < nOp; k++) {
        if (aOp[k].kind != TOP_UPDATE) continue;
        /* A replay re-applies updates with every column set, the sources of
        ** model columns included (with the values they already have). */
        for (int i = 0; i < t->nEmb && !(flags & TABLE_APPLY_NO_EMBED); i++) {
            const TableEmbed *e = &t->aEmb[i];
            for (int f = 0; f < e->nFrom; f++) {
                if (aOp[k].aSet[e->aFrom[f]] || aOp[k].aSet[e->iCol]) {
                    int c = aOp[k].aSet[e->iCol] ? e->iCol : e->aFrom[f];
                    return lp_err_set(err, LP_UNSUPPORTED,
                                      "UPDATE cannot change column '%s': vector column '%s' is "
                                      "computed from it by its model; REPLACE the row instead",
                                      t->pSchema->aCol[c].zName, t->pSchema->aCol[e->iCol].zName);
                }
            }
        }
        for (int v = 0; v < t->nVec; v++) {
            if (aOp[k].aSet[t->aVec[v].iCol]) {
                return lp_err_set(err, LP_UNSUPPORTED,
                                  "UPDATE cannot change vector column '%s' (knn_type='hnsw'): "
                                  "REPLACE the row instead",
                                  t->pSchema->aCol[t->aVec[v].iCol].zName);
            }
        }
    }
    return LP_OK;
}


/* ------------------------------------------------------------------ */
/* Write-ahead log records                                             */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the WAL writes row blocks as they are in memory: little-endian hosts only"
#endif

enum { WREC_BATCH = 1, WREC_TRUNCATE = 2 };
enum { WENT_PUT = 1, WENT_UPDATE = 2, WENT_DELETE = 3, WENT_PATCH = 4 };

/* Encodes the overlay's effect as a batch record; NULL when out of memory
** or too large. */
static uint8_t *wal_encode(const Schema *sc, const Overlay *o, size_t *pn) {
    uint32_t nHead = (uint32_t)(8 * ((size_t)sc->nCol + null_words(sc->nCol)));
    size_t n = 5;
    for (size_t k = 0; k < o->a.n; k++) {
        const Pending *p = &o->a.a[k];
        n += 1 + (p->bPatch ? 12 + (size_t)nHead : p->pNew ? 4 + (size_t)p->pNew->nByte : 8);
    }
    if (n > WAL_MAX_RECORD) return NULL;
    uint8_t *b = malloc(n), *q = b;
    if (!b) return NULL;
    *q++ = WREC_BATCH;
    put_u32le(q, (uint32_t)o->a.n);
    q += 4;
    for (size_t k = 0; k < o->a.n; k++) {
        const Pending *p = &o->a.a[k];
        if (!p->pNew) {
            *q++ = WENT_DELETE;
            put_u64le(q, (uint64_t)p->id);
            q += 8;
            continue;
        }
        if (p->bPatch) { /* the slots and NULL words, for the numeric columns */
            *q++ = WENT_PATCH;
            put_u64le(q, (uint64_t)p->id);
            put_u32le(q + 8, nHead);
            memcpy(q + 12, p->pNew->aSlot, nHead);
            q += 12 + (size_t)nHead;
            continue;
        }
        *q++ = p->iDoc >= 0 ? WENT_PUT : WENT_UPDATE;
        put_u32le(q, p->pNew->nByte);
        memcpy(q + 4, p->pNew, p->pNew->nByte);
        q += 4 + (size_t)p->pNew->nByte;
    }
    *pn = n;
    return b;
}

/* Checks a row block read back from the log against the schema. */
int table_row_valid(const Schema *s, const MemRow *r, size_t n, const RowFile *f) {
    int nCol = s->nCol;
    size_t nHead = sizeof(MemRow) + 8 * ((size_t)nCol + null_words(nCol));
    if (n < nHead || r->nByte != n || r->id <= 0) return 0;
    uint64_t nRaw = 0;
    if (r->iStored) {
        if (!f || r->iStored > rowfile_nblock(f)) return 0;
        nRaw = rowfile_block_raw(f, r->iStored - 1);
    }
    for (int i = 0; i < nCol; i++) {
        if (row_isnull(r, nCol, i)) continue;
        uint64_t slot = r->aSlot[i];
        uint64_t off = slot >> 32, len = (uint32_t)slot;
        switch (s->aCol[i].type) {
        case COL_TEXT:
            if (r->iStored) { /* the terminator is checked when read */
                if (off + len + 1 > nRaw) return 0;
                break;
            }
            /* fall through */
        case COL_STRING:
        case COL_JSON:
            if (off < nHead || off + len + 1 > n || ((const char *)r)[off + len] != 0) return 0;
            break;
        case COL_VECTOR: {
            const VectorOpts *vo = &s->aCol[i].vec;
            if (off < nHead || off % 4 || off + 4 * len > n) return 0;
            if (vo->nDims > 0 && len != (uint64_t)vo->nDims) return 0;
            const float *a = (const float *)(const void *)((const char *)r + off);
            for (uint64_t j = 0; j < len; j++) {
                if (!isfinite(a[j])) return 0;
            }
            break;
        }
        case COL_MULTI:
        case COL_MULTI64: { /* ascending, no repeats; MULTI's unsigned 32-bit */
            if (off < nHead || off % 8 || off + 8 * len > n) return 0;
            const int64_t *a = (const int64_t *)(const void *)((const char *)r + off);
            for (uint64_t j = 0; j < len; j++) {
                if (j && a[j] <= a[j - 1]) return 0;
                if (s->aCol[i].type == COL_MULTI && (a[j] < 0 || a[j] > (int64_t)UINT32_MAX)) return 0;
            }
            break;
        }
        default:
            break;
        }
    }
    return 1;
}

/* Replays one record (a WalRecordFn). */
static int wal_replay_record(void *ctx, uint64_t lsn, const uint8_t *p, size_t n, LpError *err) {
    Table *t = ctx;
    const Schema *s = t->pSchema;
    if (n >= 1 && p[0] == WREC_TRUNCATE && n == 1) return table_truncate(t, err);
    if (n < 5 || p[0] != WREC_BATCH) {
        return lp_err_set(err, LP_CORRUPT, "table '%s': WAL record %llu has an unknown type %d",
                          t->zName, (unsigned long long)lsn, n ? p[0] : -1);
    }
    uint32_t nEnt = get_u32le(p + 1);
    if (nEnt > (n - 5) / 9) {
        return lp_err_set(err, LP_CORRUPT, "table '%s': WAL record %llu is malformed (entry count)",
                          t->zName, (unsigned long long)lsn);
    }
    size_t nCol = (size_t)s->nCol;
    /* An update entry may also carry a vector its row lacked (REBUILD
    ** EMBEDDINGS): one TOP_SETVEC per graph column after its UPDATE. */
    size_t nOpMax = (size_t)nEnt * (1 + (size_t)t->nVec);
    TableOp *aOp = calloc(nOpMax ? nOpMax : 1, sizeof(TableOp));
    uint8_t *aSetVec = calloc((size_t)(t->nVec ? t->nVec : 1) * (nCol ? nCol : 1), 1);
    size_t nOpUsed = 0;
    Value *aVal = calloc(nEnt * (nCol ? nCol : 1), sizeof(Value));
    MemRow **apRow = calloc(nEnt ? nEnt : 1, sizeof(MemRow *));
    uint8_t *aSet = calloc(nCol ? nCol : 1, 1);
    uint8_t *aSetNum = calloc(nCol ? nCol : 1, 1);
    int rc = LP_OK;
    if (!aOp || !aVal || !apRow || !aSet || !aSetVec || !aSetNum) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory replaying the WAL of table '%s'", t->zName);
        goto done;
    }
    for (size_t i = 0; i < nCol; i++) {
        aSet[i] = 1;
        aSetNum[i] = coltype_is_numeric(s->aCol[i].type);
    }
    for (int v = 0; v < t->nVec; v++) {
        aSet[t->aVec[v].iCol] = 0;
        aSetVec[(size_t)v * nCol + (size_t)t->aVec[v].iCol] = 1;
    }
    size_t off = 5;
    for (uint32_t k = 0; k < nEnt && rc == LP_OK; k++) {
        int kind = off < n ? p[off] : 0;
        off++;
        if (kind == WENT_DELETE && n - off >= 8) {
            aOp[nOpUsed] = (TableOp){TOP_DELETE, (int64_t)get_u64le(p + off), NULL, NULL, NULL, NULL};
            off += 8;
            if (aOp[nOpUsed++].id <= 0) rc = LP_CORRUPT;
            continue;
        }
        if (kind == WENT_PATCH) { /* UPDATE of the numeric columns */
            uint32_t nHead = (uint32_t)(8 * (nCol + null_words(s->nCol)));
            if (n - off < 12 || get_u32le(p + off + 8) != nHead || n - off - 12 < nHead) {
                rc = LP_CORRUPT;
                break;
            }
            int64_t id = (int64_t)get_u64le(p + off);
            const uint8_t *h = p + off + 12;
            off += 12 + (size_t)nHead;
            Value *a = aVal + k * nCol;
            for (size_t i = 0; i < nCol; i++) {
                if (!coltype_is_numeric(s->aCol[i].type)) continue;
                uint64_t nullw = get_u64le(h + 8 * (nCol + i / 64));
                a[i] = (nullw >> (i % 64)) & 1 ? value_null() : slot_value(s, (int)i, get_u64le(h + 8 * i));
            }
            aOp[nOpUsed++] = (TableOp){TOP_UPDATE, id, a, aSetNum, NULL, NULL};
            if (id <= 0) rc = LP_CORRUPT;
            continue;
        }
        if ((kind != WENT_PUT && kind != WENT_UPDATE) || n - off < 4) {
            rc = LP_CORRUPT;
            break;
        }
        uint32_t nByte = get_u32le(p + off);
        off += 4;
        if (n - off < nByte || nByte < sizeof(MemRow)) {
            rc = LP_CORRUPT;
            break;
        }
        /* Copied: the log's bytes are not aligned for a row block. */
        MemRow *r = apRow[k] = malloc(nByte);
        if (!r) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory replaying the WAL of table '%s'", t->zName);
            break;
        }
        memcpy(r, p + off, nByte);
        off += nByte;
        if (!table_row_valid(s, r, nByte, NULL)) {
            rc = LP_CORRUPT;
            break;
        }
        Value *a = aVal + k * nCol;
        for (size_t i = 0; i < nCol; i++) a[i] = row_get(s, r, (int)i);
        aOp[nOpUsed++] = (TableOp){kind == WENT_PUT ? TOP_REPLACE : TOP_UPDATE, r->id, a,
                                   kind == WENT_PUT ? NULL : aSet, NULL, NULL};
        for (int v = 0; kind == WENT_UPDATE && v < t->nVec; v++) {
            if (a[t->aVec[v].iCol].kind == VAL_VEC) {
                aOp[nOpUsed++] = (TableOp){TOP_SETVEC, r->id, a, aSetVec + (size_t)v * nCol, NULL, NULL};
            }
        }
    }
    if (rc == LP_CORRUPT || (rc == LP_OK && off != n)) {
        rc = lp_err_set(err, LP_CORRUPT, "table '%s': WAL record %llu is malformed (its checksum "
                        "matches, but its rows do not fit the table's schema)",
                        t->zName, (unsigned long long)lsn);
    }
    if (rc == LP_OK && (rc = table_apply_ex(t, aOp, nOpUsed, TABLE_APPLY_NO_EMBED, NULL, err)) != LP_OK &&
        rc != LP_NOMEM) {
        /* Only a record this build did not write can fail to apply. */
        char zWhy[LP_ERRMSG_MAX];
        snprintf(zWhy, sizeof(zWhy), "%s", err ? err->zMsg : "");
        rc = lp_err_set(err, LP_CORRUPT, "table '%s': WAL record %llu does not apply: %s", t->zName,
                        (unsigned long long)lsn, zWhy);
    }
done:
    for (uint32_t k = 0; apRow && k < nEnt; k++) free(apRow[k]);
    free(apRow);
    free(aOp);
    free(aVal);
    free(aSet);
    free(aSetNum);
    free(aSetVec);
    return rc;
}

int table_open_wal(Table *t, const char *zDir, WalSync sync, LpError *err) {
    return table_open_wal_from(t, zDir, sync, 0, err);
}

int table_open_wal_from(Table *t, const char *zDir, WalSync sync, uint64_t firstLsn, LpError *err) {
    Wal *w = NULL;
    int rc = wal_open(zDir, sync, firstLsn, wal_replay_record, t, &w, err);
    if (rc != LP_OK) return rc;
    t->pWal = w;
    /* The replayed rows' graphs, before any search or insert runs. */
    for (int v = 0; rc == LP_OK && v < t->nVec; v++) {
        if (t->aVec[v].h) rc = table_graph_repair(t, t->aVec[v].h, t->aVec[v].iCol, UINT64_MAX, err);
    }
    return rc;
}

uint64_t table_wal_syncs(const Table *t) {
    return t->pWal ? wal_sync_count(t->pWal) : 0;
}

uint64_t table_wal_bytes(const Table *t) {
    return t->pWal ? wal_bytes(t->pWal) : 0;
}

/* A write with at least this much text is split across the pool. */
#define PREP_PARALLEL_BYTES (64 * 1024)

/* Phase 0 of table_apply over every operation. A large write is cut into
** a few contiguous ranges run on the table's pool and this thread; the
** error reported is the earliest failing operation's, as a serial run
** would report it. */
static int prepare_rows(const Table *t, const TableOp *aOp, size_t nOp, MemRow **apRow,
                        FtsDocBuf *aDoc, uint32_t *aNode, int flags, LpError *err) {
    /* Worth sharing out: graph inserts (the heavy part of a row), or
    ** enough text to analyse. */
    int bShare = t->pPool && ((nOp >= 8 && t->nVec > 0) ||
                              (t->nEmb && !(flags & TABLE_APPLY_NO_EMBED) &&
                               nOp > (size_t)t->nEmbedInline));
    if (t->pPool && nOp >= 8 && !bShare && aDoc) {
        size_t nText = 0;
        for (size_t k = 0; k < nOp; k++) {
            if (aOp[k].kind != TOP_INSERT && aOp[k].kind != TOP_REPLACE) continue;
            for (int f = 0; f < t->nFts; f++) {
                const Value *v = &aOp[k].aVal[t->aFtsCol[f]];
                if (v->kind == VAL_STR) nText += v->u.s.n;
            }
        }
        bShare = nText >= PREP_PARALLEL_BYTES;
    }
    /* A few ranges per thread even out rows of uneven length. Rows that
    ** are embedded cost a model run each (tens of ms): one row per job,
    ** so that the statement's last runs do not leave cores idle behind a
    ** longer range (measured: 86% -> see docs/benchmarks/embed.md). */
    int bEmbed = t->nEmb && !(flags & TABLE_APPLY_NO_EMBED);
    size_t nJob = !bShare ? 1 : bEmbed ? nOp : (size_t)(tpool_size(t->pPool) + 1) * 4;
    if (nJob > nOp) nJob = nOp ? nOp : 1;
    PrepJob one = {0}, *aJob = nJob > 1 ? calloc(nJob, sizeof(PrepJob)) : &one;
    if (!aJob) {
        aJob = &one;
        nJob = 1;
    }
    for (size_t i = 0; i < nJob; i++) {
        aJob[i] = (PrepJob){t, aOp, nOp * i / nJob, nOp * (i + 1) / nJob, apRow, aDoc, aNode, flags,
                            LP_OK, {0}};
    }
    if (nJob == 1) {
        prepare_range(&aJob[0]);
    } else {
        TpoolGroup g;
        tpool_group_init(&g, t->pPool);
        for (size_t i = 0; i < nJob; i++) {
            /* A task the pool cannot queue runs here instead. */
            if (tpool_group_submit(&g, prepare_range, &aJob[i]) != LP_OK) prepare_range(&aJob[i]);
        }
        tpool_group_wait(&g);
    }
    int rc = LP_OK;
    for (size_t i = 0; i < nJob && rc == LP_OK; i++) {
        if (aJob[i].rc != LP_OK) {
            rc = aJob[i].rc;
            if (err) *err = aJob[i].err;
        }
    }
    if (aJob != &one) free(aJob);
    return rc;
}

int table_apply(Table *t, const TableOp *aOp, size_t nOp, TableApplyOut *pOut, LpError *err) {
    return table_apply_ex(t, aOp, nOp, 0, pOut, err);
}

/* Are the columns of row r of t other than iSkip (with aOnly, only those
** it flags) equal to aVal's? (Under t's lock: a packed row's text is read
** from its segment.) */
static int row_same(const Table *t, const MemRow *r, const Value *aVal, int iSkip, const uint8_t *aOnly) {
    const Schema *s = t->pSchema;
    RowReader rd;
    row_reader_init_parts(&rd, t->apPart, t->nPart);
    int bSame = 1;
    for (int i = 0; i < s->nCol && bSame; i++) {
        if (i == iSkip || (aOnly && !aOnly[i])) continue;
        Value v = row_read(&rd, s, r, i);
        bSame = value_identical(&v, &aVal[i]);
    }
    row_reader_free(&rd);
    return bSame;
}

int table_apply_ex(Table *t, const TableOp *aOp, size_t nOp, int flags, TableApplyOut *pOut,
                   LpError *err) {
    const Schema *s = t->pSchema;
    Overlay o = {0};
    Moves mv = {0};
    if (pOut) pOut->lsnWait = 0;
    int rc = LP_OK;
    uint64_t nAffected = 0;
    int64_t iFirstAuto = 0;

    /* Phase 0, without the lock: build the new rows of INSERT and REPLACE
    ** and analyse their text (ids are set later, under the lock). */
    MemRow **apRow = calloc(nOp ? nOp : 1, sizeof(MemRow *));
    FtsDocBuf *aDoc = t->pFts ? calloc(nOp ? nOp : 1, sizeof(FtsDocBuf)) : NULL;
    int bGraphLocked = 0;
    uint32_t *aNode = t->nVec ? malloc(sizeof(uint32_t) * (nOp ? nOp : 1) * (size_t)t->nVec) : NULL;
    for (size_t i = 0; aNode && i < nOp * (size_t)t->nVec; i++) aNode[i] = UINT32_MAX;
    if (!apRow || (t->pFts && !aDoc) || (t->nVec && !aNode)) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory writing to table '%s'", t->zName);
    } else if ((rc = refuse_vector_updates(t, aOp, nOp, flags, err)) == LP_OK) {
        /* The nodes this batch adds must be mapped in the graph they went
        ** into: no TRUNCATE may swap it until the batch is done. */
        if (t->nVec) pthread_rwlock_rdlock(&t->graphLock);
        bGraphLocked = t->nVec > 0;
        rc = prepare_rows(t, aOp, nOp, apRow, aDoc, aNode, flags, err);
        if (rc == LP_OK) rc = prepare_moves(t, aOp, nOp, aDoc, aNode, &mv, err);
    }
    if (rc != LP_OK) goto done_unlocked;

    pthread_rwlock_wrlock(&t->lock);
    int64_t nextId = t->nextId;
    if (t->bRetired) {
        rc = lp_err_set(err, LP_BUSY, "table '%s' was altered while this statement ran: run it again",
                        t->zName);
    }

    /* Phase 1: work out the batch's effect without touching the table.
    ** Each operation yields the id's new version (NULL: deleted), or is a
    ** no-op (DELETE/UPDATE of a missing id). */
    for (size_t k = 0; k < nOp && rc == LP_OK; k++) {
        const TableOp *op = &aOp[k];
        Pending *p;
        const MemRow *cur;
        MemRow *pNew = NULL;
        int iDoc = -1, bPatch = 0;
        int64_t id = op->id;
        if ((op->kind == TOP_INSERT || op->kind == TOP_REPLACE) && id == 0) {
            if (nextId <= 0) { /* wrapped past INT64_MAX */
                rc = lp_err_set(err, LP_RANGE, "automatic ids exhausted in table '%s'", t->zName);
                break;
            }
            id = nextId;
            if (!iFirstAuto) iFirstAuto = id;
        }
        int iPart;
        uint64_t ord;
        cur = overlay_lookup(t, &o, id, &p, &iPart, &ord);
        switch (op->kind) {
        case TOP_INSERT:
        case TOP_REPLACE:
            if (cur && op->kind == TOP_INSERT) {
                rc = lp_err_set(err, LP_EXISTS, "duplicate id '%lld'", (long long)id);
                continue;
            }
            pNew = apRow[k];
            apRow[k] = NULL; /* the overlay owns it now */
            pNew->id = id;
            iDoc = (int)k;
            if (id >= nextId) nextId = id == INT64_MAX ? INT64_MIN : id + 1;
            break;
        case TOP_DELETE:
            if (!cur) continue;
            break;
        case TOP_UPDATE:
            if (!cur) continue;
            /* A compare-and-set: is the row as the caller read it? One an
            ** earlier op of this batch changed is not (the caller reads it
            ** again and retries). */
            if (op->aWas && (p || !row_same(t, cur, op->aWas, -1, op->aSet))) {
                if (op->pbStale) *op->pbStale = 1;
                continue;
            }
            if ((!p && iPart >= 0 && in_place_ok(t, t->apPart[iPart], cur, op)) ||
                (p && p->bPatch && numeric_only(s, op))) {
                pNew = numeric_copy(s, cur, op); /* written in place by phase 3 */
                bPatch = 1;
                break;
            }
            if (p && p->bPatch && !(cur = patch_materialize(t, p))) break; /* out of memory */
            pNew = changed_version(t, &mv, k, cur, p, iPart, aDoc, aNode, &iDoc, &rc, err);
            if (rc != LP_OK) continue;
            break;
        case TOP_SETVEC: {
            /* Only onto a row that still has no vector there and is
            ** otherwise as the vector was computed from. */
            int iCol = 0;
            while (iCol < s->nCol && !op->aSet[iCol]) iCol++;
            if (cur && p && p->bPatch && !(cur = patch_materialize(t, p))) break; /* out of memory */
            if (!cur || iCol == s->nCol || row_get(s, cur, iCol).kind != VAL_NULL ||
                !row_same(t, cur, op->aVal, iCol, NULL)) {
                continue;
            }
            pNew = changed_version(t, &mv, k, cur, p, iPart, aDoc, aNode, &iDoc, &rc, err);
            if (rc != LP_OK) continue;
            break;
        }
        }
        if ((op->kind != TOP_DELETE && !pNew) || overlay_set(&o, p, id, pNew, iDoc, bPatch, iPart, ord)) {
            free(pNew);
            rc = lp_err_set(err, LP_NOMEM, "out of memory writing a row of table '%s'", t->zName);
            continue;
        }
        if (op->kind == TOP_SETVEC) (p ? p : &o.a.a[o.a.n - 1])->iVecOp = (int)k;
        nAffected++;
    }

    /* Phase 2: reserve for the worst case, so the changes cannot fail. */
    size_t nAppend = 0;
    for (size_t k = 0; k < o.a.n; k++) nAppend += o.a.a[k].iDoc >= 0;
    for (size_t k = 0; k < o.a.n && rc == LP_OK; k++) {
        if (!o.a.a[k].bPatch) continue;
        Part *pt = t->apPart[o.a.a[k].iPart];
        if (!pt->patched.nBit && bitset_init(&pt->patched, pt->nOrd) != LP_OK) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory updating table '%s'", t->zName);
        }
    }
    if (rc == LP_OK && (VEC_RESERVE(&t->slots, t->slots.n + nAppend) ||
                        idmap_reserve(&t->idx, idmap_count(&t->idx) + o.a.n))) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory growing table '%s'", t->zName);
    }
    /* The documents to index, in the order phase 3 appends them. */
    FtsDocBuf **apApp = NULL;
    uint32_t *aOrd = NULL;
    int nApp = 0;
    if (rc == LP_OK && t->pFts && nAppend) {
        apApp = malloc(sizeof(FtsDocBuf *) * nAppend);
        aOrd = malloc(sizeof(uint32_t) * nAppend);
        for (size_t k = 0; apApp && k < o.a.n; k++) {
            if (o.a.a[k].iDoc >= 0) apApp[nApp++] = &aDoc[o.a.a[k].iDoc];
        }
        if (!apApp || !aOrd ||
            fts_mem_reserve(t->pFts, apApp, nApp, (uint32_t)(t->slots.n + nAppend - 1))) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory indexing table '%s'", t->zName);
        }
        nApp = 0; /* counted again as phase 3 assigns ordinals */
    }
    /* Every node added so far (by this batch or one still in its phase 0)
    ** gets a map entry, unmapped until its batch applies. */
    for (int v = 0; v < t->nVec && rc == LP_OK; v++) {
        TableVec *tv = &t->aVec[v];
        uint32_t n = vec_hnsw_count(tv->h);
        if (VEC_RESERVE(&tv->nodeSlot, n)) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory indexing table '%s'", t->zName);
            break;
        }
        while (tv->nodeSlot.n < n) tv->nodeSlot.a[tv->nodeSlot.n++] = UINT32_MAX;
    }
    /* The log record, last of the steps that may fail. */
    uint64_t lsn = 0;
    if (rc == LP_OK && t->pWal && o.a.n) {
        size_t nRec = 0;
        uint8_t *pRec = wal_encode(s, &o, &nRec);
        if (!pRec) {
            rc = lp_err_set(err, LP_LIMIT, "a write of %zu rows to table '%s' is too large to log "
                            "at once: split it", o.a.n, t->zName);
        } else {
            rc = wal_append(t->pWal, pRec, nRec, &lsn, err);
            free(pRec);
        }
    }
    if (rc != LP_OK) {
        pthread_rwlock_unlock(&t->lock);
        overlay_free(&o, 1);
        free(apApp);
        free(aOrd);
        goto done_unlocked;
    }

    /* Phase 3: apply. Nothing below can fail. */
    size_t nDead = t->slots.n - t->nLive;
    for (size_t k = 0; k < o.a.n; k++) {
        Pending *p = &o.a.a[k];
        uint64_t slot;
        if (p->bPatch) { /* numeric slots written in the mapped row */
            Part *pt = t->apPart[p->iPart];
            row_patch_numeric(s, rowfile_row_mut(pt->pRows, p->ord), p->pNew->aSlot);
            part_sync_columns(pt, s, p->ord);
            bitset_set(&pt->patched, p->ord);
            pt->patchVer++;
            __atomic_fetch_add(&t->nInPlace, 1, __ATOMIC_RELAXED);
            free(p->pNew);
            p->pNew = NULL;
            continue;
        }
        int bHad = idmap_get(&t->idx, (uint64_t)p->id, &slot);
        if (bHad && p->pNew && p->iDoc < 0) {
            /* UPDATE of a stored row: same slot, same text */
            MemRow *old = t->slots.a[slot];
            t->nBytes += p->pNew->nByte;
            t->nBytes -= old->nByte;
            free(old);
            t->slots.a[slot] = p->pNew;
            for (int v = 0; p->iVecOp >= 0 && v < t->nVec; v++) {
                uint32_t node = aNode[(size_t)p->iVecOp * (size_t)t->nVec + (size_t)v];
                if (node != UINT32_MAX) t->aVec[v].nodeSlot.a[node] = (uint32_t)slot;
            }
        } else {
            if (bHad) { /* the old version becomes a tombstone */
                MemRow *old = t->slots.a[slot];
                t->nBytes -= old->nByte;
                free(old);
                t->slots.a[slot] = NULL;
                t->nLive--;
                nDead++;
                if (!p->pNew) idmap_del(&t->idx, (uint64_t)p->id, NULL);
            } else {
                int iPart;
                uint64_t ord;
                if (locate(t, p->id, &iPart, &ord) && iPart >= 0) part_kill(t, iPart, ord);
            }
            if (p->pNew) {
                uint32_t ord = (uint32_t)t->slots.n;
                if (p->id <= t->lastId) t->bSorted = 0;
                t->lastId = p->id;
                t->slots.a[t->slots.n++] = p->pNew;
                idmap_put(&t->idx, (uint64_t)p->id, ord);
                t->nLive++;
                t->nBytes += p->pNew->nByte;
                if (t->pFts) {
                    apApp[nApp] = &aDoc[p->iDoc];
                    aOrd[nApp++] = ord;
                }
                for (int v = 0; v < t->nVec; v++) {
                    uint32_t node = aNode[(size_t)p->iDoc * (size_t)t->nVec + (size_t)v];
                    if (node == UINT32_MAX && p->iVecOp >= 0) {
                        node = aNode[(size_t)p->iVecOp * (size_t)t->nVec + (size_t)v];
                    }
                    if (node != UINT32_MAX) t->aVec[v].nodeSlot.a[node] = ord;
                }
            }
        }
        p->pNew = NULL; /* now the table's */
    }
    /* The full-text postings of the new rows, in ordinal order. */
    if (nApp) fts_mem_append_batch(t->pFts, aOrd, apApp, nApp);
    free(apApp);
    free(aOrd);
    t->nextId = nextId;
    if (nDead > 1024 && nDead > t->nLive) compact(t);
    int bFlush = table_ram_over_limit(t); /* asked while the lock is held anyway */
    pthread_rwlock_unlock(&t->lock);
    overlay_free(&o, 0);
    /* Durable before acknowledged; concurrent writers share the sync. */
    if (lsn && (flags & TABLE_APPLY_DEFER_COMMIT)) {
        if (wal_commit_would_wait(t->pWal, lsn)) pOut->lsnWait = lsn;
    } else if (lsn) {
        rc = wal_commit(t->pWal, lsn, err);
    }
    if (bFlush) table_start_flush(t);

    if (pOut) {
        pOut->nAffected = nAffected;
        pOut->iFirstAutoId = iFirstAuto;
    }
done_unlocked:
    for (size_t k = 0; k < nOp; k++) {
        if (apRow) free(apRow[k]);
        if (aDoc) fts_docbuf_free(&aDoc[k]);
    }
    free(apRow);
    free(aDoc);
    free(aNode);
    moves_free(&mv, nOp);
    if (bGraphLocked) pthread_rwlock_unlock(&t->graphLock);
    return rc;
}

int table_truncate(Table *t, LpError *err) {
    FtsMem *m = NULL;
    if (t->pFts && !(m = fts_mem_new(t->nFts))) {
        return lp_err_set(err, LP_NOMEM, "out of memory truncating table '%s'", t->zName);
    }
    VecHnsw **apNew = t->nVec ? calloc((size_t)t->nVec, sizeof(VecHnsw *)) : NULL;
    for (int v = 0; v < t->nVec; v++) {
        if (!apNew || !(apNew[v] = table_new_graph(&t->pSchema->aCol[t->aVec[v].iCol], err))) {
            for (int w = 0; apNew && w < v; w++) vec_hnsw_free(apNew[w]);
            free(apNew);
            fts_mem_free(m);
            return lp_err_set(err, LP_NOMEM, "out of memory truncating table '%s'", t->zName);
        }
    }
    /* With segments on disk (not while replaying: zDir is set after),
    ** no flush may run meanwhile, and the manifest must drop them. */
    int bStore = t->zDir != NULL;
    if (bStore) {
        pthread_mutex_lock(&t->mergeMu);
        pthread_mutex_lock(&t->flushMu);
    }
    if (t->nVec) pthread_rwlock_wrlock(&t->graphLock); /* no write in flight */
    pthread_rwlock_wrlock(&t->lock);
    uint64_t lsn = 0;
    static const uint8_t rec[1] = {WREC_TRUNCATE};
    int rc = t->bRetired ? lp_err_set(err, LP_BUSY, "table '%s' was altered while this statement "
                                      "ran: run it again", t->zName)
             : t->pWal ? wal_append(t->pWal, rec, 1, &lsn, err) : LP_OK;
    if (rc != LP_OK) {
        pthread_rwlock_unlock(&t->lock);
        if (t->nVec) pthread_rwlock_unlock(&t->graphLock);
        if (bStore) {
            pthread_mutex_unlock(&t->flushMu);
            pthread_mutex_unlock(&t->mergeMu);
        }
        for (int v = 0; v < t->nVec; v++) vec_hnsw_free(apNew[v]);
        free(apNew);
        fts_mem_free(m);
        return rc;
    }
    free_rows(t);
    Part **apOld = t->apPart;
    int nOld = t->nPart;
    t->apPart = NULL;
    t->nPart = 0;
    table_parts_changed(t);
    if (m) {
        fts_mem_free(t->pFts);
        t->pFts = m;
        fts_mem_set_pool(t->pFts, t->pPool);
    }
    for (int v = 0; v < t->nVec; v++) {
        vec_hnsw_free(t->aVec[v].h);
        t->aVec[v].h = apNew[v];
        t->aVec[v].nodeSlot.n = 0;
    }
    free(apNew);
    t->nextId = 1;
    pthread_rwlock_unlock(&t->lock);
    if (t->nVec) pthread_rwlock_unlock(&t->graphLock);
    for (int i = 0; i < nOld; i++) table_part_free(apOld[i]);
    free(apOld);
    rc = lsn ? wal_commit(t->pWal, lsn, err) : LP_OK;
    if (rc == LP_OK && bStore && nOld) rc = table_forget_segments(t, lsn, err);
    if (bStore) {
        pthread_mutex_unlock(&t->flushMu);
        pthread_mutex_unlock(&t->mergeMu);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* ALTER TABLE and REBUILD EMBEDDINGS support                          */

void table_retire(Table *t, int bOn) {
    pthread_rwlock_wrlock(&t->lock);
    __atomic_store_n(&t->bRetired, bOn, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&t->lock);
}

int64_t table_next_id(Table *t) {
    pthread_rwlock_rdlock(&t->lock);
    int64_t n = t->nextId;
    pthread_rwlock_unlock(&t->lock);
    return n;
}

void table_raise_next_id(Table *t, int64_t id) {
    pthread_rwlock_wrlock(&t->lock);
    if (id > t->nextId || (id < 0 && t->nextId > 0)) t->nextId = id; /* < 0: exhausted */
    pthread_rwlock_unlock(&t->lock);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int list_ids(Table *t, int bRamOnly, int64_t **paId, size_t *pn, LpError *err) {
    pthread_rwlock_rdlock(&t->lock);
    size_t nAll = t->nLive + (bRamOnly ? 0 : t->nLiveParts);
    int64_t *a = malloc(sizeof(int64_t) * (nAll ? nAll : 1));
    size_t n = 0;
    for (int i = 0; a && !bRamOnly && i < t->nPart; i++) {
        const Part *p = t->apPart[i];
        for (uint32_t k = 0; k < p->nOrd; k++) {
            const MemRow *r = part_row(p, k);
            if (r) a[n++] = r->id;
        }
    }
    for (size_t i = 0; a && i < t->slots.n; i++) {
        if (t->slots.a[i]) a[n++] = t->slots.a[i]->id;
    }
    int bSorted = t->bSorted;
    pthread_rwlock_unlock(&t->lock);
    if (!a) return lp_err_set(err, LP_NOMEM, "out of memory listing the rows of table '%s'", t->zName);
    if (!bSorted || bRamOnly) qsort(a, n, sizeof(int64_t), cmp_i64);
    *paId = a;
    *pn = n;
    return LP_OK;
}

int table_ids(Table *t, int64_t **paId, size_t *pn, LpError *err) {
    return list_ids(t, 0, paId, pn, err);
}

int table_ram_ids(Table *t, int64_t **paId, size_t *pn, LpError *err) {
    return list_ids(t, 1, paId, pn, err);
}

int table_fill_embeddings(Table *t, int iCol, const int64_t *aId, size_t nId, size_t *pnDone,
                          LpError *err) {
    *pnDone = 0;
    const Schema *s = t->pSchema;
    const TableEmbed *e = NULL;
    for (int i = 0; i < t->nEmb; i++) {
        if (t->aEmb[i].iCol == iCol) e = &t->aEmb[i];
    }
    EmbedModel *m = model_of(t, iCol, err);
    if (!m || !e) return err ? err->code : LP_BADINPUT;
    size_t nCol = (size_t)s->nCol;
    int nDims = embed_model_dims(m);
    MemRow **apRow = calloc(nId ? nId : 1, sizeof(MemRow *));
    Value *aVal = calloc((nId ? nId : 1) * (nCol ? nCol : 1), sizeof(Value));
    char **azSrc = calloc(nId ? nId : 1, sizeof(char *));
    size_t *anSrc = calloc(nId ? nId : 1, sizeof(size_t));
    float *aVec = malloc(sizeof(float) * (nId ? nId : 1) * (size_t)nDims);
    TableOp *aOp = calloc(nId ? nId : 1, sizeof(TableOp));
    uint8_t *aSet = calloc(nCol ? nCol : 1, 1);
    int rc = LP_OK;
    size_t n = 0;
    if (!apRow || !aVal || !azSrc || !anSrc || !aVec || !aOp || !aSet) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory rebuilding embeddings of table '%s'", t->zName);
        goto done;
    }
    aSet[iCol] = 1;
    /* Copies of the rows that still lack the vector (their values must
    ** outlive the read lock). */
    pthread_rwlock_rdlock(&t->lock);
    for (size_t k = 0; k < nId && rc == LP_OK; k++) {
        const MemRow *r = locate(t, aId[k], NULL, NULL);
        if (!r || row_get(s, r, iCol).kind != VAL_NULL) continue;
        if (!(apRow[n] = table_row_copy(t, r))) { /* with its text, read from its segment */
            rc = LP_NOMEM;
            break;
        }
        n++;
    }
    pthread_rwlock_unlock(&t->lock);
    if (rc != LP_OK) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory rebuilding embeddings of table '%s'", t->zName);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        Value *a = aVal + k * nCol;
        for (size_t i = 0; i < nCol; i++) a[i] = row_get(s, apRow[k], (int)i);
        LpError e2;
        lp_err_clear(&e2);
        if ((rc = embed_source(t, e, a, &azSrc[k], &anSrc[k], &e2)) != LP_OK) {
            rc = lp_err_set(err, rc, "rebuilding embeddings of table '%s': %s", t->zName, e2.zMsg);
            goto done;
        }
    }
    if (n && (rc = embed_batch(m, (const char *const *)azSrc, anSrc, (int)n, aVec, t->pPool,
                               t->nEmbedInline, err)) != LP_OK) {
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        Value *a = aVal + k * nCol;
        a[iCol].kind = VAL_VEC;
        a[iCol].u.v.a = aVec + k * (size_t)nDims;
        a[iCol].u.v.n = (uint32_t)nDims;
        aOp[k] = (TableOp){TOP_SETVEC, apRow[k]->id, a, aSet, NULL, NULL};
    }
    TableApplyOut out = {0};
    if (n && (rc = table_apply_ex(t, aOp, n, TABLE_APPLY_NO_EMBED, &out, err)) == LP_OK) {
        *pnDone = out.nAffected;
    }
done:
    for (size_t k = 0; k < nId; k++) {
        if (apRow) free(apRow[k]);
        if (azSrc) free(azSrc[k]);
    }
    free(apRow);
    free(aVal);
    free(azSrc);
    free(anSrc);
    free(aVec);
    free(aOp);
    free(aSet);
    return rc;
}
