"""Calculator inputs: check an architecture and a scenario, and fill in the engine's defaults.

Input: an architecture dict (the ModelEntry fields, see ``hardware.arch_of``)
and a scenario dict (engine, quant, kv_dtype, context, seqs, gpus, vram_bytes,
...). Output: ``(normalised scenario, errors, warnings)``; every problem is a
sentence, so nothing further down ever sees a NaN.
"""

from __future__ import annotations

import math

from errorkb.calculator.facts import (APPLE_SHARE_FALLBACK, ARCH_BOUNDS, DEFAULT_GGUF_QUANT, ENGINE_NAMES, ENGINES, GIB,
                                      INPUT_BOUNDS, KV_BY_ENGINE, LLAMACPP_PAD, LLAMACPP_PAD_LEGACY, MAX_CONTEXT,
                                      MAX_GPUS, MAX_SEQS, MIB, NATIVE_TO_VLLM, QUANTS, SAFETENSORS_ENGINES,
                                      VLLM_AUTO_KV_BF16,
                                      VLLM_DEFAULT_UTIL)


def whole(v) -> int | None:
    """v as an int when it is a finite whole number (not a bool, not a string), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v):
        return None
    return int(v)


def number(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def default_quant(engine: str, native_dtype: str | None) -> str:
    """The weight format the engine loads when the user picks none."""
    if engine in SAFETENSORS_ENGINES:
        return NATIVE_TO_VLLM.get(native_dtype or "bf16", "bf16")
    return DEFAULT_GGUF_QUANT


def check_arch(arch: dict) -> list[str]:
    errors = []
    for key, (lo, hi) in ARCH_BOUNDS.items():
        v = whole(arch.get(key))
        if v is None or not lo <= v <= hi:
            errors.append(f"Architecture: {key} must be a whole number from {lo:,} to {hi:,}.")
    if errors:
        return errors
    if arch["attention_heads"] % arch["kv_heads"]:
        errors.append("Architecture: kv_heads must divide attention_heads.")
    if "sliding" in (arch.get("layer_pattern") or []) and not (whole(arch.get("sliding_window")) or 0) > 0:
        errors.append("Architecture: sliding layers need a sliding_window of at least 1 token.")
    return errors


def check_inputs(arch: dict, sc: dict) -> tuple[dict, list[str], list[str]]:
    """Normalise a scenario; every problem becomes a sentence, never a NaN further down."""
    errors, warnings = check_arch(arch), []
    engine = sc.get("engine")
    if engine not in ENGINES:
        return sc, errors + [f"Pick an engine: {', '.join(ENGINES[:-1])} or {ENGINES[-1]}."], warnings
    s = dict(sc)
    s["vendor"] = sc.get("vendor") or "nvidia"
    native = arch.get("native_dtype") or "bf16"
    s["quant"] = sc.get("quant") or default_quant(engine, native)
    if s["quant"] not in QUANTS or engine not in QUANTS[s["quant"]]["engines"]:
        names = ", ".join(k for k, q in QUANTS.items() if engine in q["engines"])
        errors.append(f"{s['quant']} is not a weight format for {engine}; choose one of {names}.")
    kv = sc.get("kv_dtype") or "auto"
    if kv == "auto":
        kv = "bf16" if engine in SAFETENSORS_ENGINES and native in VLLM_AUTO_KV_BF16 else "f16"
    s["kv_dtype"] = kv
    if kv not in KV_BY_ENGINE[engine]:
        errors.append(f"{engine} has no {kv} KV cache; it offers {', '.join(KV_BY_ENGINE[engine])}.")
    for key, lo, hi, label in (("context", 1, MAX_CONTEXT, "Context"), ("seqs", 1, MAX_SEQS, "Concurrent sequences"),
                               ("gpus", 1, MAX_GPUS, "GPU count")):
        v = whole(sc.get(key, 1 if key != "context" else None))
        if v is None or not lo <= v <= hi:
            errors.append(f"{label} must be a whole number from {lo:,} to {hi:,}.")
        s[key] = v
    native_ctx = whole(arch.get("native_context"))
    if s["context"] and native_ctx and s["context"] > native_ctx:
        errors.append(f"Context {s['context']:,} is longer than the model's native {native_ctx:,} tokens.")
    vram = number(sc.get("vram_bytes"))
    lo, hi = INPUT_BOUNDS["vram_bytes"]
    if vram is None or not lo <= vram <= hi:
        errors.append(f"GPU memory must be between {lo / GIB:g} and {hi / GIB:g} GiB per GPU.")
    else:
        s["vram_bytes"] = math.floor(vram)
    util = number(sc.get("gpu_memory_utilization", VLLM_DEFAULT_UTIL))
    lo, hi = INPUT_BOUNDS["gpu_memory_utilization"]
    if engine == "vllm" and (util is None or not lo <= util <= hi):
        errors.append(f"gpu_memory_utilization must be a fraction from {lo:g} to {hi:g}.")
    s["gpu_memory_utilization"] = util
    fraction = sc.get("mem_fraction_static")
    lo, hi = INPUT_BOUNDS["mem_fraction_static"]
    if engine == "sglang" and fraction is not None and not lo <= (number(fraction) or 0) <= hi:
        errors.append(f"mem_fraction_static must be a fraction from {lo:g} to {hi:g}.")
    s["mem_fraction_static"] = number(fraction) if fraction is not None else None
    if s["vendor"] == "apple":
        if engine in SAFETENSORS_ENGINES:
            errors.append(f"{ENGINE_NAMES[engine]} does not run on Apple GPUs; pick llama.cpp or Ollama.")
        if s["gpus"] and s["gpus"] > 1:
            errors.append("A Mac has one GPU; set the count to 1.")
    if engine in SAFETENSORS_ENGINES and s["gpus"] and not errors and arch["attention_heads"] % s["gpus"]:
        errors.append(f"{ENGINE_NAMES[engine]} needs the {arch['attention_heads']} attention heads to divide evenly over {s['gpus']} GPUs.")
    batched = sc.get("max_num_batched_tokens")
    lo, hi = INPUT_BOUNDS["max_num_batched_tokens"]
    if batched is not None and not lo <= (whole(batched) or 0) <= hi:
        errors.append(f"max_num_batched_tokens must be a whole number from {lo:,} to {hi:,}.")
    s["llamacpp_pad"] = sc.get("llamacpp_pad") or LLAMACPP_PAD
    if s["llamacpp_pad"] not in (LLAMACPP_PAD, LLAMACPP_PAD_LEGACY):
        errors.append(f"llamacpp_pad is {LLAMACPP_PAD} (current builds) or {LLAMACPP_PAD_LEGACY} (older builds without flash attention).")
    given = sc.get("mla_full_heads")
    if given is not None and not isinstance(given, bool):
        errors.append("mla_full_heads is true (a GGUF without llama.cpp's MLA keys, as in the Ollama library) or false.")
    # The Ollama library's DeepSeek GGUFs carry no MLA keys (facts.RELEASES, ollama); other GGUFs are taken to have them.
    s["mla_full_heads"] = bool(arch.get("mla")) and (given if isinstance(given, bool) else engine == "ollama")
    if errors:
        return s, errors, warnings
    share = number(sc.get("unified_share"))
    if s["vendor"] == "apple":
        share = share if share and 0 < share <= 1 else APPLE_SHARE_FALLBACK
        s["usable_bytes"] = math.floor(s["vram_bytes"] * share)
    else:
        s["usable_bytes"] = s["vram_bytes"] * s["gpus"]
    if engine in SAFETENSORS_ENGINES and s["gpus"] > arch["kv_heads"]:
        warnings.append(f"More GPUs than KV heads: {ENGINE_NAMES[engine]} copies each KV head to several GPUs.")
    return s, errors, warnings


__all__ = ["check_arch", "check_inputs", "default_quant", "whole", "number", "MIB"]
