"""Calculator, vLLM: the paged KV pool, its block groups and the memory profiled before it is sized.

Input: an architecture dict, the cache type, tensor-parallel size and the
batching limits. Output: bytes and block counts.
"""

from __future__ import annotations

from errorkb.calculator.facts import (KV_TYPES, VLLM_ACT_PER_TOKEN_HIDDEN, VLLM_BATCHED_HUGE, VLLM_BATCHED_LARGE,
                                      VLLM_BATCHED_SMALL, VLLM_HUGE_CARD, VLLM_SEQS_HUGE,
                                      VLLM_BLOCK, VLLM_LARGE_CARD, VLLM_NON_TORCH, VLLM_NON_TORCH_TP,
                                      VLLM_SAMPLER_COPIES, VLLM_SAMPLER_COPIES_V0, VLLM_SEQS_LARGE, VLLM_SEQS_SMALL)
from errorkb.calculator.layers import cdiv, layer_kinds


def vllm_page(arch: dict, kv_dtype: str, tp: int) -> int:
    """Bytes of one 16-token block of one layer on one GPU."""
    size = KV_TYPES[kv_dtype][0]
    if arch.get("mla"):  # one latent vector per token, replicated on every rank
        return VLLM_BLOCK * (arch["mla"]["kv_lora_rank"] + arch["mla"]["qk_rope_head_dim"]) * size
    heads = max(1, arch["kv_heads"] // tp)
    return 2 * VLLM_BLOCK * heads * arch["head_dim"] * size


def vllm_groups(arch: dict) -> tuple[int, int, int]:
    """(group_size, full-type groups, sliding groups) the way the hybrid allocator splits layers."""
    kinds = layer_kinds(arch)
    n_slide = kinds.count("sliding")
    n_full = len(kinds) - n_slide
    if not n_slide or not n_full:
        return len(kinds), int(n_full > 0), int(n_slide > 0)
    size = min(n_full, n_slide)
    if max(n_full, n_slide) < size * 1.5:
        size = max(n_full, n_slide)
    return size, cdiv(n_full, size), cdiv(n_slide, size)


def vllm_blocks_per_request(arch: dict, context: int, batched: int) -> int:
    _, g_full, g_slide = vllm_groups(arch)
    full = cdiv(context, VLLM_BLOCK)
    slide = cdiv(min((arch.get("sliding_window") or 0) - 1 + batched, context), VLLM_BLOCK) + 1
    return g_full * full + g_slide * slide


def vllm_batched(vram_bytes: int, gpu_id: str | None) -> tuple[int, int]:
    """Default max_num_batched_tokens and max_num_seqs of `vllm serve` for this card."""
    if vram_bytes >= VLLM_HUGE_CARD:
        return VLLM_BATCHED_HUGE, VLLM_SEQS_HUGE
    if vram_bytes >= VLLM_LARGE_CARD and "a100" not in (gpu_id or ""):
        return VLLM_BATCHED_LARGE, VLLM_SEQS_LARGE
    return VLLM_BATCHED_SMALL, VLLM_SEQS_SMALL


def vllm_overhead(arch: dict, batched: int, max_seqs: int, tp: int, v0: bool = False) -> dict:
    """Memory the profiling run sees besides the weights: a function of the batch limits and the model's shape."""
    sampler_reqs = min(max_seqs, batched)
    copies = VLLM_SAMPLER_COPIES_V0 if v0 else VLLM_SAMPLER_COPIES
    return {
        "activation peak": max(batched * arch["hidden_size"] * VLLM_ACT_PER_TOKEN_HIDDEN // tp,
                               sampler_reqs * arch["vocab_size"] * 4 * copies),
        "non-torch memory": VLLM_NON_TORCH + (VLLM_NON_TORCH_TP if tp > 1 else 0),
    }
