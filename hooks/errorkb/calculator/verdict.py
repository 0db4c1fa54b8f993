"""Calculator verdict: one memory plan per engine, the verdict, and the limits that still fit.

Input: an architecture dict and a scenario (see ``inputs.check_inputs``).
Output: a plain dict with the bytes of weights, KV cache and overhead, the
verdict, the largest context and concurrency that fit, and the KB errors the
plan runs into; nonsense input comes back as ``{"ok": False, "errors": [...]}``.
Pure functions; site_src/javascripts/calculator/verdict.mjs mirrors this module and both run
over tests/calculator_cases.json.
"""

from __future__ import annotations

import math

from errorkb.calculator.facts import (LLAMACPP_FIT_MARGIN, MAX_SEQS, MIB, OLLAMA_NUM_PARALLEL, OLLAMA_RESERVE,
                                      PER_TOKEN_PROBE, RELEASES, RUNTIME_CONTEXT, TIGHT_MARGIN, VLLM_BATCHED_SMALL,
                                      VLLM_BLOCK)
from errorkb.calculator.inputs import check_inputs
from errorkb.calculator.links import predicted_errors
from errorkb.calculator.llamacpp import fit_layers, llamacpp_compute, llamacpp_fit, llamacpp_kv
from errorkb.calculator.ollama import ollama_default_ctx, ollama_graph, ollama_kv
from errorkb.calculator.sglang import (sglang_aiter_fraction, sglang_aiter_workspace, sglang_cell, sglang_max_running,
                                      sglang_mem_fraction, sglang_reserved)
from errorkb.calculator.vllm import vllm_batched, vllm_blocks_per_request, vllm_groups, vllm_overhead, vllm_page
from errorkb.calculator.layers import cdiv
from errorkb.calculator.weights import gguf_gpu_weights, sglang_weights, vllm_weights


def _plan_vllm(arch: dict, s: dict, out: dict) -> tuple[int, int, dict, int]:
    ctx, seqs, n = s["context"], s["seqs"], s["gpus"]
    usable = math.floor(s["vram_bytes"] * s["gpu_memory_utilization"])
    batched, max_seqs = vllm_batched(s["vram_bytes"], s.get("gpu_id"))
    batched = s.get("max_num_batched_tokens") or batched
    max_seqs = s.get("max_num_seqs") or max_seqs
    parts = vllm_overhead(arch, batched, max_seqs, n, bool(s.get("vllm_v0")))
    weights = cdiv(vllm_weights(arch, s["quant"]), n)
    pool = usable - weights - sum(parts.values())
    page = vllm_page(arch, s["kv_dtype"], n)
    group_size, g_full, g_slide = vllm_groups(arch)
    blocks = max(pool, 0) // page // group_size
    per_req = vllm_blocks_per_request(arch, ctx, batched)
    one = group_size * page * per_req
    out.update(kv_pool_bytes=max(pool, 0), kv_pool_tokens=blocks // (g_full + g_slide) * VLLM_BLOCK,
               max_concurrency=blocks / per_req, kv_one_request_bytes=one, batched_tokens=batched)
    starts = pool > 0 and one <= pool
    out["fits_all"] = starts and per_req * seqs <= blocks
    out["starts"] = starts
    # per GPU figures times GPU count, so the bar compares like with like
    return weights * n, one * seqs * n, {k: v * n for k, v in parts.items()}, usable * n


def _plan_sglang(arch: dict, s: dict, out: dict) -> tuple[int, int, dict, int]:
    """The static fraction of the memory free at start-up holds the weights and a pool of single-token pages."""
    ctx, seqs, n = s["context"], s["seqs"], s["gpus"]
    graphs = s["vendor"] == "nvidia"  # prefill CUDA graphs are on by default on CUDA only
    aiter = s["vendor"] == "amd"  # the default attention backend on AMD Instinct
    fraction = s.get("mem_fraction_static") or sglang_mem_fraction(s["vram_bytes"], n, bool(arch.get("mla")), graphs)
    effective = sglang_aiter_fraction(fraction, ctx) if aiter else fraction
    free_at_start = s["vram_bytes"] - RUNTIME_CONTEXT
    static = math.floor(free_at_start * effective)
    weights = cdiv(sglang_weights(arch, s["quant"], s["vendor"], s.get("compute_capability")), n)  # split evenly
    pool = static - weights
    cell = sglang_cell(arch, s["kv_dtype"], n)
    tokens = max(pool, 0) // cell
    running = sglang_max_running(tokens, ctx)
    # aiter's decode workspace is allocated after the pool, out of what the static fraction leaves
    workspace = sglang_aiter_workspace(arch, running, ctx, n) if aiter else 0
    out.update(kv_pool_bytes=max(pool, 0), kv_pool_tokens=tokens, kv_one_request_bytes=cell * ctx,
               mem_fraction_static=fraction, mem_fraction_effective=effective, max_running_requests=running,
               sglang_reserved_mib=sglang_reserved(s["vram_bytes"] / MIB, n, bool(arch.get("mla")), graphs),
               aiter_workspace_bytes=workspace, max_concurrency=tokens / ctx)
    out["starts"] = tokens > 0 and workspace <= free_at_start - static
    out["fits_all"] = out["starts"] and tokens >= ctx * seqs and seqs <= running
    parts = {"kept outside --mem-fraction-static": max(free_at_start - static - workspace, 0),
             "runtime context": RUNTIME_CONTEXT}
    if aiter and workspace:
        parts["aiter decode workspace"] = workspace
    return weights * n, cell * ctx * seqs * n, {k: v * n for k, v in parts.items()}, s["vram_bytes"] * n


def _gguf_parts(arch: dict, s: dict, ctx: int, seqs: int) -> tuple[int, int, dict]:
    """llama.cpp, and Ollama since it runs llama-server: llama.cpp's cells; Ollama before 0.30: its own estimate."""
    n = s["gpus"]
    weights = gguf_gpu_weights(arch, s["quant"])
    if s["engine"] == "ollama" and s.get("ollama_legacy"):
        kv = ollama_kv(arch, ctx, seqs, s["kv_dtype"])
        parts = {"graph (Ollama estimate)": ollama_graph(arch, ctx, seqs)}
    else:
        kv = llamacpp_kv(arch, ctx, seqs, s["kv_dtype"], s["llamacpp_pad"], s.get("llamacpp_mla_v", False),
                          s["mla_full_heads"])
        parts = {"compute buffer": llamacpp_compute(arch) * n}
    if s["vendor"] != "apple":
        if s["engine"] == "llamacpp":
            parts["runtime context"] = RUNTIME_CONTEXT * n
        else:
            parts["minimum free memory"] = OLLAMA_RESERVE * n
    return weights, kv, parts


def fit_applies(s: dict) -> bool:
    """llama.cpp's --fit places the layers: llama-server itself, and Ollama since it starts llama-server without -ngl."""
    return s["engine"] == "llamacpp" or (s["engine"] == "ollama" and not s.get("ollama_legacy"))


def engine_defaults(arch: dict, s: dict, out: dict) -> dict:
    """What the engine does on its own: llama.cpp's --fit without -c and -ngl, Ollama's default num_ctx, vLLM's auto length."""
    n, layers = s["gpus"], arch["layers"]
    if not fit_applies(s):
        return {}
    budget = out["available_bytes"] - LLAMACPP_FIT_MARGIN * n

    def use_at(ctx: int) -> tuple[int, int]:
        weights, kv, parts = _gguf_parts(arch, s, ctx, s["seqs"])
        return weights + kv, sum(parts.values())

    found = {"fit_gpu_layers": fit_layers(layers, budget, out["weights_bytes"] + out["kv_cache_bytes"], out["overhead_bytes"])}
    if s["engine"] == "llamacpp":
        found["llamacpp_defaults"] = llamacpp_fit(layers, arch["native_context"], budget, use_at)
    else:
        found["ollama_defaults"] = {"num_ctx": ollama_default_ctx(s["usable_bytes"], arch["native_context"]),
                                    "num_parallel": OLLAMA_NUM_PARALLEL}
    return found


def plan(arch: dict, s: dict) -> dict:
    """Memory plan for one scenario; s is normalised (see check_inputs)."""
    engine, ctx, seqs, n = s["engine"], s["context"], s["seqs"], s["gpus"]
    out: dict = {"engine": engine, "layers": arch["layers"], "kv_pool_bytes": None, "kv_pool_tokens": None,
                 "gpu_layers": None, "max_concurrency": None}
    if engine == "vllm":
        weights, kv, parts, usable = _plan_vllm(arch, s, out)
    elif engine == "sglang":
        weights, kv, parts, usable = _plan_sglang(arch, s, out)
    else:
        weights, kv, parts = _gguf_parts(arch, s, ctx, seqs)
        usable = s["usable_bytes"]
        out["mla_full_heads"] = s["mla_full_heads"]
    overhead = sum(parts.values())
    total = weights + kv + overhead
    out.update(weights_bytes=weights, kv_cache_bytes=kv, overhead_bytes=overhead, overhead_parts=parts,
               total_bytes=total, available_bytes=usable)
    if engine == "vllm":
        out["fits"] = out["starts"]
    elif engine == "sglang":  # starts with any pool, but a request longer than the pool is refused
        out["fits"] = out["starts"] and out["kv_pool_tokens"] >= ctx
    else:
        out["fits"] = total <= usable
        if not out["fits"]:
            per_layer = (weights + kv) / arch["layers"]
            out["gpu_layers"] = max(0, min(arch["layers"], math.floor((usable - overhead) / per_layer)))
    return out


def largest(lo: int, hi: int, ok) -> int:
    """Largest n in [lo, hi] with ok(n), for a monotone ok; lo - 1 when none."""
    if hi < lo or not ok(lo):
        return lo - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def verdict(out: dict, s: dict) -> str:
    if not out["fits"]:
        return "no"
    if s["engine"] in ("vllm", "sglang") and not out["fits_all"]:
        return "tight"
    if s["engine"] == "sglang":  # the reserve is SGLang's own; what can run short is the pool
        return "tight" if out["kv_cache_bytes"] > out["kv_pool_bytes"] * s["gpus"] * (1 - TIGHT_MARGIN) else "fits"
    if out["total_bytes"] > out["available_bytes"] * (1 - TIGHT_MARGIN):
        return "tight"
    if fit_applies(s) and out["total_bytes"] > out["available_bytes"] - LLAMACPP_FIT_MARGIN * s["gpus"]:
        return "tight"  # --fit keeps 1 GiB free per GPU: it would move layers to the CPU
    return "fits"


def _checked_plan(arch: dict, scenario: dict) -> tuple[dict, dict]:
    """The normalised scenario and its plan, or the input problems as ``{"ok": False, ...}``."""
    s, errors, warnings = check_inputs(arch, scenario)
    if errors:
        return s, {"ok": False, "errors": errors, "warnings": warnings}
    out = plan(arch, s)
    out.update(ok=True, errors=[], warnings=warnings)
    return s, out


def assess(arch: dict, scenario: dict) -> dict:
    """Plan and verdict without the searches for the limits (what the fit tables of the pages need)."""
    s, out = _checked_plan(arch, scenario)
    if out["ok"]:
        out["verdict"] = verdict(out, s)
    return out


def evaluate(arch: dict, scenario: dict) -> dict:
    """The whole answer: plan, verdict, limits, failure it predicts."""
    s, out = _checked_plan(arch, scenario)
    if not out["ok"]:
        return out

    def fits_with(ctx: int, seqs: int) -> bool:
        p = plan(arch, {**s, "context": ctx, "seqs": seqs})
        return p["fits_all"] if s["engine"] == "vllm" else p["fits"]

    def starts_with(ctx: int) -> bool:
        return plan(arch, {**s, "context": ctx, "seqs": 1})["starts"]

    limit = arch["native_context"]
    if s["engine"] == "sglang" and s["vendor"] == "amd":  # aiter: the fraction and the workspace follow the context
        out["max_context"] = max(0, largest(1, min(limit, out["kv_pool_tokens"]), lambda c: fits_with(c, 1)))
        out["max_seqs"] = min(out["kv_pool_tokens"] // s["context"], out["max_running_requests"])
    elif s["engine"] == "sglang":  # the pool does not depend on the context asked for
        out["max_context"] = min(limit, out["kv_pool_tokens"])
        out["max_seqs"] = min(out["kv_pool_tokens"] // s["context"], out["max_running_requests"])
    elif s["engine"] == "vllm":
        out["max_context"] = max(0, largest(1, limit, starts_with))
        out["max_seqs"] = math.floor(out["max_concurrency"]) if out["starts"] else 0
    else:
        out["max_context"] = max(0, largest(1, limit, lambda c: fits_with(c, s["seqs"])))
        out["max_seqs"] = max(0, largest(1, MAX_SEQS, lambda k: fits_with(s["context"], k)))
    out["verdict"] = verdict(out, s)
    out["error_ids"] = predicted_errors(out, s)
    out["release"] = RELEASES[s["engine"]]["release"]
    out.update(engine_defaults(arch, s, out))
    return out


def kv_cache_for(arch: dict, engine: str, kv_dtype: str, context: int, seqs: int = 1) -> int:
    """KV bytes one GPU holds for `seqs` sequences of `context` tokens, as the engine sizes them."""
    if engine in ("llamacpp", "ollama"):  # Ollama allocates through llama-server since 0.30
        return llamacpp_kv(arch, context, seqs, kv_dtype)
    if engine == "sglang":
        return sglang_cell(arch, kv_dtype, 1) * context * seqs
    group_size = vllm_groups(arch)[0]
    return group_size * vllm_page(arch, kv_dtype, 1) * vllm_blocks_per_request(arch, context, VLLM_BATCHED_SMALL) * seqs


def kv_cache_per_token(arch: dict, engine: str, kv_dtype: str) -> float:
    """What one more token of context costs once sliding windows are full (they stop growing)."""
    n = PER_TOKEN_PROBE
    return (kv_cache_for(arch, engine, kv_dtype, 2 * n) - kv_cache_for(arch, engine, kv_dtype, n)) / n
