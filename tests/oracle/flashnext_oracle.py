#!/usr/bin/python3
"""A float64 reference forward pass of the `flashnext` architecture, written from
docs/MODEL-flashnext.md alone (not from Arbor's C++), in numpy.

It also runs plain `qwen3moe` files: that model is the degenerate case of the same code (one
residual stream with pre = post = comb = 1, dense attention, no shared expert), which lets the
shared parts (reader, RMSNorm, NEOX RoPE, GQA attention, router, SwiGLU experts) be checked
against the engine on the published random qwen3moe file.

Usage:
  flashnext_oracle.py --model M.gguf (--tokens "1 2 3" | --tokens-file F | --ours LOGITS.json)
                      [--out REF.f32] [--ours LOGITS.json] [--bound 1e-3] [--show-selection]
                      [--kv-f16] [--q8a-types ORIGINAL.gguf]

--ours takes the JSON of `arbor-cli logits --all` (its "tokens" are the prompt when neither
--tokens nor --tokens-file is given; its "all_logits" are compared). Per position p:
  rel(p) = max_v |ours[p,v] - ref[p,v]| / max_v |ref[p,v]|,
and the script prints every position's rel, "max_rel_err=<max over p>", and exits 1 when it is
not below --bound (2 on unusable input). --out writes the reference logits as raw little-endian
float32, n_tokens x n_vocab. Weights may be F32, F16, BF16 or Q8_0.

For flashnext it also prints "selecting_positions=N min_score_margin=M selection_effect=E": the
positions past budget + 3, the smallest score gap at a top-k cut (0: a tie, broken by block
index), and how far dense attention everywhere would be from the selected one (a comparison is
only a test of the selection when E is far above the bound).
Diagnostics: --kv-f16 rounds what cells store (K, V, k_I) to half, as the default f16 KV cells
do; --q8a-types ORIGINAL.gguf applies the engine's Q8A activation rounding before every matmul
whose weight is quantized in ORIGINAL.gguf (MODEL then being its dequantized copy).
"""
import argparse
import json
import sys

import numpy as np

import gguf_np
import ref_numpy  # its q8a(), for the --q8a-types diagnostic only


# ---------------------------------------------------------------- elementary functions

def rms_norm(x, w, eps):
    """x / sqrt(mean(x^2) + eps) over the last axis, times w (None: no weight)."""
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y if w is None else y * w


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def silu(x):
    return x * sigmoid(x)


def softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def rope_neox(x, pos, n_rot, base):
    """NEOX rotary embedding of the first n_rot dims of the last axis.
    x: [..., dim] with the leading axis matching pos ([T] positions); pairs (i, i + n_rot/2)
    rotate by pos * base^(-2i/n_rot)."""
    half = n_rot // 2
    freq = base ** (-2.0 * np.arange(half, dtype=np.float64) / n_rot)
    theta = np.asarray(pos, dtype=np.float64).reshape(-1, *([1] * (x.ndim - 1))) * freq
    c, s = np.cos(theta), np.sin(theta)
    a, b = x[..., :half], x[..., half:n_rot]
    y = x.copy()
    y[..., :half] = a * c - b * s
    y[..., half:n_rot] = a * s + b * c
    return y


def q8a_if(g, x, name):
    """x, or its Q8A form (the engine's int8 activations, per 32 values) when the diagnostic
    --q8a-types marked the weight `name` as quantized in the original file."""
    return ref_numpy.q8a(x) if name in getattr(g, "q8a_names", ()) else x


def mm(g, x, name):
    """x @ W.T for the weight `name` (rows = outputs)."""
    return q8a_if(g, x, name) @ g.tensor(name).T


# ---------------------------------------------------------------- hyperparameters

class InputError(Exception):
    """A model or input this oracle cannot run (exit status 2)."""


class Hparams:
    def __init__(self, g):
        arch = g.get("general.architecture")
        if arch not in ("flashnext", "qwen3moe"):
            raise InputError(f"general.architecture is '{arch}'; this oracle runs flashnext and qwen3moe")
        self.arch = arch
        first = lambda v: int(v[0]) if hasattr(v, "__len__") else int(v)

        def key(name, default=None):
            v = g.get(f"{arch}.{name}", default)
            if v is None:
                raise InputError(f"missing metadata key {arch}.{name}")
            return v

        self.n_layer = int(key("block_count"))
        self.d = int(key("embedding_length"))
        self.n_head = first(key("attention.head_count"))
        self.n_head_kv = first(key("attention.head_count_kv"))
        self.hd_k = int(key("attention.key_length", self.d // self.n_head))
        self.hd_v = int(key("attention.value_length", self.hd_k))
        self.eps = float(key("attention.layer_norm_rms_epsilon"))
        self.rope_base = float(key("rope.freq_base", 10000.0))
        self.n_rot = int(key("rope.dimension_count", self.hd_k))
        scaling = g.get(f"{arch}.rope.scaling.type", "none")
        if scaling not in ("none", None):
            raise InputError(f"rope scaling '{scaling}' is not part of this oracle")
        self.n_expert = int(key("expert_count"))
        self.n_used = int(key("expert_used_count"))
        self.norm_topk = bool(g.get(f"{arch}.expert_weights_norm", True))
        self.att_scale = float(g.get(f"{arch}.attention.scale", 1.0 / np.sqrt(self.hd_k)))
        self.flash = arch == "flashnext"
        if self.flash:
            self.n_hc = int(key("hyper_connection.count"))
            self.hc_iters = int(key("hyper_connection.sinkhorn_iterations"))
            self.eps_hc = float(key("hyper_connection.epsilon"))
            self.n_idx_head = int(key("attention.indexer.head_count"))
            self.d_idx = int(key("attention.indexer.key_length"))
            self.budget = int(key("attention.indexer.top_k"))
            self.block = int(key("attention.indexer.block_size"))
        else:
            self.n_hc = 1
        self.force_dense = False  # a diagnostic: attend to every cell even past the budget
        self.kv_half = False      # round what the cells store (K, V, k_I) to half, as f16 KV cells do


# ---------------------------------------------------------------- hyper-connections

def hc_mix(X, fn, base, scale, hp):
    """The mHC weights of one sublayer for every token.
    X: [T, n, d] streams. fn: [2n + n^2, n*d] (rows = outputs), base: [2n + n^2], scale: [3].
    Returns pre [T, n], post [T, n], comb [T, n, n] (comb[t, j, k]: weight of stream j in new k)."""
    T, n, d = X.shape
    f = rms_norm(X.reshape(T, n * d), None, hp.eps)           # stream 0's d values first
    m = f @ fn.T                                               # [T, 2n + n^2]
    pre = sigmoid(scale[0] * m[:, :n] + base[:n]) + hp.eps_hc
    post = 2.0 * sigmoid(scale[1] * m[:, n:2 * n] + base[n:2 * n])
    c = (scale[2] * m[:, 2 * n:] + base[2 * n:]).reshape(T, n, n)
    c = softmax(c, axis=2) + hp.eps_hc                         # row softmax (over k), plus eps
    c = c / (c.sum(axis=1, keepdims=True) + hp.eps_hc)         # each column over j
    for _ in range(hp.hc_iters - 1):
        c = c / (c.sum(axis=2, keepdims=True) + hp.eps_hc)     # rows
        c = c / (c.sum(axis=1, keepdims=True) + hp.eps_hc)     # columns
    return pre, post, c


def hc_merge(X, y, post, comb):
    """X'_k = post_k * y + sum_j comb[j, k] * X_j."""
    return post[:, :, None] * y[:, None, :] + np.einsum("tjk,tjd->tkd", comb, X)


def sublayer_io(g, X, p, which, hp):
    """(x, post, comb) for sublayer `which` ("attn" / "ffn"): x = sum_i pre_i X_i."""
    if not hp.flash:
        T = X.shape[0]
        return X[:, 0, :], np.ones((T, 1)), np.ones((T, 1, 1))
    pre, post, comb = hc_mix(X, g.tensor(f"{p}hc_{which}_fn.weight"), g.tensor(f"{p}hc_{which}_base.weight"),
                             g.tensor(f"{p}hc_{which}_scale.weight"), hp)
    return np.einsum("ti,tid->td", pre, X), post, comb


# ---------------------------------------------------------------- attention with block selection

def cell_store(a, hp):
    """What a KV cell gives back: the value itself, or its half rounding with f16 cells."""
    return a.astype(np.float32).astype(np.float16).astype(np.float64) if hp.kv_half else a


def indexer_cells(g, p, xn, hp, selection_log=None, layer=0):
    """For every token t, the list of cells it attends to (increasing position).
    xn: [T, d], the attention input after attn_norm (the indexer reads the same vector)."""
    T = xn.shape[0]
    pos = np.arange(T)
    if not hp.flash or hp.force_dense:
        return [np.arange(t + 1) for t in range(T)]
    H, dI, B = hp.n_idx_head, hp.d_idx, hp.block
    qI = mm(g, xn, p + "indexer.attn_q_b.weight").reshape(T, H, dI)
    qI = rope_neox(qI, pos, dI, hp.rope_base) / np.sqrt(dI)
    w = mm(g, xn, p + "indexer.proj.weight") / np.sqrt(H)      # [T, H]
    kI = cell_store(mm(g, xn, p + "indexer.attn_k.weight"), hp)  # [T, dI], per cell
    k_norm = g.tensor(p + "indexer.k_norm.weight")
    n_blocks = T // B
    K = np.zeros((n_blocks, dI))
    for b in range(n_blocks):
        pooled = rms_norm(kI[B * b:B * b + B].mean(axis=0), k_norm, hp.eps)
        K[b] = rope_neox(pooled[None, :], [B * b], dI, hp.rope_base)[0]
    cells = []
    n_pick = hp.budget // B
    for t in range(T):
        seen = t + 1
        if seen <= hp.budget + 3:
            cells.append(np.arange(seen))
            continue
        n_b = t // B                       # complete blocks before the token's own block
        s = np.sum(w[t][None, :] * np.maximum(qI[t] @ K[:n_b].T, 0.0).T, axis=1)   # [n_b]
        order = sorted(range(n_b), key=lambda b: (-s[b], b))             # ties: lower block first
        chosen = sorted(order[:n_pick])
        # the selected blocks' cells, then the own block's cells 4 n_b .. t (partial or just completed)
        sel = [c for b in chosen for c in range(B * b, B * b + B)] + list(range(B * n_b, seen))
        cells.append(np.array(sel))
        if selection_log is not None:
            margin = s[order[n_pick - 1]] - s[order[n_pick]] if n_b > n_pick else np.inf
            selection_log.append((layer, t, chosen, margin))
    return cells


def attention(g, p, xn, hp, selection_log=None, layer=0):
    T = xn.shape[0]
    pos = np.arange(T)
    q = mm(g, xn, p + "attn_q.weight").reshape(T, hp.n_head, hp.hd_k)
    k = mm(g, xn, p + "attn_k.weight").reshape(T, hp.n_head_kv, hp.hd_k)
    v = mm(g, xn, p + "attn_v.weight").reshape(T, hp.n_head_kv, hp.hd_v)
    q = rope_neox(rms_norm(q, g.tensor(p + "attn_q_norm.weight"), hp.eps), pos, hp.n_rot, hp.rope_base)
    k = rope_neox(rms_norm(k, g.tensor(p + "attn_k_norm.weight"), hp.eps), pos, hp.n_rot, hp.rope_base)
    k, v = cell_store(k, hp), cell_store(v, hp)
    cells = indexer_cells(g, p, xn, hp, selection_log, layer)
    group = hp.n_head // hp.n_head_kv
    out = np.zeros((T, hp.n_head, hp.hd_v))
    for t in range(T):
        c = cells[t]
        for h in range(hp.n_head):
            kv = h // group
            a = softmax(k[c, kv, :] @ q[t, h] * hp.att_scale)
            out[t, h] = a @ v[c, kv, :]
    return mm(g, out.reshape(T, -1), p + "attn_output.weight")


# ---------------------------------------------------------------- MoE

def moe(g, p, xn, hp):
    T = xn.shape[0]
    probs = softmax(mm(g, xn, p + "ffn_gate_inp.weight"), axis=1)      # [T, E]
    gate, up, down = (g.tensor(p + n) for n in ("ffn_gate_exps.weight", "ffn_up_exps.weight",
                                                 "ffn_down_exps.weight"))
    y = np.zeros_like(xn)
    xq = q8a_if(g, xn, p + "ffn_gate_exps.weight")
    for t in range(T):
        top = sorted(range(hp.n_expert), key=lambda e: (-probs[t, e], e))[:hp.n_used]
        wts = probs[t, top] / probs[t, top].sum() if hp.norm_topk else probs[t, top]
        for e, we in zip(top, wts):
            y[t] += we * (down[e] @ q8a_if(g, silu(gate[e] @ xq[t]) * (up[e] @ xq[t]), p + "ffn_down_exps.weight"))
    if hp.flash:
        sh = silu(mm(g, xn, p + "ffn_gate_shexp.weight")) * mm(g, xn, p + "ffn_up_shexp.weight")
        sh = mm(g, sh, p + "ffn_down_shexp.weight")
        gsh = sigmoid(xn @ g.tensor(p + "ffn_gate_inp_shexp.weight").reshape(-1))   # [T]
        y = y + gsh[:, None] * sh
    return y


# ---------------------------------------------------------------- the whole model

def forward(g, tokens, selection_log=None, force_dense=False, kv_half=False):
    hp = Hparams(g)
    hp.force_dense = force_dense
    hp.kv_half = kv_half
    T = len(tokens)
    emb = g.tensor("token_embd.weight")
    bad = [t for t in tokens if not 0 <= t < emb.shape[0]]
    if bad:
        raise InputError(f"token id {bad[0]} is outside the vocabulary (token_embd has {emb.shape[0]} rows)")
    x0 = emb[np.array(tokens)]
    X = np.repeat(x0[:, None, :], hp.n_hc, axis=1)                            # [T, n, d]
    for l in range(hp.n_layer):
        p = f"blk.{l}."
        x, post, comb = sublayer_io(g, X, p, "attn", hp)
        y = attention(g, p, rms_norm(x, g.tensor(p + "attn_norm.weight"), hp.eps), hp, selection_log, l)
        X = hc_merge(X, y, post, comb)
        x, post, comb = sublayer_io(g, X, p, "ffn", hp)
        y = moe(g, p, rms_norm(x, g.tensor(p + "ffn_norm.weight"), hp.eps), hp)
        X = hc_merge(X, y, post, comb)
    if hp.flash:
        fn, base = g.tensor("output_hc_fn.weight"), g.tensor("output_hc_base.weight")
        scale = g.tensor("output_hc_scale.weight").reshape(-1)
        f = rms_norm(X.reshape(T, -1), None, hp.eps)
        pre = sigmoid(scale[0] * (f @ fn.T) + base) + hp.eps_hc                # [T, n]
        x = np.einsum("ti,tid->td", pre, X)
    else:
        x = X[:, 0, :]
    xn = rms_norm(x, g.tensor("output_norm.weight"), hp.eps)
    return mm(g, xn, "output.weight" if g.has("output.weight") else "token_embd.weight")


# ---------------------------------------------------------------- command line

def main():
    try:
        return run(parse_args())
    except InputError as e:
        print(f"error: {e}")
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"error: {type(e).__name__}: {e}")
    return 2


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokens", help="space-separated token ids")
    ap.add_argument("--tokens-file", help="a file of whitespace-separated token ids")
    ap.add_argument("--ours", help="JSON of `arbor-cli logits --all` to compare with")
    ap.add_argument("--out", help="write the reference logits here (raw float32, n_tokens x n_vocab)")
    ap.add_argument("--bound", type=float, default=1e-3)
    ap.add_argument("--q8a-types", metavar="ORIGINAL.gguf",
                    help="diagnostic: quantize the activations (Q8A) of every matmul whose weight is "
                         "quantized in ORIGINAL.gguf (MODEL is then its dequantized copy)")
    ap.add_argument("--kv-f16", action="store_true",
                    help="diagnostic: round K, V and k_I to half where the cells store them (f16 KV cells)")
    ap.add_argument("--show-selection", action="store_true",
                    help="print the blocks each selecting token chose, per layer, and the score margin")
    return ap.parse_args()


def run(a):
    g = gguf_np.Gguf(a.model)
    if a.q8a_types:
        orig = gguf_np.Gguf(a.q8a_types)
        g.q8a_names = {n for n, t in orig.tensors.items() if t.type not in (0, 1, 30)}
    ours = None
    if a.ours:
        with open(a.ours) as f:
            ours_json = json.load(f)
        ours = np.array(ours_json.get("all_logits", []), dtype=np.float64)
    if a.tokens is not None:
        tokens = [int(t) for t in a.tokens.split()]
    elif a.tokens_file:
        with open(a.tokens_file) as f:
            tokens = [int(t) for t in f.read().split()]
    elif ours is not None:
        tokens = [int(t) for t in ours_json["tokens"]]
    else:
        print("error: give --tokens, --tokens-file or --ours")
        return 2
    if not tokens:
        print("error: the prompt is empty")
        return 2
    log = []
    ref = forward(g, tokens, log, kv_half=a.kv_f16)
    print(f"reference: {ref.shape[0]} positions x {ref.shape[1]} logits, max|ref|={np.abs(ref).max():.6g}")
    if a.show_selection:
        for layer, t, chosen, margin in log:
            print(f"select layer {layer} pos {t}: blocks {chosen} (score margin {margin:.3e})")
    if Hparams(g).flash:
        # How much the selection matters here: the same model attending densely everywhere.
        dense = forward(g, tokens, None, force_dense=True, kv_half=a.kv_f16)
        effect = (np.abs(dense - ref).max(axis=1) / np.abs(ref).max(axis=1)).max()
        margins = [m for _, _, _, m in log]
        print(f"selecting_positions={len(set(t for _, t, _, _ in log))} "
              f"min_score_margin={min(margins) if margins else float('nan'):.3e} selection_effect={effect:.3e}")
    if a.out:
        ref.astype("<f4").tofile(a.out)
    if ours is None:
        return 0
    if ours.shape != ref.shape:
        print(f"error: {a.ours}: all_logits has shape {ours.shape}, expected {ref.shape} (run logits with --all)")
        return 2
    rel = np.abs(ours - ref).max(axis=1) / np.abs(ref).max(axis=1)
    for t, r in enumerate(rel):
        print(f"pos {t}: rel {r:.3e}")
    worst = int(np.argmax(rel))
    print(f"max_rel_err={rel[worst]:.3e} (bound {a.bound:g}; worst at position {worst})")
    return 0 if rel[worst] < a.bound else 1


if __name__ == "__main__":
    sys.exit(main())
