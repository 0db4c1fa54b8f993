"""Calculator, Ollama: its default context, and the estimate releases before 0.30 scheduled by.

Input: an architecture dict (with ``family`` for the models Ollama special-cases),
the context, sequences and cache type, or the total GPU memory. Output: bytes or
tokens. Since 0.30 Ollama runs llama-server, so the cache is llama.cpp's
(llamacpp.llamacpp_kv); ollama_kv and ollama_graph are the older releases' own
estimate (memory.required.kv in their logs).
"""

from __future__ import annotations

import math

from errorkb.calculator.facts import OLLAMA_BATCH, OLLAMA_CTX_TIERS, OLLAMA_GPT_OSS_WINDOW, OLLAMA_KV_BPE
from errorkb.calculator.layers import layer_kinds


def ollama_kv(arch: dict, context: int, seqs: int, kv_dtype: str) -> int:
    """Ollama's own estimate (memory.required.kv): num_ctx x num_parallel tokens, rounded bytes per element."""
    tokens = context * seqs
    family = arch.get("family")
    mla = arch.get("mla")
    k_dim = (mla.get("qk_nope_head_dim") or 0) + mla["qk_rope_head_dim"] if mla else arch["head_dim"]
    v_dim = (mla.get("v_head_dim") or arch["head_dim"]) if mla else arch["head_dim"]
    per_token = (k_dim + v_dim) * arch["kv_heads"]
    window = {"gemma3": arch.get("sliding_window") or 0, "gpt-oss": OLLAMA_GPT_OSS_WINDOW}.get(family)
    total = 0
    for kind in layer_kinds(arch):
        n = seqs * window + OLLAMA_BATCH if kind == "sliding" and window else tokens
        total += math.floor(n * per_token * OLLAMA_KV_BPE[kv_dtype])
    return total


def ollama_graph(arch: dict, context: int, seqs: int) -> int:
    """Ollama's graph estimate for the llama architecture (full offload)."""
    b, c, e = OLLAMA_BATCH, context * seqs, arch["hidden_size"]
    return max(4 * b * (1 + 4 * e + c * (1 + arch["attention_heads"])), 4 * b * (e + arch["vocab_size"]))


def ollama_default_ctx(total_vram: int, native: int) -> int:
    """num_ctx when neither the request nor OLLAMA_CONTEXT_LENGTH sets one: by total GPU memory, capped at the model's."""
    ctx = next(c for at_least, c in OLLAMA_CTX_TIERS if total_vram >= at_least)
    return min(ctx, native)
