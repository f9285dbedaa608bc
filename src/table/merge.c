/*
** merge.c — merging sealed segments: the tiered policy run after flushes,
** and OPTIMIZE TABLE. See table.h for the contract, flush.c for the files.
**
** A merge replaces a run of adjacent sealed segments by one segment
** holding their live rows, in the same order (so ids stay ascending when
** they were): deleted rows are dropped, and with them their space.
**   1. Under the read lock: the inputs and a copy of their tombstones.
**   2. No lock: the output's files. Rows: the live blocks, copied from
**      the inputs' mappings. Full text: one FtsMulti over the inputs,
**      renumbered (fts_seg_write_source drops deleted documents). Graphs:
**      the largest input's graph is copied (vec_hnsw_copy) and the other
**      inputs' live vectors are inserted into it on the pool's threads,
**      instead of building a graph from nothing; only when more than half
**      of that graph's nodes are dead is it built afresh.
**   3. Holding flushMu (no flush meanwhile): the output's tombstones as
**      they are now (deletes made during the merge, mapped to the new
**      ordinals: a flush during step 2 may have written them only into an
**      input's tombstone file and dropped their log records), then the
**      manifest with the inputs replaced by the output; then, under the
**      write lock, the output replaces the inputs in the table (deletes
**      since 3 began are mapped again) and the inputs are freed; their
**      files go.
** One merge runs at a time (mergeMu); writes and flushes go on during
** steps 1-2; readers always.
**
** Policy (after each flush): four adjacent segments of similar size (by
** live rows, counting at least 1024 each: the largest at most 3 times the
** smallest) merge into one, the smallest such run first, and a segment
** with more than half of its rows deleted is rewritten alone. Sizes then
** grow by a factor of about 4 from one merge generation to the next, with
** at most 3 segments of a generation waiting: a table of N rows keeps
** O(log N) segments and each row is rewritten O(log N) times. (Fixed tiers
** were tried first: flushes of nearly equal size that straddle a tier
** boundary never merged.)
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fts/segflush.h"
#include "table/manifest.h"
#include "table/table_int.h"
#include "util/log.h"

#define MERGE_FACTOR 4
/* table_merge_step's "a merge ran" (not an LP_* error code). */
#define LP_MERGED (-1)
#define MERGE_SIMILAR 3
#define MERGE_MIN_ROWS 1024

/* ------------------------------------------------------------------ */
/* One merge                                                           */

typedef struct VecJob {
    const atomic_int *pbStop;   /* the table's bNoFlush: give up (shutdown, DROP) */
    VecHnsw *h;
    const float *const *apVec;  /* vectors to insert */
    const uint32_t *aOrd;       /* their new ordinals */
    uint32_t *aNode;            /* node -> new ordinal (written per inserted node) */
    size_t iFrom, iTo;
    int rc;
    LpError err;
} VecJob;

static void vec_job(void *arg) {
    VecJob *j = arg;
    for (size_t i = j->iFrom; i < j->iTo && j->rc == LP_OK; i++) {
        if ((i & 255) == 0 && atomic_load(j->pbStop)) {
            j->rc = lp_err_set(&j->err, LP_BUSY, "merge stopped: the table is being altered, dropped "
                               "or closed");
            break;
        }
        uint32_t node;
        j->rc = vec_hnsw_add(j->h, j->apVec[i], &node, &j->err);
        if (j->rc == LP_OK) j->aNode[node] = j->aOrd[i];
    }
}

/* The merged graph of graph column v: *ppH and the node map aNode
** (room for every input node plus every live vector). */
static int merge_graph(Table *t, Part **apIn, int nIn, const uint32_t *const *aaMap, int v,
                       uint32_t nNew, VecHnsw **ppH, uint32_t **paNode, uint32_t *pnNode,
                       LpError *err) {
    int iCol = t->aVec[v].iCol;
    /* The base: the input with the most live mapped nodes. */
    int iBase = -1;
    uint32_t nBaseLive = 0, nBaseNodes = 0;
    for (int k = 0; k < nIn; k++) {
        const PartVec *pv = &apIn[k]->aVec[v];
        uint32_t nLive = 0;
        for (uint32_t n = 0; n < pv->nNode; n++) {
            nLive += pv->aNode[n] != UINT32_MAX && aaMap[k][pv->aNode[n]] != UINT32_MAX;
        }
        if (iBase < 0 || nLive > nBaseLive) {
            iBase = k;
            nBaseLive = nLive;
            nBaseNodes = vec_hnsw_count(pv->h);
        }
    }
    int bFresh = nBaseLive * 2 < nBaseNodes;
    size_t nVec = 0;
    const float **apVec = malloc(sizeof(float *) * (nNew ? nNew : 1));
    uint32_t *aOrd = malloc(sizeof(uint32_t) * (nNew ? nNew : 1));
    uint32_t nCap = (bFresh ? 0 : nBaseNodes) + nNew + 1;
    uint32_t *aNode = malloc(sizeof(uint32_t) * nCap);
    VecHnsw *h = NULL;
    int rc = LP_OK;
    if (!apVec || !aOrd || !aNode) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory merging segments of table '%s'", t->zName);
        goto fail;
    }
    for (uint32_t n = 0; n < nCap; n++) aNode[n] = UINT32_MAX;
    if (bFresh) {
        h = table_new_graph(&t->pSchema->aCol[iCol], err);
    } else {
        h = vec_hnsw_copy(apIn[iBase]->aVec[v].h, nCap, err);
        const PartVec *pv = &apIn[iBase]->aVec[v];
        for (uint32_t n = 0; n < pv->nNode; n++) {
            if (pv->aNode[n] != UINT32_MAX) aNode[n] = aaMap[iBase][pv->aNode[n]];
        }
    }
    if (!h) {
        rc = err && err->code ? err->code : LP_NOMEM;
        goto fail;
    }
    /* The vectors still to insert: every live row's of the other inputs
    ** (all inputs' when fresh), read from the rows. */
    for (int k = 0; k < nIn; k++) {
        if (k == iBase && !bFresh) continue;
        const Part *p = apIn[k];
        for (uint32_t o = 0; o < p->nOrd; o++) {
            if (aaMap[k][o] == UINT32_MAX) continue;
            Value val = row_get(t->pSchema, rowfile_row(p->pRows, o), iCol);
            if (val.kind != VAL_VEC) continue;
            apVec[nVec] = val.u.v.a;
            aOrd[nVec++] = aaMap[k][o];
        }
    }
    int nJob = t->pPool && nVec >= 64 ? 4 * (tpool_size(t->pPool) + 1) : 1;
    VecJob *aJob = calloc((size_t)nJob, sizeof(VecJob));
    if (!aJob) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory merging segments of table '%s'", t->zName);
        goto fail;
    }
    for (int i = 0; i < nJob; i++) {
        aJob[i] = (VecJob){&t->bNoFlush, h, apVec, aOrd, aNode, nVec * (size_t)i / (size_t)nJob,
                           nVec * (size_t)(i + 1) / (size_t)nJob, LP_OK, {0}};
    }
    if (nJob == 1) {
        vec_job(&aJob[0]);
    } else {
        TpoolGroup g;
        tpool_group_init(&g, t->pPool);
        for (int i = 0; i < nJob; i++) {
            if (tpool_group_submit(&g, vec_job, &aJob[i]) != LP_OK) vec_job(&aJob[i]);
        }
        tpool_group_wait(&g);
    }
    for (int i = 0; i < nJob && rc == LP_OK; i++) {
        if (aJob[i].rc != LP_OK) {
            rc = aJob[i].rc;
            if (err) *err = aJob[i].err;
        }
    }
    free(aJob);
    if (rc != LP_OK) goto fail;
    free(apVec);
    free(aOrd);
    *ppH = h;
    *paNode = aNode;
    *pnNode = vec_hnsw_count(h);
    return LP_OK;
fail:
    vec_hnsw_free(h);
    free(apVec);
    free(aOrd);
    free(aNode);
    return rc;
}

/* Writes the merge of apIn (with tombstones aDead) as segment id:
** *pnNew rows; aaMap[k][old ordinal] = new ordinal or UINT32_MAX. */
static int merge_write(Table *t, Part **apIn, int nIn, const Bitset *aDead, uint64_t id,
                       uint32_t ***paaMap, uint32_t *pnNew, LpError *err) {
    char zPath[4096];
    int rc = LP_OK;
    uint32_t **aaMap = calloc((size_t)nIn, sizeof(uint32_t *));
    uint64_t nTotal = 0;
    for (int k = 0; k < nIn; k++) nTotal += apIn[k]->nOrd;
    const MemRow **apRow = malloc(sizeof(void *) * (nTotal ? nTotal : 1));
    uint32_t *aFtsMap = t->nFts ? malloc(sizeof(uint32_t) * (nTotal ? nTotal : 1)) : NULL;
    RowFileMap *aVm = t->nVec ? calloc((size_t)t->nVec, sizeof(RowFileMap)) : NULL;
    VecHnsw **apH = t->nVec ? calloc((size_t)t->nVec, sizeof(VecHnsw *)) : NULL;
    uint32_t **aaNode = t->nVec ? calloc((size_t)t->nVec, sizeof(uint32_t *)) : NULL;
    if (!aaMap || !apRow || (t->nFts && !aFtsMap) || (t->nVec && (!aVm || !apH || !aaNode))) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory merging segments of table '%s'", t->zName);
        goto done;
    }
    uint32_t nNew = 0;
    uint64_t g = 0;
    for (int k = 0; k < nIn && rc == LP_OK; k++) {
        const Part *p = apIn[k];
        if (!(aaMap[k] = malloc(sizeof(uint32_t) * (p->nOrd ? p->nOrd : 1)))) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory merging segments of table '%s'", t->zName);
            break;
        }
        for (uint32_t o = 0; o < p->nOrd; o++, g++) {
            const MemRow *r = rowfile_row(p->pRows, o);
            uint32_t to = r && !bitset_test(&aDead[k], o) ? nNew++ : UINT32_MAX;
            aaMap[k][o] = to;
            if (aFtsMap) aFtsMap[g] = to == UINT32_MAX ? FTS_NO_DOC : to;
            if (to == UINT32_MAX) continue;
            apRow[to] = r;
        }
    }
    for (int v = 0; v < t->nVec && rc == LP_OK; v++) {
        uint32_t nNode = 0;
        rc = merge_graph(t, apIn, nIn, (const uint32_t *const *)aaMap, v, nNew, &apH[v], &aaNode[v],
                         &nNode, err);
        aVm[v] = (RowFileMap){(uint32_t)t->aVec[v].iCol, nNode, aaNode[v]};
    }
    /* The full-text segment is written beside the rows file (as a flush
    ** writes them: table_fts_write_start). */
    FtsMulti *m = NULL;
    TableFtsWrite fw;
    if (rc == LP_OK && t->nFts) {
        FtsSource *aSrc[nIn];
        uint32_t aBase[nIn];
        uint64_t b = 0;
        for (int k = 0; k < nIn; k++) {
            aSrc[k] = fts_segr_source(apIn[k]->pFtsSeg);
            aBase[k] = (uint32_t)b;
            b += apIn[k]->nOrd;
        }
        if (!(m = fts_multi_new(aSrc, aBase, nIn, err))) {
            rc = err && err->code ? err->code : LP_NOMEM;
        } else {
            snprintf(fw.zPath, sizeof(fw.zPath), "%s/seg-%" PRIu64 ".fts", t->zDir, id);
            fw.src = fts_multi_source(m);
            fw.aMap = aFtsMap;
            fw.nOrd = nNew;
            table_fts_write_start(t, &fw);
        }
    }
    if (rc == LP_OK) {
        rc = table_write_rows(t, apIn, nIn, id, nNew, apRow, aVm, t->nVec, err);
    }
    if (m) {
        rc = table_fts_write_finish(&fw, rc, err);
        fts_multi_free(m);
    }
    if (rc == LP_OK && atomic_load(&t->bNoFlush)) {
        rc = lp_err_set(err, LP_BUSY, "merge stopped: the table is being altered, dropped or closed");
    }
    for (int v = 0; v < t->nVec && rc == LP_OK; v++) {
        snprintf(zPath, sizeof(zPath), "%s/seg-%" PRIu64 ".vec%d", t->zDir, id, t->aVec[v].iCol);
        rc = table_graph_repair(t, apH[v], t->aVec[v].iCol, id, err);
        if (rc == LP_OK) rc = vec_hnsw_save(apH[v], zPath, err);
    }
    *pnNew = nNew;
done:
    for (int v = 0; v < t->nVec && apH; v++) {
        vec_hnsw_free(apH[v]);
        if (aaNode) free(aaNode[v]);
    }
    free(apH);
    free(aaNode);
    free(apRow);
    free(aFtsMap);
    free(aVm);
    if (rc != LP_OK && aaMap) {
        for (int k = 0; k < nIn; k++) free(aaMap[k]);
        free(aaMap);
        aaMap = NULL;
    }
    *paaMap = aaMap;
    return rc;
}

/* The inputs of a merge that did not replace them: changes in place may
** resume. */
static void merging_done(Table *t, Part **apIn, int nIn) {
    pthread_rwlock_wrlock(&t->lock);
    for (int k = 0; k < nIn; k++) apIn[k]->bMerging = 0;
    pthread_rwlock_unlock(&t->lock);
}

/* Merges the sealed parts [iFrom, iFrom + nIn) of t. mergeMu held. */
static int merge_run(Table *t, int iFrom, int nIn, LpError *err) {
    Part *apIn[nIn];
    Bitset aDead[nIn];
    memset(aDead, 0, sizeof(aDead));
    int rc = LP_OK;
    /* 1. The inputs and their tombstones. From here on their rows are
    ** read without the lock: no UPDATE may change them in place. */
    pthread_rwlock_wrlock(&t->lock);
    if (iFrom < 0 || iFrom + nIn > t->nPart) rc = LP_BADINPUT;
    for (int k = 0; rc == LP_OK && k < nIn; k++) {
        apIn[k] = t->apPart[iFrom + k];
        if (!apIn[k]->pRows) rc = LP_BADINPUT; /* not sealed yet */
        else if (bitset_init(&aDead[k], apIn[k]->nOrd) != LP_OK) rc = LP_NOMEM;
        else if (apIn[k]->nOrd) memcpy(aDead[k].aWord, apIn[k]->dead.aWord, 8 * BITSET_NWORD((size_t)apIn[k]->nOrd));
    }
    for (int k = 0; rc == LP_OK && k < nIn; k++) apIn[k]->bMerging = 1;
    pthread_rwlock_unlock(&t->lock);
    if (rc != LP_OK) {
        for (int k = 0; k < nIn; k++) bitset_free(&aDead[k]);
        if (rc == LP_BADINPUT) return LP_OK; /* the parts changed: nothing to do now */
        return lp_err_set(err, LP_NOMEM, "out of memory merging segments of table '%s'", t->zName);
    }
    pthread_mutex_lock(&t->flushMu);
    uint64_t id = t->nextSegId++;
    t->mergeOutId = id; /* flushes leave its files alone */
    pthread_mutex_unlock(&t->flushMu);

    /* 2. The output's files. */
    uint32_t **aaMap = NULL, nNew = 0;
    rc = merge_write(t, apIn, nIn, aDead, id, &aaMap, &nNew, err);
    for (int k = 0; k < nIn; k++) bitset_free(&aDead[k]);
    if (rc != LP_OK) {
        pthread_mutex_lock(&t->flushMu);
        t->mergeOutId = 0;
        table_remove_segment_files(t->zDir, id); /* not published */
        pthread_mutex_unlock(&t->flushMu);
        merging_done(t, apIn, nIn);
        return rc;
    }

    /* 3. Publish. */
    int bManifestTried = 0, bInputs = 1;
    Part *pOut = NULL;
    ManifestSeg *aSeg = NULL;
    Bitset dead = {0};
    char zPath[4096];
    pthread_mutex_lock(&t->flushMu);
    if (atomic_load(&t->bNoFlush)) {
        rc = lp_err_set(err, LP_BUSY, "table '%s' is being altered or dropped", t->zName);
        goto unlock;
    }
    if (bitset_init(&dead, nNew) != LP_OK) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory merging segments of table '%s'", t->zName);
        goto unlock;
    }
    size_t nDead = 0;
    pthread_rwlock_rdlock(&t->lock);
    for (int k = 0; k < nIn; k++) {
        for (uint32_t o = 0; o < apIn[k]->nOrd; o++) {
            uint32_t to = aaMap[k][o];
            if (to != UINT32_MAX && bitset_test(&apIn[k]->dead, o)) {
                bitset_set(&dead, to);
                nDead++;
            }
        }
    }
    pthread_rwlock_unlock(&t->lock);
    uint64_t deadGen = 0;
    if (nDead) {
        deadGen = t->nextSegId++;
        snprintf(zPath, sizeof(zPath), "%s/seg-%" PRIu64 ".del-%" PRIu64, t->zDir, id, deadGen);
        if ((rc = rowfile_write_dead(zPath, &dead, err)) != LP_OK) goto unlock;
    }
    if ((rc = lp_fsync_dir(t->zDir, err)) != LP_OK) goto unlock;
    /* The parts' positions cannot change while flushMu and mergeMu are
    ** held (flushes append and swap in place; truncate takes both). */
    if (!(aSeg = calloc((size_t)t->nPart, sizeof(ManifestSeg)))) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory merging segments of table '%s'", t->zName);
        goto unlock;
    }
    int nSeg = 0;
    for (int i = 0; i < t->nPart; i++) {
        const Part *p = t->apPart[i];
        if (i == iFrom) aSeg[nSeg++] = (ManifestSeg){id, nNew, deadGen, 0};
        if (i >= iFrom && i < iFrom + nIn) continue;
        if (!p->pRows) break; /* frozen parts (a failed flush) are not in the manifest */
        aSeg[nSeg++] = (ManifestSeg){p->segId, p->nOrd, p->deadGen, p->patchGen};
    }
    ManifestSeg ms = {id, nNew, deadGen, 0};
    if ((rc = table_open_sealed(t, &ms, &pOut, err)) != LP_OK) goto unlock;
    pthread_mutex_lock(t->pManifestMu);
    Manifest m;
    if ((rc = manifest_read(t->zDir, &m, err)) == LP_OK) {
        if (manifest_set_segs(&m, aSeg, nSeg, t->nextSegId) != LP_OK) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory merging segments of table '%s'", t->zName);
        } else {
            rc = manifest_write(t->zDir, &m, err);
        }
        manifest_clear(&m);
    }
    pthread_mutex_unlock(t->pManifestMu);
    /* A failed manifest write may have replaced the manifest before it
    ** failed (the folder's fsync): the output's files stay for the next
    ** start to sort out. */
    bManifestTried = 1;
    if (rc != LP_OK) goto unlock;
    pthread_rwlock_wrlock(&t->lock);
    /* Deletes since the copy above: mapped again. */
    size_t nLive = 0, nExtra = 0;
    for (int k = 0; k < nIn; k++) {
        for (uint32_t o = 0; o < apIn[k]->nOrd; o++) {
            uint32_t to = aaMap[k][o];
            if (to == UINT32_MAX) continue;
            if (!bitset_test(&apIn[k]->dead, o)) {
                nLive++;
            } else if (!bitset_test(&pOut->dead, to)) {
                bitset_set(&pOut->dead, to);
                nExtra++;
            }
        }
    }
    pOut->nLive = nLive;
    pOut->deadVer = nExtra ? 1 : 0; /* differs from its file: the next flush writes one */
    pOut->deadSavedVer = 0;
    t->apPart[iFrom] = pOut;
    memmove(t->apPart + iFrom + 1, t->apPart + iFrom + nIn,
            sizeof(Part *) * (size_t)(t->nPart - iFrom - nIn));
    t->nPart -= nIn - 1;
    table_parts_changed(t);
    t->nMerges++;
    pthread_rwlock_unlock(&t->lock);
    for (int k = 0; k < nIn; k++) table_part_free(apIn[k]);
    bInputs = 0;
    table_remove_unlisted(t->zDir, aSeg, nSeg);
    LOG_INFO("table '%s': merged %d segments into seg-%" PRIu64 " (%u rows)", t->zName, nIn, id, nNew);
    pOut = NULL;
unlock:
    if (bInputs) merging_done(t, apIn, nIn); /* still the table's */
    t->mergeOutId = 0;
    table_part_free(pOut); /* unmapped before its files go */
    if (rc != LP_OK && !bManifestTried) table_remove_segment_files(t->zDir, id); /* not published */
    pthread_mutex_unlock(&t->flushMu);
    bitset_free(&dead);
    free(aSeg);
    for (int k = 0; k < nIn; k++) free(aaMap[k]);
    free(aaMap);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Policy                                                              */

/* The next merge the policy wants: *piFrom, *pnIn; 0 when none. Under the
** read lock. */
static int pick(const Table *t, int *piFrom, int *pnIn) {
    int nSealed = 0;
    while (nSealed < t->nPart && t->apPart[nSealed]->pRows) nSealed++;
    /* A segment mostly deleted: rewritten alone. */
    for (int i = 0; i < nSealed; i++) {
        const Part *p = t->apPart[i];
        if (p->nOrd >= 64 && p->nLive * 2 < p->nOrd) {
            *piFrom = i;
            *pnIn = 1;
            return 1;
        }
    }
    /* MERGE_FACTOR adjacent segments of similar size (the largest at most
    ** MERGE_SIMILAR times the smallest, counting at least MERGE_MIN_ROWS
    ** rows each), the run with the fewest rows first. */
    int best = -1;
    size_t bestRows = SIZE_MAX;
    for (int i = 0; i + MERGE_FACTOR <= nSealed; i++) {
        size_t lo = SIZE_MAX, hi = 0, sum = 0;
        for (int k = 0; k < MERGE_FACTOR; k++) {
            size_t n = t->apPart[i + k]->nLive;
            if (n < MERGE_MIN_ROWS) n = MERGE_MIN_ROWS;
            if (n < lo) lo = n;
            if (n > hi) hi = n;
            sum += n;
        }
        if (hi <= lo * MERGE_SIMILAR && sum < bestRows) {
            best = i;
            bestRows = sum;
        }
    }
    if (best < 0) return 0;
    *piFrom = best;
    *pnIn = MERGE_FACTOR;
    return 1;
}

int table_merge_step(Table *t, LpError *err) {
    pthread_mutex_lock(&t->mergeMu);
    int iFrom = 0, nIn = 0, rc = LP_OK;
    pthread_rwlock_rdlock(&t->lock);
    int bWork = !atomic_load(&t->bNoFlush) && t->zDir && pick(t, &iFrom, &nIn);
    pthread_rwlock_unlock(&t->lock);
    if (bWork) rc = merge_run(t, iFrom, nIn, err);
    pthread_mutex_unlock(&t->mergeMu);
    return rc != LP_OK ? rc : bWork ? LP_MERGED : LP_OK;
}

int table_optimize(Table *t, int nCutoff, LpError *err) {
    if (nCutoff < 1) nCutoff = 1;
    int rc = table_flush(t, err);
    if (rc != LP_OK) return rc;
    if (!t->zDir) return LP_OK;
    pthread_mutex_lock(&t->mergeMu);
    for (;;) {
        pthread_rwlock_rdlock(&t->lock);
        int nSealed = 0, nRewrite = -1;
        while (nSealed < t->nPart && t->apPart[nSealed]->pRows) nSealed++;
        /* Down to one segment: a lone segment with deletes is rewritten. */
        if (nSealed == 1 && nCutoff == 1 && t->apPart[0]->nLive < rowfile_nrow(t->apPart[0]->pRows)) {
            nRewrite = 0;
        }
        int bStop = atomic_load(&t->bNoFlush);
        pthread_rwlock_unlock(&t->lock);
        if (bStop) {
            rc = lp_err_set(err, LP_BUSY, "table '%s' is being altered or dropped", t->zName);
            break;
        }
        if (nSealed > nCutoff) {
            /* The newest ones, which are the smallest. */
            int nIn = nSealed - nCutoff + 1;
            rc = merge_run(t, nSealed - nIn, nIn, err);
        } else if (nRewrite == 0) {
            rc = merge_run(t, 0, 1, err);
            if (rc == LP_OK) break;
        } else {
            break;
        }
        if (rc != LP_OK) break;
    }
    pthread_mutex_unlock(&t->mergeMu);
    return rc;
}

static void *merge_thread(void *arg) {
    Table *t = arg;
    LpError err;
    lp_err_clear(&err);
    int rc;
    while ((rc = table_merge_step(t, &err)) == LP_MERGED) {}
    if (rc != LP_OK && rc != LP_BUSY) {
        LOG_ERROR("table '%s': background merge failed: %s", t->zName, err.zMsg);
    }
    atomic_store(&t->bMergeQueued, 0);
    table_unref(t);
    return NULL;
}

void table_maybe_merge(Table *t) {
    if (!t->zDir || atomic_load(&t->bNoFlush)) return;
    int iFrom, nIn;
    pthread_rwlock_rdlock(&t->lock);
    int bWork = pick(t, &iFrom, &nIn);
    pthread_rwlock_unlock(&t->lock);
    int bFalse = 0;
    LOG_DEBUG("table '%s': merge check: %s (queued %d)", t->zName, bWork ? "due" : "none",
              atomic_load(&t->bMergeQueued));
    if (!bWork || !atomic_compare_exchange_strong(&t->bMergeQueued, &bFalse, 1)) return;
    table_ref(t);
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &a, merge_thread, t) != 0) {
        atomic_store(&t->bMergeQueued, 0);
        table_unref(t);
    }
    pthread_attr_destroy(&a);
}

typedef struct OptJob {
    Table *t;
    int nCutoff;
} OptJob;

static void *optimize_thread(void *arg) {
    OptJob *j = arg;
    LpError err;
    lp_err_clear(&err);
    int rc = table_optimize(j->t, j->nCutoff, &err);
    if (rc != LP_OK && rc != LP_BUSY) LOG_ERROR("table '%s': OPTIMIZE failed: %s", j->t->zName, err.zMsg);
    table_unref(j->t);
    free(j);
    return NULL;
}

int table_optimize_async(Table *t, int nCutoff, LpError *err) {
    OptJob *j = malloc(sizeof(*j));
    if (!j) return lp_err_set(err, LP_NOMEM, "out of memory");
    *j = (OptJob){t, nCutoff};
    table_ref(t);
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&th, &a, optimize_thread, j);
    pthread_attr_destroy(&a);
    if (e != 0) {
        table_unref(t);
        free(j);
        return lp_err_set(err, LP_NOMEM, "cannot start OPTIMIZE of table '%s': out of threads", t->zName);
    }
    return LP_OK;
}
