/*
** powercut.c — an LD_PRELOAD shim that records what a process has made
** durable, so that a test can rebuild the folder a power cut would leave.
**
** Contract. Loaded into a process with
**     LD_PRELOAD=<build>/tests/powercut/liblp_powercut.so
**     LOUPE_POWERCUT_DIR=/abs/watched/folder      (must exist)
**     LOUPE_POWERCUT_SHADOW=/abs/shadow/folder    (fresh: absent or empty,
**                                                  outside the watched one)
** the shim keeps in the shadow folder a copy of what the minimal POSIX
** durability rules (those of ALICE and CrashMonkey) say would survive a
** power cut in the watched tree:
**   (1) At load (constructor) the whole watched tree counts as durable:
**       every file's content and every folder's listing is copied.
**   (2) fsync(fd) or fdatasync(fd) of a regular file in the tree makes its
**       current content durable (under the file's identity, not its name).
**   (3) fsync(fd) or fdatasync(fd) of a folder in the tree makes its
**       current listing durable: name -> identity, for files and folders.
**       Nothing else makes a name durable: a create, rename or unlink not
**       followed by an fsync of its folder is lost, and the old name keeps
**       pointing at the old identity (whose content is never deleted from
**       the shadow).
**   (4) The identity of a file or folder is (inode, serial): serial[ino]
**       starts at 0 and is bumped each time a file or folder with that
**       inode is created in the tree (open/openat/creat with O_CREAT that
**       did create it, mkdir/mkdirat), so a reused inode number is a new
**       identity.
** tests/powercut/reconstruct.py rebuilds a folder from the shadow (strict:
** exactly these rules; torn: an unsynced append may have partly reached
** the disk). The model is described in tests/powercut/README.md.
**
** Shadow layout (every file written to a temporary name and renamed, so a
** SIGKILL at any point leaves old or new, never half):
**   owner               pid of the process that took the snapshot
**   root                "<ino> <serial> <dev>\n<realpath of the tree>\n",
**                       written last by the constructor: the snapshot is
**                       complete once it exists
**   serials             one "<ino> <serial>\n" line per creation in the
**                       tree, appended (latest line per inode wins)
**   f-<ino>-<serial>    durable content of that file
**   d-<ino>-<serial>    durable listing of that folder: one line per entry,
**                       "<f|d> <ino> <serial> <name in hex>\n"
**
** Calls the model does not cover abort the process with a message on
** stderr rather than being silently mis-modelled: sync, syncfs,
** sync_file_range, msync, O_TMPFILE, symlinks, fopen for writing and the
** mkstemp family in the tree. An I/O error of the shim itself aborts too:
** a broken test harness must be loud.
**
** Thread safety: one mutex around the shim's state and every shadow update
** (the real fsync runs outside it). Processes forked or spawned with the
** same environment (an ASan symbolizer, say) find the shadow owned by a
** living process and leave it alone (the shim is then inactive there).
** The shim does its own I/O with raw syscalls or functions it does not
** intercept, so it never recurses into itself.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#undef _FORTIFY_SOURCE  /* its inline open() wrappers would clash with ours */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define PC_PATH 4096

/* ---------------------------------------------------------------------
** State. Everything below is guarded by mu, except the real-function
** pointers (written once, idempotently) and bActive (set by the
** constructor before the process has other threads). */

typedef struct SerialSlot {
    uint64_t ino;       /* 0: empty slot (inode 0 is never used) */
    uint32_t serial;    /* creations of this inode seen in the tree */
} SerialSlot;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int bActive;                 /* watching: the snapshot is taken */
static char zRoot[PC_PATH];         /* realpath of the watched tree */
static size_t nRoot;                /* strlen(zRoot) */
static dev_t rootDev;               /* its device: the tree must not span others */
static char zShadow[PC_PATH];       /* the shadow folder */
static int fdSerials = -1;          /* shadow/serials, O_APPEND */
static uint64_t nTmp;               /* counter for temporary names */
static SerialSlot *aSlot;           /* open-addressing table ino -> serial */
static size_t nSlot;                /* its size, a power of two (0: none yet) */
static size_t nUsed;                /* slots in use */

/* The real functions, found with dlsym(RTLD_NEXT). */
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_creat)(const char *, mode_t);
static int (*real_creat64)(const char *, mode_t);
static int (*real_mkdir)(const char *, mode_t);
static int (*real_mkdirat)(int, const char *, mode_t);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fopen64)(const char *, const char *);

/* ---------------------------------------------------------------------
** Failing loudly. */

static void die(const char *zFmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *zFmt, ...) {
    char z[1024];
    va_list ap;
    va_start(ap, zFmt);
    int n = vsnprintf(z, sizeof(z) - 2, zFmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if (n > (int)sizeof(z) - 2) n = (int)sizeof(z) - 2;
    z[n++] = '\n';
    static const char zPre[] = "powercut shim: ";
    ssize_t r = write(2, zPre, sizeof(zPre) - 1);
    r = write(2, z, (size_t)n);
    (void)r;
    abort();
}

/* snprintf into z[n] that dies instead of truncating (paths). */
static void fmt(char *z, size_t n, const char *zFmt, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *z, size_t n, const char *zFmt, ...) {
    va_list ap;
    va_start(ap, zFmt);
    int r = vsnprintf(z, n, zFmt, ap);
    va_end(ap);
    if (r < 0 || (size_t)r >= n) die("path too long: %.200s...", z);
}

static void *next_sym(const char *zName) {
    void *p = dlsym(RTLD_NEXT, zName);
    if (!p) die("cannot find the real %s: %s", zName, dlerror());
    return p;
}

/* Resolves the real functions (idempotent, so a call made before the
** constructor ran still works). */
static void resolve(void) {
    if (real_fsync) return;
    real_fdatasync = next_sym("fdatasync");
    real_open = next_sym("open");
    real_open64 = next_sym("open64");
    real_openat = next_sym("openat");
    real_openat64 = next_sym("openat64");
    real_creat = next_sym("creat");
    real_creat64 = next_sym("creat64");
    real_mkdir = next_sym("mkdir");
    real_mkdirat = next_sym("mkdirat");
    real_fopen = next_sym("fopen");
    real_fopen64 = next_sym("fopen64");
    real_fsync = next_sym("fsync");
}

/* ---------------------------------------------------------------------
** Small I/O helpers: raw syscalls for opening (never our own wrappers). */

static int sys_open(const char *zPath, int flags, mode_t mode) {
    return (int)syscall(SYS_openat, AT_FDCWD, zPath, flags | O_CLOEXEC, mode);
}

static void write_all(int fd, const void *p, size_t n, const char *zWhat) {
    const char *z = p;
    while (n) {
        ssize_t r = write(fd, z, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("cannot write %s: %s", zWhat, r < 0 ? strerror(errno) : "short write");
        z += r;
        n -= (size_t)r;
    }
}

/* Writes n bytes as shadow/zName, atomically (temporary name + rename). */
static void shadow_put(const char *zName, const void *p, size_t n) {
    char zTmp[PC_PATH], zDst[PC_PATH];
    fmt(zTmp, sizeof(zTmp), "%s/tmp-%llu", zShadow, (unsigned long long)++nTmp);
    fmt(zDst, sizeof(zDst), "%s/%s", zShadow, zName);
    int fd = sys_open(zTmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("cannot create %s: %s", zTmp, strerror(errno));
    write_all(fd, p, n, zTmp);
    if (close(fd) != 0) die("cannot close %s: %s", zTmp, strerror(errno));
    if (rename(zTmp, zDst) != 0) die("cannot rename %s to %s: %s", zTmp, zDst, strerror(errno));
}

/* Copies the whole content of fdSrc (read from offset 0) to shadow/zName,
** atomically. */
static void shadow_copy(const char *zName, int fdSrc, const char *zSrc) {
    char zTmp[PC_PATH], zDst[PC_PATH];
    fmt(zTmp, sizeof(zTmp), "%s/tmp-%llu", zShadow, (unsigned long long)++nTmp);
    fmt(zDst, sizeof(zDst), "%s/%s", zShadow, zName);
    int fd = sys_open(zTmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("cannot create %s: %s", zTmp, strerror(errno));
    static char aBuf[1 << 16];   /* guarded by mu */
    off_t off = 0;
    for (;;) {
        ssize_t r = pread(fdSrc, aBuf, sizeof(aBuf), off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) die("cannot read %s: %s", zSrc, strerror(errno));
        if (r == 0) break;
        write_all(fd, aBuf, (size_t)r, zTmp);
        off += r;
    }
    if (close(fd) != 0) die("cannot close %s: %s", zTmp, strerror(errno));
    if (rename(zTmp, zDst) != 0) die("cannot rename %s to %s: %s", zTmp, zDst, strerror(errno));
}

/* ---------------------------------------------------------------------
** Serial numbers: ino -> number of creations seen. */

static size_t slot_of(uint64_t ino) {
    uint64_t h = ino * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 17) & (nSlot - 1);
    while (aSlot[i].ino && aSlot[i].ino != ino) i = (i + 1) & (nSlot - 1);
    return i;
}

static uint32_t serial_get(uint64_t ino) {
    if (!nSlot) return 0;
    size_t i = slot_of(ino);
    return aSlot[i].ino ? aSlot[i].serial : 0;
}

/* Records a creation of inode ino in the tree: bumps its serial, in
** memory and in shadow/serials. */
static void serial_bump(uint64_t ino) {
    if ((nUsed + 1) * 2 > nSlot) {
        size_t nOld = nSlot;
        SerialSlot *aOld = aSlot;
        nSlot = nSlot ? nSlot * 2 : 1024;
        aSlot = calloc(nSlot, sizeof(SerialSlot));
        if (!aSlot) die("out of memory (serial table of %zu slots)", nSlot);
        for (size_t i = 0; i < nOld; i++) {
            if (aOld[i].ino) aSlot[slot_of(aOld[i].ino)] = aOld[i];
        }
        free(aOld);
    }
    size_t i = slot_of(ino);
    if (!aSlot[i].ino) {
        aSlot[i].ino = ino;
        nUsed++;
    }
    aSlot[i].serial++;
    char z[64];
    int n = snprintf(z, sizeof(z), "%llu %u\n", (unsigned long long)ino, aSlot[i].serial);
    /* One short O_APPEND write: a SIGKILL cannot tear it. */
    write_all(fdSerials, z, (size_t)n, "the shadow's serials file");
}

/* ---------------------------------------------------------------------
** Where a descriptor points. */

static int in_tree(const char *zPath) {
    return strncmp(zPath, zRoot, nRoot) == 0 && (zPath[nRoot] == '/' || zPath[nRoot] == 0);
}

/* The path fd is open on (readlink of /proc/self/fd/N) into z; 0 when it
** has none (a pipe, a socket...). */
static int fd_path(int fd, char *z, size_t n) {
    char zLink[64];
    fmt(zLink, sizeof(zLink), "/proc/self/fd/%d", fd);
    ssize_t r = readlink(zLink, z, n - 1);
    if (r <= 0 || z[0] != '/') return 0;
    z[r] = 0;
    return 1;
}

static int fd_in_tree(int fd) {
    char z[PC_PATH];
    return fd_path(fd, z, sizeof(z)) && in_tree(z);
}

/* Is (dirfd, zPath) a name inside the tree? Resolves the folder part. */
static int name_in_tree(int dirfd, const char *zPath) {
    char zDir[PC_PATH], zAbs[PC_PATH];
    if (zPath[0] == '/') {
        fmt(zAbs, sizeof(zAbs), "%s", zPath);
    } else if (dirfd == AT_FDCWD) {
        if (!getcwd(zDir, sizeof(zDir))) return 0;
        fmt(zAbs, sizeof(zAbs), "%s/%s", zDir, zPath);
    } else {
        if (!fd_path(dirfd, zDir, sizeof(zDir))) return 0;
        fmt(zAbs, sizeof(zAbs), "%s/%s", zDir, zPath);
    }
    /* Resolve the folder (the name itself may not exist yet). */
    char *zSlash = strrchr(zAbs, '/');
    char zParent[PC_PATH];
    if (zSlash == zAbs) {
        fmt(zParent, sizeof(zParent), "/");
    } else {
        fmt(zParent, sizeof(zParent), "%.*s", (int)(zSlash - zAbs), zAbs);
    }
    char zReal[PATH_MAX];
    if (!realpath(zParent, zReal)) return 0;
    char zFull[PC_PATH];
    fmt(zFull, sizeof(zFull), "%s/%s", zReal, zSlash + 1);
    return in_tree(zFull) || in_tree(zReal);
}

/* ---------------------------------------------------------------------
** Durable content and listings. */

/* Appends one listing line for entry zName of identity (ino, serial). */
static void list_add(char **pz, size_t *pn, size_t *pcap, char cType, uint64_t ino,
                     uint32_t serial, const char *zName) {
    size_t nName = strlen(zName);
    size_t need = *pn + 64 + 2 * nName;
    if (need > *pcap) {
        size_t cap = *pcap ? *pcap * 2 : 4096;
        while (cap < need) cap *= 2;
        char *z = realloc(*pz, cap);
        if (!z) die("out of memory (listing of %zu bytes)", cap);
        *pz = z;
        *pcap = cap;
    }
    int n = snprintf(*pz + *pn, *pcap - *pn, "%c %llu %u ", cType, (unsigned long long)ino, serial);
    *pn += (size_t)n;
    static const char aHex[] = "0123456789abcdef";
    for (size_t i = 0; i < nName; i++) {
        (*pz)[(*pn)++] = aHex[(unsigned char)zName[i] >> 4];
        (*pz)[(*pn)++] = aHex[(unsigned char)zName[i] & 15];
    }
    (*pz)[(*pn)++] = '\n';
}

/* Records the current listing of folder fd (identity ino) as durable.
** When bRecurse (the snapshot at load), also records the content of its
** files and, recursively, its folders. fd is the shim's own descriptor (a
** fresh open, so no caller's directory offset moves); it is closed.
** zPath names the folder in messages. */
static void save_dir(int fd, uint64_t ino, const char *zPath, int bRecurse) {
    DIR *d = fdopendir(fd);
    if (!d) die("cannot list %s: %s", zPath, strerror(errno));
    char *zList = NULL;
    size_t nList = 0, capList = 0;
    struct dirent *e;
    for (;;) {
        errno = 0;
        if (!(e = readdir(d))) {
            if (errno) die("cannot list %s: %s", zPath, strerror(errno));
            break;
        }
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue;  /* removed meanwhile: as if before */
            die("cannot stat %s/%s: %s", zPath, e->d_name, strerror(errno));
        }
        char zChild[PC_PATH];
        fmt(zChild, sizeof(zChild), "%s/%s", zPath, e->d_name);
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
            die("%s is neither a file nor a folder: the power-cut model does not cover it",
                zChild);
        }
        if (st.st_dev != rootDev) die("%s is on another device than the watched tree", zChild);
        uint32_t serial = serial_get(st.st_ino);
        list_add(&zList, &nList, &capList, S_ISDIR(st.st_mode) ? 'd' : 'f', st.st_ino, serial,
                 e->d_name);
        if (!bRecurse) continue;
        int fdChild = (int)syscall(SYS_openat, dirfd(d), e->d_name,
                                   O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
                                   (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0), 0);
        if (fdChild < 0) die("cannot open %s: %s", zChild, strerror(errno));
        if (S_ISDIR(st.st_mode)) {
            save_dir(fdChild, st.st_ino, zChild, 1);
        } else {
            char zName[64];
            fmt(zName, sizeof(zName), "f-%llu-%u", (unsigned long long)st.st_ino, serial);
            shadow_copy(zName, fdChild, zChild);
            close(fdChild);
        }
    }
    closedir(d);
    char zName[64];
    fmt(zName, sizeof(zName), "d-%llu-%u", (unsigned long long)ino, serial_get(ino));
    shadow_put(zName, zList ? zList : "", nList);
    free(zList);
}

/* After a successful fsync/fdatasync of fd: if it is in the tree, what it
** holds becomes durable. */
static void on_sync(int fd) {
    if (!bActive) return;
    pthread_mutex_lock(&mu);
    char zPath[PC_PATH];
    struct stat st;
    if (fd_path(fd, zPath, sizeof(zPath)) && in_tree(zPath) && fstat(fd, &st) == 0) {
        /* A fresh open through /proc: the caller's descriptor may be
        ** write-only, and its offset must not move. */
        char zLink[64];
        fmt(zLink, sizeof(zLink), "/proc/self/fd/%d", fd);
        if (S_ISDIR(st.st_mode)) {
            int fdD = sys_open(zLink, O_RDONLY | O_DIRECTORY, 0);
            if (fdD < 0) die("cannot reopen %s to list it: %s", zPath, strerror(errno));
            save_dir(fdD, st.st_ino, zPath, 0);
        } else if (S_ISREG(st.st_mode)) {
            int fdR = sys_open(zLink, O_RDONLY, 0);
            if (fdR < 0) die("cannot reopen %s to copy it: %s", zPath, strerror(errno));
            char zName[64];
            fmt(zName, sizeof(zName), "f-%llu-%u", (unsigned long long)st.st_ino,
                     serial_get(st.st_ino));
            shadow_copy(zName, fdR, zPath);
            close(fdR);
        }
    }
    pthread_mutex_unlock(&mu);
}

/* ---------------------------------------------------------------------
** The constructor: takes the snapshot of the tree. */

static int dir_is_empty(const char *zDir) {
    DIR *d = opendir(zDir);
    if (!d) die("cannot list %s: %s", zDir, strerror(errno));
    struct dirent *e;
    int bEmpty = 1;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) bEmpty = 0;
    }
    closedir(d);
    return bEmpty;
}

__attribute__((constructor)) static void powercut_init(void) {
    resolve();
    const char *zDir = getenv("LOUPE_POWERCUT_DIR");
    const char *zSh = getenv("LOUPE_POWERCUT_SHADOW");
    if (!zDir || !zSh || !zDir[0] || !zSh[0]) {
        die("LD_PRELOAD names the power-cut shim but LOUPE_POWERCUT_DIR and "
            "LOUPE_POWERCUT_SHADOW are not both set");
    }
    if (zDir[0] != '/' || zSh[0] != '/') {
        die("LOUPE_POWERCUT_DIR (%s) and LOUPE_POWERCUT_SHADOW (%s) must be absolute", zDir, zSh);
    }
    char zReal[PATH_MAX];
    if (!realpath(zDir, zReal)) die("LOUPE_POWERCUT_DIR %s: %s", zDir, strerror(errno));
    fmt(zRoot, sizeof(zRoot), "%s", zReal);
    nRoot = strlen(zRoot);
    fmt(zShadow, sizeof(zShadow), "%s", zSh);
    if (syscall(SYS_mkdirat, AT_FDCWD, zShadow, 0755) != 0 && errno != EEXIST) {
        die("cannot create the shadow folder %s: %s", zShadow, strerror(errno));
    }
    char zRealSh[PATH_MAX];
    if (!realpath(zShadow, zRealSh)) die("shadow folder %s: %s", zShadow, strerror(errno));
    if (in_tree(zRealSh)) die("the shadow folder %s is inside the watched tree %s", zRealSh, zRoot);

    /* Owned by a living process (we are its child or helper): stay out. */
    char zOwner[PC_PATH];
    fmt(zOwner, sizeof(zOwner), "%s/owner", zShadow);
    int fdOwner = sys_open(zOwner, O_RDONLY, 0);
    if (fdOwner >= 0) {
        char z[32] = {0};
        ssize_t r = read(fdOwner, z, sizeof(z) - 1);
        close(fdOwner);
        long pid = r > 0 ? strtol(z, NULL, 10) : 0;
        if (pid == (long)getpid()) {
            die("this process exec'd after the shim took its snapshot of %s (a wrapper "
                "script?): not modelled; run the real program directly", zRoot);
        }
        if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) return;
        die("the shadow folder %s was used before (by pid %ld): give each run a fresh one",
            zShadow, pid);
    }
    if (!dir_is_empty(zShadow)) die("the shadow folder %s is not empty", zShadow);
    char zPid[32];
    int nPid = snprintf(zPid, sizeof(zPid), "%ld\n", (long)getpid());
    shadow_put("owner", zPid, (size_t)nPid);

    char zSerials[PC_PATH];
    fmt(zSerials, sizeof(zSerials), "%s/serials", zShadow);
    fdSerials = sys_open(zSerials, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fdSerials < 0) die("cannot create %s: %s", zSerials, strerror(errno));

    int fdRoot = sys_open(zRoot, O_RDONLY | O_DIRECTORY, 0);
    struct stat st;
    if (fdRoot < 0 || fstat(fdRoot, &st) != 0) die("cannot open %s: %s", zRoot, strerror(errno));
    rootDev = st.st_dev;
    save_dir(fdRoot, st.st_ino, zRoot, 1);
    char zInfo[PC_PATH + 64];
    int n = snprintf(zInfo, sizeof(zInfo), "%llu 0 %llu\n%s\n", (unsigned long long)st.st_ino,
                     (unsigned long long)st.st_dev, zRoot);
    shadow_put("root", zInfo, (size_t)n);
    bActive = 1;
}

/* ---------------------------------------------------------------------
** Creation: open/openat/creat with O_CREAT, mkdir/mkdirat. */

static int wants_mode(int flags) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* Runs one open with the creation bookkeeping. xOpen is the real call. */
typedef int (*OpenFn)(int dirfd, const char *zPath, int flags, mode_t mode, void *real);

static int open_tracked(int dirfd, const char *zPath, int flags, mode_t mode, OpenFn xOpen,
                        void *real) {
    if (!bActive || !wants_mode(flags)) return xOpen(dirfd, zPath, flags, mode, real);
    if ((flags & O_TMPFILE) == O_TMPFILE && name_in_tree(dirfd, zPath)) {
        die("O_TMPFILE in %s: the power-cut model does not cover it", zPath);
    }
    pthread_mutex_lock(&mu);
    struct stat st;
    int bExisted = fstatat(dirfd, zPath, &st, 0) == 0;
    int fd = xOpen(dirfd, zPath, flags, mode, real);
    int e = errno;
    if (fd >= 0 && !bExisted && fstat(fd, &st) == 0 && fd_in_tree(fd)) serial_bump(st.st_ino);
    pthread_mutex_unlock(&mu);
    errno = e;
    return fd;
}

static int call_open(int dirfd, const char *zPath, int flags, mode_t mode, void *real) {
    (void)dirfd;
    return ((int (*)(const char *, int, ...))real)(zPath, flags, mode);
}

static int call_openat(int dirfd, const char *zPath, int flags, mode_t mode, void *real) {
    return ((int (*)(int, const char *, int, ...))real)(dirfd, zPath, flags, mode);
}

static int call_creat(int dirfd, const char *zPath, int flags, mode_t mode, void *real) {
    (void)dirfd;
    (void)flags;
    return ((int (*)(const char *, mode_t))real)(zPath, mode);
}

#define MODE_ARG(flags, mode)                    \
    do {                                         \
        if (wants_mode(flags)) {                 \
            va_list ap;                          \
            va_start(ap, flags);                 \
            mode = (mode_t)va_arg(ap, unsigned); \
            va_end(ap);                          \
        }                                        \
    } while (0)

int open(const char *zPath, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    resolve();
    return open_tracked(AT_FDCWD, zPath, flags, mode, call_open, (void *)real_open);
}

int open64(const char *zPath, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    resolve();
    return open_tracked(AT_FDCWD, zPath, flags, mode, call_open, (void *)real_open64);
}

int openat(int dirfd, const char *zPath, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    resolve();
    return open_tracked(dirfd, zPath, flags, mode, call_openat, (void *)real_openat);
}

int openat64(int dirfd, const char *zPath, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    resolve();
    return open_tracked(dirfd, zPath, flags, mode, call_openat, (void *)real_openat64);
}

int creat(const char *zPath, mode_t mode) {
    resolve();
    return open_tracked(AT_FDCWD, zPath, O_CREAT | O_WRONLY | O_TRUNC, mode, call_creat,
                        (void *)real_creat);
}

int creat64(const char *zPath, mode_t mode) {
    resolve();
    return open_tracked(AT_FDCWD, zPath, O_CREAT | O_WRONLY | O_TRUNC, mode, call_creat,
                        (void *)real_creat64);
}

/* After a successful mkdir: the new folder is a new identity. */
static void on_mkdir(int dirfd, const char *zPath) {
    int fd = (int)syscall(SYS_openat, dirfd, zPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    struct stat st;
    if (fd < 0) return;     /* already gone again (another thread) */
    if (fstat(fd, &st) == 0 && fd_in_tree(fd)) serial_bump(st.st_ino);
    close(fd);
}

int mkdir(const char *zPath, mode_t mode) {
    resolve();
    if (!bActive) return real_mkdir(zPath, mode);
    pthread_mutex_lock(&mu);
    int r = real_mkdir(zPath, mode);
    int e = errno;
    if (r == 0) on_mkdir(AT_FDCWD, zPath);
    pthread_mutex_unlock(&mu);
    errno = e;
    return r;
}

int mkdirat(int dirfd, const char *zPath, mode_t mode) {
    resolve();
    if (!bActive) return real_mkdirat(dirfd, zPath, mode);
    pthread_mutex_lock(&mu);
    int r = real_mkdirat(dirfd, zPath, mode);
    int e = errno;
    if (r == 0) on_mkdir(dirfd, zPath);
    pthread_mutex_unlock(&mu);
    errno = e;
    return r;
}

/* ---------------------------------------------------------------------
** Durability: fsync and fdatasync. */

int fsync(int fd) {
    resolve();
    int r = real_fsync(fd);
    if (r == 0) {
        int e = errno;
        on_sync(fd);
        errno = e;
    }
    return r;
}

int fdatasync(int fd) {
    resolve();
    int r = real_fdatasync(fd);
    if (r == 0) {
        int e = errno;
        on_sync(fd);
        errno = e;
    }
    return r;
}

/* ---------------------------------------------------------------------
** Calls the model does not cover: loud refusal. */

void sync(void) {
    if (bActive) die("sync() called: the power-cut model does not cover it");
    syscall(SYS_sync);
}

int syncfs(int fd) {
    if (bActive) die("syncfs() called: the power-cut model does not cover it");
    return (int)syscall(SYS_syncfs, fd);
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags) {
    if (bActive && fd_in_tree(fd)) {
        die("sync_file_range() on a file of the watched tree: the power-cut model does not "
            "cover it");
    }
    return (int)syscall(SYS_sync_file_range, fd, off, n, flags);
}

int msync(void *p, size_t n, int flags) {
    if (bActive) die("msync() called: the power-cut model does not cover it");
    return (int)syscall(SYS_msync, p, n, flags);
}

static FILE *fopen_checked(const char *zPath, const char *zMode,
                           FILE *(*xReal)(const char *, const char *)) {
    if (bActive && strpbrk(zMode, "wa+") && name_in_tree(AT_FDCWD, zPath)) {
        die("fopen(\"%s\", \"%s\") in the watched tree: the power-cut model does not cover "
            "files created through stdio", zPath, zMode);
    }
    return xReal(zPath, zMode);
}

FILE *fopen(const char *zPath, const char *zMode) {
    resolve();
    return fopen_checked(zPath, zMode, real_fopen);
}

FILE *fopen64(const char *zPath, const char *zMode) {
    resolve();
    return fopen_checked(zPath, zMode, real_fopen64);
}

static void refuse_template(const char *zCall, const char *zTemplate) {
    if (bActive && name_in_tree(AT_FDCWD, zTemplate)) {
        die("%s(\"%s\") in the watched tree: the power-cut model does not cover it", zCall,
            zTemplate);
    }
}

#define TEMPLATE_CALL(ret, name, params, args, zTpl)                  \
    ret name params {                                                 \
        refuse_template(#name, zTpl);                                 \
        ret (*xReal) params = (ret (*) params)next_sym(#name);        \
        return xReal args;                                            \
    }

TEMPLATE_CALL(int, mkstemp, (char *z), (z), z)
TEMPLATE_CALL(int, mkostemp, (char *z, int flags), (z, flags), z)
TEMPLATE_CALL(int, mkstemps, (char *z, int n), (z, n), z)
TEMPLATE_CALL(int, mkostemps, (char *z, int n, int flags), (z, n, flags), z)
TEMPLATE_CALL(char *, mkdtemp, (char *z), (z), z)

int symlink(const char *zTarget, const char *zPath) {
    if (bActive && name_in_tree(AT_FDCWD, zPath)) {
        die("symlink %s in the watched tree: the power-cut model does not cover it", zPath);
    }
    return (int)syscall(SYS_symlinkat, zTarget, AT_FDCWD, zPath);
}

int symlinkat(const char *zTarget, int dirfd, const char *zPath) {
    if (bActive && name_in_tree(dirfd, zPath)) {
        die("symlink %s in the watched tree: the power-cut model does not cover it", zPath);
    }
    return (int)syscall(SYS_symlinkat, zTarget, dirfd, zPath);
}
