"""Calculator facts: every constant the memory arithmetic reads, in one place.

Input: nothing (module constants). Output: the constants for the Python
modules of this package, and ``export()``, the same facts as plain JSON that
the build writes into api/v1/calculator.json for the browser's vram.mjs, and
that the Methodology section of the calculator page is rendered from. Each
constant says where it comes from; the ones marked *estimate* are ours.
"""

from __future__ import annotations

GIB = 1024**3
MIB = 1024**2
ENGINES = ("vllm", "llamacpp", "ollama", "sglang")
ENGINE_NAMES = {"vllm": "vLLM", "llamacpp": "llama.cpp", "ollama": "Ollama", "sglang": "SGLang"}
VENDORS = ("nvidia", "amd", "apple")

# Bytes per element of a KV cache type as (bytes, values per block). GGUF block
# types carry their scale: q8_0 is one f16 scale + 32 int8 = 34 bytes per 32
# values, q4_0 one f16 scale + 32 nibbles = 18 bytes (ggml/src/ggml.c type_traits).
KV_TYPES = {"f32": (4, 1), "f16": (2, 1), "bf16": (2, 1), "fp8": (1, 1), "q8_0": (34, 32), "q4_0": (18, 32)}
KV_BY_ENGINE = {"vllm": ("f16", "bf16", "fp8"), "llamacpp": ("f16", "bf16", "q8_0", "q4_0"),
                "ollama": ("f16", "q8_0", "q4_0"), "sglang": ("f16", "bf16", "fp8")}
# The flag each engine takes for an fp8 cache (SGLang names the format; e5m2 needs no scales).
FP8_KV_FLAG = {"vllm": "fp8", "sglang": "fp8_e5m2"}
# How each engine spells the settings a command sets, as format strings ({} is the value): the one home of
# these names for commands.py, which writes what `kb will-it-run` and the page print and what a log proposes.
ENGINE_FLAGS = {
    "vllm": {"start": "vllm serve {}", "context": "--max-model-len {}", "share": "--gpu-memory-utilization {}",
             "gpus": "--tensor-parallel-size {}", "kv": "--kv-cache-dtype {}", "quantization": "--quantization {}",
             "seqs": "--max-num-seqs {}"},
    "sglang": {"start": "python -m sglang.launch_server --model-path {}", "context": "--context-length {}",
               "share": "--mem-fraction-static {}", "gpus": "--tp {}", "kv": "--kv-cache-dtype {}",
               "quantization": "--quantization {}", "seqs": "--max-running-requests {}"},
    "llamacpp": {"start": "llama-server -m {}", "context": "-c {}", "seqs": "-np {}", "layers": "-ngl {}", "fit": "--fit {}",
                 "kv": "-ctk {0} -ctv {0}", "flash": "--flash-attn {}", "split": "--split-mode layer --tensor-split {}"},
    "ollama": {"start": "ollama serve", "seqs": "OLLAMA_NUM_PARALLEL={}", "context": "OLLAMA_CONTEXT_LENGTH={}",
               "flash": "OLLAMA_FLASH_ATTENTION={}", "kv": "OLLAMA_KV_CACHE_TYPE={}",
               "modelfile_context": "PARAMETER num_ctx {}", "create": "ollama create {} -f Modelfile"},
}
# Ollama's estimate rounds quantised caches to 1 and 0.5 bytes (fs/ggml/ggml.go kvCacheBytesPerElement).
OLLAMA_KV_BPE = {"f16": 2, "q8_0": 1, "q4_0": 0.5}

# Weight formats: bits per weight of the body and of the embedding/output
# matrices. GGUF figures are the measured file averages of Llama-3.1-8B in
# llama.cpp tools/quantize/README.md (K-quant mixes keep some tensors at Q6_K).
# Q4_0, which that table leaves out (Gemma QAT files and older Ollama library tags use it), is computed
# the same way from its layout: 18 bytes a block of 32 weights (4.5 bits), output.weight kept at Q6_K by
# llama-quantize and f32 norms: 4.6358 on Llama-3.1-8B (Ollama lists its Q4_0 tags of 8B models as 4.7 GB).
# vLLM formats keep embeddings and lm_head in 16 bit; AWQ/GPTQ int4 with group
# 128 add one f16 scale and one 4-bit zero per group: 4 + 16/128 + 4/128 bits.
# MXFP4 is 32 four-bit values + one E8M0 scale byte: 4.25 bits.
# vLLM and SGLang load the safetensors checkpoint as published; llama.cpp and Ollama a GGUF file.
SAFETENSORS_ENGINES = ("vllm", "sglang")
QUANTS = {
    "bf16": {"engines": SAFETENSORS_ENGINES, "bpw": 16, "embed_bpw": 16},
    "f16": {"engines": SAFETENSORS_ENGINES, "bpw": 16, "embed_bpw": 16},
    "fp8": {"engines": SAFETENSORS_ENGINES, "bpw": 8, "embed_bpw": 16},
    "awq-int4": {"engines": SAFETENSORS_ENGINES, "bpw": 4.15625, "embed_bpw": 16},
    "gptq-int4": {"engines": SAFETENSORS_ENGINES, "bpw": 4.15625, "embed_bpw": 16},
    # gpt-oss and other MXFP4 checkpoints quantise only the experts: attention, router and embeddings stay bf16
    "mxfp4": {"engines": SAFETENSORS_ENGINES, "bpw": 4.25, "embed_bpw": 16, "attn_bpw": 16},
    **{name: {"engines": ("llamacpp", "ollama"), "bpw": bpw, "embed_bpw": bpw} for name, bpw in (
        ("F16", 16.0005), ("Q8_0", 8.5008), ("Q6_K", 6.5633), ("Q5_K_M", 5.7036), ("Q5_K_S", 5.5704),
        ("Q4_K_M", 4.8944), ("Q4_K_S", 4.6672), ("Q4_0", 4.6358), ("IQ4_XS", 4.4597), ("Q3_K_L", 4.2979), ("Q3_K_S", 3.6429),
        ("IQ3_M", 3.7628), ("Q2_K", 3.1593), ("MXFP4", 4.25))},
}
# The weight format an engine uses when none is chosen: vLLM loads the
# checkpoint as published (by its native dtype), the GGUF engines the usual download.
NATIVE_TO_VLLM = {"bf16": "bf16", "f16": "f16", "fp8": "fp8", "mxfp4": "mxfp4", "f32": "bf16"}
DEFAULT_GGUF_QUANT = "Q4_K_M"
# KV cache type "auto": vLLM and SGLang follow the model dtype, the GGUF engines use f16.
VLLM_AUTO_KV_BF16 = ("bf16", "fp8", "mxfp4")

# vLLM's MXFP4 MoE kernels allocate the expert matrices with the hidden size
# rounded up to a multiple of 256 (create_weights of the MXFP4 MoE method;
# gpt-oss: 2880 -> 3072), so they load larger than the checkpoint.
VLLM_MXFP4_HIDDEN_ALIGN = 256
# llama.cpp stores only K for MLA models (DeepSeek, GLM-4.7-Flash): the V cache
# is a view of the latent K since PR #19067 "kv-cache : support V-less cache",
# merged 2026-01-24. Builds before it also stored a kv_lora_rank-wide V.
LLAMACPP_V_LESS_MLA_SINCE = "2026-01-24"

# Which release each engine's numbers follow, and where they were read.
RELEASES = {
    "vllm": {"release": "vLLM 0.8 and later (V1 engine), defaults of 0.33, checked on real logs of 0.8 to 0.21",
             "note": "the --gpu-memory-utilization default is 0.92 since 0.20 (0.9 before), and cards of 160 GiB or "
                     "more get 16384 batched tokens since 0.28 (8192 before); "
                     "--max-model-len auto (or -1) picks the largest length that fits since pull request 29431 "
                     "(_auto_fit_max_model_len in vllm/v1/core/kv_cache_utils.py); since 0.21 the CUDA-graph estimate "
                     "is subtracted before the pool is sized (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 turns it off), "
                     "inside the activation allowance on the 0.21 log checked; the old V0 engine behind vllm_v0",
             "source": "vllm/v1/worker/gpu_worker.py, vllm/v1/core/kv_cache_utils.py, vllm/engine/arg_utils.py, vllm/config/cache.py"},
    "llamacpp": {"release": "llama.cpp builds from 2026-01-24 on (V-less MLA cache, --fit on by default)",
                 "note": "older builds: 32-cell padding without flash attention (llamacpp_pad), a V cache for MLA "
                         "(llamacpp_mla_v). A DeepSeek GGUF converted before llama.cpp wrote its MLA keys "
                         "(deepseek2.attention.key_length_mla, optional when the model loads; the Ollama library's "
                         "deepseek-v2 and deepseek-coder-v2 are such files) gets no latent cache: every head's K (192 "
                         "values) and V (128) are stored, several times the latent cache; the calculator counts that "
                         "for Ollama (mla_full_heads) and the latent cache for llama.cpp",
                 "source": "common/common.h, common/fit.cpp, src/llama-kv-cache.cpp"},
    "ollama": {"release": "Ollama 0.30 and later (llama-server inside), defaults of 0.33",
               "note": "releases before 0.30 scheduled by their own estimate (memory.required.kv), behind ollama_legacy. "
                       "DeepSeek models (MLA) are counted as the Ollama library ships them: its GGUFs have no "
                       "deepseek2.attention.key_length_mla (Ollama's converter, convert/convert_deepseek2.go, does not write "
                       "it), so llama-server caches every head's K and V; a GGUF with the key (pulled from hf.co) "
                       "keeps llama.cpp's latent cache (mla_full_heads false)",
               "source": "server/routes.go, server/sched.go, envconfig/config.go, llm/llama_server.go"},
    "sglang": {"release": "SGLang 0.5.23",
               "note": "the default --mem-fraction-static and CUDA-graph sizes move between releases; "
                       "pass --mem-fraction-static to pin it. On AMD Instinct (aiter attention backend) the fraction "
                       "is multiplied by 0.85 above 8192 tokens of context and the aiter decode workspace is "
                       "allocated after the pool, as every release since May 2025 does",
               "source": "python/sglang/srt/arg_groups/memory_hook.py, python/sglang/srt/mem_cache/kv_cache_configurator.py, "
                         "python/sglang/srt/layers/attention/aiter_backend.py"},
}

# SGLang's MXFP4 MoE (python/sglang/srt/layers/quantization/mxfp4.py, create_weights): (expert width, hidden size)
# alignment. FlashInfer's MXFP4 backend, chosen on compute capability 10.x (server_args: "Detected SM100 and MXFP4
# quantization format"), rounds both to 256; on ROCm the expert width goes to 128, on other CUDA cards to 64.
SGLANG_MXFP4_ALIGN = {"sm100": (256, 256), "amd": (128, 1), "cuda": (64, 1)}

VLLM_BLOCK = 16                  # tokens per KV block (CacheConfig block_size default on CUDA)
VLLM_DEFAULT_UTIL = 0.92         # --gpu-memory-utilization default since 0.20.0 (vllm/config/cache.py; 0.9 up to 0.19)
# `vllm serve` defaults (EngineArgs.get_batch_defaults): 8192 batched tokens and
# 1024 sequences on cards of 70 GiB or more except A100, else 2048 and 256; since
# 0.28.0, 16384 and 1024 on cards of 160 GiB or more (B200, MI300X). 0.33.0 keeps
# the DGX Spark (GB10) on the small tier; the calculator lists no such device.
VLLM_LARGE_CARD = 70 * GIB
VLLM_BATCHED_LARGE, VLLM_SEQS_LARGE = 8192, 1024
VLLM_HUGE_CARD = 160 * GIB
VLLM_BATCHED_HUGE, VLLM_SEQS_HUGE = 16384, 1024
VLLM_BATCHED_SMALL, VLLM_SEQS_SMALL = 2048, 256
# Estimates, not vLLM constants. The profiled activation peak is the larger of
# two moments: the MLP of a forward pass over the batched tokens, where three
# intermediate-sized and three hidden-sized bf16 tensors are alive (with the
# Llama shape, intermediate = 3.5 x hidden: (3 x 3.5 + 3) x 2 = 27 bytes per
# token per hidden unit, split by TP), and the sampler warm-up over
# min(max_num_seqs, batched) dummy requests, which holds f32 logits and what
# top-k/top-p sorting and log-probabilities derive from them (sorted values,
# int64 indices, probabilities): SAMPLER_COPIES f32 copies of the logits.
# V1 engine (vLLM 0.8 onwards): 12, fitted on the training log
# vllm--gpt-oss-120b-h100-gmu095 (12.0); the V0 engine: 3, fitted on the two
# RTX 3090 logs. Non-torch memory: cuBLAS workspaces, NCCL buffers with TP > 1.
VLLM_ACT_PER_TOKEN_HIDDEN = 27
VLLM_SAMPLER_COPIES = 12
VLLM_SAMPLER_COPIES_V0 = 3
VLLM_NON_TORCH = 256 * MIB
VLLM_NON_TORCH_TP = 768 * MIB

# SGLang 0.5.23 (python/sglang/srt/arg_groups/memory_hook.py, handle_gpu_memory_settings;
# cuda_graph_config.py; mem_cache/kv_cache_configurator.py). GPU memory is nvidia-smi's
# total in MiB. Tiers, by memory below the bound: (bound MiB, chunked prefill size,
# decode CUDA-graph max batch with TP < 4, with TP >= 4); the last tier has no bound.
SGLANG_TIERS = ((20 * 1024, 2048, 8, 8), (35 * 1024, 4096, 48, 160), (60 * 1024, 4096, 32, 160),
                (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512), (None, 16384, 512, 512))
# reserved MiB = 512 + 1.5 x max(chunked prefill, 2048) + 2 x graph max batch + tp x pp / 8 x 1024
# + the prefill CUDA graphs (on by default on CUDA since the graph refactor: 8 MiB per
# captured size, 1.5 GiB with an MLA backend), at least 10 GiB on cards over 60 GiB;
# --mem-fraction-static = round((total - reserved) / total, 3).
SGLANG_RESERVE_BASE_MIB = 512
SGLANG_ACT_MIB_PER_TOKEN = 1.5
SGLANG_ACT_MIN_TOKENS = 2048
SGLANG_GRAPH_MIB_PER_BATCH = 2
SGLANG_PARALLEL_MIB = 1024          # x tp x pp / 8
SGLANG_FLOOR_ABOVE_MIB = 60 * 1024
SGLANG_FLOOR_MIB = 10 * 1024
SGLANG_PREFILL_GRAPH_MIB = 8        # per captured prefill size (non-MLA)
SGLANG_PREFILL_GRAPH_MLA_MIB = 1536
# Captured prefill sizes up to the chunked prefill size: (first, last, step); a last of
# 0 runs to the chunked prefill size (cuda_graph_hook.generate_prefill_cuda_graph_batch_sizes).
SGLANG_PREFILL_GRAPH_STEPS = ((4, 32, 4), (48, 256, 16), (288, 512, 32), (576, 1024, 64), (1280, 4096, 256),
                              (4608, 0, 512))
# --max-running-requests default: clamp(pool tokens / context x 512, 2048, 4096), at most half the pool.
SGLANG_REQS_PER_CONTEXT = 512
SGLANG_REQS_MIN, SGLANG_REQS_MAX = 2048, 4096
# AMD Instinct: every HIP device gets the aiter attention backend unless another is passed
# (server_args _get_default_attn_backend). Its paged-decode workspace is allocated after the pool
# (layers/attention/aiter_backend.py, AiterAttnBackend.__init__, models without MLA): max running
# requests x query heads per GPU x ceil(context / 256) partitions x (head_dim x 4 + 2 x 4) bytes, fp32
# partial outputs plus two fp32 reduction planes. The pool is not charged for it; instead, above 8192
# tokens of context, --mem-fraction-static (given or default) is multiplied by 0.85 (arg_groups/
# attention_hook.py; since PR 6564, May 2025, kept as the default by PR 37242 of 2026-08-31;
# SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION=1 skips it for a fraction that was passed).
SGLANG_AITER_RESERVE = 0.85
SGLANG_AITER_RESERVE_ABOVE = 8192
SGLANG_AITER_PARTITION = 256
SGLANG_AITER_BYTES_PER_HEAD_DIM = 4
SGLANG_AITER_BYTES_PER_PARTITION = 8

LLAMACPP_PAD = 256               # KV cells are padded to 256 (llama-context / llama-kv-cache-iswa)
LLAMACPP_PAD_LEGACY = 32         # builds before the 2025 KV-cache rewrite padded to 32 without flash attention
LLAMACPP_UBATCH = 512            # -ub default; the SWA cache is n_swa + n_ubatch cells per sequence
# llama.cpp --fit (common/common.h, common/fit.cpp), on unless --fit off: when the
# projected use leaves less than --fit-target (1024 MiB per device) free, it first
# lowers a context the user did not set (-c), to the largest multiple of 256 that
# leaves the margin but not below --fit-ctx (4096), then moves layers (for MoE: the
# experts first) to the CPU if -ngl was not set. Without -c the context is the model's.
LLAMACPP_FIT_MARGIN = 1024 * MIB
LLAMACPP_FIT_MIN_CTX = 4096
LLAMACPP_FIT_ALIGN = 256
RUNTIME_CONTEXT = 256 * MIB      # estimate: CUDA/HIP context the driver counts but no engine log shows
OLLAMA_BATCH = 512               # num_batch default
OLLAMA_GPT_OSS_WINDOW = 4096     # window Ollama's estimate uses for gpt-oss sliding layers
# Ollama 0.30+ starts llama-server with -c num_ctx x parallel -np parallel and no -ngl
# (llm/llama_server.go), so llama.cpp allocates the cache and --fit places the layers.
# Default num_ctx by the total GPU memory (server/routes.go, since 2026-01-27), capped
# at the model's training context: (at least this much, num_ctx), first match wins.
# OLLAMA_NUM_PARALLEL defaults to 1 (envconfig). When a load runs out of memory with
# the default context, it retries once a tier lower (262144 -> 32768 -> 4096).
OLLAMA_CTX_TIERS = ((47 * GIB, 262144), (23 * GIB, 32768), (0, 4096))
OLLAMA_NUM_PARALLEL = 1
OLLAMA_RESERVE = 457 * MIB       # discover/gpu.go cudaMinimumMemory / rocmMinimumMemory
APPLE_SHARE_FALLBACK = 0.67      # estimate when a Mac entry has no gpu_share_default
TIGHT_MARGIN = 0.05              # under 5% left counts as tight
MAX_CONTEXT = 16_777_216
MAX_SEQS = 4096                  # the largest concurrency the limit search tries
MAX_GPUS = 64
# The step the largest-context search uses to show what one more token costs
# once sliding windows are full (they stop growing).
PER_TOKEN_PROBE = 1 << 16

# Bounds on a model's architecture fields: the model entries' schema and the
# calculator's input checks both read these.
ARCH_BOUNDS = {"layers": (1, 512), "hidden_size": (64, 131072), "attention_heads": (1, 1024), "kv_heads": (1, 1024),
               "head_dim": (8, 1024), "vocab_size": (256, 4_000_000), "native_context": (512, MAX_CONTEXT),
               "params_total": (1_000_000, 10**13)}
INPUT_BOUNDS = {"vram_bytes": (256 * MIB, 2048 * GIB), "gpu_memory_utilization": (0.05, 1.0), "mem_fraction_static": (0.05, 1.0),
                "max_num_batched_tokens": (1, 1_048_576)}

# The KB entries a predicted failure links to, by the failure.
ERROR_IDS = {
    "oom_nvidia": "cuda-oom-loading-model",
    "oom_amd": "rocm-hip-out-of-memory",
    "oom_apple": "metal-out-of-memory",
    "long_context": "cuda-oom-long-context",
    "vllm_no_blocks": "vllm-no-available-kv-cache-blocks",
    "vllm_max_seq_len": "vllm-max-seq-len-exceeds-kv-cache",
    "llamacpp_malloc": "llamacpp-cuda-malloc-failed",
    "ollama_memory": "ollama-requires-more-system-memory",
    "sglang_memory": "sglang-kv-cache-out-of-memory",
}

# Constants the browser reads by name (everything numeric above).
NUMBERS = ("VLLM_BLOCK", "VLLM_DEFAULT_UTIL", "VLLM_LARGE_CARD", "VLLM_BATCHED_LARGE", "VLLM_SEQS_LARGE",
           "VLLM_HUGE_CARD", "VLLM_BATCHED_HUGE", "VLLM_SEQS_HUGE",
           "VLLM_BATCHED_SMALL", "VLLM_SEQS_SMALL", "VLLM_ACT_PER_TOKEN_HIDDEN", "VLLM_SAMPLER_COPIES", "VLLM_SAMPLER_COPIES_V0",
           "VLLM_NON_TORCH", "VLLM_NON_TORCH_TP", "LLAMACPP_PAD", "LLAMACPP_PAD_LEGACY", "LLAMACPP_UBATCH",
           "RUNTIME_CONTEXT", "OLLAMA_BATCH", "OLLAMA_GPT_OSS_WINDOW", "OLLAMA_RESERVE", "APPLE_SHARE_FALLBACK",
           "TIGHT_MARGIN", "VLLM_MXFP4_HIDDEN_ALIGN", "MAX_CONTEXT", "MAX_SEQS", "MAX_GPUS", "PER_TOKEN_PROBE", "GIB", "MIB",
           "SGLANG_RESERVE_BASE_MIB", "SGLANG_ACT_MIB_PER_TOKEN", "SGLANG_ACT_MIN_TOKENS", "SGLANG_GRAPH_MIB_PER_BATCH",
           "SGLANG_PARALLEL_MIB", "SGLANG_FLOOR_ABOVE_MIB", "SGLANG_FLOOR_MIB", "SGLANG_PREFILL_GRAPH_MIB",
           "SGLANG_PREFILL_GRAPH_MLA_MIB", "SGLANG_REQS_PER_CONTEXT", "SGLANG_REQS_MIN",
           "SGLANG_REQS_MAX", "SGLANG_AITER_RESERVE", "SGLANG_AITER_RESERVE_ABOVE", "SGLANG_AITER_PARTITION",
           "SGLANG_AITER_BYTES_PER_HEAD_DIM", "SGLANG_AITER_BYTES_PER_PARTITION", "LLAMACPP_FIT_MARGIN", "LLAMACPP_FIT_MIN_CTX", "LLAMACPP_FIT_ALIGN", "OLLAMA_NUM_PARALLEL")


def export() -> dict:
    """The facts as JSON-ready data: what vram.mjs needs besides its own arithmetic."""
    g = globals()
    return {
        "engines": list(ENGINES),
        "engine_names": dict(ENGINE_NAMES),
        "vendors": list(VENDORS),
        "kv_types": {k: list(v) for k, v in KV_TYPES.items()},
        "kv_by_engine": {k: list(v) for k, v in KV_BY_ENGINE.items()},
        "ollama_kv_bpe": dict(OLLAMA_KV_BPE),
        "quants": {k: {**q, "engines": list(q["engines"])} for k, q in QUANTS.items()},
        "native_to_vllm": dict(NATIVE_TO_VLLM),
        "default_gguf_quant": DEFAULT_GGUF_QUANT,
        "vllm_auto_kv_bf16": list(VLLM_AUTO_KV_BF16),
        "arch_bounds": {k: list(v) for k, v in ARCH_BOUNDS.items()},
        "input_bounds": {k: list(v) for k, v in INPUT_BOUNDS.items()},
        "error_ids": dict(ERROR_IDS),
        "fp8_kv_flag": dict(FP8_KV_FLAG),
        "safetensors_engines": list(SAFETENSORS_ENGINES),
        "sglang_tiers": [list(t) for t in SGLANG_TIERS],
        "ollama_ctx_tiers": [list(t) for t in OLLAMA_CTX_TIERS],
        "releases": {k: dict(v) for k, v in RELEASES.items()},
        "sglang_prefill_graph_steps": [list(t) for t in SGLANG_PREFILL_GRAPH_STEPS],
        "sglang_mxfp4_align": {k: list(v) for k, v in SGLANG_MXFP4_ALIGN.items()},
        "numbers": {name: g[name] for name in NUMBERS},
    }


if __name__ == "__main__":  # python -m errorkb.calculator.facts > tests/calculator_facts.json
    import json

    print(json.dumps(export(), indent=1, sort_keys=True))
