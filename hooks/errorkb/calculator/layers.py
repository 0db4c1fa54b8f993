"""Calculator layers: the shapes every engine module shares (layer kinds, row sizes, padding).

Input: an architecture dict. Output: small integers and lists.
"""

from __future__ import annotations

from errorkb.calculator.facts import KV_TYPES


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pad(n: int, to: int) -> int:
    return cdiv(n, to) * to


def layer_kinds(arch: dict) -> list[str]:
    """'full', 'sliding' or 'mla' for each layer; the pattern repeats from layer 0."""
    if arch.get("mla"):
        return ["mla"] * arch["layers"]
    pattern = arch.get("layer_pattern") or ["full"]
    return [pattern[i % len(pattern)] for i in range(arch["layers"])]


def row_bytes(kv_dtype: str, n: int) -> int:
    """ggml_row_size: bytes of n values stored in kv_dtype (block formats carry their scales)."""
    size, block = KV_TYPES[kv_dtype]
    return n * size // block
