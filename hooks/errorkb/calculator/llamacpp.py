"""Calculator, llama.cpp: the KV cache cells llama-server allocates and its compute buffer.

Input: an architecture dict, the context, sequences and cache type. Output: bytes.
"""

from __future__ import annotations

from errorkb.calculator.facts import LLAMACPP_PAD, LLAMACPP_UBATCH
from errorkb.calculator.layers import layer_kinds, pad, row_bytes


def llamacpp_kv(arch: dict, context: int, seqs: int, kv_dtype: str, cell_pad: int = LLAMACPP_PAD,
                mla_v: bool = False) -> int:
    """Bytes llama.cpp allocates: one stream of pad(context) cells per sequence (-c is shared by -np).

    MLA layers store the latent K only; mla_v=True counts the separate V of
    builds before the V-less cache (facts.LLAMACPP_V_LESS_MLA_SINCE).
    """
    cells = pad(context, cell_pad)
    swa_cells = min(cells, pad((arch.get("sliding_window") or 0) + LLAMACPP_UBATCH, cell_pad))
    total = 0
    for kind in layer_kinds(arch):
        if kind == "mla":
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
