"""Calculator weights: the bytes a weight format gives a model, and the part a GGUF engine puts on the GPU.

Input: an architecture dict and a weight format name (see ``facts.QUANTS``).
Output: bytes.
"""

from __future__ import annotations

import math

from errorkb.calculator.facts import QUANTS


def embedding_params(arch: dict) -> int:
    return arch["vocab_size"] * arch["hidden_size"]


def weights_bytes(arch: dict, quant: str) -> int:
    """All weights in the chosen format; embedding and output matrices use the format's embed_bpw."""
    q = QUANTS[quant]
    emb = embedding_params(arch) * (1 if arch.get("tie_word_embeddings") else 2)
    emb = min(emb, arch["params_total"])
    body = arch["params_total"] - emb
    return math.floor(body * q["bpw"] / 8) + math.floor(emb * q["embed_bpw"] / 8)


def gguf_gpu_weights(arch: dict, quant: str) -> int:
    """llama.cpp keeps the token embedding in host memory; a tied output layer gets its own GPU copy."""
    total = weights_bytes(arch, quant)
    if arch.get("tie_word_embeddings"):
        return total
    return total - math.floor(embedding_params(arch) * QUANTS[quant]["embed_bpw"] / 8)
