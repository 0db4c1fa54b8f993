"""Calculator, llama.cpp: the KV cache cells llama-server allocates, its compute buffer, and what --fit does.

Input: an architecture dict, the context, sequences and cache type; for --fit the
memory budget and a function giving the use at a context. Output: bytes, and the
context and layers --fit settles on.
"""

from __future__ import annotations

from errorkb.calculator.facts import LLAMACPP_FIT_ALIGN, LLAMACPP_FIT_MIN_CTX, LLAMACPP_PAD, LLAMACPP_UBATCH
from errorkb.calculator.layers import layer_kinds, pad, row_bytes


def mla_head_dims(arch: dict) -> tuple[int, int]:
    """Per-head K and V widths of an MLA model run without the latent cache (K = nope + rope, V = v_head_dim)."""
    mla = arch["mla"]
    k_dim = mla["qk_nope_head_dim"] + mla["qk_rope_head_dim"] if mla.get("qk_nope_head_dim") else arch["head_dim"]
    return k_dim, mla.get("v_head_dim") or arch["head_dim"]


def llamacpp_kv(arch: dict, context: int, seqs: int, kv_dtype: str, cell_pad: int = LLAMACPP_PAD,
                mla_v: bool = False, mla_full_heads: bool = False) -> int:
    """Bytes llama.cpp allocates: one stream of pad(context) cells per sequence (-c is shared by -np).

    MLA layers store the latent K only; mla_v=True counts the separate V of
    builds before the V-less cache (facts.LLAMACPP_V_LESS_MLA_SINCE).
    mla_full_heads=True: a GGUF without llama.cpp's MLA keys (key_length_mla), such as
    the Ollama library's DeepSeek files, runs as plain multi-head attention and
    caches every head's K and V (facts.RELEASES, ollama).
    """
    cells = pad(context, cell_pad)
    swa_cells = min(cells, pad((arch.get("sliding_window") or 0) + LLAMACPP_UBATCH, cell_pad))
    total = 0
    for kind in layer_kinds(arch):
        if kind == "mla" and mla_full_heads:
            k_dim, v_dim = mla_head_dims(arch)
            per_cell = row_bytes(kv_dtype, arch["kv_heads"] * k_dim) + row_bytes(kv_dtype, arch["kv_heads"] * v_dim)
        elif kind == "mla":
            per_cell = row_bytes(kv_dtype, arch["mla"]["kv_lora_rank"] + arch["mla"]["qk_rope_head_dim"])
            if mla_v:
                per_cell += row_bytes(kv_dtype, arch["mla"]["kv_lora_rank"])
        else:
            per_cell = 2 * row_bytes(kv_dtype, arch["kv_heads"] * arch["head_dim"])
        total += per_cell * (swa_cells if kind == "sliding" else cells)
    return total * seqs


def llamacpp_compute(arch: dict) -> int:
    """Compute buffer with flash attention: f32 logits and hidden state of one micro-batch."""
    return 4 * LLAMACPP_UBATCH * (arch["vocab_size"] + arch["hidden_size"])


def llamacpp_fit(layers: int, native: int, budget: int, use_at) -> dict:
    """What --fit does with the defaults (no -c, no -ngl): the model's context if it leaves the margin, else
    the largest multiple of 256 down to --fit-ctx, else --fit-ctx with fewer layers on the GPU.

    budget is the usable memory minus the margin; use_at(ctx) -> (weights + KV, other) bytes on the GPUs.
    """
    def fits(ctx: int) -> bool:
        return sum(use_at(ctx)) <= budget

    floor = min(native, LLAMACPP_FIT_MIN_CTX)
    if fits(native):
        return {"context": native, "gpu_layers": layers, "context_reduced": False}
    if fits(floor):
        lo, hi = floor // LLAMACPP_FIT_ALIGN, max(floor, native) // LLAMACPP_FIT_ALIGN
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if fits(mid * LLAMACPP_FIT_ALIGN) else (lo, mid - 1)
        return {"context": max(floor, lo * LLAMACPP_FIT_ALIGN), "gpu_layers": layers, "context_reduced": True}
    return {"context": floor, "gpu_layers": fit_layers(layers, budget, *use_at(floor)), "context_reduced": native > floor}


def fit_layers(layers: int, budget: int, spread: int, other: int) -> int:
    """Layers that fit when weights and cache are spread evenly over the layers and the rest stays on the GPU."""
    if spread + other <= budget:
        return layers
    return max(0, min(layers, (budget - other) * layers // spread))
