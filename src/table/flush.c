/*
** flush.c — sealed segments: writing the RAM segment out (FLUSH TABLE,
** rt_mem_limit), opening the segments at start, dropping them (TRUNCATE).
** See table.h for the contract and table_int.h for the parts.
**
** Files in the table's folder, for segment N (numbers never reused):
**   seg-N.rows      rows, id index, graph node maps (rowfile.c)
**   seg-N.text      the rows' TEXT values, zstd-compressed blocks (rowfile.c)
**   seg-N.fts       full-text segment (fts/segwriter.c), when the table
**                   has indexed TEXT fields
**   seg-N.vecC      HNSW graph and vectors of vector column C (the
**                   schema's column number; vec/hnsw.c)
**   seg-N.del-G     tombstones written by flush G (rowfile.c)
**   seg-N.patch-G   rows changed in place (numeric UPDATE), written by
**                   flush G (rowfile.c), applied to the mapped rows at open
** The manifest (manifest.c) lists the live segments with their ordinal
** counts and tombstone generations, and the first log record they do not
** cover. A file the manifest does not name is left over from a flush that
** did not finish (or from before an ALTER TABLE) and is removed when the
** table opens and after each flush.
**
** A flush, holding flushMu (one at a time):
**   1. freeze, under the graph lock and the write lock (no write is in
**      flight, so this waits at most for the writes already running): the
**      log starts a new file; the RAM segment's rows, full-text index and
**      graphs move into a frozen part, unchanged (no graph is rebuilt),
**      and an empty RAM segment takes their place; the tombstones of the
**      sealed parts changed since their last file are copied. Cost: a few
**      pointer moves and the bit copies. Writes resume at once.
**   2. write, with no lock held: the frozen part's rows file, full-text
**      segment and graph files, and the copied tombstones, each fsynced;
**      the folder fsynced; then the manifest is replaced (new segment
**      list, first log record still needed) under the catalog's manifest
**      mutex. Readers meanwhile read the frozen part in memory.
**   3. publish, under the write lock: the frozen part is swapped for the
**      sealed one read from the files just written (the deletes made
**      since the freeze carried over), then the log files wholly covered
**      are removed and the frozen part's memory freed.
** A crash before the manifest is replaced leaves the old manifest, whose
** log still holds everything; after, the new one. A failed write (disk
** full) leaves the frozen part in memory and the log intact; the next
** flush tries again.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fts/segflush.h"
#include "table/manifest.h"
#include "table/table_int.h"
#include "util/bytes.h"
#include "util/log.h"

/* ------------------------------------------------------------------ */
/* Files                                                               */

static void seg_path(char *z, size_t n, const Table *t, uint64_t id, const char *zSuffix) {
    snprintf(z, n, "%s/seg-%" PRIu64 ".%s", t->zDir, id, zSuffix);
}

static void vec_suffix(char *z, size_t n, int iCol) {
    snprintf(z, n, "vec%d", iCol);
}

static void dead_suffix(char *z, size_t n, uint64_t gen) {
    snprintf(z, n, "del-%" PRIu64, gen);
}

/* Removes the seg-* files of zDir that the segment list does not name,
** except those of segment keepId (a merge writing it; 0: none). */
static void remove_orphans(const char *zDir, const ManifestSeg *aSeg, int nSeg, uint64_t keepId) {
    DIR *d = opendir(zDir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t id = 0;
        int nUsed = 0;
        if (sscanf(e->d_name, "seg-%" SCNu64 ".%n", &id, &nUsed) != 1 || !nUsed) continue;
        const char *zSuf = e->d_name + nUsed;
        int bKeep = keepId && id == keepId;
        for (int i = 0; i < nSeg && !bKeep; i++) {
            if (aSeg[i].id != id) continue;
            uint64_t gen;
            int nEnd = 0;
            if (sscanf(zSuf, "del-%" SCNu64 "%n", &gen, &nEnd) == 1 && !zSuf[nEnd]) {
                bKeep = gen == aSeg[i].deadGen;
            } else if (sscanf(zSuf, "patch-%" SCNu64 "%n", &gen, &nEnd) == 1 && !zSuf[nEnd]) {
                bKeep = gen == aSeg[i].patchGen;
            } else {
                bKeep = strcmp(zSuf, "rows") == 0 || strcmp(zSuf, "text") == 0 ||
                        strcmp(zSuf, "fts") == 0 || strncmp(zSuf, "vec", 3) == 0;
            }
        }
        if (bKeep) continue;
        char zPath[4096];
        snprintf(zPath, sizeof(zPath), "%s/%s", zDir, e->d_name);
        if (unlink(zPath) == 0) LOG_DEBUG("removed %s (not in the manifest)", zPath);
    }
    closedir(d);
}

void table_remove_segment_files(const char *zDir, uint64_t id) {
    DIR *d = opendir(zDir);
    if (!d) return;
    struct dirent *e;
    char zPre[40];
    snprintf(zPre, sizeof(zPre), "seg-%" PRIu64 ".", id);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, zPre, strlen(zPre)) != 0) continue;
        char zPath[4096];
        snprintf(zPath, sizeof(zPath), "%s/%s", zDir, e->d_name);
        unlink(zPath);
    }
    closedir(d);
}

void table_remove_unlisted(const char *zDir, const ManifestSeg *aSeg, int nSeg) {
    remove_orphans(zDir, aSeg, nSeg, 0);
}

typedef struct CheckCtx {
    const Schema *s;
} CheckCtx;

static int check_row(void *ctx, const RowFile *f, const void *p, size_t n, int64_t *pId) {
    const CheckCtx *c = ctx;
    if (!table_row_valid(c->s, p, n, f)) return 0;
    *pId = row_id(p);
    return 1;
}

/* Opens sealed segment ms of t: rows, full-text segment, graphs and
** tombstones, all verified. */
static void patch_suffix(char *z, size_t n, uint64_t gen) {
    snprintf(z, n, "patch-%" PRIu64, gen);
}

/* Bytes of a row's head in a patch file: its slots and NULL words. */
static uint32_t patch_head(const Table *t) {
    return (uint32_t)(8 * ((size_t)t->pSchema->nCol + ((size_t)t->pSchema->nCol + 63) / 64));
}

/* Segment ms's patch file, written into the rows of part p. */
static int apply_patch(Table *t, Part *p, const ManifestSeg *ms, LpError *err) {
    char zPath[4096], zSuf[32];
    patch_suffix(zSuf, sizeof(zSuf), ms->patchGen);
    seg_path(zPath, sizeof(zPath), t, ms->id, zSuf);
    uint32_t nHead = patch_head(t), nEntry;
    uint8_t *a;
    int rc = rowfile_read_patch(zPath, ms->nOrd, nHead, &a, &nEntry, err);
    if (rc != LP_OK) return rc;
    if (bitset_init(&p->patched, ms->nOrd) != LP_OK) {
        free(a);
        return lp_err_set(err, LP_NOMEM, "out of memory opening table '%s'", t->zName);
    }
    for (uint32_t i = 0; i < nEntry && rc == LP_OK; i++) {
        const uint8_t *e = a + (size_t)i * (8 + nHead);
        uint32_t ord = get_u32le(e);
        MemRow *r = rowfile_row_mut(p->pRows, ord);
        if (!r) {
            rc = lp_err_set(err, LP_CORRUPT, "%s names ordinal %u, which has no row", zPath, ord);
            break;
        }
        uint64_t aHead[nHead / 8];
        memcpy(aHead, e + 8, nHead);
        row_patch_numeric(t->pSchema, r, aHead);
        part_sync_columns(p, t->pSchema, ord);
        bitset_set(&p->patched, ord);
    }
    free(a);
    p->patchGen = ms->patchGen;
    return rc;
}

int table_open_sealed(Table *t, const ManifestSeg *ms, Part **pp, LpError *err) {
    char zPath[4096], zSuf[32];
    Part *p = calloc(1, sizeof(Part));
    int rc = LP_OK;
    if (!p || (t->nVec && !(p->aVec = calloc((size_t)t->nVec, sizeof(PartVec))))) {
        free(p);
        return lp_err_set(err, LP_NOMEM, "out of memory opening table '%s'", t->zName);
    }
    p->nVec = t->nVec;
    idmap_init(&p->idx);
    p->segId = ms->id;
    p->deadGen = ms->deadGen;
    p->nOrd = ms->nOrd;
    CheckCtx cc = {t->pSchema};
    char zText[4096];
    seg_path(zPath, sizeof(zPath), t, ms->id, "rows");
    seg_path(zText, sizeof(zText), t, ms->id, "text");
    if ((rc = rowfile_open(zPath, zText, check_row, &cc, &p->pRows, err)) != LP_OK) goto fail;
    if (rowfile_nord(p->pRows) != ms->nOrd || rowfile_ncol(p->pRows) != (uint32_t)t->pSchema->nCol) {
        rc = lp_err_set(err, LP_CORRUPT, "%s does not match the manifest (%u ordinals, %u columns)",
                        zPath, rowfile_nord(p->pRows), rowfile_ncol(p->pRows));
        goto fail;
    }
    if (t->nFts) {
        seg_path(zPath, sizeof(zPath), t, ms->id, "fts");
        if ((rc = fts_segr_open(zPath, &p->pFtsSeg, err)) != LP_OK) goto fail;
        FtsSource *src = fts_segr_source(p->pFtsSeg);
        if (src->nDocs != ms->nOrd || src->nFields != t->nFts) {
            rc = lp_err_set(err, LP_CORRUPT, "%s does not match the manifest (%u documents, %d fields)",
                            zPath, src->nDocs, src->nFields);
            goto fail;
        }
    }
    for (int v = 0; v < t->nVec; v++) {
        const ColumnSchema *c = &t->pSchema->aCol[t->aVec[v].iCol];
        PartVec *pv = &p->aVec[v];
        pv->aNode = rowfile_map(p->pRows, (uint32_t)t->aVec[v].iCol, &pv->nNode);
        if (!pv->aNode) {
            /* The column was added (ALTER) after the segment was written:
            ** none of its rows has a vector there, nor a graph file. */
            if (!(pv->h = table_new_graph(c, err))) {
                rc = err && err->code ? err->code : LP_NOMEM;
                goto fail;
            }
            continue;
        }
        vec_suffix(zSuf, sizeof(zSuf), t->aVec[v].iCol);
        seg_path(zPath, sizeof(zPath), t, ms->id, zSuf);
        if ((rc = vec_hnsw_open_file(zPath, &pv->h, err)) != LP_OK) goto fail;
        if (pv->nNode > vec_hnsw_count(pv->h) ||
            vec_hnsw_dims(pv->h) != (uint32_t)c->vec.nDims) {
            rc = lp_err_set(err, LP_CORRUPT, "%s does not match its rows file or column '%s'", zPath,
                            c->zName);
            goto fail;
        }
    }
    if (ms->deadGen) {
        dead_suffix(zSuf, sizeof(zSuf), ms->deadGen);
        seg_path(zPath, sizeof(zPath), t, ms->id, zSuf);
        if ((rc = rowfile_read_dead(zPath, ms->nOrd, &p->dead, err)) != LP_OK) goto fail;
    } else if (bitset_init(&p->dead, ms->nOrd) != LP_OK) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory opening table '%s'", t->zName);
        goto fail;
    }
    if (ms->patchGen && (rc = apply_patch(t, p, ms, err)) != LP_OK) goto fail;
    size_t nLive = 0;
    for (uint32_t i = 0; i < p->nOrd; i++) {
        if (!bitset_test(&p->dead, i) && rowfile_row(p->pRows, i)) nLive++;
    }
    p->nLive = nLive;
    p->minId = rowfile_min_id(p->pRows);
    p->maxId = rowfile_max_id(p->pRows);
    uint32_t nId;
    const uint8_t *pIds = rowfile_ids(p->pRows, &nId);
    if (nId && (p->aRun = malloc(sizeof(IdRun) * IDFENCE_MAX_RUNS)) != NULL) {
        p->nRun = idfence_runs(pIds, 16, nId, p->aRun, IDFENCE_MAX_RUNS);
        IdRun *aFit = realloc(p->aRun, sizeof(IdRun) * p->nRun);
        if (aFit) p->aRun = aFit;
    }
    p->bSorted = rowfile_sorted(p->pRows);
    *pp = p;
    return LP_OK;
fail:
    table_part_free(p);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Opening                                                             */

/* Opens segments aSeg[0..n) as t's parts (t has none yet, or is not
** shared yet). */
static int attach_sealed(Table *t, const ManifestSeg *aSeg, int nSeg, LpError *err) {
    Part **ap = nSeg ? realloc(t->apPart, sizeof(Part *) * (size_t)(t->nPart + nSeg)) : t->apPart;
    if (nSeg && !ap) return lp_err_set(err, LP_NOMEM, "out of memory opening table '%s'", t->zName);
    t->apPart = ap;
    int64_t maxId = t->lastId;
    int bSorted = t->nPart ? t->bSorted : 1;
    int rc = LP_OK;
    for (int i = 0; i < nSeg && rc == LP_OK; i++) {
        Part *p;
        if ((rc = table_open_sealed(t, &aSeg[i], &p, err)) != LP_OK) break;
        if (p->nOrd && p->minId && (!p->bSorted || p->minId <= maxId)) bSorted = 0;
        if (p->maxId > maxId) maxId = p->maxId;
        t->apPart[t->nPart++] = p;
        if (aSeg[i].id >= t->nextSegId) t->nextSegId = aSeg[i].id + 1;
        if (aSeg[i].deadGen >= t->nextSegId) t->nextSegId = aSeg[i].deadGen + 1;
    }
    table_parts_changed(t);
    t->bSorted = bSorted;
    t->lastId = maxId;
    if (maxId >= t->nextId) t->nextId = maxId == INT64_MAX ? INT64_MIN : maxId + 1;
    return rc;
}

static void set_storage(Table *t, const TableStorage *st, uint64_t nextSegId) {
    free(t->zDir);
    t->zDir = strdup(st->zDir);
    t->pManifestMu = st->pManifestMu;
    t->memLimit = t->zDir ? st->memLimit : 0;
    if (st->walFileBytes) t->walFileBytes = st->walFileBytes;
    if (nextSegId > t->nextSegId) t->nextSegId = nextSegId;
    if (!t->nextSegId) t->nextSegId = 1;
}

int table_open_storage(Table *t, const TableStorage *st, const Manifest *m, LpError *err) {
    set_storage(t, st, m->nextSegId);
    if (!t->zDir) return lp_err_set(err, LP_NOMEM, "out of memory opening table '%s'", t->zName);
    int rc = attach_sealed(t, m->aSeg, m->nSeg, err);
    if (rc != LP_OK) return rc;
    remove_orphans(st->zDir, m->aSeg, m->nSeg, 0);
    char zWal[4096];
    snprintf(zWal, sizeof(zWal), "%s/%s", st->zDir, st->zWalName);
    /* Replaying writes into the table: no flush may start before it ends. */
    uint64_t memLimit = t->memLimit;
    t->memLimit = 0;
    rc = table_open_wal_from(t, zWal, st->sync, m->walFirstLsn, err);
    t->memLimit = memLimit;
    return rc;
}

void table_set_storage(Table *t, const TableStorage *st, uint64_t nextSegId) {
    pthread_mutex_lock(&t->flushMu);
    pthread_rwlock_wrlock(&t->lock); /* writes read zDir and memLimit under it */
    set_storage(t, st, nextSegId);
    pthread_rwlock_unlock(&t->lock);
    pthread_mutex_unlock(&t->flushMu);
}

void table_init_storage(Table *t, const TableStorage *st) {
    set_storage(t, st, 1);
}

/* ------------------------------------------------------------------ */
/* Flushing                                                            */

/* Bytes the RAM segment holds (rows, full-text index, graphs). Under the
** table's lock. */
static uint64_t ram_bytes(const Table *t) {
    uint64_t n = t->nBytes + (t->pFts ? fts_mem_bytes(t->pFts) : 0);
    for (int v = 0; v < t->nVec; v++) n += vec_hnsw_memory(t->aVec[v].h);
    return n;
}

/* The tombstones of a sealed part as they were at the freeze. */
typedef struct DeadCopy {
    Part *p;
    Bitset bits;
    uint64_t ver;
    uint64_t gen;           /* the file written, 0 until then */
} DeadCopy;

/* The changes in place of a sealed part as they were at the freeze: the
** patch file's entries. */
typedef struct PatchCopy {
    Part *p;
    uint8_t *a;             /* nEntry x (u32 ordinal, u32 0, head) */
    uint32_t nEntry;
    uint64_t ver;
    uint64_t gen;           /* the file written, 0 until then */
} PatchCopy;

typedef struct Flush {
    Part *pFrozen;          /* the part frozen now, or NULL (RAM was empty) */
    uint64_t lsnFirst;      /* first log record the segments do not cover */
    int64_t nextId;
    DeadCopy *aDead;
    int nDead;
    PatchCopy *aPatch;
    int nPatch, nPatchAlloc;
} Flush;

/* Copies the changed heads of sealed part q (under the write lock). */
static int patch_copy(const Table *t, Part *q, PatchCopy *c) {
    uint32_t nHead = patch_head(t);
    size_t n = bitset_count(&q->patched);
    c->a = malloc(n ? n * (8 + (size_t)nHead) : 1);
    if (!c->a) return LP_NOMEM;
    uint8_t *e = c->a;
    for (size_t o = bitset_next(&q->patched, 0); o < q->nOrd; o = bitset_next(&q->patched, o + 1)) {
        const MemRow *r = rowfile_row(q->pRows, (uint32_t)o);
        if (!r) continue;
        put_u32le(e, (uint32_t)o);
        put_u32le(e + 4, 0);
        memcpy(e + 8, r->aSlot, nHead);
        e += 8 + nHead;
        c->nEntry++;
    }
    c->p = q;
    c->ver = q->patchVer;
    return LP_OK;
}

/* Step 1. LP_OK with f filled (f->pFrozen NULL when nothing was frozen). */
static int freeze(Table *t, Flush *f, LpError *err) {
    /* Everything that can fail is made before the locks. */
    FtsMem *pNewFts = t->pFts ? fts_mem_new(t->nFts) : NULL;
    VecHnsw **apG = t->nVec ? calloc((size_t)t->nVec, sizeof(VecHnsw *)) : NULL;
    Part *p = calloc(1, sizeof(Part));
    PartVec *aPv = t->nVec ? calloc((size_t)t->nVec, sizeof(PartVec)) : NULL;
    int rc = LP_OK;
    int ok = p && (!t->pFts || pNewFts) && (!t->nVec || (apG && aPv));
    for (int v = 0; ok && v < t->nVec; v++) {
        ok = (apG[v] = table_new_graph(&t->pSchema->aCol[t->aVec[v].iCol], err)) != NULL;
    }
    if (!ok) rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);

    if (t->nVec) pthread_rwlock_wrlock(&t->graphLock);
    pthread_rwlock_wrlock(&t->lock);
    Part **apPart = NULL;
    if (rc == LP_OK && t->bRetired) {
        rc = lp_err_set(err, LP_BUSY, "table '%s' was altered while it was being flushed", t->zName);
    }
    if (rc == LP_OK && t->slots.n) {
        if (!(apPart = realloc(t->apPart, sizeof(Part *) * ((size_t)t->nPart + 1)))) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
        } else {
            t->apPart = apPart;
            if (bitset_init(&p->dead, t->slots.n) != LP_OK) {
                rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
            }
        }
    }
    /* The tombstones to write: those changed since their file. */
    f->aDead = calloc((size_t)(t->nPart ? t->nPart : 1), sizeof(DeadCopy));
    if (!f->aDead && rc == LP_OK) rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
    for (int i = 0; rc == LP_OK && i < t->nPart; i++) {
        Part *q = t->apPart[i];
        if (!q->pRows || q->deadVer == q->deadSavedVer) continue;
        DeadCopy *d = &f->aDead[f->nDead];
        if (bitset_init(&d->bits, q->nOrd) != LP_OK) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
            break;
        }
        if (q->nOrd) memcpy(d->bits.aWord, q->dead.aWord, 8 * BITSET_NWORD((size_t)q->nOrd));
        d->p = q;
        d->ver = q->deadVer;
        f->nDead++;
    }
    /* The changes in place to write: those made since their file. */
    f->aPatch = calloc((size_t)(t->nPart ? t->nPart : 1), sizeof(PatchCopy));
    f->nPatchAlloc = f->aPatch ? (t->nPart ? t->nPart : 1) : 0;
    if (!f->aPatch && rc == LP_OK) rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
    for (int i = 0; rc == LP_OK && i < t->nPart; i++) {
        Part *q = t->apPart[i];
        if (!q->pRows || q->patchVer == q->patchSavedVer) continue;
        if (patch_copy(t, q, &f->aPatch[f->nPatch]) != LP_OK) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
            break;
        }
        f->nPatch++;
    }
    /* The log is made durable up to here (the manifest will say every
    ** record before lsnFirst is covered), and a large file is replaced by
    ** a new one starting at the first record not covered, so that the old
    ** one can go once the manifest is written. */
    if (rc == LP_OK && t->pWal && (t->slots.n || f->nDead || f->nPatch)) {
        rc = wal_rotate(t->pWal, t->walFileBytes, err);
    }
    if (rc == LP_OK && t->slots.n) {
        p->nOrd = (uint32_t)t->slots.n;
        p->apRow = t->slots.a;
        p->idx = t->idx;
        p->nLive = t->nLive;
        p->nBytes = t->nBytes;
        p->minId = INT64_MIN; /* not computed: every lookup looks */
        p->maxId = INT64_MAX;
        p->pFtsMem = t->pFts;
        p->aVec = aPv;
        p->nVec = t->nVec;
        for (int v = 0; v < t->nVec; v++) {
            TableVec *tv = &t->aVec[v];
            aPv[v] = (PartVec){tv->h, tv->nodeSlot.a, tv->nodeSlot.a, (uint32_t)tv->nodeSlot.n};
            tv->h = apG[v];
            apG[v] = NULL;
            memset(&tv->nodeSlot, 0, sizeof(tv->nodeSlot));
        }
        aPv = NULL;
        memset(&t->slots, 0, sizeof(t->slots));
        idmap_init(&t->idx);
        t->nLive = 0;
        t->nBytes = 0;
        if (pNewFts) {
            t->pFts = pNewFts;
            fts_mem_set_pool(t->pFts, t->pPool);
            pNewFts = NULL;
        }
        t->apPart[t->nPart++] = p;
        table_parts_changed(t);
        f->pFrozen = p;
        p = NULL;
    }
    f->lsnFirst = t->pWal ? wal_next_lsn(t->pWal) : 0;
    f->nextId = t->nextId;
    pthread_rwlock_unlock(&t->lock);
    if (t->nVec) pthread_rwlock_unlock(&t->graphLock);

    if (p) table_part_free(p);
    free(aPv);
    fts_mem_free(pNewFts);
    for (int v = 0; apG && v < t->nVec; v++) vec_hnsw_free(apG[v]);
    free(apG);
    return rc;
}

/* Stored blocks are cut when they reach this many bytes of text: big
** enough for zstd to find repeats across rows, small enough that showing
** one row decompresses little (about 15 us). */
#define STORED_BLOCK 16384

int table_write_rows(const Table *t, Part *const *apSrc, int nSrc, uint64_t segId, uint32_t nOrd,
                     const MemRow *const *apRow, const RowFileMap *aMap, int nMap, LpError *err) {
    char zPath[4096], zText[4096];
    seg_path(zPath, sizeof(zPath), t, segId, "rows");
    seg_path(zText, sizeof(zText), t, segId, "text");
    const Schema *s = t->pSchema;
    uint32_t *aBlk = malloc(sizeof(uint32_t) * (nOrd ? nOrd : 1));
    uint32_t *aAt = malloc(sizeof(uint32_t) * (nOrd ? nOrd : 1));
    uint8_t *buf = NULL;
    size_t nBuf = 0, nAlloc = 0;
    RowReader rd;
    row_reader_init_parts(&rd, apSrc, nSrc);
    RowFileWriter *w = NULL;
    int rc = aBlk && aAt ? rowfile_writer_new(zPath, zText, (uint32_t)s->nCol, nOrd, &w, err)
                         : lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
    if (rc == LP_OK && (rc = row_declare_columns(w, s, err)) != LP_OK) w = NULL;
    /* Pass 1: the text of consecutive rows into blocks. */
    for (uint32_t i = 0; rc == LP_OK && i < nOrd; i++) {
        const MemRow *r = apRow[i];
        size_t nText = r ? row_text_bytes(s, r) : 0;
        aBlk[i] = UINT32_MAX;
        if (!nText) continue;
        if (nBuf && nBuf + nText > STORED_BLOCK) {
            if ((rc = rowfile_writer_block(w, buf, nBuf, err)) != LP_OK) w = NULL;
            nBuf = 0;
            if (rc != LP_OK) break;
        }
        if (nBuf + nText > nAlloc) {
            size_t nNew = nBuf + nText > 2 * STORED_BLOCK ? nBuf + nText : 2 * STORED_BLOCK;
            uint8_t *pNew = realloc(buf, nNew);
            if (!pNew) {
                rc = lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
                break;
            }
            buf = pNew;
            nAlloc = nNew;
        }
        if (row_text_copy(&rd, s, r, buf + nBuf) != LP_OK) {
            rc = lp_err_set(err, LP_CORRUPT, "cannot write %s: the text of row %lld cannot be read", zPath,
                            (long long)row_id(r));
            break;
        }
        aBlk[i] = rowfile_writer_nblock(w);
        aAt[i] = (uint32_t)nBuf;
        nBuf += nText;
    }
    if (rc == LP_OK && nBuf && (rc = rowfile_writer_block(w, buf, nBuf, err)) != LP_OK) w = NULL;
    /* Pass 2: the rows, packed where they have text. */
    for (uint32_t i = 0; rc == LP_OK && i < nOrd; i++) {
        const MemRow *r = apRow[i];
        if (!r) continue;
        row_put_columns(w, s, i, r);
        if (aBlk[i] == UINT32_MAX) {
            rc = rowfile_writer_row(w, i, r, row_nbyte(r), err);
        } else {
            RowTextAt at = {aBlk[i], aAt[i]};
            uint32_t n = row_convert(s, s, NULL, r, &at, NULL);
            if (n > nAlloc) {
                uint8_t *pNew = realloc(buf, n);
                if (!pNew) {
                    rc = lp_err_set(err, LP_NOMEM, "out of memory writing %s", zPath);
                    break;
                }
                buf = pNew;
                nAlloc = n;
            }
            row_convert(s, s, NULL, r, &at, (MemRow *)(void *)buf);
            rc = rowfile_writer_row(w, i, buf, n, err);
        }
        if (rc != LP_OK) w = NULL;
    }
    if (rc == LP_OK) {
        rc = rowfile_writer_finish(w, aMap, nMap, err);
    } else {
        rowfile_writer_abort(w);
    }
    row_reader_free(&rd);
    free(buf);
    free(aBlk);
    free(aAt);
    return rc;
}

/* ------------------------------------------------------------------ */
/* ALTER without copying the segments                                  */

/* zTo as another name of zFrom (both in the table's folder); a copy,
** fsynced, where the file system refuses links. */
static int link_or_copy(const char *zFrom, const char *zTo, LpError *err) {
    unlink(zTo);
    if (link(zFrom, zTo) == 0) return LP_OK;
    int fdIn = open(zFrom, O_RDONLY | O_CLOEXEC);
    int fdOut = fdIn < 0 ? -1 : open(zTo, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int bad = fdOut < 0;
    char buf[65536];
    ssize_t n;
    while (!bad && (n = read(fdIn, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR) continue;
        for (ssize_t d = 0; !bad && n > 0 && d < n;) {
            ssize_t w = write(fdOut, buf + d, (size_t)(n - d));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) bad = 1;
            else d += w;
        }
        if (n < 0) bad = 1;
    }
    if (!bad && fsync(fdOut) != 0) bad = 1;
    int e = errno;
    if (fdIn >= 0) close(fdIn);
    if (fdOut >= 0 && close(fdOut) != 0) bad = 1;
    if (!bad) return LP_OK;
    unlink(zTo);
    return lp_err_set(err, LP_IOERR, "cannot link or copy %s to %s: %s", zFrom, zTo, strerror(e ? e : EIO));
}

/* The rows file of sealed part p of old, in t's schema (columns through
** aMap), as zPath: rows converted, referring to the same text file. */
static int convert_rows(const Table *old, const Part *p, const Table *t, const int *aMap, const char *zPath,
                        LpError *err) {
    const Schema *so = old->pSchema, *sn = t->pSchema;
    RowFileWriter *w;
    int rc = rowfile_writer_new(zPath, NULL, (uint32_t)sn->nCol, p->nOrd, &w, err);
    if (rc == LP_OK) rowfile_writer_keep_text(w, rowfile_nblock(p->pRows)); /* linked by the caller */
    if (rc == LP_OK) rc = row_declare_columns(w, sn, err); /* frees w on failure */
    uint8_t *buf = NULL;
    size_t nAlloc = 0;
    for (uint32_t i = 0; rc == LP_OK && i < p->nOrd; i++) {
        const MemRow *r = rowfile_row(p->pRows, i);
        if (!r) continue;
        uint32_t n = row_convert(so, sn, aMap, r, NULL, NULL);
        if (n > nAlloc) {
            uint8_t *pNew = realloc(buf, n);
            if (!pNew) {
                rowfile_writer_abort(w);
                rc = lp_err_set(err, LP_NOMEM, "out of memory altering table '%s'", t->zName);
                break;
            }
            buf = pNew;
            nAlloc = n;
        }
        row_convert(so, sn, aMap, r, NULL, (MemRow *)(void *)buf);
        row_put_columns(w, sn, i, (const MemRow *)(const void *)buf);
        rc = rowfile_writer_row(w, i, buf, n, err);
    }
    free(buf);
    if (rc != LP_OK) return rc;
    RowFileMap aVm[t->nVec ? t->nVec : 1];
    int nVm = 0;
    for (int v = 0; v < t->nVec; v++) {
        int iOld = aMap[t->aVec[v].iCol];
        uint32_t nNode = 0;
        const uint32_t *a = iOld >= 0 ? rowfile_map(p->pRows, (uint32_t)iOld, &nNode) : NULL;
        if (a) aVm[nVm++] = (RowFileMap){(uint32_t)t->aVec[v].iCol, nNode, a};
    }
    return rowfile_writer_finish(w, aVm, nVm, err);
}

int table_alter_segments(Table *old, Table *t, const int *aMap, uint64_t *pNextSeg, ManifestSeg **paSeg,
                         int *pnSeg, LpError *err) {
    char zFrom[4096], zTo[4096], zSufOld[32], zSufNew[32];
    *paSeg = NULL;
    *pnSeg = 0;
    pthread_rwlock_rdlock(&old->lock);
    int n = old->nPart, rc = LP_OK;
    ManifestSeg *aSeg = calloc((size_t)(n ? n : 1), sizeof(ManifestSeg));
    if (!aSeg) rc = lp_err_set(err, LP_NOMEM, "out of memory altering table '%s'", t->zName);
    for (int k = 0; rc == LP_OK && k < n; k++) {
        const Part *p = old->apPart[k];
        if (!p->pRows) {
            rc = lp_err_set(err, LP_BUSY, "table '%s' is being flushed", t->zName);
            break;
        }
        ManifestSeg *ms = &aSeg[k];
        ms->id = (*pNextSeg)++;
        ms->nOrd = p->nOrd;
        seg_path(zTo, sizeof(zTo), t, ms->id, "rows");
        if ((rc = convert_rows(old, p, t, aMap, zTo, err)) != LP_OK) break;
        seg_path(zFrom, sizeof(zFrom), old, p->segId, "text");
        seg_path(zTo, sizeof(zTo), t, ms->id, "text");
        if ((rc = link_or_copy(zFrom, zTo, err)) != LP_OK) break;
        if (t->nFts) {
            seg_path(zFrom, sizeof(zFrom), old, p->segId, "fts");
            seg_path(zTo, sizeof(zTo), t, ms->id, "fts");
            if ((rc = link_or_copy(zFrom, zTo, err)) != LP_OK) break;
        }
        for (int v = 0; rc == LP_OK && v < t->nVec; v++) {
            int iOld = aMap[t->aVec[v].iCol];
            uint32_t nNode;
            if (iOld < 0 || !rowfile_map(p->pRows, (uint32_t)iOld, &nNode)) continue; /* no graph yet */
            vec_suffix(zSufOld, sizeof(zSufOld), iOld);
            vec_suffix(zSufNew, sizeof(zSufNew), t->aVec[v].iCol);
            seg_path(zFrom, sizeof(zFrom), old, p->segId, zSufOld);
            seg_path(zTo, sizeof(zTo), t, ms->id, zSufNew);
            rc = link_or_copy(zFrom, zTo, err);
        }
        if (rc == LP_OK && bitset_count(&p->dead)) {
            ms->deadGen = (*pNextSeg)++;
            dead_suffix(zSufNew, sizeof(zSufNew), ms->deadGen);
            seg_path(zTo, sizeof(zTo), t, ms->id, zSufNew);
            rc = rowfile_write_dead(zTo, &p->dead, err);
        }
    }
    pthread_rwlock_unlock(&old->lock);
    if (rc == LP_OK) rc = lp_fsync_dir(t->zDir, err);
    if (rc == LP_OK) {
        pthread_rwlock_wrlock(&t->lock);
        rc = attach_sealed(t, aSeg, n, err);
        pthread_rwlock_unlock(&t->lock);
    }
    if (rc != LP_OK) {
        free(aSeg);
        return rc;
    }
    *paSeg = aSeg;
    *pnSeg = n;
    return LP_OK;
}

static void fts_write_task(void *arg) {
    TableFtsWrite *w = arg;
    lp_err_clear(&w->err);
    w->rc = fts_seg_write_source_flags(w->zPath, w->src, w->aMap, w->nOrd, w->pPool, w->flags, &w->err);
}

void table_fts_write_start(const Table *t, TableFtsWrite *w) {
    w->bQueued = 0;
    w->pPool = t->pPool;
    w->flags = t->pAnalyzer && analyzer_min_infix_len(t->pAnalyzer) > 0 ? FTS_SEGW_INFIX : 0;
    /* its wildcards expand over exact forms only: the filter need not
    ** hold the stems */
    if (w->flags && analyzer_has_exact_forms(t->pAnalyzer)) w->flags |= FTS_SEGW_INFIX_EXACT;
    if (!t->pPool) return;
    tpool_group_init(&w->g, t->pPool);
    w->bQueued = tpool_group_submit(&w->g, fts_write_task, w) == LP_OK;
}

int table_fts_write_finish(TableFtsWrite *w, int rc, LpError *err) {
    if (w->bQueued) {
        tpool_group_wait(&w->g); /* runs it here if no worker took it yet */
    } else {
        fts_write_task(w);
    }
    if (rc != LP_OK) return rc; /* the first failure is the one reported */
    if (w->rc != LP_OK && err) *err = w->err;
    return w->rc;
}

/* Step 2 for one frozen part: its files, as segment id. The full-text
** segment is written beside the rows file (table_fts_write_start): on a
** small flush their fsyncs overlap, on a large one their encoding too. */
static int write_part(Table *t, const Part *p, uint64_t id, LpError *err) {
    char zPath[4096], zSuf[32];
    uint32_t n = p->nOrd;
    uint32_t *aMap = t->pFts ? malloc(sizeof(uint32_t) * (n ? n : 1)) : NULL;
    RowFileMap *aVm = t->nVec ? calloc((size_t)t->nVec, sizeof(RowFileMap)) : NULL;
    int rc = LP_OK;
    if ((t->pFts && !aMap) || (t->nVec && !aVm)) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
        goto done;
    }
    for (uint32_t i = 0; aMap && i < n; i++) {
        aMap[i] = p->apRow[i] ? i : FTS_NO_DOC; /* deleted before the freeze: dropped */
    }
    for (int v = 0; v < t->nVec; v++) {
        aVm[v] = (RowFileMap){(uint32_t)t->aVec[v].iCol, p->aVec[v].nNode, p->aVec[v].aNode};
    }
    TableFtsWrite fw;
    if (p->pFtsMem) {
        seg_path(fw.zPath, sizeof(fw.zPath), t, id, "fts");
        fw.src = fts_mem_source(p->pFtsMem);
        fw.aMap = aMap;
        fw.nOrd = n;
        table_fts_write_start(t, &fw);
    }
    rc = table_write_rows(t, NULL, 0, id, n, (const MemRow *const *)p->apRow, aVm, t->nVec, err);
    if (p->pFtsMem) rc = table_fts_write_finish(&fw, rc, err);
    for (int v = 0; rc == LP_OK && v < t->nVec; v++) {
        vec_suffix(zSuf, sizeof(zSuf), t->aVec[v].iCol);
        seg_path(zPath, sizeof(zPath), t, id, zSuf);
        rc = table_graph_repair(t, p->aVec[v].h, t->aVec[v].iCol, id, err);
        if (rc == LP_OK) rc = vec_hnsw_save(p->aVec[v].h, zPath, err);
    }
done:
    free(aMap);
    free(aVm);
    return rc;
}

static void flush_free(Flush *f) {
    for (int i = 0; i < f->nDead; i++) bitset_free(&f->aDead[i].bits);
    free(f->aDead);
    for (int i = 0; f->aPatch && i <= f->nPatch && i < f->nPatchAlloc; i++) free(f->aPatch[i].a);
    free(f->aPatch);
}

/* Steps 2 and 3. Called with flushMu held. */
static int flush_locked(Table *t, LpError *err) {
    Flush f = {0};
    int rc = freeze(t, &f, err);
    if (rc != LP_OK) {
        flush_free(&f);
        return rc;
    }
    /* Every frozen part (this one, and any an earlier failed flush left). */
    int nFrozen = 0;
    for (int i = 0; i < t->nPart; i++) nFrozen += t->apPart[i]->pRows == NULL;
    if (!nFrozen && !f.nDead && !f.nPatch) {
        flush_free(&f);
        return LP_OK;
    }
    uint64_t *aNewId = calloc((size_t)t->nPart, sizeof(uint64_t));
    ManifestSeg *aSeg = calloc((size_t)t->nPart + 1, sizeof(ManifestSeg));
    if (!aNewId || !aSeg) rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
    for (int i = 0; rc == LP_OK && i < t->nPart; i++) {
        Part *p = t->apPart[i];
        if (p->pRows) continue;
        aNewId[i] = t->nextSegId++;
        rc = write_part(t, p, aNewId[i], err);
    }
    char zPath[4096], zSuf[32];
    for (int i = 0; rc == LP_OK && i < f.nDead; i++) {
        DeadCopy *d = &f.aDead[i];
        d->gen = t->nextSegId++;
        dead_suffix(zSuf, sizeof(zSuf), d->gen);
        seg_path(zPath, sizeof(zPath), t, d->p->segId, zSuf);
        rc = rowfile_write_dead(zPath, &d->bits, err);
    }
    for (int i = 0; rc == LP_OK && i < f.nPatch; i++) {
        PatchCopy *c = &f.aPatch[i];
        c->gen = t->nextSegId++;
        patch_suffix(zSuf, sizeof(zSuf), c->gen);
        seg_path(zPath, sizeof(zPath), t, c->p->segId, zSuf);
        rc = rowfile_write_patch(zPath, c->p->nOrd, patch_head(t), c->a, c->nEntry, err);
    }
    if (rc == LP_OK) rc = lp_fsync_dir(t->zDir, err);
    /* The manifest: every part now sealed. */
    int nSeg = 0;
    for (int i = 0; rc == LP_OK && i < t->nPart; i++) {
        Part *p = t->apPart[i];
        uint64_t gen = p->deadGen, patchGen = p->patchGen;
        for (int k = 0; k < f.nDead; k++) {
            if (f.aDead[k].p == p) gen = f.aDead[k].gen;
        }
        for (int k = 0; k < f.nPatch; k++) {
            if (f.aPatch[k].p == p) patchGen = f.aPatch[k].gen;
        }
        aSeg[nSeg++] = (ManifestSeg){p->pRows ? p->segId : aNewId[i], p->nOrd, p->pRows ? gen : 0,
                                     p->pRows ? patchGen : 0};
    }
    if (rc == LP_OK) {
        pthread_mutex_lock(t->pManifestMu);
        /* ALTER sets bRetired holding the manifest mutex too: no need for
        ** the table's lock (which must not be taken under that mutex:
        ** SHOW TABLE STATUS takes them the other way round). */
        int bRetired = __atomic_load_n(&t->bRetired, __ATOMIC_ACQUIRE);
        Manifest m;
        if (bRetired) {
            rc = lp_err_set(err, LP_BUSY, "table '%s' was altered while it was being flushed", t->zName);
        } else if ((rc = manifest_read(t->zDir, &m, err)) == LP_OK) {
            if ((rc = manifest_set_segs(&m, aSeg, nSeg, t->nextSegId)) != LP_OK) {
                rc = lp_err_set(err, LP_NOMEM, "out of memory flushing table '%s'", t->zName);
            } else {
                m.walFirstLsn = f.lsnFirst;
                if (f.nextId > m.nextIdFloor || f.nextId < 0) m.nextIdFloor = f.nextId;
                rc = manifest_write(t->zDir, &m, err);
            }
            manifest_clear(&m);
        }
        pthread_mutex_unlock(t->pManifestMu);
    }
    /* On failure the files written stay until a later flush or the next
    ** start removes them: the manifest may or may not name them (a failed
    ** folder fsync after its rename). */
    if (rc != LP_OK) goto done;

    /* Step 3: the sealed parts replace the frozen ones. */
    Part **apSealed = calloc((size_t)t->nPart, sizeof(Part *));
    for (int i = 0; apSealed && i < t->nPart; i++) {
        if (t->apPart[i]->pRows) continue;
        LpError e2;
        lp_err_clear(&e2);
        if (table_open_sealed(t, &aSeg[i], &apSealed[i], &e2) != LP_OK) {
            /* The files are published; the frozen part still serves. */
            LOG_ERROR("table '%s': cannot read back the segment just written: %s", t->zName, e2.zMsg);
            apSealed[i] = NULL;
        }
    }
    Part **apOld = calloc((size_t)t->nPart, sizeof(Part *));
    pthread_rwlock_wrlock(&t->lock);
    for (int i = 0; i < t->nPart; i++) {
        Part *p = t->apPart[i];
        for (int k = 0; k < f.nDead; k++) {
            if (f.aDead[k].p == p) {
                p->deadGen = f.aDead[k].gen;
                p->deadSavedVer = f.aDead[k].ver;
            }
        }
        for (int k = 0; k < f.nPatch; k++) {
            if (f.aPatch[k].p == p) {
                p->patchGen = f.aPatch[k].gen;
                p->patchSavedVer = f.aPatch[k].ver;
            }
        }
        Part *q = apSealed ? apSealed[i] : NULL;
        if (!q || !apOld) {
            if (!p->pRows) p->segId = aNewId[i];
            continue;
        }
        /* Deletes since the freeze carry over. */
        if (p->nOrd) memcpy(q->dead.aWord, p->dead.aWord, 8 * BITSET_NWORD((size_t)p->nOrd));
        q->nLive = p->nLive;
        q->deadVer = p->deadVer;
        q->deadSavedVer = 0;
        t->apPart[i] = q;
        apOld[i] = p;
    }
    table_parts_changed(t);
    if (t->pWal && (rc = wal_drop_before(t->pWal, f.lsnFirst, err)) != LP_OK) {
        LOG_WARN("table '%s': %s", t->zName, err ? err->zMsg : "cannot remove old log files");
        rc = LP_OK;
    }
    t->nFlushes++;
    pthread_rwlock_unlock(&t->lock);
    for (int i = 0; apOld && i < t->nPart; i++) table_part_free(apOld[i]);
    free(apOld);
    free(apSealed);
    remove_orphans(t->zDir, aSeg, nSeg, t->mergeOutId);
done:
    free(aNewId);
    free(aSeg);
    flush_free(&f);
    return rc;
}

int table_flush(Table *t, LpError *err) {
    int rc = table_flush_only(t, err);
    if (rc == LP_OK) table_maybe_merge(t);
    return rc;
}

int table_flush_only(Table *t, LpError *err) {
    pthread_mutex_lock(&t->flushMu);
    int rc = LP_OK;
    if (atomic_load(&t->bNoFlush)) {
        rc = lp_err_set(err, LP_BUSY, "table '%s' is being altered or dropped: flush it again later",
                        t->zName);
    } else if (t->zDir) { /* memory only: nothing to write */
        rc = flush_locked(t, err);
    }
    pthread_mutex_unlock(&t->flushMu);
    return rc;
}

static void *flush_thread(void *arg) {
    Table *t = arg;
    LpError err;
    lp_err_clear(&err);
    int rc = table_flush(t, &err);
    if (rc != LP_OK && rc != LP_BUSY) {
        LOG_ERROR("table '%s': background flush failed: %s", t->zName, err.zMsg);
    }
    atomic_store(&t->bFlushQueued, 0);
    table_unref(t);
    return NULL;
}

int table_ram_over_limit(const Table *t) {
    return t->memLimit && t->zDir && ram_bytes(t) >= t->memLimit;
}

void table_start_flush(Table *t) {
    int bFalse = 0;
    if (atomic_load(&t->bNoFlush) || !atomic_compare_exchange_strong(&t->bFlushQueued, &bFalse, 1)) {
        return;
    }
    table_ref(t);
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &a, flush_thread, t) != 0) {
        atomic_store(&t->bFlushQueued, 0);
        table_unref(t);
    }
    pthread_attr_destroy(&a);
}

void table_stop_flushes(Table *t) {
    pthread_mutex_lock(&t->flushMu);
    atomic_store(&t->bNoFlush, 1);
    pthread_mutex_unlock(&t->flushMu);
    pthread_mutex_lock(&t->mergeMu); /* a merge running ends (or fails to publish) */
    pthread_mutex_unlock(&t->mergeMu);
    /* Background threads past their checks are done now; wait until they
    ** have let go of the table entirely. */
    while (atomic_load(&t->bFlushQueued) || atomic_load(&t->bMergeQueued)) usleep(1000);
}

void table_resume_flushes(Table *t) {
    atomic_store(&t->bNoFlush, 0);
}

int table_forget_segments(Table *t, uint64_t lsnFirst, LpError *err) {
    pthread_mutex_lock(t->pManifestMu);
    Manifest m;
    int rc = manifest_read(t->zDir, &m, err);
    if (rc == LP_OK) {
        manifest_set_segs(&m, NULL, 0, t->nextSegId);
        m.walFirstLsn = lsnFirst;
        rc = manifest_write(t->zDir, &m, err);
        manifest_clear(&m);
    }
    pthread_mutex_unlock(t->pManifestMu);
    if (rc == LP_OK) remove_orphans(t->zDir, NULL, 0, 0);
    return rc;
}

uint64_t table_disk_bytes(Table *t, int *pnSeg, uint64_t *pnFlush, uint64_t *pnMerge) {
    /* Not under flushMu: SHOW TABLE STATUS must not wait for a flush. A
    ** file written or removed meanwhile is counted or not. */
    uint64_t n = 0;
    DIR *d = t->zDir ? opendir(t->zDir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char zPath[4096];
        struct stat st;
        snprintf(zPath, sizeof(zPath), "%s/%s", t->zDir, e->d_name);
        if (strncmp(e->d_name, "seg-", 4) == 0 && stat(zPath, &st) == 0) n += (uint64_t)st.st_size;
    }
    if (d) closedir(d);
    pthread_rwlock_rdlock(&t->lock);
    int nSeg = 0;
    for (int i = 0; i < t->nPart; i++) nSeg += t->apPart[i]->pRows != NULL;
    if (pnSeg) *pnSeg = nSeg;
    if (pnFlush) *pnFlush = t->nFlushes;
    if (pnMerge) *pnMerge = t->nMerges;
    pthread_rwlock_unlock(&t->lock);
    return n;
}

uint64_t table_updates_in_place(Table *t) {
    /* Not under the lock: the caller may hold a snapshot (a second read
    ** lock could wait behind a writer forever). */
    return __atomic_load_n(&t->nInPlace, __ATOMIC_RELAXED);
}

uint64_t table_mem_limit(const Table *t) {
    return t->memLimit;
}
