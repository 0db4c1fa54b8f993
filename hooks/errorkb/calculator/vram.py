"""Calculator stage: will this model run on this memory, with this engine?

Input: an architecture (plain dict with the ModelEntry fields, see
``hardware.arch_of``) and a scenario (engine, quant, kv_dtype, context, seqs,
gpus, vram_bytes per GPU as the driver reports it, ...). Output: a plain dict
with the bytes of weights, KV cache and overhead, the verdict, the largest
context and concurrency that fit, and the KB errors the plan runs into.
Nonsense input comes back as ``{"ok": False, "errors": [sentences]}``.

Pure functions, integers where the engines use integers. The ES module
``site_src/javascripts/vram.mjs`` is a line-by-line mirror; both run over
``tests/calculator_cases.json``. Every constant below says where it comes
from; the methodology section of site_src/will-it-run.md lists them all.
"""

from __future__ import annotations

import math

GIB = 1024**3
MIB = 1024**2
ENGINES = ("vllm", "llamacpp", "ollama")
ENGINE_NAMES = {"vllm": "vLLM", "llamacpp": "llama.cpp", "ollama": "Ollama"}

# Bytes per element of a KV cache type as (bytes, values per block). GGUF block
# types carry their scale: q8_0 is one f16 scale + 32 int8 = 34 bytes per 32
# values, q4_0 one f16 scale + 32 nibbles = 18 bytes (ggml/src/ggml.c type_traits).
KV_TYPES = {"f32": (4, 1), "f16": (2, 1), "bf16": (2, 1), "fp8": (1, 1), "q8_0": (34, 32), "q4_0": (18, 32)}
KV_BY_ENGINE = {"vllm": ("f16", "bf16", "fp8"), "llamacpp": ("f16", "bf16", "q8_0", "q4_0"),
                "ollama": ("f16", "q8_0", "q4_0")}
# Ollama's estimate rounds quantised caches to 1 and 0.5 bytes (fs/ggml/ggml.go kvCacheBytesPerElement).
OLLAMA_KV_BPE = {"f16": 2, "q8_0": 1, "q4_0": 0.5}

# Weight formats: bits per weight of the body and of the embedding/output
# matrices. GGUF figures are the measured file averages of Llama-3.1-8B in
# llama.cpp tools/quantize/README.md (K-quant mixes keep some tensors at Q6_K).
# vLLM formats keep embeddings and lm_head in 16 bit; AWQ/GPTQ int4 with group
# 128 add one f16 scale and one 4-bit zero per group: 4 + 16/128 + 4/128 bits.
# MXFP4 is 32 four-bit values + one E8M0 scale byte: 4.25 bits.
QUANTS = {
    "bf16": {"engines": ("vllm",), "bpw": 16, "embed_bpw": 16},
    "f16": {"engines": ("vllm",), "bpw": 16, "embed_bpw": 16},
    "fp8": {"engines": ("vllm",), "bpw": 8, "embed_bpw": 16},
    "awq-int4": {"engines": ("vllm",), "bpw": 4.15625, "embed_bpw": 16},
    "gptq-int4": {"engines": ("vllm",), "bpw": 4.15625, "embed_bpw": 16},
    "mxfp4": {"engines": ("vllm",), "bpw": 4.25, "embed_bpw": 16},
    **{name: {"engines": ("llamacpp", "ollama"), "bpw": bpw, "embed_bpw": bpw} for name, bpw in (
        ("F16", 16.0005), ("Q8_0", 8.5008), ("Q6_K", 6.5633), ("Q5_K_M", 5.7036), ("Q5_K_S", 5.5704),
        ("Q4_K_M", 4.8944), ("Q4_K_S", 4.6672), ("IQ4_XS", 4.4597), ("Q3_K_L", 4.2979), ("Q3_K_S", 3.6429),
        ("IQ3_M", 3.7628), ("Q2_K", 3.1593), ("MXFP4", 4.25))},
}
NATIVE_TO_VLLM = {"bf16": "bf16", "f16": "f16", "fp8": "fp8", "mxfp4": "mxfp4", "f32": "bf16"}

VLLM_BLOCK = 16                  # tokens per KV block (CacheConfig block_size default on CUDA)
VLLM_DEFAULT_UTIL = 0.9          # --gpu-memory-utilization default
# `vllm serve` defaults (EngineArgs.get_batch_defaults): 8192 batched tokens and
# 1024 sequences on cards of 70 GiB or more except A100, else 2048 and 256.
VLLM_LARGE_CARD = 70 * GIB
VLLM_BATCHED_LARGE, VLLM_SEQS_LARGE = 8192, 1024
VLLM_BATCHED_SMALL, VLLM_SEQS_SMALL = 2048, 256
# Estimates, not vLLM constants. The profiled activation peak is the larger of
# two moments: the MLP of a forward pass over the batched tokens, where three
# intermediate-sized and three hidden-sized bf16 tensors are alive (with the
# Llama shape, intermediate = 3.5 x hidden: (3 x 3.5 + 3) x 2 = 27 bytes per
# token per hidden unit, split by TP), and the sampler warm-up, which holds a
# few f32 copies of the logits of min(max_num_seqs, batched) requests.
# Non-torch memory: cuBLAS workspaces, NCCL buffers with TP > 1.
VLLM_ACT_PER_TOKEN_HIDDEN = 27
VLLM_SAMPLER_COPIES = 3
VLLM_NON_TORCH = 256 * MIB
VLLM_NON_TORCH_TP = 768 * MIB

LLAMACPP_PAD = 256               # KV cells are padded to 256 (llama-context / llama-kv-cache-iswa)
LLAMACPP_PAD_LEGACY = 32         # builds before the 2025 KV-cache rewrite padded to 32 without flash attention
LLAMACPP_UBATCH = 512            # -ub default; the SWA cache is n_swa + n_ubatch cells per sequence
RUNTIME_CONTEXT = 256 * MIB      # estimate: CUDA/HIP context the driver counts but no engine log shows
OLLAMA_BATCH = 512               # num_batch default
OLLAMA_GPT_OSS_WINDOW = 4096     # window Ollama's estimate uses for gpt-oss sliding layers
OLLAMA_RESERVE = 457 * MIB       # discover/gpu.go cudaMinimumMemory / rocmMinimumMemory
APPLE_SHARE_FALLBACK = 0.67      # estimate when a Mac entry has no gpu_share_default
TIGHT_MARGIN = 0.05              # under 5% left counts as tight
MAX_CONTEXT = 16_777_216
MAX_SEQS = 4096


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


# ------------------------------------------------------------------ inputs

def _whole(v) -> int | None:
    """v as an int when it is a finite whole number (not a bool, not a string), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v):
        return None
    return int(v)


def _number(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


ARCH_BOUNDS = {"layers": (1, 512), "hidden_size": (64, 131072), "attention_heads": (1, 1024), "kv_heads": (1, 1024),
               "head_dim": (8, 1024), "vocab_size": (256, 4_000_000), "native_context": (512, MAX_CONTEXT),
               "params_total": (1_000_000, 10**13)}


def check_arch(arch: dict) -> list[str]:
    errors = []
    for key, (lo, hi) in ARCH_BOUNDS.items():
        v = _whole(arch.get(key))
        if v is None or not lo <= v <= hi:
            errors.append(f"Architecture: {key} must be a whole number from {lo:,} to {hi:,}.")
    if errors:
        return errors
    if arch["attention_heads"] % arch["kv_heads"]:
        errors.append("Architecture: kv_heads must divide attention_heads.")
    if "sliding" in (arch.get("layer_pattern") or []) and not (_whole(arch.get("sliding_window")) or 0) > 0:
        errors.append("Architecture: sliding layers need a sliding_window of at least 1 token.")
    return errors


def check_inputs(arch: dict, sc: dict) -> tuple[dict, list[str], list[str]]:
    """Normalise a scenario; every problem becomes a sentence, never a NaN further down."""
    errors, warnings = check_arch(arch), []
    engine = sc.get("engine")
    if engine not in ENGINES:
        return sc, errors + ["Pick an engine: vllm, llamacpp or ollama."], warnings
    s = dict(sc)
    s["vendor"] = sc.get("vendor") or "nvidia"
    native = arch.get("native_dtype") or "bf16"
    s["quant"] = sc.get("quant") or (NATIVE_TO_VLLM.get(native, "bf16") if engine == "vllm" else "Q4_K_M")
    if s["quant"] not in QUANTS or engine not in QUANTS[s["quant"]]["engines"]:
        names = ", ".join(k for k, q in QUANTS.items() if engine in q["engines"])
        errors.append(f"{s['quant']} is not a weight format for {engine}; choose one of {names}.")
    kv = sc.get("kv_dtype") or "auto"
    if kv == "auto":
        kv = "bf16" if engine == "vllm" and native in ("bf16", "fp8", "mxfp4") else "f16"
    s["kv_dtype"] = kv
    if kv not in KV_BY_ENGINE[engine]:
        errors.append(f"{engine} has no {kv} KV cache; it offers {', '.join(KV_BY_ENGINE[engine])}.")
    for key, lo, hi, label in (("context", 1, MAX_CONTEXT, "Context"), ("seqs", 1, MAX_SEQS, "Concurrent sequences"),
                               ("gpus", 1, 64, "GPU count")):
        v = _whole(sc.get(key, 1 if key != "context" else None))
        if v is None or not lo <= v <= hi:
            errors.append(f"{label} must be a whole number from {lo:,} to {hi:,}.")
        s[key] = v
    native_ctx = _whole(arch.get("native_context"))
    if s["context"] and native_ctx and s["context"] > native_ctx:
        errors.append(f"Context {s['context']:,} is longer than the model's native {native_ctx:,} tokens.")
    vram = _number(sc.get("vram_bytes"))
    if vram is None or not 256 * MIB <= vram <= 2048 * GIB:
        errors.append("GPU memory must be between 0.25 and 2048 GiB per GPU.")
    else:
        s["vram_bytes"] = math.floor(vram)
    util = _number(sc.get("gpu_memory_utilization", VLLM_DEFAULT_UTIL))
    if engine == "vllm" and (util is None or not 0.05 <= util <= 1):
        errors.append("gpu_memory_utilization must be a fraction from 0.05 to 1.")
    s["gpu_memory_utilization"] = util
    if s["vendor"] == "apple":
        if engine == "vllm":
            errors.append("vLLM does not run on Apple GPUs; pick llama.cpp or Ollama.")
        if s["gpus"] and s["gpus"] > 1:
            errors.append("A Mac has one GPU; set the count to 1.")
    if engine == "vllm" and s["gpus"] and not errors and arch["attention_heads"] % s["gpus"]:
        errors.append(f"vLLM needs the {arch['attention_heads']} attention heads to divide evenly over {s['gpus']} GPUs.")
    batched = sc.get("max_num_batched_tokens")
    if batched is not None and not 1 <= (_whole(batched) or 0) <= 1_048_576:
        errors.append("max_num_batched_tokens must be a whole number from 1 to 1,048,576.")
    s["llamacpp_pad"] = sc.get("llamacpp_pad") or LLAMACPP_PAD
    if s["llamacpp_pad"] not in (LLAMACPP_PAD, LLAMACPP_PAD_LEGACY):
        errors.append("llamacpp_pad is 256 (current builds) or 32 (older builds without flash attention).")
    if errors:
        return s, errors, warnings
    share = _number(sc.get("unified_share"))
    if s["vendor"] == "apple":
        share = share if share and 0 < share <= 1 else APPLE_SHARE_FALLBACK
        s["usable_bytes"] = math.floor(s["vram_bytes"] * share)
    else:
        s["usable_bytes"] = s["vram_bytes"] * s["gpus"]
    if engine == "vllm" and s["gpus"] > arch["kv_heads"]:
        warnings.append("More GPUs than KV heads: vLLM copies each KV head to several GPUs.")
    return s, errors, warnings


# ----------------------------------------------------------------- weights

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


# --------------------------------------------------------------- llama.cpp

def llamacpp_kv(arch: dict, context: int, seqs: int, kv_dtype: str, cell_pad: int = LLAMACPP_PAD) -> int:
    """Bytes llama.cpp allocates: one stream of pad(context) cells per sequence (-c is shared by -np)."""
    cells = pad(context, cell_pad)
    swa_cells = min(cells, pad((arch.get("sliding_window") or 0) + LLAMACPP_UBATCH, cell_pad))
    total = 0
    for kind in layer_kinds(arch):
        if kind == "mla":
            per_cell = row_bytes(kv_dtype, arch["mla"]["kv_lora_rank"] + arch["mla"]["qk_rope_head_dim"])
            per_cell += row_bytes(kv_dtype, arch["mla"]["kv_lora_rank"])
        else:
            per_cell = 2 * row_bytes(kv_dtype, arch["kv_heads"] * arch["head_dim"])
        total += per_cell * (swa_cells if kind == "sliding" else cells)
    return total * seqs


def llamacpp_compute(arch: dict) -> int:
    """Compute buffer with flash attention: f32 logits and hidden state of one micro-batch."""
    return 4 * LLAMACPP_UBATCH * (arch["vocab_size"] + arch["hidden_size"])


# ------------------------------------------------------------------ Ollama

def ollama_kv(arch: dict, context: int, seqs: int, kv_dtype: str) -> int:
    """Ollama's own estimate (memory.required.kv): num_ctx x num_parallel tokens, rounded bytes per element."""
    tokens = context * seqs
    family = arch.get("family")
    mla = arch.get("mla")
    k_dim = (mla.get("qk_nope_head_dim") or 0) + mla["qk_rope_head_dim"] if mla else arch["head_dim"]
    v_dim = (mla.get("v_head_dim") or arch["head_dim"]) if mla else arch["head_dim"]
    per_token = (k_dim + v_dim) * arch["kv_heads"]
    window = {"gemma3": arch.get("sliding_window") or 0, "gpt-oss": OLLAMA_GPT_OSS_WINDOW}.get(family)
    total = 0
    for kind in layer_kinds(arch):
        n = seqs * window + OLLAMA_BATCH if kind == "sliding" and window else tokens
        total += math.floor(n * per_token * OLLAMA_KV_BPE[kv_dtype])
    return total


def ollama_graph(arch: dict, context: int, seqs: int) -> int:
    """Ollama's graph estimate for the llama architecture (full offload)."""
    b, c, e = OLLAMA_BATCH, context * seqs, arch["hidden_size"]
    return max(4 * b * (1 + 4 * e + c * (1 + arch["attention_heads"])), 4 * b * (e + arch["vocab_size"]))


# -------------------------------------------------------------------- vLLM

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
    if vram_bytes >= VLLM_LARGE_CARD and "a100" not in (gpu_id or ""):
        return VLLM_BATCHED_LARGE, VLLM_SEQS_LARGE
    return VLLM_BATCHED_SMALL, VLLM_SEQS_SMALL


def vllm_overhead(arch: dict, batched: int, max_seqs: int, tp: int) -> dict:
    sampler_reqs = min(max_seqs, batched)
    return {
        "activation peak": max(batched * arch["hidden_size"] * VLLM_ACT_PER_TOKEN_HIDDEN // tp,
                               sampler_reqs * arch["vocab_size"] * 4 * VLLM_SAMPLER_COPIES),
        "non-torch memory": VLLM_NON_TORCH + (VLLM_NON_TORCH_TP if tp > 1 else 0),
    }


def plan(arch: dict, s: dict) -> dict:
    """Memory plan for one scenario; s is normalised (see check_inputs)."""
    engine, ctx, seqs, n = s["engine"], s["context"], s["seqs"], s["gpus"]
    out: dict = {"engine": engine, "layers": arch["layers"], "kv_pool_bytes": None, "kv_pool_tokens": None,
                 "gpu_layers": None, "max_concurrency": None}
    if engine == "vllm":
        usable = math.floor(s["vram_bytes"] * s["gpu_memory_utilization"])
        batched, max_seqs = vllm_batched(s["vram_bytes"], s.get("gpu_id"))
        batched = s.get("max_num_batched_tokens") or batched
        parts = vllm_overhead(arch, batched, max_seqs, n)
        weights = cdiv(weights_bytes(arch, s["quant"]), n)
        pool = usable - weights - sum(parts.values())
        page = vllm_page(arch, s["kv_dtype"], n)
        group_size, g_full, g_slide = vllm_groups(arch)
        blocks = max(pool, 0) // page // group_size
        per_req = vllm_blocks_per_request(arch, ctx, batched)
        one = group_size * page * per_req
        out.update(kv_pool_bytes=max(pool, 0), kv_pool_tokens=blocks // (g_full + g_slide) * VLLM_BLOCK,
                   max_concurrency=blocks / per_req, kv_one_request_bytes=one, batched_tokens=batched)
        kv = one * seqs
        starts = pool > 0 and one <= pool
        out["fits_all"] = starts and per_req * seqs <= blocks
        out["starts"] = starts
        # per GPU figures times GPU count, so the bar compares like with like
        weights, kv, usable = weights * n, kv * n, usable * n
        parts = {k: v * n for k, v in parts.items()}
    elif engine == "llamacpp":
        weights = gguf_gpu_weights(arch, s["quant"])
        kv = llamacpp_kv(arch, ctx, seqs, s["kv_dtype"], s["llamacpp_pad"])
        parts = {"compute buffer": llamacpp_compute(arch) * n}
        if s["vendor"] != "apple":
            parts["runtime context"] = RUNTIME_CONTEXT * n
        usable = s["usable_bytes"]
    else:
        weights = gguf_gpu_weights(arch, s["quant"])
        kv = ollama_kv(arch, ctx, seqs, s["kv_dtype"])
        parts = {"graph (Ollama estimate)": ollama_graph(arch, ctx, seqs)}
        if s["vendor"] != "apple":
            parts["minimum free memory"] = OLLAMA_RESERVE * n
        usable = s["usable_bytes"]
    overhead = sum(parts.values())
    total = weights + kv + overhead
    out.update(weights_bytes=weights, kv_cache_bytes=kv, overhead_bytes=overhead, overhead_parts=parts,
               total_bytes=total, available_bytes=usable)
    if engine == "vllm":
        out["fits"] = out["starts"]
    else:
        out["fits"] = total <= usable
        if not out["fits"]:
            per_layer = (weights + kv) / arch["layers"]
            out["gpu_layers"] = max(0, min(arch["layers"], math.floor((usable - overhead) / per_layer)))
    return out


def _largest(lo: int, hi: int, ok) -> int:
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


def assess(arch: dict, scenario: dict) -> dict:
    """Plan and verdict without the searches for the limits (what the fit tables of the pages need)."""
    s, errors, warnings = check_inputs(arch, scenario)
    if errors:
        return {"ok": False, "errors": errors, "warnings": warnings}
    out = plan(arch, s)
    out.update(ok=True, errors=[], warnings=warnings, verdict=verdict(out, s))
    return out


def evaluate(arch: dict, scenario: dict) -> dict:
    """The whole answer: plan, verdict, limits, failure it predicts."""
    s, errors, warnings = check_inputs(arch, scenario)
    if errors:
        return {"ok": False, "errors": errors, "warnings": warnings}
    out = plan(arch, s)
    out.update(ok=True, errors=[], warnings=warnings)

    def fits_with(ctx: int, seqs: int) -> bool:
        p = plan(arch, {**s, "context": ctx, "seqs": seqs})
        return p["fits_all"] if s["engine"] == "vllm" else p["fits"]

    def starts_with(ctx: int) -> bool:
        return plan(arch, {**s, "context": ctx, "seqs": 1})["starts"]

    limit = arch["native_context"]
    if s["engine"] == "vllm":
        out["max_context"] = max(0, _largest(1, limit, starts_with))
        out["max_seqs"] = math.floor(out["max_concurrency"]) if out["starts"] else 0
    else:
        out["max_context"] = max(0, _largest(1, limit, lambda c: fits_with(c, s["seqs"])))
        out["max_seqs"] = max(0, _largest(1, MAX_SEQS, lambda n: fits_with(s["context"], n)))
    out["verdict"] = verdict(out, s)
    out["error_ids"] = predicted_errors(out, s)
    return out


def verdict(out: dict, s: dict) -> str:
    if not out["fits"]:
        return "no"
    if s["engine"] == "vllm" and not out["fits_all"]:
        return "tight"
    if out["total_bytes"] > out["available_bytes"] * (1 - TIGHT_MARGIN):
        return "tight"
    return "fits"


def predicted_errors(out: dict, s: dict) -> list[str]:
    """Ids of the KB entries for the failure this plan runs into."""
    if out["verdict"] == "fits":
        return []
    oom = {"amd": "rocm-hip-out-of-memory", "apple": "metal-out-of-memory"}.get(s["vendor"], "cuda-oom-loading-model")
    ids: list[str] = []
    if s["engine"] == "vllm":
        pool = out["kv_pool_bytes"]
        if out["available_bytes"] < out["weights_bytes"] + out["overhead_bytes"]:
            ids.append(oom)
        if pool <= 0:
            ids.append("vllm-no-available-kv-cache-blocks")
        elif not out["starts"]:
            ids.append("vllm-max-seq-len-exceeds-kv-cache")
        if out["starts"] and not out["fits_all"]:
            ids.append("vllm-max-seq-len-exceeds-kv-cache")
        return ids
    if s["engine"] == "llamacpp":
        ids.append("llamacpp-cuda-malloc-failed" if s["vendor"] == "nvidia" else oom)
    else:
        ids.append("ollama-requires-more-system-memory")
        ids.append(oom)
    if out["kv_cache_bytes"] > out["weights_bytes"] and s["vendor"] == "nvidia":
        ids.append("cuda-oom-long-context")
    return ids


def kv_cache_for(arch: dict, engine: str, kv_dtype: str, context: int, seqs: int = 1) -> int:
    """KV bytes one GPU holds for `seqs` sequences of `context` tokens, as the engine sizes them."""
    if engine == "llamacpp":
        return llamacpp_kv(arch, context, seqs, kv_dtype)
    if engine == "ollama":
        return ollama_kv(arch, context, seqs, kv_dtype)
    group_size = vllm_groups(arch)[0]
    return group_size * vllm_page(arch, kv_dtype, 1) * vllm_blocks_per_request(arch, context, VLLM_BATCHED_SMALL) * seqs


def kv_cache_per_token(arch: dict, engine: str, kv_dtype: str) -> float:
    """What one more token of context costs once sliding windows are full (they stop growing)."""
    n = 1 << 16
    return (kv_cache_for(arch, engine, kv_dtype, 2 * n) - kv_cache_for(arch, engine, kv_dtype, n)) / n
