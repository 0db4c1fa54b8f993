"""Calculator weights: the bytes a weight format gives a model, and the part a GGUF engine puts on the GPU.

Input: an architecture dict and a weight format name (see ``facts.QUANTS``).
Output: bytes.
"""

from __future__ import annotations

import math

from errorkb.calculator.facts import QUANTS, SGLANG_MXFP4_ALIGN, VLLM_MXFP4_HIDDEN_ALIGN
from errorkb.calculator.layers import pad


def embedding_params(arch: dict) -> int:
    return arch["vocab_size"] * arch["hidden_size"]


def tensor_classes(arch: dict, quant: str) -> dict[str, int]:
    """Parameters by tensor class, for formats that store the classes differently.

    A format with ``attn_bpw`` (MXFP4) keeps attention projections and the MoE
    router at that width; everything else outside the embeddings is the body.
    Other formats need only embeddings vs body.
    """
    emb = min(embedding_params(arch) * (1 if arch.get("tie_word_embeddings") else 2), arch["params_total"])
    classes = {"embeddings": emb, "attention": 0, "router": 0}
    if "attn_bpw" in QUANTS[quant] and not arch.get("mla"):
        heads, kv_heads = arch["attention_heads"], arch["kv_heads"]
        classes["attention"] = arch["layers"] * arch["hidden_size"] * arch["head_dim"] * 2 * (heads + kv_heads)
        classes["router"] = arch["layers"] * arch["hidden_size"] * (arch.get("experts") or 0)
    classes["body"] = max(0, arch["params_total"] - sum(classes.values()))
    return classes


def weights_bytes(arch: dict, quant: str, body_scale: float = 1.0) -> int:
    """All weights in the chosen format, tensor class by class; body_scale pads the body (a kernel's layout)."""
    q = QUANTS[quant]
    c = tensor_classes(arch, quant)
    wide = c["attention"] + c["router"]
    return (math.floor(c["body"] * body_scale * q["bpw"] / 8) + math.floor(c["embeddings"] * q["embed_bpw"] / 8)
            + math.floor(wide * q.get("attn_bpw", q["bpw"]) / 8))


def vllm_weights(arch: dict, quant: str) -> int:
    """What vLLM loads: the checkpoint, with MXFP4 experts padded to the kernel's hidden-size alignment."""
    scale = 1.0
    if quant == "mxfp4" and arch.get("experts"):
        scale = pad(arch["hidden_size"], VLLM_MXFP4_HIDDEN_ALIGN) / arch["hidden_size"]
    return weights_bytes(arch, quant, scale)


def sglang_weights(arch: dict, quant: str, vendor: str = "nvidia", compute_capability: str | None = None) -> int:
    """What SGLang loads: MXFP4 experts padded the way its MoE backend needs (facts.SGLANG_MXFP4_ALIGN).

    On compute capability 10.x the FlashInfer MXFP4 backend (chosen automatically for MXFP4 checkpoints)
    pads the expert width and the hidden size to 256; elsewhere only the expert width is padded.
    """
    scale = 1.0
    if quant == "mxfp4" and arch.get("experts"):
        inter = arch.get("expert_intermediate") or arch["hidden_size"]
        if vendor == "amd":
            key = "amd"
        elif vendor == "nvidia" and (compute_capability or "").split(".")[0] == "10":
            key = "sm100"
        else:
            key = "cuda"
        align_i, align_h = SGLANG_MXFP4_ALIGN[key]
        scale = pad(inter, align_i) * pad(arch["hidden_size"], align_h) / (inter * arch["hidden_size"])
    return weights_bytes(arch, quant, scale)


def gguf_gpu_weights(arch: dict, quant: str) -> int:
    """llama.cpp keeps the token embedding in host memory; a tied output layer gets its own GPU copy."""
    total = weights_bytes(arch, quant)
    if arch.get("tie_word_embeddings"):
        return total
    return total - math.floor(embedding_params(arch) * QUANTS[quant]["embed_bpw"] / 8)
