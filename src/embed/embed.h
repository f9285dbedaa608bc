/*
** embed.h — sentence-embedding models: text in, one L2-normalised float
** vector out.
**
** Contract. embed_model_get() opens a model by name and returns a shared,
** reference-counted EmbedModel; embed_text() and embed_batch() turn texts
** into vectors of embed_model_dims() floats with the sentence-transformers
** recipe:
**
**   tokenize    BERT WordPiece (wordpiece.h), [CLS] ... [SEP], truncated
**               to the model's max_seq_length;
**   run         one document per ONNX Runtime Run (ort.h), batch 1, no
**               padding: input_ids, attention_mask all ones,
**               token_type_ids all zeros (only the inputs the model
**               declares);
**   pool        mean of the token vectors over the attention mask (that
**               is, of all of them, [CLS] and [SEP] included), or the
**               [CLS] vector, or the per-dimension max, as the model's
**               1_Pooling/config.json says (mean when it says nothing;
**               mean_sqrt_len is mean, the normalisation makes them equal);
**   normalise   divide by the L2 norm (a zero vector stays zero).
**
** Names. MODEL_NAME is an absolute path to a model folder, used as is, or
** 'org/name' (or 'name'): letters, digits, '.', '_' and '-' per part,
** which resolves to <zDataDir>/models/org/name/. The folder holds
**   onnx/model.onnx or model.onnx   the encoder (see ort.h for its inputs);
**   config.json                     hidden_size (or dim / d_model),
**                                   max_position_embeddings;
**   tokenizer.json (or vocab.txt)   the tokenizer (wordpiece.h);
**   sentence_bert_config.json       max_seq_length (optional, default 256,
**                                   capped at 512 and at
**                                   max_position_embeddings);
**   1_Pooling/config.json           pooling mode (optional).
** The model is opened and checked completely by embed_model_get (it runs
** one short text through it), so a bad model fails at CREATE TABLE, not at
** the first INSERT.
**
** Registry. Models are kept in one process-wide registry keyed by the
** folder's real path: every get of the same folder (by whichever name)
** returns the same EmbedModel, with one ONNX Runtime session shared by all
** its users, and takes a reference; embed_model_release drops it, and the
** last release unloads the model. The options of the get that loaded the
** model apply; later gets' options are ignored until it is unloaded.
** Loading holds the registry's mutex (other gets wait for it).
**
** Batches. embed_batch runs up to nInline texts one after the other on the
** calling thread. A larger batch is spread over the worker pool: the
** caller's thread and up to tpool_size(pool) workers (at least one) each
** take the next text in order and run it, one text at a time, through the
** same shared session, until none is left; the output is in input order
** whatever thread computed what. With ORT sessions of 1 intra-op thread
** (the server's setting) that is the throughput-optimal way to use the
** cores (ort.h).
**
** Memory. embed_text allocates nothing itself: token ids live on the
** stack (WP_MAX_LEN of them), the mask and type ids in shared constant
** arrays; ONNX Runtime allocates its output and intermediate tensors from
** its arena (which keeps its peak: about the largest sequence length times
** the number of concurrent Runs). embed_batch allocates one small task
** record per worker used.
**
** Errors. embed_model_get: LP_BADINPUT (a name that is neither an absolute
** path nor org/name, or a relative name without a data dir), LP_NOTFOUND
** (no such model folder, no model file, no config.json, no tokenizer, no
** ONNX Runtime library: the message names the resolved path and what was
** expected in it), LP_CORRUPT (malformed JSON or an out-of-range value in a
** config file, an ONNX file the runtime cannot load, an output dimension
** other than config.json's hidden_size, a tokenizer with more tokens than
** vocab_size: the message names the file), LP_UNSUPPORTED (unsupported
** pooling, model inputs or outputs, tokenizer kind, a runtime too old),
** LP_INTERNAL (the trial run failed), LP_IOERR (realpath failed), LP_NOMEM.
** All messages start with "model '<name>': ". embed_text: LP_BADINPUT (NULL
** text with n > 0), LP_INTERNAL (ORT failed, or the output is malformed or
** not finite), LP_NOMEM. embed_batch: those of embed_text for the first
** text that failed (the first error to happen wins; the others stop
** taking texts), the message prefixed with "text <i> of <n>: " (i counts
** from 0). A pool that cannot queue a helper (LP_NOMEM) is no error: the
** caller's thread then does the work. On failure aOut's content is
** unspecified.
**
** Ownership: the caller owns the texts and aOut; the model owns its
** session and tokenizer. embed_model_name/path point into the model and
** live until the caller's reference is released.
**
** Thread safety: embed_model_get / embed_model_release may be called from
** any thread (one mutex guards the registry). embed_text, embed_batch and
** the accessors may be called from any number of threads at once on one
** model, holding a reference: there is no lock on the embedding path, ORT
** runs concurrently on the shared session.
*/
#ifndef LP_EMBED_EMBED_H
#define LP_EMBED_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "embed/wordpiece.h"
#include "util/error.h"
#include "util/threadpool.h"

#define EMBED_DEFAULT_MAX_SEQ 256   /* max_seq_length when the model does not say */
#define EMBED_DEFAULT_INLINE 4      /* embed_batch texts run inline by default */

typedef struct EmbedModel EmbedModel; /* opaque */

/* Server options for the models (all zero = defaults). */
typedef struct EmbedOptions {
    const char *zOrtLib; /* ort_lib: the runtime library; NULL = LOUPE_ORT_LIB / built-in default */
    int nIntraThreads;   /* onnx_intra_threads per session; 0 = all CPUs (ort.h: the server uses 1) */
    int bGeluApprox;     /* onnx_gelu_approx: tanh approximation of GELU */
    int bSpin;           /* intra-op threads spin (benchmark contrast only) */
} EmbedOptions;

/* Counters of one model since it was loaded (relaxed atomics: a snapshot
** of counters that each only grow, not a consistent cut). */
typedef struct EmbedStats {
    uint64_t nText;        /* texts embedded */
    uint64_t nToken;       /* tokens run through the model */
    uint64_t nsRun;        /* nanoseconds spent in ONNX Runtime's Run, all threads */
    uint64_t nBatchInline; /* embed_batch calls run inline */
    uint64_t nBatchPool;   /* embed_batch calls spread over the pool */
    uint64_t nTextWorker;  /* texts of those run by pool workers (not the caller) */
} EmbedStats;

/* Returns the model named zName (see Names) with a new reference, loading
** it when it is not loaded. opts NULL = defaults. NULL + err on failure. */
EmbedModel *embed_model_get(const char *zName, const char *zDataDir, const EmbedOptions *opts, LpError *err);

/* Drops a reference; the last one unloads the model. NULL is a no-op. */
void embed_model_release(EmbedModel *m);

/* Output dimension (the hidden size), tokens per text at most, the name
** as first given, the folder's real path. */
int embed_model_dims(const EmbedModel *m);
int embed_model_max_len(const EmbedModel *m);
const char *embed_model_name(const EmbedModel *m);
const char *embed_model_path(const EmbedModel *m);

/* The model's tokenizer (owned by the model). */
const Wordpiece *embed_model_tokenizer(const EmbedModel *m);

/* Reads the model's counters. */
void embed_model_stats(const EmbedModel *m, EmbedStats *pStats);

/* Number of models loaded in the process (for status and tests). */
int embed_registry_count(void);

/* Embeds the n bytes of UTF-8 at z into aOut[embed_model_dims(m)]. An
** empty text (n == 0, z may then be NULL) embeds "[CLS] [SEP]". */
int embed_text(EmbedModel *m, const char *z, size_t n, float *aOut, LpError *err);

/* Embeds nDoc texts (az[i], an[i] bytes) into aOut (nDoc rows of
** embed_model_dims(m) floats, in input order). Batches of at most nInline
** texts (values < 1 mean 1), or any batch when pool is NULL, run on the
** calling thread; larger ones use the pool as above. */
int embed_batch(EmbedModel *m, const char *const *az, const size_t *an, int nDoc, float *aOut, Tpool *pool,
                int nInline, LpError *err);

#endif /* LP_EMBED_EMBED_H */
