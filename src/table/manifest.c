/*
** manifest.c — see manifest.h.
**
** Format, version 1: UTF-8 text, two parts.
**
**   {"format":1,"table":"t","schema_version":1,"wal_first_lsn":0,
**    "wal_dir":"wal","next_id_floor":0,
**    "rebuild":{"column":"v","after_id":1234},
**    "schema":{"columns":[...],"options":[...]}}
**   crc32c 1a2b3c4d
**
** wal_dir names the folder of the log (ALTER TABLE writes the new version
** of a table into a new one and switches by rewriting the manifest);
** next_id_floor keeps automatic ids from going back after such a copy;
** rebuild (absent when none) is a REBUILD EMBEDDINGS to resume.
** "segments" (absent: none) lists the sealed segments, in row order (ids unique,
** not ordered: a merged segment takes a new id in its inputs' place):
**   "segments":[{"id":3,"ords":100000,"del":2,"patch":5},...],"next_seg":6
**   ("patch": the segment's patch file generation, absent when none)
** wal_first_lsn is then the first log record they do not cover.
**
** The first line is one JSON object (compact, no newline inside); the
** second holds the CRC-32C of the first line's bytes (without its newline)
** as eight lower-case hex digits. The schema object is schema_to_json's.
** A reader refuses a file whose checksum does not match or whose "format"
** is newer than it knows.
*/
#include "table/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/crc32c.h"

int lp_fsync_dir(const char *zDir, LpError *err) {
    int fd = open(zDir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return lp_err_set(err, LP_IOERR, "cannot sync folder %s: %s", zDir, strerror(e));
    }
    close(fd);
    return LP_OK;
}

int lp_mkdir_durable(const char *zDir, LpError *err) {
    if (mkdir(zDir, 0755) != 0 && errno != EEXIST) {
        return lp_err_set(err, LP_IOERR, "cannot create folder %s: %s", zDir, strerror(errno));
    }
    size_t n = strlen(zDir);
    while (n > 1 && zDir[n - 1] == '/') n--;
    while (n > 0 && zDir[n - 1] != '/') n--;
    char *zUp = n ? strndup(zDir, n > 1 ? n - 1 : 1) : strdup(".");
    if (!zUp) return lp_err_set(err, LP_NOMEM, "out of memory creating folder %s", zDir);
    int rc = lp_fsync_dir(zUp, err);
    free(zUp);
    return rc;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = ENOSPC;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Is a segment with this id already in m's list? (The list is short: a
** table keeps O(log rows) segments.) */
static int seg_listed(const Manifest *m, uint64_t id) {
    for (int i = 0; i < m->nSeg; i++) {
        if (m->aSeg[i].id == id) return 1;
    }
    return 0;
}

int manifest_write(const char *zDir, const Manifest *m, LpError *err) {
    json_t *jSchema = schema_to_json(m->pSchema);
    json_t *o = jSchema ? json_pack("{s:i, s:s, s:I, s:I, s:o}", "format", MANIFEST_FORMAT, "table",
                                    m->zTable, "schema_version", (json_int_t)m->schemaVersion,
                                    "wal_first_lsn", (json_int_t)m->walFirstLsn, "schema", jSchema)
                        : NULL;
    if (o) {
        json_object_set_new(o, "wal_dir", json_string(m->zWalDir ? m->zWalDir : "wal"));
        json_object_set_new(o, "next_id_floor", json_integer(m->nextIdFloor));
        json_t *a = json_array();
        for (int i = 0; a && i < m->nSeg; i++) {
            json_t *e = json_pack("{s:I, s:I, s:I}", "id", (json_int_t)m->aSeg[i].id, "ords",
                                  (json_int_t)m->aSeg[i].nOrd, "del", (json_int_t)m->aSeg[i].deadGen);
            if (e && m->aSeg[i].patchGen) json_object_set_new(e, "patch", json_integer((json_int_t)m->aSeg[i].patchGen));
            json_array_append_new(a, e);
        }
        if (m->nSeg) json_object_set_new(o, "segments", a);
        else json_decref(a);
        if (m->nextSegId) json_object_set_new(o, "next_seg", json_integer((json_int_t)m->nextSegId));
        if (m->zRebuildCol) {
            json_object_set_new(o, "rebuild", json_pack("{s:s, s:I}", "column", m->zRebuildCol,
                                                         "after_id", (json_int_t)m->rebuildAfterId));
        }
    }
    char *zJson = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!zJson) return lp_err_set(err, LP_NOMEM, "out of memory writing the manifest of %s", zDir);
    char zTail[32];
    snprintf(zTail, sizeof(zTail), "\ncrc32c %08x\n", crc32c_update(0, zJson, strlen(zJson)));
    char zTmp[4096], zPath[4096];
    snprintf(zTmp, sizeof(zTmp), "%s/manifest.tmp", zDir);
    snprintf(zPath, sizeof(zPath), "%s/manifest", zDir);
    int rc = LP_OK;
    int fd = open(zTmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write_all(fd, zJson, strlen(zJson)) || write_all(fd, zTail, strlen(zTail)) ||
        fsync(fd) != 0) {
        rc = lp_err_set(err, LP_IOERR, "cannot write %s: %s", zTmp, strerror(errno));
    }
    if (fd >= 0) close(fd);
    free(zJson);
    if (rc == LP_OK && rename(zTmp, zPath) != 0) {
        rc = lp_err_set(err, LP_IOERR, "cannot rename %s to %s: %s", zTmp, zPath, strerror(errno));
    }
    if (rc != LP_OK) {
        unlink(zTmp);
        return rc;
    }
    return lp_fsync_dir(zDir, err);
}

int manifest_read(const char *zDir, Manifest *m, LpError *err) {
    memset(m, 0, sizeof(*m));
    char zPath[4096];
    snprintf(zPath, sizeof(zPath), "%s/manifest", zDir);
    FILE *f = fopen(zPath, "rbe");
    if (!f) {
        if (errno == ENOENT) return lp_err_set(err, LP_NOTFOUND, "%s does not exist", zPath);
        return lp_err_set(err, LP_IOERR, "cannot open %s: %s", zPath, strerror(errno));
    }
    char *zBuf = NULL;
    size_t nBuf = 0;
    int rc = LP_OK;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size > (16 << 20)) {
        rc = lp_err_set(err, LP_CORRUPT, "%s: not a manifest (unreadable or over 16 MB)", zPath);
    } else if (!(zBuf = malloc((size_t)st.st_size + 1))) {
        rc = lp_err_set(err, LP_NOMEM, "out of memory reading %s", zPath);
    } else {
        nBuf = fread(zBuf, 1, (size_t)st.st_size, f);
        zBuf[nBuf] = 0;
    }
    fclose(f);
    if (rc != LP_OK) {
        free(zBuf);
        return rc;
    }
    /* "<json>\ncrc32c xxxxxxxx\n" */
    char *zNl = memchr(zBuf, '\n', nBuf);
    unsigned crc = 0;
    char zEnd = 0;
    if (!zNl || sscanf(zNl + 1, "crc32c %8x%c", &crc, &zEnd) != 2 || zEnd != '\n' ||
        crc != crc32c_update(0, zBuf, (size_t)(zNl - zBuf))) {
        free(zBuf);
        return lp_err_set(err, LP_CORRUPT, "%s is damaged: its checksum does not match its content",
                          zPath);
    }
    json_error_t je;
    json_t *o = json_loadb(zBuf, (size_t)(zNl - zBuf), 0, &je);
    free(zBuf);
    if (!o) return lp_err_set(err, LP_CORRUPT, "%s: bad JSON at column %d: %s", zPath, je.column, je.text);
    json_int_t fmt = json_integer_value(json_object_get(o, "format"));
    const char *zTable = json_string_value(json_object_get(o, "table"));
    if (fmt < 1 || fmt > MANIFEST_FORMAT) {
        rc = lp_err_set(err, LP_CORRUPT, "%s: format version %lld, this loupe reads up to %d", zPath,
                        (long long)fmt, MANIFEST_FORMAT);
    } else if (!zTable || !(m->zTable = strdup(zTable))) {
        rc = lp_err_set(err, zTable ? LP_NOMEM : LP_CORRUPT, "%s: no table name", zPath);
    } else if (!(m->pSchema = schema_from_json(json_object_get(o, "schema"), err))) {
        char zMsg[LP_ERRMSG_MAX];
        snprintf(zMsg, sizeof(zMsg), "%s", err ? err->zMsg : "");
        rc = lp_err_set(err, err && err->code ? err->code : LP_CORRUPT, "%s: %s", zPath, zMsg);
    } else {
        m->schemaVersion = (uint64_t)json_integer_value(json_object_get(o, "schema_version"));
        m->walFirstLsn = (uint64_t)json_integer_value(json_object_get(o, "wal_first_lsn"));
        m->nextIdFloor = json_integer_value(json_object_get(o, "next_id_floor"));
        const char *zWal = json_string_value(json_object_get(o, "wal_dir"));
        const json_t *jr = json_object_get(o, "rebuild");
        const char *zCol = json_string_value(json_object_get(jr, "column"));
        if (zWal && (!*zWal || strchr(zWal, '/') || zWal[0] == '.')) {
            rc = lp_err_set(err, LP_CORRUPT, "%s: bad wal_dir '%s'", zPath, zWal);
        } else if ((zWal && !(m->zWalDir = strdup(zWal))) || (zCol && !(m->zRebuildCol = strdup(zCol)))) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory reading %s", zPath);
        }
        m->rebuildAfterId = json_integer_value(json_object_get(jr, "after_id"));
        const json_t *js = json_object_get(o, "segments");
        size_t nSeg = json_array_size(js);
        m->nextSegId = (uint64_t)json_integer_value(json_object_get(o, "next_seg"));
        if (rc == LP_OK && js && (!json_is_array(js) || nSeg > 100000)) {
            rc = lp_err_set(err, LP_CORRUPT, "%s: bad segment list", zPath);
        } else if (rc == LP_OK && nSeg && !(m->aSeg = calloc(nSeg, sizeof(ManifestSeg)))) {
            rc = lp_err_set(err, LP_NOMEM, "out of memory reading %s", zPath);
        }
        for (size_t i = 0; rc == LP_OK && i < nSeg; i++) {
            const json_t *e = json_array_get(js, i);
            json_int_t id = json_integer_value(json_object_get(e, "id"));
            json_int_t nOrd = json_integer_value(json_object_get(e, "ords"));
            json_int_t del = json_integer_value(json_object_get(e, "del"));
            json_int_t patch = json_integer_value(json_object_get(e, "patch")); /* 0 when absent */
            if (!json_is_integer(json_object_get(e, "id")) || id <= 0 || nOrd < 0 ||
                nOrd > (json_int_t)UINT32_MAX - 1 || del < 0 || (uint64_t)id >= m->nextSegId ||
                (uint64_t)del >= m->nextSegId || patch < 0 || (uint64_t)patch >= m->nextSegId ||
                seg_listed(m, (uint64_t)id)) {
                rc = lp_err_set(err, LP_CORRUPT, "%s: segment entry %zu is malformed", zPath, i);
                break;
            }
            m->aSeg[i] = (ManifestSeg){(uint64_t)id, (uint32_t)nOrd, (uint64_t)del, (uint64_t)patch};
            m->nSeg++;
        }
    }
    json_decref(o);
    if (rc != LP_OK) manifest_clear(m);
    return rc;
}

int manifest_set_segs(Manifest *dst, const ManifestSeg *aSeg, int nSeg, uint64_t nextSegId) {
    ManifestSeg *a = NULL;
    if (nSeg && !(a = malloc(sizeof(ManifestSeg) * (size_t)nSeg))) return LP_NOMEM;
    if (nSeg) memcpy(a, aSeg, sizeof(ManifestSeg) * (size_t)nSeg);
    free(dst->aSeg);
    dst->aSeg = a;
    dst->nSeg = nSeg;
    dst->nextSegId = nextSegId;
    return LP_OK;
}

void manifest_clear(Manifest *m) {
    free(m->aSeg);
    free(m->zTable);
    free(m->zWalDir);
    free(m->zRebuildCol);
    schema_free(m->pSchema);
    memset(m, 0, sizeof(*m));
}
