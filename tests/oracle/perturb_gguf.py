#!/usr/bin/python3
"""Copy a GGUF, making parameters that synthetic models leave at neutral values observable.

Synthetic models set every norm weight to 1 and eps_hc equal to eps_rms, so a forward pass that
skipped a norm weight, or used one epsilon for the other, would agree with a correct one. This
rewrites, in place in the copy (same layout, same sizes):
  - every F32 tensor whose name ends in "norm.weight" (attn_norm, ffn_norm, attn_q_norm,
    attn_k_norm, indexer.k_norm, output_norm) to 1 + uniform(-0.5, 0.5), from --seed;
  - each --set-f32 KEY=VALUE metadata value (the key must exist with type float32).

Usage: perturb_gguf.py IN.gguf OUT.gguf [--seed N] [--set-f32 KEY=VALUE ...]
Exit 0 on success, 2 on unusable input (the message names the file and what was wrong).
"""
import argparse
import struct
import sys

import numpy as np

import gguf_np

GGUF_TYPE_FLOAT32 = 6


def f32_value_offset(buf, key):
    """Byte offset of the float32 value of metadata `key`, or an error string."""
    enc = key.encode()
    needle = struct.pack("<Q", len(enc)) + enc
    at = buf.find(needle)
    if at < 0:
        return f"metadata key {key} not found"
    vtype_at = at + len(needle)
    vtype = struct.unpack_from("<I", buf, vtype_at)[0]
    if vtype != GGUF_TYPE_FLOAT32:
        return f"metadata key {key} has value type {vtype} at byte {vtype_at}, not float32 ({GGUF_TYPE_FLOAT32})"
    return vtype_at + 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--set-f32", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args()
    try:
        g = gguf_np.Gguf(a.src)
    except (OSError, ValueError, struct.error) as e:
        print(f"error: {a.src}: {e}")
        return 2
    buf = bytearray(g.buf)
    rng = np.random.default_rng(a.seed)
    changed = 0
    for name in sorted(g.tensors):
        t = g.tensors[name]
        if not name.endswith("norm.weight") or t.type != 0:
            continue
        n = int(np.prod(t.ne))
        start = g.data_start + t.offset
        buf[start:start + 4 * n] = (1.0 + rng.uniform(-0.5, 0.5, n)).astype("<f4").tobytes()
        changed += 1
    for kv in a.set_f32:
        key, _, value = kv.partition("=")
        at = f32_value_offset(buf, key)
        if isinstance(at, str):
            print(f"error: {a.src}: {at}")
            return 2
        struct.pack_into("<f", buf, at, float(value))
    with open(a.dst, "wb") as f:
        f.write(buf)
    print(f"{a.dst}: {changed} norm weights randomised, {len(a.set_f32)} metadata values set")
    return 0


if __name__ == "__main__":
    sys.exit(main())
