"""Calculator, proposal: from what a log says (``fromlog.read_log``) to the budget it implies and the nearest settings that start.

Input: a reading, the model's architecture when the model is known (a model entry
or None), the GPU's memory when the log does not print it, and the engine's own
arithmetic (the llamacpp, ollama and vllm modules). Output: a plain dict with the
budget (memory, weights, room for the KV cache, what the asked settings need),
the failure and its KB entry, and a list of proposals (largest context at these
settings; the utilisation, KV cache type or GPU count that fits the context
asked), each with the settings and whether they fit (``fits``, which re-runs the
budget for them) and its command line (``commands.proposal_command``).
site_src/javascripts/fromlog.mjs is its twin.
"""

from __future__ import annotations

import math

from errorkb.calculator.commands import proposal_command
from errorkb.calculator.facts import GIB, KV_TYPES, RUNTIME_CONTEXT, VLLM_BATCHED_SMALL
from errorkb.calculator.llamacpp import llamacpp_kv
from errorkb.calculator.ollama import ollama_kv
from errorkb.calculator.vllm import vllm_blocks_per_request, vllm_groups, vllm_page

GPU_COUNTS = (2, 4, 8)          # tensor-parallel sizes (or cards to split layers over) worth proposing
MAX_UTIL = 0.95                 # highest --gpu-memory-utilization / --mem-fraction-static proposed: the rest is the driver's
CACHE_STEPS = {"vllm": ("fp8",), "sglang": ("fp8_e4m3",), "llamacpp": ("q8_0", "q4_0"), "ollama": ("q8_0", "q4_0")}
CONTEXT_CEILING = 1 << 24


def _bytes_per(kv: str) -> float:
    size, block = KV_TYPES.get({"auto": "bf16", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}.get(kv, kv), (2, 1))
    return size / block


def hybrid(r: dict) -> bool:
    """Whether a vLLM log's "Maximum concurrency for C tokens per request: X" disagrees with its "GPU KV cache size:
    N tokens" by more than X's two printed decimals allow: then the pool's tokens are not what one request of C
    tokens takes (sliding-window or linear-attention layers), and vLLM's own count X is the one to follow."""
    if r["engine"] != "vllm" or not (r.get("concurrency") and r.get("context") and r.get("kv_tokens")):
        return False
    return abs(r["concurrency"] * r["context"] - r["kv_tokens"]) > 0.005 * r["context"] + 1


def kv_need(r: dict, arch: dict | None, s: dict) -> float:
    """Bytes of KV cache one GPU needs for s (context, seqs, kv, gpus): the engine's arithmetic when the model is known,
    else the log's own KV size scaled by tokens and bytes per value (exact for full attention)."""
    engine, ctx, seqs, kv, n = r["engine"], s["context"], s["seqs"], s["kv"], s["gpus"]
    mla = bool(arch and arch.get("mla"))
    if arch:
        if engine == "vllm":
            kind = "fp8" if _bytes_per(kv) == 1 else "bf16"
            return vllm_groups(arch)[0] * vllm_page(arch, kind, n) * vllm_blocks_per_request(
                arch, ctx, r.get("batched") or VLLM_BATCHED_SMALL) * seqs
        if engine == "sglang":
            width = (arch["mla"]["kv_lora_rank"] + arch["mla"]["qk_rope_head_dim"]) if mla else \
                2 * max(1, arch["kv_heads"] // n) * arch["head_dim"]
            return ctx * seqs * arch["layers"] * width * _bytes_per(kv)
        kv_name = kv if kv in KV_TYPES else "f16"
        # An MLA GGUF without llama.cpp's MLA keys prints every KV head (n_head_kv 128 for DeepSeek V3, 1 with the keys).
        full_heads = mla and (r.get("n_head_kv") or 1) > 1
        total = llamacpp_kv(arch, ctx, seqs, kv_name, mla_full_heads=full_heads) if engine == "llamacpp" \
            else ollama_kv(arch, ctx, seqs, kv_name)
        return total / n
    base_kv = r.get("kv_dtype") or s["kv0"]
    if r.get("needed_kv_gib") and r.get("context"):
        per_token = r["needed_kv_gib"] * GIB / r["context"]
    elif hybrid(r) and r.get("kv_gib"):
        per_token = r["kv_gib"] * GIB / (r["concurrency"] * r["context"])
    elif r.get("kv_tokens") and r.get("kv_gib"):
        per_token = r["kv_gib"] * GIB / r["kv_tokens"]
    elif r.get("kv_gib") and r.get("context"):
        per_token = r["kv_gib"] * GIB / (r["context"] * (r.get("seqs") or 1))
    else:
        return math.nan
    # Without the architecture an MLA cache (copied to every GPU) cannot be told apart: vLLM and SGLang KV is not split.
    split = n / (r.get("tp") or 1) if engine in ("llamacpp", "ollama") else 1
    return per_token * ctx * seqs * _bytes_per(kv) / _bytes_per(base_kv) / split


def room(r: dict, s: dict, gpu_gib: float | None) -> float:
    """Bytes one GPU has for the KV cache at settings s, from the log's own budget."""
    engine, n0, n = r["engine"], r.get("tp") or 1, s["gpus"]
    total = (r.get("gpu_total_gib") or gpu_gib or math.nan) * GIB
    weights = (r.get("weights_gib") or 0) * GIB
    if engine in ("vllm", "sglang"):
        pool = (r.get("kv_gib") if r.get("kv_gib") is not None else math.nan) * GIB
        share0 = r.get("util") if engine == "vllm" else r.get("mem_fraction_static")
        share = s.get("util") or share0
        if share != share0:
            pool += (share - share0) * total
        return pool + weights * (1 - n0 / n)  # more GPUs: each holds a smaller share of the weights
    free = (r.get("gpu_free_gib") or r.get("gpu_total_gib") or gpu_gib or math.nan) * GIB
    if engine == "ollama" and r.get("required_gib") is not None:
        fixed = (r["required_gib"] - (r.get("kv_gib") or 0)) * GIB
        return (free * n - fixed) / n
    # llama.cpp, and Ollama since llama-server runs inside it (its memory table, no memory.required line)
    compute = (r.get("compute_gib") or 0) * GIB
    runtime = 0 if r.get("gpu_free_gib") else RUNTIME_CONTEXT  # "MiB free" already leaves the driver's share out
    return (free * n - weights - (compute + runtime) * n) / n


def token_pool(r: dict, s: dict) -> int | None:
    """The pool in tokens that a vLLM or SGLang log printed, when s keeps the logged settings (cache type,
    utilisation or static fraction, GPU count): the engine's own arithmetic, with no architecture needed."""
    if r["engine"] not in ("vllm", "sglang") or not r.get("kv_tokens"):
        return None
    logged = asked(r)
    same = all(s.get(k) == logged[k] for k in ("kv", "gpus")) and (s.get("util") or logged["util"]) == logged["util"]
    if not same:
        return None
    if hybrid(r):
        return math.floor(r["concurrency"] * r["context"])  # requests of C tokens the pool holds, hybrid layers counted
    return r["kv_tokens"]


def fits(r: dict, arch: dict | None, s: dict, gpu_gib: float | None) -> bool:
    need, have = kv_need(r, arch, s), room(r, s, gpu_gib)
    if math.isnan(need) or math.isnan(have):
        pool = token_pool(r, s)
        return pool is not None and 0 < s["context"] * s["seqs"] <= pool
    return 0 < need <= have


def _largest_context(r, arch, s, gpu_gib, ceiling) -> int:
    lo, hi = 0, ceiling
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(r, arch, {**s, "context": mid}, gpu_gib):
            lo = mid
        else:
            hi = mid - 1
    return lo


def asked(r: dict) -> dict:
    kv0 = r.get("kv_dtype") or ("auto" if r["engine"] in ("vllm", "sglang") else "f16")
    return {"context": r.get("context"), "seqs": 1 if r["engine"] in ("vllm", "sglang") else (r.get("seqs") or 1),
            "kv": kv0, "kv0": kv0, "gpus": r.get("tp") or 1,
            "util": r.get("util") if r["engine"] == "vllm" else r.get("mem_fraction_static")}


def pool_from_tokens(r: dict, arch: dict | None) -> dict:
    """A vLLM or SGLang log that gives its KV pool in tokens only (``GPU KV cache size: N tokens``, ``# GPU blocks``,
    ``Maximum concurrency``): the pool's size in GiB by the engine's own arithmetic, when the model is known."""
    if r["engine"] not in ("vllm", "sglang") or r.get("kv_gib") is not None or not r.get("kv_tokens") or not arch:
        return r
    s = asked(r)
    return {**r, "kv_gib": kv_need(r, arch, {**s, "context": r["kv_tokens"], "seqs": 1}) / GIB}


def propose(r: dict, arch: dict | None = None, gpu_gib: float | None = None, native_context: int | None = None) -> dict:
    """The budget the log implies and the nearest settings that start, each re-checked by ``fits``."""
    r = pool_from_tokens(r, arch)
    s = asked(r)
    out = {"engine": r["engine"], "asked": {k: v for k, v in s.items() if k != "kv0"}, "failure": r.get("failure"),
           "failure_kind": r.get("failure_kind"), "error_id": r.get("error_id"), "proposals": []}
    limit = native_context or r.get("n_ctx_train")  # the model's own longest context, when known
    ceiling = min(limit or CONTEXT_CEILING, CONTEXT_CEILING)
    if not s["context"]:
        have = room(r, s, gpu_gib)
        out.update(need_bytes=None, room_bytes=None if math.isnan(have) else have, starts=None)
        if r["engine"] in ("llamacpp", "ollama") and s["gpus"] == 1 and r.get("kv_gib") is not None and not math.isnan(have):
            # the KV cache the log sized, at whatever context it was given, against the room the log leaves
            out.update(need_bytes=r["kv_gib"] * GIB, starts=0 < r["kv_gib"] * GIB <= have)
        best = _largest_context(r, arch, {**s, "context": 1}, gpu_gib, ceiling)
        if best > 0:
            out["proposals"].append({"change": "context", **s, "context": best})
            out["note"] = "The log does not say which context was asked; the largest that fits is below."
        else:
            _fit(r, out)
            if out["starts"] is not None:
                out["note"] = "The log does not print the context it was given, so no other context is proposed."
            else:
                out["note"] = ("The log does not say which context was asked, nor enough numbers for a budget "
                               "(KV size and the memory left for it).")
        return _finish(r, out, s, arch, gpu_gib)
    need, have = kv_need(r, arch, s), room(r, s, gpu_gib)
    in_bytes = not (math.isnan(need) or math.isnan(have))
    pool = None if in_bytes else token_pool(r, s)
    out.update(need_bytes=None if math.isnan(need) else need, room_bytes=None if math.isnan(have) else have,
               starts=fits(r, arch, s, gpu_gib) if in_bytes or pool is not None else None)
    if r["engine"] == "sglang" and out["starts"] is False and not r.get("failure"):
        _sglang_capped(out, s, pool if pool is not None else
                       math.floor(have / (need / (s["context"] * s["seqs"]))) if in_bytes and need > 0 else 0)
    if pool is not None:
        out["pool_tokens"] = pool  # the budget in tokens, as the engine printed it
    elif not in_bytes:
        _fit(r, out)
        if out["starts"] is None:
            out["note"] = "The log does not give enough numbers for a budget (KV size and the memory left for it)."
        return out
    best = _largest_context(r, arch, s, gpu_gib, ceiling)
    if best > 0:
        out["proposals"].append({"change": "context", **s, "context": best})
        # vLLM and SGLang also refuse a length above the model's own limit (max_position_embeddings): when neither a
        # model entry nor the log gives it, a context longer than the one asked holds only if the model allows it
        if r["engine"] in ("vllm", "sglang") and not limit and best > (s["context"] or 0):
            out["proposals"][-1]["model_limit_unknown"] = True
    if not out["starts"]:
        total = (r.get("gpu_total_gib") or gpu_gib or 0) * GIB
        if r["engine"] in ("vllm", "sglang") and s["util"] and total and in_bytes:
            util = math.ceil((s["util"] + (need - have) / total) * 100) / 100
            if util <= MAX_UTIL and fits(r, arch, {**s, "util": util}, gpu_gib):
                out["proposals"].append({"change": "util", **s, "util": util})
        for kv in CACHE_STEPS[r["engine"]]:
            if _bytes_per(kv) < _bytes_per(s["kv"]) and fits(r, arch, {**s, "kv": kv}, gpu_gib):
                out["proposals"].append({"change": "kv", **s, "kv": kv})
                break
        heads = arch["attention_heads"] if arch else None
        for n in GPU_COUNTS:
            if n > s["gpus"] and (heads is None or heads % n == 0) and fits(r, arch, {**s, "gpus": n}, gpu_gib):
                out["proposals"].append({"change": "gpus", **s, "gpus": n})
                break
    return _finish(r, out, s, arch, gpu_gib)


def _sglang_capped(out: dict, s: dict, tokens: int) -> None:
    """SGLang starts with any pool of a few tokens: it caps one request at the pool (the scheduler's max_req_len is
    the smaller of context_len - 1 and max_total_num_tokens - 1) and refuses a longer one when it arrives."""
    if tokens > 0:
        out["starts"] = True
        out["capped_tokens"] = tokens
        out["note"] = (f"SGLang starts: its pool holds {tokens:,} tokens, fewer than the {s['context']:,} asked, so it "
                       f"refuses a request longer than the pool. The largest context that fits is below.")


def _fit(r: dict, out: dict) -> None:
    """llama.cpp's own projection (--fit, on by default since 2026) when the log gives no budget of its own:
    everything it would allocate at the settings it was started with, against the free memory it measured."""
    if out.get("starts") is not None or r.get("fit_projected_gib") is None or r.get("fit_free_gib") is None:
        return
    several = (r.get("fit_devices") or 0) > 1 or (r.get("devices") or 0) > 1
    if several and r["fit_projected_gib"] <= r["fit_free_gib"]:
        return  # the projection sums several GPUs: one of them can be over while the sum fits
    margin = 0 if several else r.get("fit_margin_gib") or 0
    out["fit"] = {"projected_bytes": r["fit_projected_gib"] * GIB, "free_bytes": r["fit_free_gib"] * GIB, "margin_bytes": margin * GIB}
    out["starts"] = r["fit_projected_gib"] + margin <= r["fit_free_gib"]


def _finish(r: dict, out: dict, s: dict, arch: dict | None, gpu_gib: float | None) -> dict:
    for p in out["proposals"]:
        p.pop("kv0", None)
        p["fits"] = fits(r, arch, {**p, "kv0": s["kv0"]}, gpu_gib)
        p["command"] = proposal_command(r, p)
    return out
