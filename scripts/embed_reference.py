#!/usr/bin/python3
"""NumPy reference forward pass for loupe's test embedding models.

An independent implementation of the BERT encoder that
scripts/gen-test-model.py writes as ONNX (see that file's docstring for the
architecture): it reads only the weights, by name, from the .onnx file's
initializers (onnx.numpy_helper) and the sizes from config.json, and computes
everything in float64 with NumPy. It never looks at the ONNX graph's nodes, so
running the same token ids through ONNX Runtime and through this module checks
the graph (and, in loupe's C tests, the tokenizer and pooling around it).

    sentence embedding = L2-normalise(mean over attention-masked tokens of
                                      last_hidden_state)

Module use:

    from embed_reference import load_model, truncate_ids
    m = load_model("models/loupe-test/all-MiniLM-L12-v2")
    vec = m.embed(truncate_ids(ids, m.max_seq_length))   # float64 [384]
    h = m.hidden([[101, 7592, 102]])                       # [1, 3, 384]

Command line (one JSON object per line in, one per line out):

    embed_reference.py MODEL_DIR --ids-jsonl golden-ids.jsonl --out ref.jsonl
        [--max-len 256] [--only 1650,1656] [--hidden]

Input lines are {"id": ..., "ids": [...]} (golden-ids.jsonl's format: the
tokenizer's ids with [CLS] first and [SEP] last, not truncated). Output lines
are {"id", "ids" (after truncation), "embedding": [384 floats]} and, with
--hidden, "last_hidden_state" (rows of floats) too. Truncation is the
sentence-transformers one: more than max-len ids keeps the first max-len - 1
and appends [SEP] (102).

Matrix products use np.einsum rather than np.matmul on purpose: einsum does not
go through BLAS, so results do not depend on which BLAS the machine has (and on
the reference netlib BLAS that Debian installs by default it is also faster).

Only NumPy and python3-onnx (Debian's 1.12 is enough) are needed.
"""

import argparse
import json
import math
import os
import sys

import numpy as np

SEP_ID = 102
# Added to attention scores where attention_mask is 0: (1 - mask) * MASK_MIN,
# the same constant the ONNX graph uses (float32's lowest finite value, as in
# Hugging Face's get_extended_attention_mask).
MASK_MIN = float(np.finfo(np.float32).min)


# ---------------------------------------------------------------------------
# erf without SciPy: Taylor expansion around the nearest point of a 1/32 grid
# on [0, 6]. erf's derivatives are Hermite polynomials times a Gaussian:
#   erf^(k)(a) = 2/sqrt(pi) * (-1)^(k-1) * H_(k-1)(a) * exp(-a^2),
# so with |x - a| <= 1/64 an 8th-order expansion is exact to ~1e-18, far
# below float64 rounding. Beyond 6, erf is +-1 in float64.
_ERF_STEP = 32
_ERF_MAX = 6.0
_ERF_ORDER = 8


def _erf_tables():
    n = int(_ERF_MAX * _ERF_STEP) + 1
    f0 = np.empty(n)
    coef = np.empty((_ERF_ORDER, n))
    for i in range(n):
        a = i / _ERF_STEP
        f0[i] = math.erf(a)
        g = 2.0 / math.sqrt(math.pi) * math.exp(-a * a)
        h_prev, h = 0.0, 1.0  # H_-1 (unused), H_0
        for k in range(1, _ERF_ORDER + 1):
            # coefficient of d^k: erf^(k)(a) / k!, built from H_(k-1)(a)
            coef[k - 1, i] = g * (-1.0) ** (k - 1) * h / math.factorial(k)
            # physicists' Hermite recurrence: H_k = 2a H_(k-1) - 2(k-1) H_(k-2)
            h_prev, h = h, 2.0 * a * h - 2.0 * (k - 1) * h_prev
    return f0, [np.ascontiguousarray(c) for c in coef]


_ERF_F0, _ERF_COEF = _erf_tables()


def erf(x):
    """Elementwise error function of a float64 array (max error ~1e-16)."""
    x = np.asarray(x, dtype=np.float64)
    t = np.minimum(np.abs(x), _ERF_MAX) * _ERF_STEP   # exact: step is 2^5
    idx = np.rint(t).astype(np.intp)
    d = (t - idx) * (1.0 / _ERF_STEP)                  # |d| <= 1/64, exact
    acc = _ERF_COEF[_ERF_ORDER - 1].take(idx)
    for k in range(_ERF_ORDER - 2, -1, -1):            # Horner in d
        acc *= d
        acc += _ERF_COEF[k].take(idx)
    acc *= d
    acc += _ERF_F0.take(idx)
    return np.copysign(acc, x)


def gelu(x):
    """Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    return x * 0.5 * (1.0 + erf(x / math.sqrt(2.0)))


def layer_norm(x, gamma, beta, eps):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=-1, keepdims=True)
    return xc / np.sqrt(var + eps) * gamma + beta


def dense(x, w, b):
    """x [..., in] @ w [in, out] + b [out], without BLAS (see module doc)."""
    return np.einsum("...i,io->...o", x, w) + b


def truncate_ids(ids, max_len=256):
    """sentence-transformers truncation: first max_len - 1 ids, then [SEP]."""
    ids = list(ids)
    if len(ids) <= max_len:
        return ids
    return ids[:max_len - 1] + [SEP_ID]


def mean_pool(hidden, mask):
    """Mean of hidden [B, S, H] over positions where mask [B, S] is 1."""
    m = np.asarray(mask, dtype=np.float64)[..., None]
    s = (hidden * m).sum(axis=1)
    n = np.maximum(m.sum(axis=1), 1e-9)  # sentence-transformers' clamp
    return s / n


def l2_normalize(v):
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-12)  # torch.nn.functional.normalize's eps


class RefModel:
    """Weights (float64) and sizes of one model; forward pass in NumPy."""

    def __init__(self, weights, config, max_seq_length=256):
        self.w = weights
        self.n_layers = int(config["num_hidden_layers"])
        self.n_heads = int(config["num_attention_heads"])
        self.hidden_size = int(config["hidden_size"])
        self.eps = float(config["layer_norm_eps"])
        self.max_seq_length = int(max_seq_length)
        self.head_size = self.hidden_size // self.n_heads

    def hidden(self, ids, attention_mask=None, token_type_ids=None):
        """last_hidden_state [B, S, H] (float64) for ids [B, S]."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim == 1:
            ids = ids[None, :]
        bsz, seq = ids.shape
        if attention_mask is None:
            attention_mask = np.ones_like(ids)
        if token_type_ids is None:
            token_type_ids = np.zeros_like(ids)
        w = self.w
        if seq > w["embeddings.position_embeddings.weight"].shape[0]:
            raise ValueError("sequence of %d tokens is longer than the %d positions"
                             % (seq, w["embeddings.position_embeddings.weight"].shape[0]))
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.token_type_embeddings.weight"][np.asarray(token_type_ids)])
        x = x + w["embeddings.position_embeddings.weight"][:seq][None, :, :]
        x = layer_norm(x, w["embeddings.LayerNorm.weight"],
                       w["embeddings.LayerNorm.bias"], self.eps)

        mask_add = (1.0 - np.asarray(attention_mask, dtype=np.float64)) * MASK_MIN
        mask_add = mask_add[:, None, None, :]            # [B, 1, 1, S]
        nh, hs = self.n_heads, self.head_size
        scale = 1.0 / math.sqrt(hs)

        for i in range(self.n_layers):
            p = "encoder.layer.%d." % i

            def heads(t):
                return t.reshape(bsz, seq, nh, hs).transpose(0, 2, 1, 3)

            q = heads(dense(x, w[p + "attention.self.query.weight"],
                            w[p + "attention.self.query.bias"]))
            k = heads(dense(x, w[p + "attention.self.key.weight"],
                            w[p + "attention.self.key.bias"]))
            v = heads(dense(x, w[p + "attention.self.value.weight"],
                            w[p + "attention.self.value.bias"]))
            scores = np.einsum("bhsd,bhtd->bhst", q, k) * scale + mask_add
            scores = scores - scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            ctx = np.einsum("bhst,bhtd->bhsd", probs, v)
            ctx = ctx.transpose(0, 2, 1, 3).reshape(bsz, seq, nh * hs)
            a = dense(ctx, w[p + "attention.output.dense.weight"],
                      w[p + "attention.output.dense.bias"])
            x = layer_norm(a + x, w[p + "attention.output.LayerNorm.weight"],
                           w[p + "attention.output.LayerNorm.bias"], self.eps)
            h = gelu(dense(x, w[p + "intermediate.dense.weight"],
                           w[p + "intermediate.dense.bias"]))
            o = dense(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"])
            x = layer_norm(o + x, w[p + "output.LayerNorm.weight"],
                           w[p + "output.LayerNorm.bias"], self.eps)
        return x

    def embed(self, ids):
        """Normalised mean-pooled embedding [H] of one id sequence, as given
        (truncate first with truncate_ids if it may be too long)."""
        ids = list(ids)
        if not ids:
            raise ValueError("empty id sequence")
        h = self.hidden([ids])
        return l2_normalize(mean_pool(h, np.ones((1, len(ids)))))[0]


def load_model(path, max_seq_length=None):
    """Load a model folder (onnx/model.onnx or model.onnx, config.json,
    sentence_bert_config.json) or a bare .onnx file (sizes then default to
    all-MiniLM's, with the layer count taken from the weight names)."""
    import onnx
    from onnx import numpy_helper

    if os.path.isdir(path):
        onnx_path = os.path.join(path, "onnx", "model.onnx")
        if not os.path.exists(onnx_path):
            onnx_path = os.path.join(path, "model.onnx")
        model_dir = path
    else:
        onnx_path = path
        model_dir = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    proto = onnx.load(onnx_path)
    weights = {}
    for t in proto.graph.initializer:
        a = numpy_helper.to_array(t)
        weights[t.name] = a.astype(np.float64) if a.dtype == np.float32 else a

    config = {"num_attention_heads": 12, "hidden_size": 384, "layer_norm_eps": 1e-12}
    cfg_path = os.path.join(model_dir, "config.json")
    if os.path.exists(cfg_path):
        with open(cfg_path, encoding="utf-8") as f:
            config.update(json.load(f))
    if "num_hidden_layers" not in config:
        config["num_hidden_layers"] = len({n.split(".")[2] for n in weights
                                           if n.startswith("encoder.layer.")})
    if max_seq_length is None:
        max_seq_length = 256
        st_path = os.path.join(model_dir, "sentence_bert_config.json")
        if os.path.exists(st_path):
            with open(st_path, encoding="utf-8") as f:
                max_seq_length = json.load(f).get("max_seq_length", 256)
    return RefModel(weights, config, max_seq_length)


def _floats(a):
    return [float(v) for v in np.asarray(a).ravel()]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="model folder (or .onnx file)")
    ap.add_argument("--ids-jsonl", required=True,
                    help='input, one {"id":..., "ids":[...]} per line ("-" = stdin)')
    ap.add_argument("--out", default="-", help="output JSONL (default stdout)")
    ap.add_argument("--max-len", type=int, default=None,
                    help="truncate to this many ids (default: the model's "
                         "max_seq_length, 256)")
    ap.add_argument("--only", default=None,
                    help="comma-separated ids to compute (default: all lines)")
    ap.add_argument("--hidden", action="store_true",
                    help="also write last_hidden_state")
    args = ap.parse_args(argv)

    m = load_model(args.model, args.max_len)
    only = None
    if args.only:
        only = {s.strip() for s in args.only.split(",") if s.strip()}
    fin = sys.stdin if args.ids_jsonl == "-" else open(args.ids_jsonl, encoding="utf-8")
    fout = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    try:
        for lineno, line in enumerate(fin, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if only is not None and str(rec.get("id")) not in only:
                continue
            if not isinstance(rec.get("ids"), list) or not rec["ids"]:
                raise SystemExit("%s:%d: no \"ids\" list" % (args.ids_jsonl, lineno))
            ids = truncate_ids(rec["ids"], m.max_seq_length)
            out = {"id": rec.get("id"), "ids": ids}
            if args.hidden:
                h = m.hidden([ids])
                out["embedding"] = _floats(l2_normalize(mean_pool(h, np.ones((1, len(ids)))))[0])
                out["last_hidden_state"] = [_floats(r) for r in h[0]]
            else:
                out["embedding"] = _floats(m.embed(ids))
            fout.write(json.dumps(out) + "\n")
    finally:
        if fin is not sys.stdin:
            fin.close()
        if fout is not sys.stdout:
            fout.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
