/*
** wal.c — the write-ahead log (see wal.h for the contract).
**
** Files. The folder holds files named by the LSN of their first record,
** 16 lower-case hex digits and ".wal" (0000000000000001.wal, ...), so
** sorting the names sorts the log. Only the newest file is appended to.
**
** File header, 32 bytes, little-endian:
**
**   OFFSET  SIZE  DESCRIPTION
**   0       8     magic "LOUPEWAL"
**   8       4     format version (1)
**   12      4     reserved, 0
**   16      8     LSN of the file's first record
**   24      4     CRC-32C of bytes 0..23
**   28      4     reserved, 0
**
** Then records, back to back, each:
**
**   0       4     payload length n, 1 .. 2^30
**   4       4     CRC-32C of bytes 8 .. 16+n (the LSN and the payload)
**   8       8     LSN: the file's first LSN for the first record, then +1
**   16      n     payload (the table's encoding: see table.c)
**
** An append is one pwrite of header and payload at the end of the file;
** on failure the file is cut back to its old length. Durability comes from
** fdatasync on the file, and a new file's name is made durable by an
** fsync of the folder before anything is appended to it.
*/
#include "table/wal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "table/manifest.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/log.h"

#define WAL_MAGIC "LOUPEWAL"
#define WAL_VERSION 1
#define WAL_HDR 32
#define REC_HDR 16

struct Wal {
    char *zDir;
    WalSync sync;
    int fd;                 /* current file, appended to */
    char *zFile;            /* its path */
    uint64_t off;           /* its length */
    uint64_t nOldBytes;     /* bytes in the older files */
    pthread_mutex_t mu;     /* guards everything below */
    pthread_cond_t cv;      /* a sync finished, or the flusher must stop */
    uint64_t nextLsn;       /* LSN of the next append */
    uint64_t writtenLsn;    /* last LSN written to a file */
    uint64_t syncedLsn;     /* last LSN known durable */
    int bSyncing;           /* a thread is in fdatasync */
    int bFailed;            /* a sync failed: refuse everything */
    uint64_t nSync;         /* fdatasync calls */
    int bStop;              /* the flusher thread must exit */
    int bThread;            /* the flusher thread runs */
    pthread_t thread;
    /* Files, oldest first: first LSN of each (for wal_drop_before). */
    uint64_t *aFirst;
    uint64_t *aSize;
    int nFile;
};

int wal_sync_parse(const char *z) {
    if (!strcasecmp(z, "commit") || !strcmp(z, "1")) return WAL_SYNC_COMMIT;
    if (!strcasecmp(z, "1s") || !strcmp(z, "0") || !strcmp(z, "2")) return WAL_SYNC_1S;
    if (!strcasecmp(z, "none")) return WAL_SYNC_NONE;
    return -1;
}

const char *wal_sync_name(WalSync s) {
    return s == WAL_SYNC_COMMIT ? "commit" : s == WAL_SYNC_1S ? "1s" : "none";
}

static char *file_path(const char *zDir, uint64_t first) {
    char *z = NULL;
    if (asprintf(&z, "%s/%016llx.wal", zDir, (unsigned long long)first) < 0) return NULL;
    return z;
}

static void put_header(uint8_t *h, uint64_t first) {
    memset(h, 0, WAL_HDR);
    memcpy(h, WAL_MAGIC, 8);
    put_u32le(h + 8, WAL_VERSION);
    put_u64le(h + 16, first);
    put_u32le(h + 24, crc32c_update(0, h, 24));
}

static int add_file(Wal *w, uint64_t first, uint64_t size) {
    uint64_t *a = realloc(w->aFirst, sizeof(uint64_t) * (size_t)(w->nFile + 1));
    if (!a) return LP_NOMEM;
    w->aFirst = a;
    a = realloc(w->aSize, sizeof(uint64_t) * (size_t)(w->nFile + 1));
    if (!a) return LP_NOMEM;
    w->aSize = a;
    w->aFirst[w->nFile] = first;
    w->aSize[w->nFile++] = size;
    return LP_OK;
}

/* Creates the file for records from lsn first and makes it current. */
static int new_file(Wal *w, uint64_t first, LpError *err) {
    char *zPath = file_path(w->zDir, first);
    if (!zPath) return lp_err_set(err, LP_NOMEM, "out of memory opening the WAL");
    int fd = open(zPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    uint8_t h[WAL_HDR];
    put_header(h, first);
    if (fd < 0 || pwrite(fd, h, WAL_HDR, 0) != WAL_HDR || fdatasync(fd) != 0) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(zPath);
        }
        lp_err_set(err, LP_IOERR, "cannot create WAL file %s: %s", zPath, strerror(e));
        free(zPath);
        return LP_IOERR;
    }
    if (lp_fsync_dir(w->zDir, err) != LP_OK || add_file(w, first, WAL_HDR) != LP_OK) {
        close(fd);
        unlink(zPath);
        free(zPath);
        return err && err->code ? err->code : lp_err_set(err, LP_NOMEM, "out of memory opening the WAL");
    }
    if (w->fd >= 0) close(w->fd);
    free(w->zFile);
    w->fd = fd;
    w->zFile = zPath;
    w->off = WAL_HDR;
    return LP_OK;
}

/* Is the record at off of the n-byte map intact? Then *pLen is its payload
** length and *pLsn its LSN. */
static int record_ok(const uint8_t *m, uint64_t size, uint64_t off, uint32_t *pLen, uint64_t *pLsn) {
    if (size - off < REC_HDR) return 0;
    uint32_t n = get_u32le(m + off);
    if (n == 0 || n > WAL_MAX_RECORD || size - off - REC_HDR < n) return 0;
    if (crc32c_update(0, m + off + 8, 8 + (size_t)n) != get_u32le(m + off + 4)) return 0;
    *pLen = n;
    *pLsn = get_u64le(m + off + 8);
    return 1;
}

static int all_zero(const uint8_t *p, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        if (p[i]) return 0;
    }
    return 1;
}

/* Replays one file. *pnLsn: the LSN expected next (in and out); *pEnd: the
** length of the intact prefix, which is less than the file's only when the
** last file ends in a torn record. */
static int replay_file(Wal *w, const char *zPath, uint64_t first, int bLast, uint64_t firstLsn,
                       uint64_t *pnLsn, WalRecordFn xRecord, void *ctx, uint64_t *pEnd,
                       uint64_t *pSize, LpError *err) {
    int fd = open(zPath, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return lp_err_set(err, LP_IOERR, "cannot read WAL file %s: %s", zPath, strerror(e));
    }
    uint64_t size = (uint64_t)st.st_size;
    *pSize = size;
    const uint8_t *m = NULL;
    if (size > 0) {
        m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return lp_err_set(err, LP_IOERR, "cannot map WAL file %s: %s", zPath, strerror(e));
        }
    }
    close(fd);
    int rc = LP_OK;
    uint64_t off = WAL_HDR;
    if (size < WAL_HDR || memcmp(m, WAL_MAGIC, 8) != 0 ||
        get_u32le(m + 24) != crc32c_update(0, m, 24)) {
        /* A crash while creating the newest file leaves a short or zeroed
        ** header: nothing was appended to it yet. */
        if (bLast && (size < WAL_HDR || all_zero(m, size))) {
            *pEnd = 0;
            goto out;
        }
        rc = lp_err_set(err, LP_CORRUPT, "WAL file %s: bad header (not a loupe WAL file, or damaged)",
                        zPath);
        goto out;
    }
    if (get_u32le(m + 8) != WAL_VERSION) {
        rc = lp_err_set(err, LP_CORRUPT, "WAL file %s: format version %u, this loupe reads %d",
                        zPath, get_u32le(m + 8), WAL_VERSION);
        goto out;
    }
    if (get_u64le(m + 16) != first || (*pnLsn && first != *pnLsn)) {
        rc = lp_err_set(err, LP_CORRUPT, "WAL file %s: starts at LSN %llu, expected %llu", zPath,
                        (unsigned long long)get_u64le(m + 16),
                        (unsigned long long)(*pnLsn ? *pnLsn : first));
        goto out;
    }
    uint64_t lsn = first;
    while (off < size) {
        uint32_t n;
        uint64_t recLsn;
        if (!record_ok(m, size, off, &n, &recLsn)) {
            /* Torn tail, or damage in the middle? A record that runs past
            ** the end, zeros to the end, or garbage with no intact record
            ** where the next one would start: torn. */
            uint32_t nDecl = size - off >= 4 ? get_u32le(m + off) : 0;
            uint64_t next = off + REC_HDR + (uint64_t)nDecl;
            uint32_t n2;
            uint64_t lsn2;
            int bTorn = size - off < REC_HDR || nDecl == 0 || nDecl > WAL_MAX_RECORD ||
                        next > size || all_zero(m + off, size - off) ||
                        !record_ok(m, size, next, &n2, &lsn2);
            if (bTorn && bLast) break;
            rc = lp_err_set(err, LP_CORRUPT,
                            "WAL file %s is damaged at offset %llu (record %llu fails its checksum)",
                            zPath, (unsigned long long)off, (unsigned long long)lsn);
            err->pos = (int64_t)off;
            goto out;
        }
        if (recLsn != lsn) {
            rc = lp_err_set(err, LP_CORRUPT, "WAL file %s: record at offset %llu has LSN %llu, expected %llu",
                            zPath, (unsigned long long)off, (unsigned long long)recLsn,
                            (unsigned long long)lsn);
            goto out;
        }
        if (xRecord && lsn >= firstLsn) {
            rc = xRecord(ctx, lsn, m + off + REC_HDR, n, err);
            if (rc != LP_OK) goto out;
        }
        lsn++;
        off += REC_HDR + (uint64_t)n;
    }
    *pnLsn = lsn;
    *pEnd = off;
out:
    if (m) munmap((void *)m, size);
    return rc;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The first LSNs of the folder's log files, sorted. */
static int list_files(const char *zDir, uint64_t **paFirst, int *pn, LpError *err) {
    DIR *d = opendir(zDir);
    if (!d) return lp_err_set(err, LP_IOERR, "cannot read folder %s: %s", zDir, strerror(errno));
    uint64_t *a = NULL;
    int n = 0, nAlloc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *z = e->d_name;
        if (strlen(z) != 20 || strcmp(z + 16, ".wal") != 0) continue;
        char *zEnd;
        uint64_t v = strtoull(z, &zEnd, 16);
        if (zEnd != z + 16) continue;
        if (n == nAlloc) {
            nAlloc = nAlloc ? nAlloc * 2 : 8;
            uint64_t *aNew = realloc(a, sizeof(uint64_t) * (size_t)nAlloc);
            if (!aNew) {
                free(a);
                closedir(d);
                return lp_err_set(err, LP_NOMEM, "out of memory reading %s", zDir);
            }
            a = aNew;
        }
        a[n++] = v;
    }
    closedir(d);
    if (n) qsort(a, (size_t)n, sizeof(uint64_t), cmp_u64);
    *paFirst = a;
    *pn = n;
    return LP_OK;
}

static int do_sync(Wal *w) {
    /* mu held on entry and exit. */
    uint64_t target = w->writtenLsn;
    int fd = w->fd;
    w->bSyncing = 1;
    pthread_mutex_unlock(&w->mu);
    int r = fdatasync(fd);
    int e = errno;
    pthread_mutex_lock(&w->mu);
    w->bSyncing = 0;
    w->nSync++;
    if (r != 0) {
        if (!w->bFailed) LOG_ERROR("WAL %s: fdatasync failed: %s; writes are refused until restart",
                                   w->zFile, strerror(e));
        w->bFailed = 1;
    } else if (target > w->syncedLsn) {
        w->syncedLsn = target;
    }
    pthread_cond_broadcast(&w->cv);
    return r;
}

static void *flusher(void *arg) {
    Wal *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->bStop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (w->bStop) break;
        if (!w->bFailed && !w->bSyncing && w->syncedLsn < w->writtenLsn) do_sync(w);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int wal_open(const char *zDir, WalSync sync, uint64_t firstLsn, WalRecordFn xRecord, void *ctx,
             Wal **ppWal, LpError *err) {
    *ppWal = NULL;
    /* The folder's name must be durable before any record in it is
    ** acknowledged. */
    int rc0 = lp_mkdir_durable(zDir, err);
    if (rc0 != LP_OK) return rc0;
    Wal *w = calloc(1, sizeof(*w));
    if (!w || !(w->zDir = strdup(zDir))) {
        free(w);
        return lp_err_set(err, LP_NOMEM, "out of memory opening the WAL in %s", zDir);
    }
    w->fd = -1;
    w->sync = sync;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    uint64_t *aFirst = NULL;
    int nFirst = 0;
    int rc = list_files(zDir, &aFirst, &nFirst, err);
    uint64_t nextLsn = 0;   /* 0: not known yet */
    for (int i = 0; rc == LP_OK && i < nFirst; i++) {
        char *zPath = file_path(zDir, aFirst[i]);
        uint64_t end = 0, size = 0;
        int bLast = i == nFirst - 1;
        if (!zPath) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory opening the WAL in %s", zDir);
            break;
        }
        rc = replay_file(w, zPath, aFirst[i], bLast, firstLsn, &nextLsn, xRecord, ctx, &end, &size, err);
        if (rc == LP_OK && bLast && end < size) {
            if (end == 0) {
                /* A header that never made it: drop the file, start anew. */
                LOG_WARN("WAL file %s has no complete header (a crash while creating it): removed",
                         zPath);
                if (unlink(zPath) != 0) {
                    rc = lp_err_set(err, LP_IOERR, "cannot remove %s: %s", zPath, strerror(errno));
                }
                nextLsn = aFirst[i];
            } else {
                LOG_WARN("WAL file %s: torn record at offset %llu (a crash during a write): "
                         "%llu bytes cut off", zPath, (unsigned long long)end,
                         (unsigned long long)(size - end));
                if (truncate(zPath, (off_t)end) != 0) {
                    rc = lp_err_set(err, LP_IOERR, "cannot truncate %s: %s", zPath, strerror(errno));
                }
                size = end;
            }
        }
        if (rc == LP_OK && !(bLast && end == 0)) {
            if (bLast) {
                int fd = open(zPath, O_WRONLY | O_CLOEXEC);
                if (fd < 0) {
                    rc = lp_err_set(err, LP_IOERR, "cannot open %s: %s", zPath, strerror(errno));
                } else {
                    w->fd = fd;
                    w->zFile = zPath;
                    zPath = NULL;
                    w->off = size;
                }
            } else {
                w->nOldBytes += size;
            }
            if (rc == LP_OK && add_file(w, aFirst[i], size) != LP_OK) {
                rc = lp_err_set(err, LP_NOMEM, "out of memory opening the WAL in %s", zDir);
            }
        }
        free(zPath);
    }
    free(aFirst);
    if (rc == LP_OK) {
        if (nextLsn < firstLsn) nextLsn = firstLsn;
        if (nextLsn == 0) nextLsn = 1;
        w->nextLsn = nextLsn;
        w->writtenLsn = w->syncedLsn = nextLsn - 1;
        if (w->fd < 0) rc = new_file(w, nextLsn, err);
    }
    if (rc == LP_OK && sync == WAL_SYNC_1S) {
        if (pthread_create(&w->thread, NULL, flusher, w) != 0) {
            rc = lp_err_set(err, LP_LIMIT, "cannot start the WAL flush thread for %s", zDir);
        } else {
            w->bThread = 1;
        }
    }
    if (rc != LP_OK) {
        wal_close(w);
        return rc;
    }
    *ppWal = w;
    return LP_OK;
}

void wal_close(Wal *w) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->bStop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (w->bThread) pthread_join(w->thread, NULL);
    if (w->fd >= 0) {
        if (!w->bFailed && w->syncedLsn < w->writtenLsn && fdatasync(w->fd) != 0) {
            LOG_ERROR("WAL %s: fdatasync at close failed: %s", w->zFile, strerror(errno));
        }
        close(w->fd);
    }
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->zFile);
    free(w->zDir);
    free(w->aFirst);
    free(w->aSize);
    free(w);
}

int wal_append(Wal *w, const void *p, size_t n, uint64_t *pLsn, LpError *err) {
    if (n == 0 || n > WAL_MAX_RECORD) {
        return lp_err_set(err, LP_LIMIT, "a write of %zu bytes is too large for one WAL record (max %u)",
                          n, WAL_MAX_RECORD);
    }
    pthread_mutex_lock(&w->mu);
    int bFailed = w->bFailed;
    uint64_t lsn = w->nextLsn;
    pthread_mutex_unlock(&w->mu);
    if (bFailed) {
        return lp_err_set(err, LP_IOERR, "WAL %s failed to sync earlier; writes are refused until the "
                          "server restarts", w->zFile);
    }
    uint8_t h[REC_HDR];
    put_u32le(h, (uint32_t)n);
    put_u64le(h + 8, lsn);
    put_u32le(h + 4, crc32c_update(crc32c_update(0, h + 8, 8), p, n));
    struct iovec iov[2] = {{h, REC_HDR}, {(void *)p, n}};
    size_t nWant = REC_HDR + n, nDone = 0;
    int e = 0;
    while (nDone < nWant) {
        /* pwritev may write part of it (disk full): go on until done or error. */
        struct iovec v[2];
        int nv = 0;
        size_t skip = nDone;
        for (int i = 0; i < 2; i++) {
            if (skip >= iov[i].iov_len) {
                skip -= iov[i].iov_len;
                continue;
            }
            v[nv].iov_base = (char *)iov[i].iov_base + skip;
            v[nv++].iov_len = iov[i].iov_len - skip;
            skip = 0;
        }
        ssize_t r = pwritev(w->fd, v, nv, (off_t)(w->off + nDone));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            e = r < 0 ? errno : ENOSPC;
            break;
        }
        nDone += (size_t)r;
    }
    if (nDone < nWant) {
        /* Undo the partial record so that the next append follows intact
        ** ones. Should even that fail, replay sees a torn record followed
        ** by nothing valid, or the next record's bytes where a valid one
        ** should be: the log would need repair. Refuse further writes. */
        if (ftruncate(w->fd, (off_t)w->off) != 0) {
            pthread_mutex_lock(&w->mu);
            w->bFailed = 1;
            pthread_mutex_unlock(&w->mu);
        }
        return lp_err_set(err, LP_IOERR, "cannot write to WAL file %s: %s", w->zFile, strerror(e));
    }
    pthread_mutex_lock(&w->mu);
    w->off += nWant;
    w->nextLsn = lsn + 1;
    w->writtenLsn = lsn;
    w->aSize[w->nFile - 1] = w->off;
    pthread_mutex_unlock(&w->mu);
    if (pLsn) *pLsn = lsn;
    return LP_OK;
}

int wal_commit(Wal *w, uint64_t lsn, LpError *err) {
    int rc = LP_OK;
    pthread_mutex_lock(&w->mu);
    if (w->sync == WAL_SYNC_COMMIT) {
        while (!w->bFailed && w->syncedLsn < lsn) {
            if (!w->bSyncing) {
                do_sync(w);
            } else {
                pthread_cond_wait(&w->cv, &w->mu);
            }
        }
    }
    if (w->bFailed && w->syncedLsn < lsn) {
        rc = lp_err_set(err, LP_IOERR, "WAL %s could not be synced to disk; the write may be lost "
                        "and writes are refused until the server restarts", w->zFile);
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int wal_commit_would_wait(Wal *w, uint64_t lsn) {
    pthread_mutex_lock(&w->mu);
    int b = w->sync == WAL_SYNC_COMMIT && !w->bFailed && w->syncedLsn < lsn;
    pthread_mutex_unlock(&w->mu);
    return b;
}

uint64_t wal_next_lsn(Wal *w) {
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->nextLsn;
    pthread_mutex_unlock(&w->mu);
    return n;
}

int wal_rotate(Wal *w, uint64_t minBytes, LpError *err) {
    pthread_mutex_lock(&w->mu);
    while (w->bSyncing) pthread_cond_wait(&w->cv, &w->mu);
    if (w->syncedLsn < w->writtenLsn) do_sync(w);
    int bFailed = w->bFailed;
    uint64_t next = w->nextLsn;
    uint64_t nCur = w->off;
    pthread_mutex_unlock(&w->mu);
    if (bFailed) return lp_err_set(err, LP_IOERR, "WAL %s failed to sync; cannot rotate", w->zFile);
    if (w->aFirst[w->nFile - 1] == next) return LP_OK; /* current file is empty */
    if (nCur < minBytes) return LP_OK;                  /* kept, synced */
    /* Hold mu across the swap so that no sync runs on a closed fd. */
    pthread_mutex_lock(&w->mu);
    uint64_t nOld = w->off;
    int rc = new_file(w, next, err);
    if (rc == LP_OK) w->nOldBytes += nOld;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int wal_drop_before(Wal *w, uint64_t lsn, LpError *err) {
    pthread_mutex_lock(&w->mu);
    int nDrop = 0;
    /* File i holds [aFirst[i], aFirst[i+1]); the current one is kept. */
    while (nDrop < w->nFile - 1 && w->aFirst[nDrop + 1] <= lsn) nDrop++;
    int rc = LP_OK;
    int nDone = 0;
    for (; nDone < nDrop; nDone++) {
        char *zPath = file_path(w->zDir, w->aFirst[nDone]);
        if (!zPath || (unlink(zPath) != 0 && errno != ENOENT)) {
            rc = lp_err_set(err, LP_IOERR, "cannot remove WAL file %s: %s", zPath ? zPath : "?",
                            zPath ? strerror(errno) : "out of memory");
            free(zPath);
            break;
        }
        free(zPath);
        w->nOldBytes -= w->aSize[nDone];
    }
    if (nDone) {
        memmove(w->aFirst, w->aFirst + nDone, sizeof(uint64_t) * (size_t)(w->nFile - nDone));
        memmove(w->aSize, w->aSize + nDone, sizeof(uint64_t) * (size_t)(w->nFile - nDone));
        w->nFile -= nDone;
    }
    pthread_mutex_unlock(&w->mu);
    if (rc == LP_OK && nDone) rc = lp_fsync_dir(w->zDir, err);
    return rc;
}

uint64_t wal_bytes(Wal *w) {
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->nOldBytes + w->off;
    pthread_mutex_unlock(&w->mu);
    return n;
}

uint64_t wal_sync_count(Wal *w) {
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->nSync;
    pthread_mutex_unlock(&w->mu);
    return n;
}
