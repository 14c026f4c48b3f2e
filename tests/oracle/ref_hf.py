#!/usr/bin/env python3
"""Second implementation: HF transformers in float64, on weights read from the GGUF with our own
numpy reader (gguf_np.py), compared with Arbor's logits at every prompt position.

    ref_hf.py --cli build/engine/arbor-cli --model M.gguf [--prompt TEXT] [--bound B]
              [--dequantize build/tests/model/dequantize_gguf] [--device cuda|cpu]

1. Runs `arbor-cli logits -m M.gguf -p TEXT --all --kv-type f32 -n 0` for the prompt's token ids
   and our logits at every position.
2. Quantized files: decodes every tensor to F32 with `dequantize_gguf` (the engine's decoders,
   checked bit-exact against ggml's in tests/quant) and runs the reference on those weights;
   the default bound is then 2e-2 (our matmuls quantize activations to int8 per 32 values).
   F32/F16/BF16 files: the weights as they are; default bound 1e-3.
3. Builds the matching transformers model (LlamaForCausalLM, Qwen2ForCausalLM,
   Qwen3ForCausalLM, Qwen3MoeForCausalLM) in float64, loads the weights (GGUF's llama Q/K
   rows are un-permuted back to HF's layout), runs the token ids through it and prints
   max|ours - ref| / max|ref|. Exit 0 when below the bound, 1 otherwise.

Needs torch and transformers (the GPU machine has both); see README.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import gguf_np

QUANT_FLOAT_TYPES = (0, 1, 30)  # F32, F16, BF16


def arbor_logits(cli, model, prompt):
    out = subprocess.run([cli, "logits", "-m", model, "-p", prompt, "--all", "--kv-type", "f32", "-n", "0"],
                         check=True, capture_output=True).stdout
    j = json.loads(out)
    return j["tokens"], np.array(j["all_logits"], dtype=np.float64)


def unpermute(w, n_head):
    """GGUF's llama Q/K row order (pairs interleaved per head) back to HF's (halves)."""
    rows, cols = w.shape
    return w.reshape(n_head, rows // n_head // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def build_model(g, torch, transformers):
    arch = g.get("general.architecture")
    k = lambda s, d=None: g.get(f"{arch}.{s}", d)
    n_embd = int(k("embedding_length"))
    n_head = int(k("attention.head_count"))
    kv = k("attention.head_count_kv", n_head)
    n_head_kv = int(kv[0]) if hasattr(kv, "__len__") else int(kv)
    head_dim = int(k("attention.key_length", n_embd // n_head))
    n_vocab = g.tensors["token_embd.weight"].ne[1]
    tied = not g.has("output.weight")
    common = dict(vocab_size=n_vocab, hidden_size=n_embd, num_hidden_layers=int(k("block_count")),
                  num_attention_heads=n_head, num_key_value_heads=n_head_kv, head_dim=head_dim,
                  rms_norm_eps=float(k("attention.layer_norm_rms_epsilon", 1e-5 if arch == "llama" else 1e-6)),
                  rope_theta=float(k("rope.freq_base", 10000.0)), max_position_embeddings=int(k("context_length", 2048)),
                  tie_word_embeddings=tied)
    if arch == "llama":
        cfg = transformers.LlamaConfig(intermediate_size=int(k("feed_forward_length")), attention_bias=g.has("blk.0.attn_q.bias"),
                                       **common)
        cls = transformers.LlamaForCausalLM
    elif arch == "qwen2":
        cfg = transformers.Qwen2Config(intermediate_size=int(k("feed_forward_length")), **common)
        cls = transformers.Qwen2ForCausalLM
    elif arch == "qwen3":
        cfg = transformers.Qwen3Config(intermediate_size=int(k("feed_forward_length")), **common)
        cls = transformers.Qwen3ForCausalLM
    elif arch == "qwen3moe":
        cfg = transformers.Qwen3MoeConfig(intermediate_size=int(k("feed_forward_length", 1)),
                                          moe_intermediate_size=int(k("expert_feed_forward_length")),
                                          num_experts=int(k("expert_count")), num_experts_per_tok=int(k("expert_used_count")),
                                          norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[], **common)
        cls = transformers.Qwen3MoeForCausalLM
    else:
        raise SystemExit(f"architecture {arch} is not mapped")
    # Newer transformers keep RoPE settings in rope_parameters.
    if getattr(cfg, "rope_parameters", None) is not None:
        cfg.rope_parameters = {"rope_type": "default", "rope_theta": common["rope_theta"]}
    cfg._attn_implementation = "eager"
    # transformers 5 runs fused experts through torch._grouped_mm, which has no float64 kernel.
    if hasattr(cfg, "_experts_implementation") or "moe" in arch:
        cfg._experts_implementation = "eager"
    model = cls(cfg).to(torch.float64).eval()
    return model, arch, n_head, n_head_kv


def hf_weights(g, arch, n_head, n_head_kv):
    """HF parameter name -> float64 array, from the GGUF tensors."""
    w = {"model.embed_tokens.weight": g.tensor("token_embd.weight"), "model.norm.weight": g.tensor("output_norm.weight")}
    if g.has("output.weight"):
        w["lm_head.weight"] = g.tensor("output.weight")
    n_layer = int(g.get(f"{arch}.block_count"))
    names = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm", "attn_q": "self_attn.q_proj",
             "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
             "attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm", "ffn_gate": "mlp.gate_proj",
             "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj", "ffn_gate_inp": "mlp.gate"}
    for l in range(n_layer):
        for src, dst in names.items():
            for kind in ("weight", "bias"):
                n = f"blk.{l}.{src}.{kind}"
                if not g.has(n):
                    continue
                t = g.tensor(n)
                if arch == "llama" and src in ("attn_q", "attn_k"):
                    heads = n_head if src == "attn_q" else n_head_kv
                    t = unpermute(t, heads) if kind == "weight" else unpermute(t[:, None], heads)[:, 0]
                w[f"model.layers.{l}.{dst}.{kind}"] = t
        if g.has(f"blk.{l}.ffn_gate_exps.weight"):
            for src, dst in (("ffn_gate_exps", "gate_proj"), ("ffn_up_exps", "up_proj"), ("ffn_down_exps", "down_proj")):
                stack = g.tensor(f"blk.{l}.{src}.weight")  # [E, rows, cols]
                for e in range(stack.shape[0]):
                    w[f"model.layers.{l}.mlp.experts.{e}.{dst}.weight"] = stack[e]
    return w


def load_weights(model, w, torch):
    sd = model.state_dict()
    # Fused expert layouts (newer transformers): experts.gate_up_proj [E, 2F, H] or [E, H, 2F],
    # experts.down_proj [E, H, F] or [E, F, H].
    for name in list(sd.keys()):
        if name.endswith("mlp.experts.gate_up_proj") or name.endswith("mlp.experts.down_proj"):
            pre = name[: -len("gate_up_proj")] if name.endswith("gate_up_proj") else name[: -len("down_proj")]
            part = ".gate_proj.weight" if name.endswith("gate_up_proj") else ".down_proj.weight"
            E = sum(1 for k in w if k.startswith(pre) and k.endswith(part))
            if name.endswith("gate_up_proj"):
                fused = np.stack([np.concatenate([w.pop(f"{pre}{e}.gate_proj.weight"), w.pop(f"{pre}{e}.up_proj.weight")])
                                  for e in range(E)])
            else:
                fused = np.stack([w.pop(f"{pre}{e}.down_proj.weight") for e in range(E)])
            if tuple(sd[name].shape) != fused.shape:
                fused = fused.swapaxes(1, 2)
            w[name] = fused
    missing = [k for k in sd if k not in w and not k.endswith("rotary_emb.inv_freq") and k != "lm_head.weight"]
    extra = [k for k in w if k not in sd]
    if missing or extra:
        raise SystemExit(f"weight mapping mismatch: missing {missing[:5]} extra {extra[:5]}")
    with torch.no_grad():
        for k, v in w.items():
            if tuple(sd[k].shape) != v.shape:
                raise SystemExit(f"{k}: shape {tuple(sd[k].shape)} vs GGUF {v.shape}")
            sd[k].copy_(torch.from_numpy(np.ascontiguousarray(v)))
    if "lm_head.weight" not in w:
        model.tie_weights()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt", default="Once upon a time, there was a little girl named Lily. She loved to play outside.")
    ap.add_argument("--bound", type=float)
    ap.add_argument("--dequantize", help="the dequantize_gguf tool (needed for quantized files)")
    ap.add_argument("--device", default=None)
    a = ap.parse_args()
    import torch
    import transformers

    tokens, ours = arbor_logits(a.cli, a.model, a.prompt)
    g = gguf_np.Gguf(a.model)
    quantized = any(t.type not in QUANT_FLOAT_TYPES for t in g.tensors.values())
    bound = a.bound if a.bound is not None else (2e-2 if quantized else 1e-3)
    with tempfile.TemporaryDirectory() as tmp:
        if quantized:
            if not a.dequantize:
                raise SystemExit("a quantized model needs --dequantize PATH/TO/dequantize_gguf")
            f32 = os.path.join(tmp, "f32.gguf")
            subprocess.run([a.dequantize, a.model, f32], check=True)
            g = gguf_np.Gguf(f32)
        model, arch, n_head, n_head_kv = build_model(g, torch, transformers)
        load_weights(model, hf_weights(g, arch, n_head, n_head_kv), torch)
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    with torch.no_grad():
        ref = model(torch.tensor([tokens], device=device)).logits[0].double().cpu().numpy()
    rel = np.abs(ours - ref).max() / np.abs(ref).max()
    print(f"{os.path.basename(a.model)}: {len(tokens)} positions, transformers {transformers.__version__}, "
          f"max_rel_err={rel:.3e} (bound {bound:g}) {'PASS' if rel < bound else 'FAIL'}")
    return 0 if rel < bound else 1


if __name__ == "__main__":
    sys.exit(main())
