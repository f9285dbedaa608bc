/*
** ort.c — see ort.h.
**
** The C API of ONNX Runtime is one table of function pointers (OrtApi),
** returned by OrtGetApiBase()->GetApi(version); it is append-only across
** versions, so entry `slot` means the same function in every runtime that
** has it. No header of ORT is available here, so the entries used are
** declared below, each with its slot (../shared/reference/
** onnxruntime-c-abi.md; SessionGetOutputTypeInfo, 34, sits between the
** input type info (33) and the overridable-initializer type info (35) in
** upstream's header). All ORT handles are opaque pointers; enums are ints;
** an entry that can fail returns an OrtStatus* (NULL = success) that we
** read and release.
**
** State. g_pRt points at the loaded runtime (API table, env, CPU memory
** info); it is written once under g_mutex and then read without a lock
** (acquire load). Nothing of it is ever freed: ORT is not meant to be
** unloaded from a running process, and it stays "still reachable".
*/
#include "embed/ort.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define ORT_HAVE_MXCSR 1
#endif

#include "util/log.h"

/* Under AddressSanitizer, the environment's creation runs with LeakSanitizer
** off: ONNX Runtime allocates 14 bytes there that it never frees (a bare C
** program calling CreateEnv shows it), and the env is a process-lifetime
** object by design. ORT is built without frame pointers, so a suppression
** could not tell that allocation from others inside ORT. */
#if defined(__SANITIZE_ADDRESS__)
#define ORT_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORT_LSAN 1
#endif
#endif
#ifdef ORT_LSAN
#include <sanitizer/lsan_interface.h>
#define LSAN_OFF() __lsan_disable()
#define LSAN_ON() __lsan_enable()
#else
#define LSAN_OFF() ((void)0)
#define LSAN_ON() ((void)0)
#endif

/* ---- The declared subset of the C API ----------------------------------- */

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtAllocator OrtAllocator;

typedef void (*OrtLogFn)(void *param, int severity, const char *category, const char *logid,
                         const char *code_location, const char *message);

typedef struct OrtApiBase {
    const void *(*GetApi)(uint32_t version);   /* [0] */
    const char *(*GetVersionString)(void);     /* [1] */
} OrtApiBase;

enum {
    ORT_TENSOR_FLOAT = 1,           /* ONNXTensorElementDataType */
    ORT_TENSOR_INT64 = 7,
    ORT_ENABLE_ALL = 99,            /* GraphOptimizationLevel */
    ORT_SEQUENTIAL = 0,             /* ExecutionMode */
    ORT_LOG_WARNING = 2,            /* OrtLoggingLevel */
    ORT_LOG_ERROR = 3,
    ORT_LOG_FATAL = 4,
    ORT_ARENA_ALLOCATOR = 1,        /* OrtAllocatorType */
    ORT_MEM_TYPE_DEFAULT = 0,       /* OrtMemType */
    ORT_ERR_INVALID_ARGUMENT = 2,   /* OrtErrorCode */
    ORT_ERR_NO_SUCHFILE = 3,
    ORT_ERR_NO_MODEL = 4,
    ORT_ERR_INVALID_PROTOBUF = 7,
    ORT_ERR_NOT_IMPLEMENTED = 9,
    ORT_ERR_INVALID_GRAPH = 10,
};

/* The entries used, typed. Filled from the table by slot in ort_bind(). */
typedef struct OrtFns {
    int (*GetErrorCode)(const OrtStatus *);                                                  /* 1 */
    const char *(*GetErrorMessage)(const OrtStatus *);                                       /* 2 */
    OrtStatus *(*CreateEnvWithCustomLogger)(OrtLogFn, void *, int, const char *, OrtEnv **); /* 4 */
    OrtStatus *(*CreateSession)(const OrtEnv *, const char *, const OrtSessionOptions *,
                                OrtSession **);                                              /* 7 */
    OrtStatus *(*Run)(OrtSession *, const OrtRunOptions *, const char *const *, const OrtValue *const *,
                      size_t, const char *const *, size_t, OrtValue **);                     /* 9 */
    OrtStatus *(*CreateSessionOptions)(OrtSessionOptions **);                                /* 10 */
    OrtStatus *(*SetSessionExecutionMode)(OrtSessionOptions *, int);                         /* 13 */
    OrtStatus *(*SetSessionGraphOptimizationLevel)(OrtSessionOptions *, int);                /* 23 */
    OrtStatus *(*SetIntraOpNumThreads)(OrtSessionOptions *, int);                            /* 24 */
    OrtStatus *(*SetInterOpNumThreads)(OrtSessionOptions *, int);                            /* 25 */
    OrtStatus *(*SessionGetInputCount)(const OrtSession *, size_t *);                        /* 30 */
    OrtStatus *(*SessionGetOutputCount)(const OrtSession *, size_t *);                       /* 31 */
    OrtStatus *(*SessionGetInputTypeInfo)(const OrtSession *, size_t, OrtTypeInfo **);       /* 33 */
    OrtStatus *(*SessionGetOutputTypeInfo)(const OrtSession *, size_t, OrtTypeInfo **);      /* 34 */
    OrtStatus *(*SessionGetInputName)(const OrtSession *, size_t, OrtAllocator *, char **);  /* 36 */
    OrtStatus *(*SessionGetOutputName)(const OrtSession *, size_t, OrtAllocator *, char **); /* 37 */
    OrtStatus *(*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo *, void *, size_t, const int64_t *,
                                                 size_t, int, OrtValue **);                  /* 49 */
    OrtStatus *(*GetTensorMutableData)(OrtValue *, void **);                                 /* 51 */
    OrtStatus *(*CastTypeInfoToTensorInfo)(const OrtTypeInfo *,
                                           const OrtTensorTypeAndShapeInfo **);              /* 55 */
    OrtStatus *(*GetTensorElementType)(const OrtTensorTypeAndShapeInfo *, int *);            /* 60 */
    OrtStatus *(*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo *, size_t *);           /* 61 */
    OrtStatus *(*GetDimensions)(const OrtTensorTypeAndShapeInfo *, int64_t *, size_t);       /* 62 */
    OrtStatus *(*GetTensorTypeAndShape)(const OrtValue *, OrtTensorTypeAndShapeInfo **);     /* 65 */
    OrtStatus *(*CreateCpuMemoryInfo)(int, int, OrtMemoryInfo **);                           /* 69 */
    OrtStatus *(*AllocatorFree)(OrtAllocator *, void *);                                     /* 76 */
    OrtStatus *(*GetAllocatorWithDefaultOptions)(OrtAllocator **);                           /* 78 */
    void (*ReleaseStatus)(OrtStatus *);                                                      /* 93 */
    void (*ReleaseSession)(OrtSession *);                                                    /* 95 */
    void (*ReleaseValue)(OrtValue *);                                                        /* 96 */
    void (*ReleaseTypeInfo)(OrtTypeInfo *);                                                  /* 98 */
    void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo *);                      /* 99 */
    void (*ReleaseSessionOptions)(OrtSessionOptions *);                                      /* 100 */
    OrtStatus *(*AddSessionConfigEntry)(OrtSessionOptions *, const char *, const char *);    /* 130 */
    const char *(*GetBuildInfoString)(void);                                                 /* 254 */
} OrtFns;

/* The loaded runtime. Immutable once published through g_pRt. */
typedef struct OrtRuntime {
    OrtFns f;                  /* the API entries */
    void *hLib;                /* dlopen handle (never closed) */
    OrtEnv *pEnv;              /* the process's one environment */
    OrtMemoryInfo *pCpuMem;    /* CPU memory info for wrapping caller buffers */
    char zVersion[32];         /* GetVersionString() */
    char zPath[4096];          /* the file that was loaded (as mapped) */
    char zAsked[4096];         /* the name it was loaded by */
} OrtRuntime;

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER; /* serialises loading */
static _Atomic(OrtRuntime *) g_pRt;                         /* NULL until loaded */

/* ORT handles this file obtained and has not released yet (sessions,
** session options, type infos, tensor infos, values): a leak check that
** does not depend on unwinding through ORT (embed_ort_live_handles). */
static atomic_llong g_nLive;
#define LIVE_INC() atomic_fetch_add_explicit(&g_nLive, 1, memory_order_relaxed)
#define LIVE_DEC() atomic_fetch_sub_explicit(&g_nLive, 1, memory_order_relaxed)

/* Input roles, in the order embed_ort_run takes its arrays. */
enum { ROLE_IDS = 0, ROLE_MASK, ROLE_TYPE, ROLE_N };
static const char *const azRoleName[ROLE_N] = {"input_ids", "attention_mask", "token_type_ids"};

struct EmbedOrtSession {
    OrtSession *pSess;         /* ORT's session; Run is called on it concurrently */
    const OrtRuntime *pRt;     /* the runtime it belongs to */
    int nIn;                   /* inputs the model declares (1..3) */
    int aRole[ROLE_N];         /* role of input i, i < nIn */
    char *azIn[ROLE_N];        /* name of input i (malloc'd copies) */
    char *zOut;                /* name of the output used (malloc'd) */
    int nDims;                 /* its static hidden size, or 0 when dynamic */
};

/* ---- Helpers --------------------------------------------------------- */

/* Maps ORT's error codes to ours; unknown codes (newer runtimes) are
** generic. */
static int ort_code(int c) {
    switch (c) {
    case ORT_ERR_INVALID_ARGUMENT: return LP_BADINPUT;
    case ORT_ERR_NO_SUCHFILE: return LP_NOTFOUND;
    case ORT_ERR_NO_MODEL:
    case ORT_ERR_INVALID_PROTOBUF:
    case ORT_ERR_INVALID_GRAPH: return LP_CORRUPT;
    case ORT_ERR_NOT_IMPLEMENTED: return LP_UNSUPPORTED;
    default: return LP_INTERNAL;
    }
}

/* Consumes status st (non-NULL): fills err with "<what>: onnxruntime: msg
** (code N)", releases st and returns our code. A NULL status is LP_OK. */
static int ort_fail(const OrtRuntime *rt, OrtStatus *st, LpError *err, const char *zWhat) {
    if (st == NULL) return LP_OK;
    int c = rt->f.GetErrorCode(st);
    const char *zMsg = rt->f.GetErrorMessage(st);
    int rc = lp_err_set(err, ort_code(c), "%s: onnxruntime: %s (code %d)", zWhat, zMsg ? zMsg : "?", c);
    rt->f.ReleaseStatus(st);
    return rc;
}

/* ORT's log lines, routed to ours. Warnings (mostly notes from the graph
** optimiser) are only interesting when debugging. */
static void ort_log_cb(void *param, int severity, const char *category, const char *logid,
                       const char *code_location, const char *message) {
    (void)param;
    (void)category;
    (void)logid;
    int level = severity >= ORT_LOG_FATAL ? LOG_LEVEL_ERROR
                : severity >= ORT_LOG_ERROR ? LOG_LEVEL_WARN
                                            : LOG_LEVEL_DEBUG;
    log_write(level, "onnxruntime: %s (%s)", message ? message : "", code_location ? code_location : "");
}

/* Number of CPUs this process may run on. */
static int cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Flush-to-zero (bit 15) and denormals-are-zero (bit 6) of MXCSR, set for
** the span of a Run or a session creation and restored after it. */
#ifdef ORT_HAVE_MXCSR
#define MXCSR_FTZ_DAZ 0x8040u
typedef unsigned FpState;
static FpState fp_enter(void) {
    FpState s = _mm_getcsr();
    _mm_setcsr(s | MXCSR_FTZ_DAZ);
    return s;
}
static void fp_leave(FpState s) {
    _mm_setcsr(s);
}
#else
typedef int FpState;
static FpState fp_enter(void) {
    return 0;
}
static void fp_leave(FpState s) {
    (void)s;
}
#endif

/* ---- Loading --------------------------------------------------------- */

/* Fills rt->f from the API table; LP_UNSUPPORTED when an entry is NULL. */
static int ort_bind(OrtRuntime *rt, const void *pTable, LpError *err) {
    typedef void (*AnyFn)(void);
    const AnyFn *a = (const AnyFn *)pTable;
#define BIND(field, slot)                                                                           \
    do {                                                                                            \
        if (a[slot] == NULL)                                                                        \
            return lp_err_set(err, LP_UNSUPPORTED, "ONNX Runtime at %s lacks API entry %d (%s)",    \
                              rt->zPath, slot, #field);                                             \
        rt->f.field = (__typeof__(rt->f.field))a[slot];                                             \
    } while (0)
    BIND(GetErrorCode, 1);
    BIND(GetErrorMessage, 2);
    BIND(CreateEnvWithCustomLogger, 4);
    BIND(CreateSession, 7);
    BIND(Run, 9);
    BIND(CreateSessionOptions, 10);
    BIND(SetSessionExecutionMode, 13);
    BIND(SetSessionGraphOptimizationLevel, 23);
    BIND(SetIntraOpNumThreads, 24);
    BIND(SetInterOpNumThreads, 25);
    BIND(SessionGetInputCount, 30);
    BIND(SessionGetOutputCount, 31);
    BIND(SessionGetInputTypeInfo, 33);
    BIND(SessionGetOutputTypeInfo, 34);
    BIND(SessionGetInputName, 36);
    BIND(SessionGetOutputName, 37);
    BIND(CreateTensorWithDataAsOrtValue, 49);
    BIND(GetTensorMutableData, 51);
    BIND(CastTypeInfoToTensorInfo, 55);
    BIND(GetTensorElementType, 60);
    BIND(GetDimensionsCount, 61);
    BIND(GetDimensions, 62);
    BIND(GetTensorTypeAndShape, 65);
    BIND(CreateCpuMemoryInfo, 69);
    BIND(AllocatorFree, 76);
    BIND(GetAllocatorWithDefaultOptions, 78);
    BIND(ReleaseStatus, 93);
    BIND(ReleaseSession, 95);
    BIND(ReleaseValue, 96);
    BIND(ReleaseTypeInfo, 98);
    BIND(ReleaseTensorTypeAndShapeInfo, 99);
    BIND(ReleaseSessionOptions, 100);
    BIND(AddSessionConfigEntry, 130);
    BIND(GetBuildInfoString, 254);
#undef BIND
    return LP_OK;
}

/* Tries one library file. On success *ppRt is a new runtime. On failure
** returns LP_NOTFOUND with dlerror() in zWhy (dlopen failed, so the caller
** may try the next candidate) or another code with err filled. */
static int ort_try(const char *zPath, OrtRuntime **ppRt, char *zWhy, size_t nWhy, LpError *err) {
    *ppRt = NULL;
    dlerror();
    void *h = dlopen(zPath, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *z = dlerror();
        snprintf(zWhy, nWhy, "%s", z ? z : "dlopen failed");
        return LP_NOTFOUND;
    }
    OrtRuntime *rt = calloc(1, sizeof(*rt));
    if (rt == NULL) {
        dlclose(h);
        return lp_err_set(err, LP_NOMEM, "out of memory loading ONNX Runtime");
    }
    rt->hLib = h;
    snprintf(rt->zAsked, sizeof(rt->zAsked), "%s", zPath);
    /* The path actually mapped (the dynamic linker may have searched). */
    Dl_info di;
    const OrtApiBase *(*getBase)(void) = NULL;
    *(void **)&getBase = dlsym(h, "OrtGetApiBase");
    if (getBase == NULL) {
        lp_err_set(err, LP_UNSUPPORTED, "%s is not ONNX Runtime: it does not export OrtGetApiBase", zPath);
        goto fail;
    }
    if (dladdr(*(void **)&getBase, &di) && di.dli_fname && di.dli_fname[0] == '/')
        snprintf(rt->zPath, sizeof(rt->zPath), "%s", di.dli_fname);
    else
        snprintf(rt->zPath, sizeof(rt->zPath), "%s", zPath);
    const OrtApiBase *pBase = getBase();
    if (pBase == NULL || pBase->GetApi == NULL || pBase->GetVersionString == NULL) {
        lp_err_set(err, LP_UNSUPPORTED, "ONNX Runtime at %s: OrtGetApiBase() returned no API", rt->zPath);
        goto fail;
    }
    const char *zVer = pBase->GetVersionString();
    snprintf(rt->zVersion, sizeof(rt->zVersion), "%s", zVer ? zVer : "?");
    const void *pTable = pBase->GetApi(EMBED_ORT_API_VERSION);
    if (pTable == NULL) {
        lp_err_set(err, LP_UNSUPPORTED,
                   "ONNX Runtime at %s is version %s, too old: loupe needs API version %d "
                   "(ONNX Runtime 1.%d or newer)",
                   rt->zPath, rt->zVersion, EMBED_ORT_API_VERSION, EMBED_ORT_API_VERSION);
        goto fail;
    }
    if (ort_bind(rt, pTable, err) != LP_OK) goto fail;

    LSAN_OFF();
    OrtStatus *st = rt->f.CreateEnvWithCustomLogger(ort_log_cb, NULL, ORT_LOG_WARNING, "loupe", &rt->pEnv);
    LSAN_ON();
    if (st) {
        ort_fail(rt, st, err, "creating the ONNX Runtime environment");
        if (err) err->code = LP_INTERNAL;
        goto fail;
    }
    st = rt->f.CreateCpuMemoryInfo(ORT_ARENA_ALLOCATOR, ORT_MEM_TYPE_DEFAULT, &rt->pCpuMem);
    if (st) {
        /* The env stays: ORT does not like an env released and re-created. */
        ort_fail(rt, st, err, "creating ONNX Runtime's CPU memory info");
        goto fail;
    }
    *ppRt = rt;
    return LP_OK;
fail:
    if (rt->pEnv == NULL) {
        dlclose(h);
        free(rt);
    } /* else: keep the library mapped (the env lives inside it); leaked on purpose */
    return err ? err->code : LP_INTERNAL;
}

int embed_ort_load(const char *zLib, LpError *err) {
    OrtRuntime *rt = atomic_load_explicit(&g_pRt, memory_order_acquire);
    if (rt) {
        if (zLib && zLib[0] && strcmp(zLib, rt->zPath) != 0 && strcmp(zLib, rt->zAsked) != 0)
            LOG_WARN("ONNX Runtime is already loaded from %s; ort_lib=%s is ignored until restart", rt->zPath,
                     zLib);
        return LP_OK;
    }
    pthread_mutex_lock(&g_mutex);
    rt = atomic_load_explicit(&g_pRt, memory_order_acquire);
    if (rt) {
        pthread_mutex_unlock(&g_mutex);
        return LP_OK;
    }
    /* The candidates, in order (ort.h). */
    const char *azTry[2];
    const char *zFrom;
    int nTry = 0;
    const char *zEnv = getenv("LOUPE_ORT_LIB");
    if (zLib && zLib[0]) {
        azTry[nTry++] = zLib;
        zFrom = "ort_lib option";
    } else if (zEnv && zEnv[0]) {
        azTry[nTry++] = zEnv;
        zFrom = "LOUPE_ORT_LIB";
    } else {
#ifdef LOUPE_ORT_DEFAULT
        azTry[nTry++] = LOUPE_ORT_DEFAULT;
#endif
        azTry[nTry++] = "libonnxruntime.so.1";
        zFrom = "default";
    }
    char zAll[1536] = "";
    size_t nAll = 0;
    int rc = LP_NOTFOUND;
    for (int i = 0; i < nTry; i++) {
        char zWhy[512];
        LpError e;
        lp_err_clear(&e);
        rc = ort_try(azTry[i], &rt, zWhy, sizeof(zWhy), &e);
        if (rc == LP_OK) break;
        if (rc != LP_NOTFOUND) {
            if (err) *err = e;
            pthread_mutex_unlock(&g_mutex);
            return rc;
        }
        int k = snprintf(zAll + nAll, sizeof(zAll) - nAll, "%s'%s': %s", i ? "; " : "", azTry[i], zWhy);
        if (k > 0) nAll = nAll + (size_t)k < sizeof(zAll) ? nAll + (size_t)k : sizeof(zAll) - 1;
    }
    if (rc != LP_OK) {
        pthread_mutex_unlock(&g_mutex);
        return lp_err_set(err, LP_NOTFOUND,
                          "ONNX Runtime is not available (%s): cannot load %s. Install it with "
                          "scripts/install-ort.sh (make ort) or name libonnxruntime.so.1 with the ort_lib "
                          "option or LOUPE_ORT_LIB",
                          zFrom, zAll);
    }
    atomic_store_explicit(&g_pRt, rt, memory_order_release);
    pthread_mutex_unlock(&g_mutex);
    LOG_INFO("ONNX Runtime %s loaded from %s", rt->zVersion, rt->zPath);
    const char *zBuild = rt->f.GetBuildInfoString();
    LOG_DEBUG("%s", zBuild ? zBuild : "(no build info)");
    return LP_OK;
}

long long embed_ort_live_handles(void) {
    return atomic_load(&g_nLive);
}

const char *embed_ort_version(void) {
    OrtRuntime *rt = atomic_load_explicit(&g_pRt, memory_order_acquire);
    return rt ? rt->zVersion : NULL;
}

const char *embed_ort_lib_path(void) {
    OrtRuntime *rt = atomic_load_explicit(&g_pRt, memory_order_acquire);
    return rt ? rt->zPath : NULL;
}

/* ---- Sessions -------------------------------------------------------- */

/* Reads the element type and the dimensions (at most 8) of a type info;
** LP_OK, or an error naming zWhat. */
static int type_info_shape(const OrtRuntime *rt, OrtTypeInfo *ti, int *pType, int64_t *aDim, size_t *pnDim,
                           LpError *err, const char *zWhat) {
    const OrtTensorTypeAndShapeInfo *tsi = NULL;
    OrtStatus *st = rt->f.CastTypeInfoToTensorInfo(ti, &tsi);
    if (st) return ort_fail(rt, st, err, zWhat);
    if (tsi == NULL) return lp_err_set(err, LP_UNSUPPORTED, "%s is not a tensor", zWhat);
    if ((st = rt->f.GetTensorElementType(tsi, pType)) || (st = rt->f.GetDimensionsCount(tsi, pnDim)))
        return ort_fail(rt, st, err, zWhat);
    if (*pnDim > 8) return lp_err_set(err, LP_UNSUPPORTED, "%s has rank %zu", zWhat, *pnDim);
    if ((st = rt->f.GetDimensions(tsi, aDim, *pnDim))) return ort_fail(rt, st, err, zWhat);
    return LP_OK;
}

/* type_info_shape of the session's input (bOutput 0) or output i. */
static int io_shape(const OrtRuntime *rt, const OrtSession *pSess, int bOutput, size_t i, int *pType,
                    int64_t *aDim, size_t *pnDim, LpError *err, const char *zWhat) {
    OrtTypeInfo *ti = NULL;
    OrtStatus *st = bOutput ? rt->f.SessionGetOutputTypeInfo(pSess, i, &ti)
                            : rt->f.SessionGetInputTypeInfo(pSess, i, &ti);
    if (st) return ort_fail(rt, st, err, zWhat);
    LIVE_INC();
    int rc = type_info_shape(rt, ti, pType, aDim, pnDim, err, zWhat);
    rt->f.ReleaseTypeInfo(ti);
    LIVE_DEC();
    return rc;
}

/* Copies an ORT-allocated name and frees ORT's copy. */
static char *take_name(const OrtRuntime *rt, OrtAllocator *pAlloc, char *zName) {
    char *z = strdup(zName);
    OrtStatus *st = rt->f.AllocatorFree(pAlloc, zName);
    if (st) rt->f.ReleaseStatus(st);
    return z;
}

/* Reads and checks the model's inputs. */
static int session_inputs(EmbedOrtSession *s, const char *zPath, LpError *err) {
    const OrtRuntime *rt = s->pRt;
    OrtAllocator *pAlloc = NULL;
    size_t n = 0;
    OrtStatus *st = rt->f.GetAllocatorWithDefaultOptions(&pAlloc);
    if (st == NULL) st = rt->f.SessionGetInputCount(s->pSess, &n);
    if (st) return ort_fail(rt, st, err, zPath);
    if (n < 1 || n > ROLE_N)
        return lp_err_set(err, LP_UNSUPPORTED,
                          "%s: the model has %zu inputs; expected input_ids and optionally attention_mask "
                          "and token_type_ids",
                          zPath, n);
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        char *zOrt = NULL;
        if ((st = rt->f.SessionGetInputName(s->pSess, i, pAlloc, &zOrt))) return ort_fail(rt, st, err, zPath);
        char *zName = take_name(rt, pAlloc, zOrt);
        if (zName == NULL) return lp_err_set(err, LP_NOMEM, "out of memory");
        s->azIn[i] = zName;
        s->nIn = (int)i + 1;
        int r = 0;
        while (r < ROLE_N && strcmp(zName, azRoleName[r]) != 0) r++;
        if (r == ROLE_N || (seen & (1 << r)))
            return lp_err_set(err, LP_UNSUPPORTED,
                              "%s: unsupported model input '%s' (inputs must be among input_ids, "
                              "attention_mask, token_type_ids)",
                              zPath, zName);
        seen |= 1 << r;
        s->aRole[i] = r;
        int eType = 0;
        int64_t aDim[8];
        size_t nDim = 0;
        int rc = io_shape(rt, s->pSess, 0, i, &eType, aDim, &nDim, err, zPath);
        if (rc) return rc;
        if (eType != ORT_TENSOR_INT64 || nDim != 2)
            return lp_err_set(err, LP_UNSUPPORTED,
                              "%s: input '%s' is a tensor of type %d and rank %zu; expected int64 [batch, "
                              "sequence]",
                              zPath, zName, eType, nDim);
    }
    if (!(seen & (1 << ROLE_IDS)))
        return lp_err_set(err, LP_UNSUPPORTED, "%s: the model has no input named input_ids", zPath);
    return LP_OK;
}

/* Picks and checks the output: last_hidden_state or token_embeddings,
** else the first. */
static int session_output(EmbedOrtSession *s, const char *zPath, LpError *err) {
    const OrtRuntime *rt = s->pRt;
    OrtAllocator *pAlloc = NULL;
    size_t n = 0;
    OrtStatus *st = rt->f.GetAllocatorWithDefaultOptions(&pAlloc);
    if (st == NULL) st = rt->f.SessionGetOutputCount(s->pSess, &n);
    if (st) return ort_fail(rt, st, err, zPath);
    if (n < 1) return lp_err_set(err, LP_UNSUPPORTED, "%s: the model has no output", zPath);
    size_t iPick = 0;
    int bByName = 0; /* the pick is one of the preferred names */
    for (size_t i = 0; i < n; i++) {
        char *zOrt = NULL;
        if ((st = rt->f.SessionGetOutputName(s->pSess, i, pAlloc, &zOrt))) return ort_fail(rt, st, err, zPath);
        char *zName = take_name(rt, pAlloc, zOrt);
        if (zName == NULL) return lp_err_set(err, LP_NOMEM, "out of memory");
        int bWant = strcmp(zName, "last_hidden_state") == 0 || strcmp(zName, "token_embeddings") == 0;
        if (s->zOut == NULL || (bWant && !bByName)) {
            free(s->zOut);
            s->zOut = zName;
            iPick = i;
            bByName = bWant;
        } else {
            free(zName);
        }
    }
    int eType = 0;
    int64_t aDim[8];
    size_t nDim = 0;
    int rc = io_shape(rt, s->pSess, 1, iPick, &eType, aDim, &nDim, err, zPath);
    if (rc) return rc;
    if (eType != ORT_TENSOR_FLOAT || nDim != 3)
        return lp_err_set(err, LP_UNSUPPORTED,
                          "%s: output '%s' is a tensor of type %d and rank %zu; expected float [batch, "
                          "sequence, hidden]",
                          zPath, s->zOut, eType, nDim);
    s->nDims = aDim[2] > 0 && aDim[2] <= (1 << 20) ? (int)aDim[2] : 0;
    return LP_OK;
}

/* Adds one session config entry; on failure fills err. */
static int add_cfg(const OrtRuntime *rt, OrtSessionOptions *so, const char *zKey, const char *zVal, LpError *err) {
    OrtStatus *st = rt->f.AddSessionConfigEntry(so, zKey, zVal);
    if (st == NULL) return LP_OK;
    char zWhat[128];
    snprintf(zWhat, sizeof(zWhat), "session option %s=%s", zKey, zVal);
    return ort_fail(rt, st, err, zWhat);
}

EmbedOrtSession *embed_ort_session_open(const char *zModelPath, const EmbedOrtOptions *opts, LpError *err) {
    static const EmbedOrtOptions dflt = {0};
    if (opts == NULL) opts = &dflt;
    if (embed_ort_load(opts->zLib, err) != LP_OK) return NULL;
    const OrtRuntime *rt = atomic_load_explicit(&g_pRt, memory_order_acquire);

    EmbedOrtSession *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        lp_err_set(err, LP_NOMEM, "out of memory opening %s", zModelPath);
        return NULL;
    }
    s->pRt = rt;
    int nThread = opts->nIntraThreads > 0 ? opts->nIntraThreads : cpu_count();
    OrtSessionOptions *so = NULL;
    OrtStatus *st = rt->f.CreateSessionOptions(&so);
    if (so) LIVE_INC();
    if (st == NULL) st = rt->f.SetSessionGraphOptimizationLevel(so, ORT_ENABLE_ALL);
    if (st == NULL) st = rt->f.SetSessionExecutionMode(so, ORT_SEQUENTIAL);
    if (st == NULL) st = rt->f.SetIntraOpNumThreads(so, nThread);
    if (st == NULL) st = rt->f.SetInterOpNumThreads(so, 1);
    int rc = ort_fail(rt, st, err, "session options");
    if (rc == LP_OK) rc = add_cfg(rt, so, "session.intra_op.allow_spinning", opts->bSpin ? "1" : "0", err);
    if (rc == LP_OK) rc = add_cfg(rt, so, "session.inter_op.allow_spinning", opts->bSpin ? "1" : "0", err);
    if (rc == LP_OK) rc = add_cfg(rt, so, "session.set_denormal_as_zero", "1", err);
    if (rc == LP_OK && opts->bGeluApprox) rc = add_cfg(rt, so, "optimization.enable_gelu_approximation", "1", err);
    if (rc == LP_OK) {
        /* ORT sets FTZ/DAZ on the thread creating the first session: keep
        ** the caller's floating-point state as it was. */
        FpState fp = fp_enter();
        st = rt->f.CreateSession(rt->pEnv, zModelPath, so, &s->pSess);
        fp_leave(fp);
        if (s->pSess) LIVE_INC();
        rc = ort_fail(rt, st, err, zModelPath);
    }
    if (so) {
        rt->f.ReleaseSessionOptions(so);
        LIVE_DEC();
    }
    if (rc == LP_OK) rc = session_inputs(s, zModelPath, err);
    if (rc == LP_OK) rc = session_output(s, zModelPath, err);
    if (rc != LP_OK) {
        embed_ort_session_close(s);
        return NULL;
    }
    LOG_DEBUG("onnxruntime session on %s: %d inputs, output '%s' (hidden %d), %d intra-op thread(s)%s%s",
              zModelPath, s->nIn, s->zOut, s->nDims, nThread, opts->bSpin ? ", spinning" : "",
              opts->bGeluApprox ? ", GELU approximated" : "");
    return s;
}

void embed_ort_session_close(EmbedOrtSession *s) {
    if (s == NULL) return;
    if (s->pSess) {
        s->pRt->f.ReleaseSession(s->pSess);
        LIVE_DEC();
    }
    for (int i = 0; i < ROLE_N; i++) free(s->azIn[i]);
    free(s->zOut);
    free(s);
}

int embed_ort_session_dims(const EmbedOrtSession *s) {
    return s->nDims;
}

static int has_role(const EmbedOrtSession *s, int r) {
    for (int i = 0; i < s->nIn; i++)
        if (s->aRole[i] == r) return 1;
    return 0;
}

int embed_ort_session_has_mask(const EmbedOrtSession *s) {
    return has_role(s, ROLE_MASK);
}

int embed_ort_session_has_type(const EmbedOrtSession *s) {
    return has_role(s, ROLE_TYPE);
}

const char *embed_ort_session_output_name(const EmbedOrtSession *s) {
    return s->zOut;
}

/* ---- Run ------------------------------------------------------------- */

void embed_ort_output_free(EmbedOrtOutput *pOut) {
    if (pOut == NULL) return;
    if (pOut->pValue) {
        const OrtRuntime *rt = atomic_load_explicit(&g_pRt, memory_order_acquire);
        if (ALWAYS(rt != NULL)) {
            rt->f.ReleaseValue((OrtValue *)pOut->pValue);
            LIVE_DEC();
        }
    }
    memset(pOut, 0, sizeof(*pOut));
}

int embed_ort_run(EmbedOrtSession *s, int nBatch, int nSeq, const int64_t *aId, const int64_t *aMask,
                  const int64_t *aType, EmbedOrtOutput *pOut, LpError *err) {
    memset(pOut, 0, sizeof(*pOut));
    if (nBatch < 1 || nSeq < 1 || (int64_t)nBatch * nSeq > ((int64_t)1 << 28))
        return lp_err_set(err, LP_BADINPUT, "embed_ort_run: bad shape [%d, %d]", nBatch, nSeq);
    const OrtRuntime *rt = s->pRt;
    const int64_t *aArr[ROLE_N] = {aId, aMask, aType};
    const int64_t aShape[2] = {nBatch, nSeq};
    size_t nByte = (size_t)nBatch * (size_t)nSeq * sizeof(int64_t);
    OrtValue *aIn[ROLE_N] = {NULL, NULL, NULL};
    OrtValue *pOutVal = NULL;
    OrtStatus *st = NULL;
    int rc = LP_OK;
    for (int i = 0; i < s->nIn && st == NULL; i++) {
        const int64_t *p = aArr[s->aRole[i]];
        if (p == NULL) {
            rc = lp_err_set(err, LP_BADINPUT, "embed_ort_run: the model needs input '%s'", s->azIn[i]);
            goto out;
        }
        /* ORT reads input tensors only; the cast is for its signature. */
        st = rt->f.CreateTensorWithDataAsOrtValue(rt->pCpuMem, (void *)(uintptr_t)p, nByte, aShape, 2,
                                                  ORT_TENSOR_INT64, &aIn[i]);
        if (aIn[i]) LIVE_INC();
    }
    if (st) {
        rc = ort_fail(rt, st, err, "creating an input tensor");
        goto out;
    }
    const char *azOut[1] = {s->zOut};
    FpState fp = fp_enter();
    st = rt->f.Run(s->pSess, NULL, (const char *const *)s->azIn, (const OrtValue *const *)aIn, (size_t)s->nIn,
                   azOut, 1, &pOutVal);
    fp_leave(fp);
    if (pOutVal) LIVE_INC();
    if (st) {
        /* Whatever ORT's code, a failed Run is ours to report as internal. */
        ort_fail(rt, st, err, "running the model");
        rc = err ? (err->code = LP_INTERNAL) : LP_INTERNAL;
        goto out;
    }
    /* Check the output's shape. */
    OrtTensorTypeAndShapeInfo *tsi = NULL;
    int eType = 0;
    size_t nDim = 0;
    int64_t aDim[3] = {0, 0, 0};
    st = rt->f.GetTensorTypeAndShape(pOutVal, &tsi);
    if (tsi) LIVE_INC();
    if (st == NULL) st = rt->f.GetTensorElementType(tsi, &eType);
    if (st == NULL) st = rt->f.GetDimensionsCount(tsi, &nDim);
    if (st == NULL && nDim == 3) st = rt->f.GetDimensions(tsi, aDim, 3);
    if (tsi) {
        rt->f.ReleaseTensorTypeAndShapeInfo(tsi);
        LIVE_DEC();
    }
    if (st) {
        rc = ort_fail(rt, st, err, "reading the model's output");
        goto out;
    }
    if (eType != ORT_TENSOR_FLOAT || nDim != 3 || aDim[0] != nBatch || aDim[1] != nSeq || aDim[2] < 1) {
        rc = lp_err_set(err, LP_INTERNAL,
                        "the model's output '%s' has type %d and shape [%lld, %lld, %lld] (rank %zu); "
                        "expected float [%d, %d, hidden]",
                        s->zOut, eType, (long long)aDim[0], (long long)aDim[1], (long long)aDim[2], nDim,
                        nBatch, nSeq);
        goto out;
    }
    void *pData = NULL;
    if ((st = rt->f.GetTensorMutableData(pOutVal, &pData))) {
        rc = ort_fail(rt, st, err, "reading the model's output");
        goto out;
    }
    pOut->a = pData;
    pOut->nBatch = aDim[0];
    pOut->nSeq = aDim[1];
    pOut->nDim = aDim[2];
    pOut->pValue = pOutVal;
    pOutVal = NULL;
out:
    for (int i = 0; i < ROLE_N; i++)
        if (aIn[i]) {
            rt->f.ReleaseValue(aIn[i]);
            LIVE_DEC();
        }
    if (pOutVal) {
        rt->f.ReleaseValue(pOutVal);
        LIVE_DEC();
    }
    return rc;
}
