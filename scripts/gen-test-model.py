#!/usr/bin/python3
"""Generate loupe's test embedding models (`make models`).

No real sentence-embedding weights can be downloaded here, so loupe's tests
and benchmarks use models that this script generates: the EXACT architecture
and ONNX interface of sentence-transformers/all-MiniLM-L12-v2 (and of its
6-layer sibling all-MiniLM-L6-v2) with deterministic pseudo-random weights,
next to the real tokenizer files of those models. The embeddings mean nothing
semantically, but the cost per token, the memory, the inputs and outputs, and
the graph ONNX Runtime optimises are those of the real models.

Layout (like a Hugging Face sentence-transformers repository), under
models/loupe-test/ in the repository root (gitignored):

    all-MiniLM-L12-v2/                 12 encoder layers, seed 12 (~133 MB)
    all-MiniLM-L6-v2/                   6 encoder layers, seed 6  (~90 MB)
        onnx/model.onnx                weights inside the file (no external data)
        config.json                    BertModel config (num_hidden_layers 12 / 6)
        tokenizer.json, vocab.txt, tokenizer_config.json,
        special_tokens_map.json        copied from the real model
        sentence_bert_config.json      max_seq_length 256
        1_Pooling/config.json          mean pooling, 384
        loupe-reference.jsonl          expected embeddings, see below
        loupe-test-model.stamp         version + hash of the inputs (cache key)

The tokenizer files come from ../shared/data/tokenizers/all-MiniLM-L6-v2/
(override with --tokenizer-dir or $LOUPE_TOKENIZER_DIR); L12 uses the same
vocabulary and tokenizer settings.

ONNX graph (opset 17, IR 8), as Hugging Face / optimum export BertModel:
  inputs  input_ids, attention_mask, token_type_ids: int64 [batch_size, sequence_length]
  output  last_hidden_state: float32 [batch_size, sequence_length, 384]
  embeddings: Gather(word) + Gather(token_type) + Gather(position), then
      LayerNormalization (eps 1e-12). Position ids are computed in the graph:
      Slice of the constant embeddings.position_ids [1, 512] up to
      Shape(input_ids)[1] (so sequences over 512 tokens fail in Add rather
      than read past the table).
  attention mask: Unsqueeze(1) -> Unsqueeze(2) -> Cast(float) -> Sub(1, m) ->
      Mul(MASK_MIN) gives the additive mask [batch, 1, 1, seq], shared by all
      layers. MASK_MIN = -3.4028234663852886e38, float32's lowest finite value,
      the constant Hugging Face's get_extended_attention_mask uses (not
      -10000): a masked score becomes exactly MASK_MIN, exp() of it is 0, and
      a row with every position masked still gives finite (uniform) weights,
      never NaN as -inf would.
  each of the 12 (6) layers, hidden 384, 12 heads of 32, intermediate 1536:
      Q, K, V = MatMul + Add; Reshape [0, 0, 12, 32]; Transpose (K to
      [b, h, 32, s]); scores = MatMul(Q, K) / sqrt(32) + mask; Softmax(-1);
      MatMul(., V); Transpose; Reshape [0, 0, 384]; output dense MatMul + Add;
      + residual; LayerNormalization; FFN MatMul + Add (384 -> 1536), exact
      GELU written x * 0.5 * (1 + Erf(x / sqrt 2)) (Div, Erf, Add, Mul, Mul:
      the pattern ONNX Runtime fuses into Gelu; opset 17 has no Gelu op),
      MatMul + Add (1536 -> 384), + residual, LayerNormalization.
  No pooler: pooling (mean over the attention mask) and L2 normalisation are
  the caller's job, as with the real model's onnx/model.onnx.

Weights: initializers named like the Hugging Face parameters
(embeddings.word_embeddings.weight, encoder.layer.3.attention.self.query.weight,
...). Dense weights are stored [in, out] (the graph computes x @ W + b), i.e.
transposed relative to PyTorch's Linear. Drawn with numpy.random.default_rng
(seed = number of layers) in a fixed order, BERT's initialisation: normal
std 0.02 for embedding tables and dense weights (row 0 of the word embeddings,
[PAD], is zero as with padding_idx), small normal biases (std 0.02), LayerNorm
gamma 1 + N(0, 0.05), beta N(0, 0.02).

loupe-reference.jsonl: for a fixed list of probes from the golden tokenizer
files (golden-texts.jsonl / golden-ids.jsonl next to the tokenizer: short and
long sentences, passages of exactly 256 and 257 tokens, a longer one, two
~100 KB inputs, the empty string, whitespace only, accents, CJK, Hangul, Thai,
Devanagari, Arabic, emoji, NUL and other control characters, zero-width
characters, ligatures, fullwidth forms), one line each:
    {"id": golden id, "text": ..., "ids": [token ids truncated to 256],
     "embedding": [384 floats]}
The ids are the Hugging Face tokenizer's (truncation: first 255 ids, then
[SEP] = 102); the embedding is the mean-pooled, L2-normalised last_hidden_state
computed by scripts/embed_reference.py, an independent float64 NumPy forward
pass that reads only the weights from model.onnx. Measured against ONNX
Runtime 1.30.0 (CPU, float32, full optimisation, which fuses the GELU into
BiasGelu and Q.K^T/sqrt(32) into FusedMatMul; its BERT Attention fusion does
not apply to opset-13+ Unsqueeze, as with the real exported model): max abs
difference 6.4e-8 on these embeddings, 3.2e-6 on last_hidden_state, the same
unoptimised and with padded batches. loupe's tests allow 1e-4. A one-token
change in a 256-token input moves the embedding by about 1e-3, distinct probes
by 2e-2 or more, so 1e-4 still catches tokenizer and truncation mistakes.

Caching: each model folder holds a stamp with this script's version and a
SHA-256 over this script, embed_reference.py and the tokenizer/golden files.
When every stamp matches, the script exits at once without importing numpy or
onnx (`make models` runs on every `make test`). A model is built in a
temporary folder next to its final place and renamed into place only when
complete, under a lock file, so an interrupted or concurrent run never leaves
a half-written model. One line is printed per model generated.

    /usr/bin/python3 scripts/gen-test-model.py [--out-dir DIR]
        [--tokenizer-dir DIR] [--force] [--only all-MiniLM-L6-v2]

Needs only Debian's python3-numpy and python3-onnx (1.12).
"""

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import signal
import sys
import time

GEN_VERSION = 1
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(REPO, "models", "loupe-test")
DEFAULT_TOKENIZER = os.path.join(os.path.dirname(REPO), "shared", "data",
                                 "tokenizers", "all-MiniLM-L6-v2")
STAMP = "loupe-test-model.stamp"

# name, layers, seed
MODELS = [("all-MiniLM-L12-v2", 12, 12), ("all-MiniLM-L6-v2", 6, 6)]

HIDDEN = 384
HEADS = 12
HEAD_SIZE = HIDDEN // HEADS
INTERMEDIATE = 1536
VOCAB = 30522
MAX_POSITIONS = 512
TYPE_VOCAB = 2
LN_EPS = 1e-12
MAX_SEQ_LENGTH = 256
MASK_MIN = -3.4028234663852886e38  # float32 lowest; see the docstring

TOKENIZER_FILES = ["tokenizer.json", "vocab.txt", "tokenizer_config.json",
                   "special_tokens_map.json"]
GOLDEN_TEXTS = "golden-texts.jsonl"
GOLDEN_IDS = "golden-ids.jsonl"

# Probes for loupe-reference.jsonl, by golden id (see the tokenizer README).
REFERENCE_PROBES = [
    # short sentences and a medium passage
    1300, 500, 1653, 1699,
    # exactly 256 ids (kept whole) and 257 ids (the last word-piece dropped)
    223, 85,
    # longer than 256 tokens: truncated to 255 ids + [SEP]
    100,
    # ~100 KB inputs (1904 is 100,000 characters of lorem ipsum)
    1899, 1904,
    # edge cases: empty, whitespace only, accents, scripts, emoji, controls
    1650, 1651, 1652, 1654, 1655, 1656, 1657, 1658, 1659, 1661, 1662, 1663,
    1664, 1668, 1670, 1671, 1672, 1673, 1674, 1675, 1676, 1677, 1678, 1679,
    1680, 1681, 1685, 1689, 1690, 1698, 1691, 1692,
]


def config_json(n_layers):
    return {
        "_name_or_path": "loupe-test/all-MiniLM-L%d-v2" % n_layers,
        "architectures": ["BertModel"],
        "attention_probs_dropout_prob": 0.1,
        "classifier_dropout": None,
        "gradient_checkpointing": False,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": INTERMEDIATE,
        "layer_norm_eps": LN_EPS,
        "max_position_embeddings": MAX_POSITIONS,
        "model_type": "bert",
        "num_attention_heads": HEADS,
        "num_hidden_layers": n_layers,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "transformers_version": "4.29.2",
        "type_vocab_size": TYPE_VOCAB,
        "use_cache": True,
        "vocab_size": VOCAB,
        "loupe_test_model": ("deterministic weights generated by loupe's "
                             "scripts/gen-test-model.py (version %d); not a "
                             "trained model" % GEN_VERSION),
    }


POOLING_CONFIG = {
    "word_embedding_dimension": HIDDEN,
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}
SBERT_CONFIG = {"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": False}


def die(msg):
    sys.stderr.write("gen-test-model: %s\n" % msg)
    sys.exit(1)


def inputs_hash(tokenizer_dir):
    """SHA-256 over everything a model folder is derived from."""
    h = hashlib.sha256()
    h.update(b"gen-test-model %d\n" % GEN_VERSION)
    paths = [os.path.abspath(__file__), os.path.join(HERE, "embed_reference.py")]
    paths += [os.path.join(tokenizer_dir, f)
              for f in TOKENIZER_FILES + [GOLDEN_TEXTS, GOLDEN_IDS]]
    for p in paths:
        try:
            with open(p, "rb") as f:
                data = f.read()
        except OSError as e:
            die("cannot read %s: %s" % (p, e.strerror))
        h.update(os.path.basename(p).encode() + b"\0")
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def stamp_text(digest):
    return "loupe gen-test-model version %d inputs-sha256 %s\n" % (GEN_VERSION, digest)


def is_current(model_dir, digest):
    try:
        with open(os.path.join(model_dir, STAMP), encoding="utf-8") as f:
            if f.read() != stamp_text(digest):
                return False
    except OSError:
        return False
    return os.path.isfile(os.path.join(model_dir, "onnx", "model.onnx"))


# ---------------------------------------------------------------------------
# weights

def make_weights(n_layers, seed):
    """Dict name -> float32 array, drawn in a fixed order from one seed."""
    import numpy as np

    rng = np.random.default_rng(seed)
    f32 = np.float32

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(f32)

    def ln(prefix, w):
        w[prefix + ".weight"] = (1.0 + rng.standard_normal(HIDDEN) * 0.05).astype(f32)
        w[prefix + ".bias"] = normal(HIDDEN, 0.02)

    w = {}
    word = normal((VOCAB, HIDDEN), 0.02)
    word[0] = 0.0  # [PAD], padding_idx
    w["embeddings.word_embeddings.weight"] = word
    w["embeddings.position_embeddings.weight"] = normal((MAX_POSITIONS, HIDDEN), 0.02)
    w["embeddings.token_type_embeddings.weight"] = normal((TYPE_VOCAB, HIDDEN), 0.02)
    ln("embeddings.LayerNorm", w)
    for i in range(n_layers):
        p = "encoder.layer.%d." % i
        for name in ("query", "key", "value"):
            w[p + "attention.self.%s.weight" % name] = normal((HIDDEN, HIDDEN), 0.02)
            w[p + "attention.self.%s.bias" % name] = normal(HIDDEN, 0.02)
        w[p + "attention.output.dense.weight"] = normal((HIDDEN, HIDDEN), 0.02)
        w[p + "attention.output.dense.bias"] = normal(HIDDEN, 0.02)
        ln(p + "attention.output.LayerNorm", w)
        w[p + "intermediate.dense.weight"] = normal((HIDDEN, INTERMEDIATE), 0.02)
        w[p + "intermediate.dense.bias"] = normal(INTERMEDIATE, 0.02)
        w[p + "output.dense.weight"] = normal((INTERMEDIATE, HIDDEN), 0.02)
        w[p + "output.dense.bias"] = normal(HIDDEN, 0.02)
        ln(p + "output.LayerNorm", w)
    return w


# ---------------------------------------------------------------------------
# graph

def build_model(weights, n_layers):
    """The ModelProto (checked) for these weights. Weights are written into
    the proto's initializer list in place (protobuf copies of a 130 MB graph
    cost seconds)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    nodes = []
    consts = {}

    def const(name, value, dtype):
        consts[name] = np.array(value, dtype=dtype)
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    i64, f32 = np.int64, np.float32
    consts["embeddings.position_ids"] = np.arange(MAX_POSITIONS, dtype=i64)[None, :]
    c_one_i = const("const.index_1", 1, i64)           # scalar
    c_axis0 = const("const.axes_0", [0], i64)
    c_axis1 = const("const.axes_1", [1], i64)
    c_axis2 = const("const.axes_2", [2], i64)
    c_zero_1d = const("const.zero_1d", [0], i64)
    c_heads_shape = const("const.shape_heads", [0, 0, HEADS, HEAD_SIZE], i64)
    c_hidden_shape = const("const.shape_hidden", [0, 0, HIDDEN], i64)
    c_one = const("const.one", 1.0, f32)
    c_half = const("const.half", 0.5, f32)
    c_sqrt2 = const("const.sqrt2", np.sqrt(2.0), f32)
    c_sqrt_head = const("const.sqrt_head_size", np.sqrt(float(HEAD_SIZE)), f32)
    c_mask_min = const("const.mask_min", MASK_MIN, f32)

    # embeddings
    shape = node("Shape", ["input_ids"], "embeddings/shape")
    seq = node("Gather", [shape, c_one_i], "embeddings/seq_len", axis=0)
    seq1 = node("Unsqueeze", [seq, c_axis0], "embeddings/seq_len_1d")
    pos_ids = node("Slice", ["embeddings.position_ids", c_zero_1d, seq1, c_axis1],
                   "embeddings/position_ids")
    word = node("Gather", ["embeddings.word_embeddings.weight", "input_ids"],
                "embeddings/word")
    ttype = node("Gather", ["embeddings.token_type_embeddings.weight", "token_type_ids"],
                 "embeddings/token_type")
    pos = node("Gather", ["embeddings.position_embeddings.weight", pos_ids],
               "embeddings/position")
    e = node("Add", [word, ttype], "embeddings/add_type")
    e = node("Add", [e, pos], "embeddings/add_position")
    x = node("LayerNormalization", [e, "embeddings.LayerNorm.weight",
                                    "embeddings.LayerNorm.bias"],
             "embeddings/LayerNorm", axis=-1, epsilon=LN_EPS)

    # additive attention mask [batch, 1, 1, seq]
    m = node("Unsqueeze", ["attention_mask", c_axis1], "mask/unsqueeze_1")
    m = node("Unsqueeze", [m, c_axis2], "mask/unsqueeze_2")
    m = node("Cast", [m], "mask/cast", to=TensorProto.FLOAT)
    m = node("Sub", [c_one, m], "mask/inverted")
    mask = node("Mul", [m, c_mask_min], "mask/additive")

    for i in range(n_layers):
        p = "encoder.layer.%d." % i
        n = "layer.%d/" % i

        def proj(what, src, w_name):
            mm = node("MatMul", [src, p + w_name + ".weight"], n + what + "/MatMul")
            return node("Add", [mm, p + w_name + ".bias"], n + what + "/Add")

        def split_heads(t, what, perm):
            r = node("Reshape", [t, c_heads_shape], n + what + "/Reshape")
            return node("Transpose", [r], n + what + "/Transpose", perm=perm)

        q = split_heads(proj("query", x, "attention.self.query"), "query", [0, 2, 1, 3])
        k = split_heads(proj("key", x, "attention.self.key"), "key", [0, 2, 3, 1])
        v = split_heads(proj("value", x, "attention.self.value"), "value", [0, 2, 1, 3])
        s = node("MatMul", [q, k], n + "scores/MatMul")
        s = node("Div", [s, c_sqrt_head], n + "scores/Div")
        s = node("Add", [s, mask], n + "scores/AddMask")
        s = node("Softmax", [s], n + "scores/Softmax", axis=-1)
        c = node("MatMul", [s, v], n + "context/MatMul")
        c = node("Transpose", [c], n + "context/Transpose", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, c_hidden_shape], n + "context/Reshape")
        a = proj("attention_output", c, "attention.output.dense")
        a = node("Add", [a, x], n + "attention_output/Residual")
        x = node("LayerNormalization", [a, p + "attention.output.LayerNorm.weight",
                                        p + "attention.output.LayerNorm.bias"],
                 n + "attention_output/LayerNorm", axis=-1, epsilon=LN_EPS)
        h = proj("intermediate", x, "intermediate.dense")
        g = node("Div", [h, c_sqrt2], n + "gelu/Div")
        g = node("Erf", [g], n + "gelu/Erf")
        g = node("Add", [g, c_one], n + "gelu/Add")
        g = node("Mul", [h, g], n + "gelu/Mul")
        g = node("Mul", [g, c_half], n + "gelu/Mul_half")
        o = proj("output", g, "output.dense")
        o = node("Add", [o, x], n + "output/Residual")
        x = node("LayerNormalization", [o, p + "output.LayerNorm.weight",
                                        p + "output.LayerNorm.bias"],
                 n + "output/LayerNorm", axis=-1, epsilon=LN_EPS)

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"],
                                  name="last_hidden_state"))
    dims = ["batch_size", "sequence_length"]
    graph = helper.make_graph(
        nodes, "loupe_test_bert_L%d" % n_layers,
        [helper.make_tensor_value_info(nm, TensorProto.INT64, dims)
         for nm in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                       dims + [HIDDEN])])
    model = helper.make_model(
        graph, producer_name="loupe gen-test-model.py",
        producer_version=str(GEN_VERSION),
        opset_imports=[helper.make_opsetid("", 17)],
        doc_string=("BERT encoder with the architecture of sentence-transformers/"
                    "all-MiniLM-L%d-v2 and deterministic test weights; not a "
                    "trained model." % n_layers))
    model.ir_version = 8
    types = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
    for name, a in list(weights.items()) + list(consts.items()):
        t = model.graph.initializer.add()
        t.name = name
        t.data_type = types[a.dtype]
        t.dims.extend(a.shape)
        t.raw_data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    onnx.checker.check_model(model)
    return model


# ---------------------------------------------------------------------------
# reference embeddings

def load_probes(tokenizer_dir):
    texts, ids = {}, {}
    want = set(REFERENCE_PROBES)
    for fname, dest, key in ((GOLDEN_TEXTS, texts, "text"), (GOLDEN_IDS, ids, "ids")):
        path = os.path.join(tokenizer_dir, fname)
        with open(path, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                if rec["id"] in want:
                    dest[rec["id"]] = rec[key]
    missing = [i for i in REFERENCE_PROBES if i not in texts or i not in ids]
    if missing:
        die("golden ids %s not found in %s" % (missing, tokenizer_dir))
    return [(i, texts[i], ids[i]) for i in REFERENCE_PROBES]


# ---------------------------------------------------------------------------
# the work, in worker processes (fork) or in this one

_PROBES = []        # [(id, text, truncated ids)], set before the pool forks
_REF_MODELS = {}    # model folder -> embed_reference.RefModel, per process


def _tune_malloc():
    """Keep freed memory in glibc's heap: the NumPy forward pass allocates
    many 1-3 MB arrays, and by default each would be a fresh mmap whose page
    faults cost a large share of the time. Inherited by forked workers."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 30)   # M_MMAP_THRESHOLD
        libc.mallopt(-1, 1 << 30)   # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def _build_task(task):
    """Write one model folder's files (all but the reference and the stamp)."""
    import onnx

    tmp, n_layers, seed, tokenizer_dir = task
    os.makedirs(os.path.join(tmp, "onnx"))
    os.makedirs(os.path.join(tmp, "1_Pooling"))
    model = build_model(make_weights(n_layers, seed), n_layers)
    onnx.save(model, os.path.join(tmp, "onnx", "model.onnx"))
    del model
    for fname in TOKENIZER_FILES:
        shutil.copyfile(os.path.join(tokenizer_dir, fname), os.path.join(tmp, fname))
    write_json(os.path.join(tmp, "config.json"), config_json(n_layers))
    write_json(os.path.join(tmp, "sentence_bert_config.json"), SBERT_CONFIG)
    write_json(os.path.join(tmp, "1_Pooling", "config.json"), POOLING_CONFIG)
    return tmp


def _reference_task(task):
    """Embedding of probe number k by the model in folder tmp."""
    import embed_reference

    tmp, k = task
    m = _REF_MODELS.get(tmp)
    if m is None:
        m = _REF_MODELS[tmp] = embed_reference.load_model(tmp)
    return tmp, k, [float(v) for v in m.embed(_PROBES[k][2])]


def _worker_init():
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # pool.terminate() must work
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C: the parent cleans up
    try:  # die with the parent even if it is SIGKILLed (Linux: PR_SET_PDEATHSIG)
        import ctypes
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through generate()'s cleanup


def _run(pool, fn, tasks):
    if pool is None:
        return [fn(t) for t in tasks]
    return list(pool.imap_unordered(fn, tasks, chunksize=1))


def generate(pending, out_root, tokenizer_dir, digest, jobs):
    import multiprocessing
    import embed_reference

    t0 = time.monotonic()
    _PROBES[:] = [(pid, text, embed_reference.truncate_ids(ids, MAX_SEQ_LENGTH))
                  for pid, text, ids in load_probes(tokenizer_dir)]
    tmps = {name: os.path.join(out_root, ".tmp-%s-%d" % (name, os.getpid()))
            for name, _, _ in pending}
    pool = None
    try:
        if jobs > 1:
            pool = multiprocessing.get_context("fork").Pool(jobs, _worker_init)
        _run(pool, _build_task, [(tmps[name], n, seed, tokenizer_dir)
                                 for name, n, seed in pending])
        # most expensive first, so the workers finish together
        layers = {tmps[name]: n for name, n, _ in pending}
        tasks = sorted(((tmps[name], k) for name, _, _ in pending
                        for k in range(len(_PROBES))),
                       key=lambda t: -len(_PROBES[t[1]][2]) * layers[t[0]])
        embeddings = {}
        for tmp, k, vec in _run(pool, _reference_task, tasks):
            embeddings[tmp, k] = vec
        if pool is not None:
            pool.close()
            pool.join()
            pool = None

        for name, n_layers, _ in pending:
            tmp, final = tmps[name], os.path.join(out_root, name)
            with open(os.path.join(tmp, "loupe-reference.jsonl"), "w",
                      encoding="utf-8") as f:
                for k, (pid, text, tids) in enumerate(_PROBES):
                    f.write(json.dumps({"id": pid, "text": text, "ids": tids,
                                        "embedding": embeddings[tmp, k]},
                                       ensure_ascii=False) + "\n")
            with open(os.path.join(tmp, STAMP), "w", encoding="utf-8") as f:
                f.write(stamp_text(digest))
            old = None
            if os.path.exists(final):
                old = os.path.join(out_root, ".old-%s-%d" % (name, os.getpid()))
                os.rename(final, old)
            os.rename(tmp, final)
            if old:
                shutil.rmtree(old, ignore_errors=True)
            size = os.path.getsize(os.path.join(final, "onnx", "model.onnx"))
            shown = os.path.relpath(final)
            if shown.startswith(".."):
                shown = final
            print("gen-test-model: %s (%d layers, model.onnx %.1f MB, %d reference "
                  "embeddings; %.1f s)" % (shown, n_layers, size / 1e6,
                                           len(_PROBES), time.monotonic() - t0))
            sys.stdout.flush()
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        for tmp in tmps.values():
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Generate loupe's test embedding models (see the docstring).")
    ap.add_argument("--out-dir", default=DEFAULT_OUT,
                    help="where the model folders go (default models/loupe-test)")
    ap.add_argument("--tokenizer-dir",
                    default=os.environ.get("LOUPE_TOKENIZER_DIR", DEFAULT_TOKENIZER),
                    help="real all-MiniLM tokenizer files and golden probes "
                         "(default ../shared/data/tokenizers/all-MiniLM-L6-v2)")
    ap.add_argument("--force", action="store_true", help="regenerate even if current")
    ap.add_argument("--only", default=None, help="generate just this model name")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="worker processes (default 2, or 1 on one CPU)")
    args = ap.parse_args(argv)

    models = [m for m in MODELS if args.only in (None, m[0])]
    if not models:
        die("no model named %r (have %s)" % (args.only, ", ".join(m[0] for m in MODELS)))
    if not os.path.isdir(args.tokenizer_dir):
        die("tokenizer folder %s not found (set --tokenizer-dir or "
            "LOUPE_TOKENIZER_DIR)" % args.tokenizer_dir)
    digest = inputs_hash(args.tokenizer_dir)
    out_root = os.path.abspath(args.out_dir)

    def todo():
        return [m for m in models
                if args.force or not is_current(os.path.join(out_root, m[0]), digest)]

    if not todo():
        return 0
    os.makedirs(out_root, exist_ok=True)
    with open(os.path.join(out_root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pending = todo()  # another run may have finished while we waited
        if not pending:
            return 0
        # leftovers of interrupted runs (we hold the lock: nobody else is writing)
        for entry in os.listdir(out_root):
            if entry.startswith((".tmp-", ".old-")):
                shutil.rmtree(os.path.join(out_root, entry), ignore_errors=True)
        sys.path.insert(0, HERE)
        signal.signal(signal.SIGTERM, _on_sigterm)
        _tune_malloc()
        generate(pending, out_root, args.tokenizer_dir, digest, max(1, args.jobs))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.stderr.write("gen-test-model: interrupted, nothing changed\n")
        sys.exit(130)
