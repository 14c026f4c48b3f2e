#!/usr/bin/python3
"""A float64 reference forward pass in numpy, written from the model definitions (Llama,
Qwen2, Qwen3, Qwen3-MoE as published), independent of Arbor's code.

Usage:
  ref_numpy.py --model M.gguf --tokens "1 2 3" [--ours LOGITS.f32] [--bound 1e-3]

Prints the reference logits' summary, and with --ours (a raw little-endian float32 file of
n_tokens x n_vocab logits, the engine's output for every position) compares them:
  rel = max|ours - ref| / max|ref|   over every position and every vocabulary entry,
prints "max_rel_err=<value>" and exits 1 when rel >= bound.

Weights must be F32, F16 or BF16 (convert a quantized file to F32 first; see README.md).
--q8a-types ORIGINAL.gguf also applies Arbor's Q8A activation rounding (per 32 values, int8)
before every matmul whose weight is quantized in ORIGINAL.gguf: this isolates the engine's
arithmetic from the quantization choice and allows a much tighter bound.
"""
import argparse
import sys

import numpy as np

import gguf_np


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


class Config:
    def __init__(self, g):
        arch = g.get("general.architecture")
        self.arch = arch
        k = lambda s, d=None: g.get(f"{arch}.{s}", d)
        first = lambda v: int(v[0]) if hasattr(v, "__len__") else (None if v is None else int(v))
        self.n_embd = int(k("embedding_length"))
        self.n_layer = int(k("block_count"))
        self.n_head = int(k("attention.head_count"))
        self.n_head_kv = first(k("attention.head_count_kv")) or self.n_head
        self.hd_k = int(k("attention.key_length", self.n_embd // self.n_head))
        self.hd_v = int(k("attention.value_length", self.hd_k))
        self.n_rot = int(k("rope.dimension_count", self.hd_k))
        self.base = float(k("rope.freq_base", 10000.0))
        default_eps = 1e-5 if arch == "llama" else 1e-6
        self.eps = float(k("attention.layer_norm_rms_epsilon", default_eps))
        self.n_expert = int(k("expert_count", 0))
        self.n_used = int(k("expert_used_count", 0))
        self.neox = arch in ("qwen2", "qwen3", "qwen3moe")
        self.qk_norm = arch in ("qwen3", "qwen3moe")
        scaling = k("rope.scaling.type", "none")
        if scaling not in ("none", None):
            raise SystemExit(f"rope scaling '{scaling}' is not implemented in this reference")


def rope(x, pos, cfg):
    """x: [T, heads, hd]; rotates the first n_rot dims of each head."""
    half = cfg.n_rot // 2
    i = np.arange(half, dtype=np.float64)
    freq = cfg.base ** (-2.0 * i / cfg.n_rot)
    theta = pos[:, None].astype(np.float64) * freq[None, :]  # [T, half]
    c = np.cos(theta)[:, None, :]
    s = np.sin(theta)[:, None, :]
    y = x.copy()
    if cfg.neox:
        a, b = x[..., :half], x[..., half:cfg.n_rot]
        y[..., :half] = a * c - b * s
        y[..., half:cfg.n_rot] = a * s + b * c
    else:
        a, b = x[..., 0:cfg.n_rot:2], x[..., 1:cfg.n_rot:2]
        y[..., 0:cfg.n_rot:2] = a * c - b * s
        y[..., 1:cfg.n_rot:2] = a * s + b * c
    return y


def q8a(x):
    """Arbor's Q8A activation rule (arbor/quant.hpp) on the last axis, in float64 after the
    float32 steps: d = amax/127 (float32), q = rint(x/d) clamped to +-127, value q*d."""
    x32 = x.astype(np.float32)
    shp = x32.shape
    b = x32.reshape(shp[:-1] + (shp[-1] // 32, 32))
    amax = np.abs(b).max(axis=-1, keepdims=True)
    d = (amax / np.float32(127.0)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(d == 0, 0, np.clip(np.rint(b / d), -127, 127))
    return (q.astype(np.float64) * d.astype(np.float64)).reshape(shp)


QUANTIZED = set()  # tensor names whose matmul input is quantized (--q8a-types)


def mm(x, g, name):
    """x @ W.T, with x put through Q8A first when W is quantized in the original file."""
    w = g.tensor(name)
    if name in QUANTIZED:
        x = q8a(x)
    return x @ w.T


def forward(g, tokens):
    cfg = Config(g)
    T = len(tokens)
    pos = np.arange(T)
    emb = g.tensor("token_embd.weight")
    x = emb[np.array(tokens)]
    mask = np.triu(np.full((T, T), -np.inf), 1)
    group = cfg.n_head // cfg.n_head_kv
    for l in range(cfg.n_layer):
        p = f"blk.{l}."
        bias = lambda n: g.tensor(p + n + ".bias") if g.has(p + n + ".bias") else 0.0
        xn = rms_norm(x, g.tensor(p + "attn_norm.weight"), cfg.eps)
        q = (mm(xn, g, p + "attn_q.weight") + bias("attn_q")).reshape(T, cfg.n_head, cfg.hd_k)
        k = (mm(xn, g, p + "attn_k.weight") + bias("attn_k")).reshape(T, cfg.n_head_kv, cfg.hd_k)
        v = (mm(xn, g, p + "attn_v.weight") + bias("attn_v")).reshape(T, cfg.n_head_kv, cfg.hd_v)
        if cfg.qk_norm:
            q = rms_norm(q, g.tensor(p + "attn_q_norm.weight"), cfg.eps)
            k = rms_norm(k, g.tensor(p + "attn_k_norm.weight"), cfg.eps)
        q, k = rope(q, pos, cfg), rope(k, pos, cfg)
        att = np.zeros((T, cfg.n_head, cfg.hd_v))
        for h in range(cfg.n_head):
            kv = h // group
            s = q[:, h, :] @ k[:, kv, :].T / np.sqrt(cfg.hd_k) + mask
            s = np.exp(s - s.max(axis=1, keepdims=True))
            s /= s.sum(axis=1, keepdims=True)
            att[:, h, :] = s @ v[:, kv, :]
        x = x + mm(att.reshape(T, -1), g, p + "attn_output.weight")
        xn = rms_norm(x, g.tensor(p + "ffn_norm.weight"), cfg.eps)
        if g.has(p + "ffn_gate_inp.weight"):
            logits = mm(xn, g, p + "ffn_gate_inp.weight")
            pr = np.exp(logits - logits.max(axis=1, keepdims=True))
            pr /= pr.sum(axis=1, keepdims=True)
            gate, up, down = (g.tensor(p + n) for n in ("ffn_gate_exps.weight", "ffn_up_exps.weight",
                                                         "ffn_down_exps.weight"))
            y = np.zeros_like(x)
            qin = lambda v, n: q8a(v) if (p + n) in QUANTIZED else v
            for t in range(T):
                order = sorted(range(cfg.n_expert), key=lambda e: (-pr[t, e], e))[:cfg.n_used]
                w = pr[t, order] / pr[t, order].sum()
                for e, we in zip(order, w):
                    xg = qin(xn[t], "ffn_gate_exps.weight")
                    hh = silu(gate[e] @ xg) * (up[e] @ xg)
                    y[t] += we * (down[e] @ qin(hh, "ffn_down_exps.weight"))
            x = x + y
        else:
            hh = silu(mm(xn, g, p + "ffn_gate.weight")) * mm(xn, g, p + "ffn_up.weight")
            x = x + mm(hh, g, p + "ffn_down.weight")
    xn = rms_norm(x, g.tensor("output_norm.weight"), cfg.eps)
    out_name = "output.weight" if g.has("output.weight") else "token_embd.weight"
    return mm(xn, g, out_name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokens", required=True, help="space-separated token ids")
    ap.add_argument("--ours", help="raw float32 logits, n_tokens x n_vocab")
    ap.add_argument("--bound", type=float, default=1e-3)
    ap.add_argument("--q8a-types", metavar="ORIGINAL.gguf",
                    help="also quantize the activations (Q8A) wherever this file's weight is quantized")
    a = ap.parse_args()
    g = gguf_np.Gguf(a.model)
    if a.q8a_types:
        orig = gguf_np.Gguf(a.q8a_types)
        QUANTIZED.update(n for n, t in orig.tensors.items() if t.type not in (0, 1, 30))
    tokens = [int(t) for t in a.tokens.split()]
    ref = forward(g, tokens)
    print(f"reference: {ref.shape[0]} positions x {ref.shape[1]} logits, max|ref|={np.abs(ref).max():.6g}")
    if not a.ours:
        return 0
    ours = np.fromfile(a.ours, dtype="<f4").astype(np.float64)
    if ours.size != ref.size:
        print(f"error: {a.ours} holds {ours.size} floats, expected {ref.size}")
        return 2
    ours = ours.reshape(ref.shape)
    rel = np.abs(ours - ref).max() / np.abs(ref).max()
    worst = np.unravel_index(np.argmax(np.abs(ours - ref)), ref.shape)
    print(f"max_rel_err={rel:.3e} (bound {a.bound:g}; worst at position {worst[0]}, id {worst[1]})")
    return 0 if rel < a.bound else 1


if __name__ == "__main__":
    sys.exit(main())
