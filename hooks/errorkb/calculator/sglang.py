"""Calculator, SGLang: the default --mem-fraction-static, the token pool and the request limit.

Input: the GPU memory, tensor-parallel size, an architecture dict and the cache
type. Output: the fraction and the MiB it reserves, bytes per cached token, token
counts. SGLang sizes everything from the card, not from the requested context:
the static fraction of the memory free at start-up holds the weights and the KV
pool, the rest is kept for activations and CUDA graphs (facts.SGLANG_*). On AMD
Instinct the aiter attention backend lowers the fraction and takes its decode
workspace out of what the fraction leaves.
"""

from __future__ import annotations

import math

from errorkb.calculator.facts import (KV_TYPES, MIB, SGLANG_ACT_MIB_PER_TOKEN, SGLANG_AITER_BYTES_PER_HEAD_DIM,
                                      SGLANG_AITER_BYTES_PER_PARTITION, SGLANG_AITER_PARTITION, SGLANG_AITER_RESERVE,
                                      SGLANG_AITER_RESERVE_ABOVE, SGLANG_ACT_MIN_TOKENS,
                                      SGLANG_FLOOR_ABOVE_MIB, SGLANG_FLOOR_MIB, SGLANG_GRAPH_MIB_PER_BATCH,
                                      SGLANG_PARALLEL_MIB, SGLANG_PREFILL_GRAPH_MIB,
                                      SGLANG_PREFILL_GRAPH_MLA_MIB, SGLANG_PREFILL_GRAPH_STEPS, SGLANG_REQS_MAX,
                                      SGLANG_REQS_MIN, SGLANG_REQS_PER_CONTEXT, SGLANG_RESERVE_BASE_MIB, SGLANG_TIERS)


def sglang_tier(gpu_mib: float, tp: int) -> tuple[int, int]:
    """(chunked prefill size, decode CUDA-graph max batch) SGLang picks for a card of this size."""
    for bound, chunk, bs_small_tp, bs_large_tp in SGLANG_TIERS:
        if bound is None or gpu_mib < bound:
            return chunk, (bs_small_tp if tp < 4 else bs_large_tp)
    raise AssertionError("the last tier has no bound")


def sglang_prefill_graph_sizes(max_tokens: int) -> int:
    """How many prefill CUDA graphs SGLang captures up to max_tokens tokens."""
    count = 0
    for first, last, step in SGLANG_PREFILL_GRAPH_STEPS:
        top = min(last or max_tokens, max_tokens)
        if top >= first:
            count += (top - first) // step + 1
    return count


def sglang_reserved(gpu_mib: float, tp: int, mla: bool, prefill_graphs: bool) -> dict[str, float]:
    """The MiB SGLang keeps outside the static fraction, term by term, as handle_gpu_memory_settings adds them."""
    chunk, max_bs = sglang_tier(gpu_mib, tp)
    parts = {"metadata": SGLANG_RESERVE_BASE_MIB,
             "activations": max(chunk, SGLANG_ACT_MIN_TOKENS) * SGLANG_ACT_MIB_PER_TOKEN,
             "parallel": tp / 8 * SGLANG_PARALLEL_MIB,  # x pp, which the calculator keeps at 1
             "decode graphs": max_bs * SGLANG_GRAPH_MIB_PER_BATCH, "prefill graphs": 0}
    if prefill_graphs:
        parts["prefill graphs"] = (SGLANG_PREFILL_GRAPH_MLA_MIB if mla
                                   else sglang_prefill_graph_sizes(chunk) * SGLANG_PREFILL_GRAPH_MIB)
    total = sum(parts.values())
    if gpu_mib > SGLANG_FLOOR_ABOVE_MIB and total < SGLANG_FLOOR_MIB:
        parts["floor for large cards"] = SGLANG_FLOOR_MIB - total
    return parts


def sglang_mem_fraction(vram_bytes: int, tp: int, mla: bool, prefill_graphs: bool) -> float:
    """--mem-fraction-static when none is given: round((total - reserved) / total, 3)."""
    gpu_mib = vram_bytes / MIB
    reserved = sum(sglang_reserved(gpu_mib, tp, mla, prefill_graphs).values())
    # half up on the thousandths, the same float steps in calculator/engines.mjs
    return math.floor((gpu_mib - reserved) / gpu_mib * 1000 + 0.5) / 1000


def sglang_cell(arch: dict, kv_dtype: str, tp: int) -> int:
    """Bytes one cached token takes on one GPU, all layers (SGLang pages hold one token)."""
    size = KV_TYPES[kv_dtype][0]
    if arch.get("mla"):  # the latent vector, replicated on every rank
        return arch["layers"] * (arch["mla"]["kv_lora_rank"] + arch["mla"]["qk_rope_head_dim"]) * size
    heads = max(1, arch["kv_heads"] // tp)
    return arch["layers"] * 2 * heads * arch["head_dim"] * size


def sglang_max_running(tokens: int, context: int) -> int:
    """Default --max-running-requests: resolve_max_num_reqs of the KV cache configurator."""
    estimated = min(max(int(tokens / context * SGLANG_REQS_PER_CONTEXT), SGLANG_REQS_MIN), SGLANG_REQS_MAX)
    return max(0, min(estimated, tokens // 2))


def sglang_aiter_fraction(fraction: float, context: int) -> float:
    """The static fraction the aiter backend leaves: 0.85 of it above 8192 tokens of context."""
    return fraction * SGLANG_AITER_RESERVE if context > SGLANG_AITER_RESERVE_ABOVE else fraction


def sglang_aiter_workspace(arch: dict, max_running: int, context: int, tp: int) -> int:
    """Bytes of the aiter paged-decode workspace one GPU allocates after the pool (none for MLA models)."""
    if arch.get("mla"):
        return 0
    partitions = -(-context // SGLANG_AITER_PARTITION)
    per_partition = max_running * max(1, arch["attention_heads"] // tp) * partitions
    return per_partition * (arch["head_dim"] * SGLANG_AITER_BYTES_PER_HEAD_DIM + SGLANG_AITER_BYTES_PER_PARTITION)


__all__ = ["sglang_tier", "sglang_prefill_graph_sizes", "sglang_reserved", "sglang_mem_fraction", "sglang_cell",
           "sglang_max_running", "sglang_aiter_fraction", "sglang_aiter_workspace"]
