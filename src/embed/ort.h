/*
** ort.h — ONNX Runtime, loaded at run time, and one inference session per
** model file.
**
** Contract. loupe has no build-time dependency on ONNX Runtime: the
** library is dlopen()ed the first time a session is needed, through the
** subset of its C API that ort.c declares itself (from
** ../shared/reference/onnxruntime-c-abi.md). Which library:
**
**   1. the path passed to embed_ort_load / EmbedOrtOptions.zLib (the
**      server option ort_lib), else
**   2. the environment variable LOUPE_ORT_LIB, else
**   3. LOUPE_ORT_DEFAULT, compiled in by CMake (vendor/onnxruntime/,
**      where scripts/install-ort.sh puts it), else
**   4. plain "libonnxruntime.so.1" (the dynamic linker's search path).
**
** The runtime is loaded once per process and never unloaded: the first
** successful load fixes the library; later calls return LP_OK at once (a
** different explicit path then only logs a warning). A failed load is not
** remembered, so a later call tries again (after the library has been
** installed, say). The API table is taken with GetApi(EMBED_ORT_API_VERSION);
** an older runtime is refused with its version in the message. One OrtEnv
** is created with the runtime; ORT's own log lines go to util/log.h
** ("onnxruntime: ..."; its warnings at debug level, its errors as errors).
**
** Sessions. embed_ort_session_open creates one OrtSession for a model file
** with: graph optimisation ORT_ENABLE_ALL; nIntraThreads intra-op threads
** (0 = one per CPU available to the process) and sequential execution;
** intra-op spinning off unless bSpin; denormals flushed to zero
** (session.set_denormal_as_zero, and the FTZ/DAZ bits set on the calling
** thread for the duration of each Run, then restored, so every thread
** computes alike and the caller's floating-point state is untouched);
** GELU replaced by its tanh approximation when bGeluApprox (changes
** results slightly). Its inputs must be among input_ids (required),
** attention_mask and token_type_ids, int64 tensors of rank 2; the output
** used is the one named last_hidden_state or token_embeddings, else the
** first, a float tensor of rank 3 [batch, sequence, hidden].
**
** Threads: the trade-off. With nIntraThreads = N > 1 each session owns a
** pool of N-1 threads and one Run splits its matrix products over them:
** the lowest latency for one document (a knn() query text, a single-row
** INSERT). But concurrent Runs then share that pool and the extra threads
** contend with the callers for the same cores, and a transformer on a
** short sequence parallelises poorly inside one Run. With nIntraThreads = 1
** each Run executes entirely on its calling thread; N callers running N
** documents at once through one session is then the highest throughput
** (no synchronisation inside the graph). The server therefore runs its
** sessions with 1 intra-op thread and parallelises over documents
** (embed.h, embed_batch); 0 ("all cores") suits a process that embeds one
** text at a time.
**
** Run. embed_ort_run feeds nBatch x nSeq int64 ids, attention mask and
** token type ids (only the inputs the model declares), wrapping the
** caller's arrays without copying them, and returns the output tensor in
** an EmbedOrtOutput that owns ORT's value until embed_ort_output_free.
** The shape of the output is checked ([nBatch, nSeq, hidden], hidden > 0).
**
** Errors. embed_ort_load: LP_NOTFOUND (dlopen failed: the message names the
** path tried and dlerror()), LP_UNSUPPORTED (the library does not export
** OrtGetApiBase, or is older than API version 15: the message names the
** path and its version), LP_INTERNAL (the environment could not be
** created). embed_ort_session_open: those, plus the model file's errors
** (LP_NOTFOUND no such file, LP_CORRUPT a file ONNX Runtime cannot load,
** LP_UNSUPPORTED inputs or outputs of another kind than above), LP_NOMEM.
** embed_ort_run: LP_BADINPUT (nBatch or nSeq < 1), LP_INTERNAL (ORT
** failed, or the output has an unexpected shape), LP_NOMEM. ORT's messages
** are quoted with "onnxruntime: " and its error code.
**
** Thread safety: embed_ort_load may be called from any thread (a mutex
** serialises loading). embed_ort_run may be called from any number of
** threads at once on one session without a lock: ONNX Runtime's Run is
** thread-safe, and every call here uses only its own stack and ORT values.
** embed_ort_session_close must not race with a Run on the same session
** (the model registry in embed.h guarantees that with a reference count).
*/
#ifndef LP_EMBED_ORT_H
#define LP_EMBED_ORT_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* The OrtApi version asked for: the lowest that has every entry used. */
#define EMBED_ORT_API_VERSION 15

typedef struct EmbedOrtSession EmbedOrtSession; /* opaque */

typedef struct EmbedOrtOptions {
    const char *zLib;  /* runtime library; NULL = LOUPE_ORT_LIB / default (above) */
    int nIntraThreads; /* intra-op threads per session; 0 = one per available CPU */
    int bGeluApprox;   /* 1: tanh approximation of GELU (changes results) */
    int bSpin;         /* 1: intra-op threads spin between jobs (contrast only) */
} EmbedOrtOptions;

/* The output of one Run: nBatch x nSeq x nDim floats, row-major, owned by
** the ORT value in pValue until embed_ort_output_free. */
typedef struct EmbedOrtOutput {
    const float *a;    /* the tensor's data, borrowed from pValue */
    int64_t nBatch;    /* dimension 0 */
    int64_t nSeq;      /* dimension 1 */
    int64_t nDim;      /* dimension 2 (hidden size) */
    void *pValue;      /* ORT's OrtValue; NULL when empty */
} EmbedOrtOutput;

/* Loads the runtime (see "which library" above) unless it is loaded
** already. LP_OK or an error as above. */
int embed_ort_load(const char *zLib, LpError *err);

/* The loaded runtime's version string ("1.30.0") and path, or NULL when
** no runtime is loaded. Valid for the life of the process. */
const char *embed_ort_version(void);
const char *embed_ort_lib_path(void);

/* Opens a session on the ONNX file zModelPath (loading the runtime first
** with opts->zLib). opts NULL = defaults (all zero). NULL + err on failure. */
EmbedOrtSession *embed_ort_session_open(const char *zModelPath, const EmbedOrtOptions *opts, LpError *err);

/* Releases the session. NULL is a no-op. Must not race with a Run on it. */
void embed_ort_session_close(EmbedOrtSession *s);

/* The output's hidden size when the model declares it statically, else 0. */
int embed_ort_session_dims(const EmbedOrtSession *s);

/* Whether the model declares attention_mask / token_type_ids (input_ids it
** always does), and the name of the output used. */
int embed_ort_session_has_mask(const EmbedOrtSession *s);
int embed_ort_session_has_type(const EmbedOrtSession *s);
const char *embed_ort_session_output_name(const EmbedOrtSession *s);

/* Runs the model on nBatch sequences of nSeq tokens: aId, aMask and aType
** each hold nBatch*nSeq values, row after row (aMask and aType may be NULL
** when the model does not declare that input; they are read, never
** written, and need only live until the call returns). On LP_OK *pOut
** holds the output; release it with embed_ort_output_free. On failure
** *pOut is empty. */
int embed_ort_run(EmbedOrtSession *s, int nBatch, int nSeq, const int64_t *aId, const int64_t *aMask,
                  const int64_t *aType, EmbedOrtOutput *pOut, LpError *err);

/* Releases the ORT value of an output and empties it. Safe on an empty one. */
void embed_ort_output_free(EmbedOrtOutput *pOut);

/* ORT handles (sessions, values, type and shape infos, session options)
** obtained here and not released yet: 0 when no session is open and no
** output is held. ORT is built without frame pointers, so leak checkers
** cannot always tell who leaked an object allocated inside it; tests
** check this count instead. */
long long embed_ort_live_handles(void);

#endif /* LP_EMBED_ORT_H */
