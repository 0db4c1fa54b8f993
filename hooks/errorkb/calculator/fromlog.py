"""Calculator, log reader: what a pasted vLLM, llama.cpp, Ollama or SGLang start-up or crash log says about memory.

Input: the text of a log. Output: a plain dict (``read_log``) with the engine, its
release, the model (name and the architecture lines llama.cpp prints), the GPU
and its memory, the weights loaded, the KV memory available or allocated, the
context, concurrency and utilisation asked, and the failure line with its kind.
Sizes are in GiB. The patterns are data (``PATTERNS``): the build exports them in
calculator.json, and site_src/javascripts/fromlog.mjs applies the same patterns
with the same rules; both run over tests/fromlog_cases.json.
"""

from __future__ import annotations

import re

from errorkb.calculator import proposal

# Which engine wrote the log, tried in this order (an Ollama log embeds llama.cpp lines,
# so Ollama comes before llama.cpp; SGLang and vLLM print lines no other engine does).
DETECT = [
    ("sglang", r"KV Cache is allocated|max_total_num_tokens=|mem_fraction_static|sglang\.launch_server|Load weight end\."),
    ("ollama", r"msg=\"starting llama server\"|msg=\"inference compute\"|memory\.required\.|OLLAMA_[A-Z_]+|ollama\[\d+\]|source=(?:server|sched|routes|llama_server)\.go|"
               r"[/\\]\.ollama[/\\]models[/\\]blobs|ollama(?:\.exe)? runner"),
    ("vllm", r"Model loading took|Loading model weights took|Available KV cache memory|GPU KV cache size|# GPU blocks|"
             r"vllm serve|gpu_memory_utilization|gpu-memory-utilization|EngineCore|\(Worker_TP\d+ pid=|Estimated CUDA graph memory|vLLM|"
             r"Free memory on device|desired GPU memory utilization|"
             "\u2580\u2584\u2580 \u2588  version"),  # the logo of 0.15 and later
    ("llamacpp", r"llama_kv_cache|llama_context|llama_new_context_with_model|load_tensors|llm_load_tensors|"
                 r"print_info|llama_model_loader|ggml_|common_memory_breakdown_print|(?:common|llama)_params_fit(?:_impl)?|common_fit_params|"
                 r"fitting params to device memory"),
]

SIZE = r"(-?[\d.]+) ?(GiB|GB|MiB|MB|B)\b"
GPU = r"(?:CUDA|ROCm|Vulkan|SYCL)\d+"  # a GPU as llama.cpp names its backend devices
_ANY_DEVICE = GPU + r"|Metal|MTL\d+"  # the same, or Apple's
DEVICE = "(" + _ANY_DEVICE + ")"  # captured
# llama.cpp's memory table (builds of 2026, also inside Ollama), one row a device, in MiB:
# "| - CUDA0 (RTX 3090) | 24124 = 23860 + (15946 = 15364 + 411 + 170) + -15681 |" is total = free + (self = model +
# context + compute) + unaccounted. _row(cell) captures that cell; with_device=True captures the device first.
_CELLS = ("total", "free", "self", "model", "context", "compute")


def _row(cell: str, with_device: bool = True) -> str:
    n = {c: (r"(\d+)" if c == cell else r"\d+") for c in _CELLS}
    device = DEVICE if with_device else "(?:" + _ANY_DEVICE + ")"
    return (r"common_memory_breakdown_print: \|\s+- " + device + r"\b[^|\n]*\|\s*" + n["total"] + r" = " + n["free"]
            + r" \+ \(\s*" + n["self"] + r" =\s*" + n["model"] + r" \+\s*" + n["context"] + r" \+\s*" + n["compute"] + r"\)")


# field -> how several matches combine (a mode, with ":MiB" when the log prints sizes without a unit) and the
# patterns, tried in order. "count": how many different values group 1 takes. "first", "last", "sum": group 1 is the
# value and a size has its unit in group 2. "device": group 1 names the device, groups 2 and 3 are the size; the
# last size of each device counts (a log with two start-ups counts the second), summed over the devices.
PATTERNS: dict[str, dict[str, list]] = {
    "vllm": {
        # "vLLM API server version" up to 0.14; "vLLM server version X, serving model Y", or a logo with
        # "version X" and "model Y" beside it, from 0.15 (vllm/entrypoints/utils.py, later common/startup.py)
        "release": ["first", r"vLLM (?:API )?server version ([0-9][\w.+-]*)", r"LLM engine \(v([0-9][\w.+-]*)\)",
                    r"\bversion ([0-9]+\.[0-9]+\.[0-9][\w.+-]*)"],
        "model": ["first", r"vllm serve ([^\s\\'\"]+)", r"serving model ([^\s,]+)", "\u2588  model   ([^\\s\x1b]+)",
                  r"'model': '([^']+)'", r"\bmodel='([^']+)'",
                  r"Starting to load model ([^\s]+?)\.\.\."],
        "weights_gib": ["last", r"(?:Model loading took|Loading model weights took) " + SIZE],
        "kv_gib": ["last", r"Available KV cache memory: " + SIZE, r"kv_cache_size=" + SIZE,
                   r"than the available KV cache memory \(([\d.]+) ?(GiB)\)"],
        "kv_tokens": ["last", r"GPU KV cache size: ([\d,]+) tokens",
                      r"maximum number of tokens that can be stored in KV cache \((\d+)\)"],
        "gpu_blocks": ["last", r"#? ?GPU blocks: (\d+)"],
        "cuda_graph_gib": ["last", r"Estimated CUDA graph memory: " + SIZE],
        "concurrency": ["last", r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x"],
        # the start-up error names the device since 0.14 ("Free memory on device cuda:0 (X/Y GiB)"); the info line does not
        "gpu_total_gib": ["first", r"total_gpu_memory=" + SIZE, r"Free memory on device (?:\S+ )?\([\d.]+/([\d.]+) ?(GiB)\)"],
        "gpu_free_gib": ["first", r"Free memory on device (?:\S+ )?\(([\d.]+)/[\d.]+ ?(GiB)\)"],
        "util": ["first", r"--gpu-memory-utilization[= ]([\d.]+)", r"'gpu_memory_utilization': ([\d.]+)",
                 r"gpu_memory_utilization=([\d.]+)", r"desired GPU memory utilization \(([\d.]+)",
                 r"budget after excluding external process's weights \(([\d.]+)"],
        "context": ["first", r"--max-model-len[= ](\d+)", r"'max_model_len': (\d+)", r"max seq len \((\d+)\)",
                    r"max_seq_len=(\d+)", r"Maximum concurrency for ([\d,]+) tokens per request", r"Using max model len (\d+)"],
        "tp": ["first", r"--tensor-parallel-size[= ](\d+)", r"'tensor_parallel_size': (\d+)", r"tensor_parallel_size=(\d+)",
               r"\s-tp[= ](\d+)"],
        "kv_dtype": ["first", r"--kv-cache-dtype[= ](\w+)", r"'kv_cache_dtype': '(\w+)'", r"kv_cache_dtype=(\w+)"],
        "seqs": ["first", r"--max-num-seqs[= ](\d+)", r"'max_num_seqs': (\d+)"],
        "batched": ["first", r"--max-num-batched-tokens[= ](\d+)", r"'max_num_batched_tokens': (\d+)",
                    r"max_num_batched_tokens=(\d+)"],
        "needed_kv_gib": ["last", r"\(([\d.]+) ?(GiB) KV cache is needed"],
        "estimated_max_len": ["last", r"estimated maximum model length is (\d+)"],
        "failure": ["first", r"((?:ValueError|RuntimeError): [^\n]*(?:KV cache|max seq len|Free memory|cache blocks)[^\n]*)",
                    r"(The model's max seq len \(\d+\) is larger than[^\n]*)",
                    r"(No available memory for the cache blocks[^\n]*)", r"((?:torch\.)?(?:cuda\.)?OutOfMemoryError[^\n]*)",
                    r"(CUDA out of memory[^\n]*)"],
    },
    "llamacpp": {
        "release": ["first", r"\bbuild(?: info)?[:=]? ?(\d+ \(\w+\))", r"\bversion: (\d+ \(\w+\))"],
        "model": ["first", r"general\.name\s+(?:str\s+)?=\s+([^\n]+?)\s*$", r"from ([^\s]+\.gguf)"],
        "arch": ["first", r"(?:print_info|llm_load_print_meta): arch\s+= (\w+)", r"general\.architecture\s+str\s+=\s+(\w+)"],
        "n_layer": ["first", r"(?:print_info|llm_load_print_meta): n_layer\s+= (\d+)"],
        "n_head_kv": ["first", r"(?:print_info|llm_load_print_meta): n_head_kv\s+= (\d+)\s*$"],
        "n_embd_head_k": ["first", r"(?:print_info|llm_load_print_meta): n_embd_head_k\s+= (\d+)"],
        "n_swa": ["first", r"(?:print_info|llm_load_print_meta): n_swa\s+= (\d+)"],
        "n_ctx_train": ["first", r"(?:print_info|llm_load_print_meta): n_ctx_train\s+= (\d+)"],
        "kv_lora_rank": ["first", r"(?:print_info|llm_load_print_meta): n_lora_kv\s+= (\d+)"],
        "gpu_name": ["first", r"Device \d+: (?:NVIDIA )?([^,\n]+?), compute capability",
                     r"Device \d+: (?:AMD )?([^,\n]+?), gfx\w+", r"using device \w+ \((?:NVIDIA )?([^)]+)\)",
                     "- " + GPU + r"\s+: (?:NVIDIA |AMD )?([^(\n]+?) \(\d+ MiB, \d+ MiB free\)",
                     r"common_memory_breakdown_print: \|\s+- " + GPU + r" \(([^)|]+)\)"],
        "gpu_total_gib": ["first:MiB", r"Device \d+: [^\n]*\bVRAM: " + SIZE,
                          "- " + GPU + r"\s+: [^(\n]+\((\d+) (MiB), \d+ MiB free\)", _row("total", False)],
        "gpu_free_gib": ["first:MiB", r"using device \w+ \([^)]*\)(?: \([^)]*\))? - (\d+) (MiB) free",
                         "- " + GPU + r"\s+: [^(\n]+\(\d+ MiB, (\d+) (MiB) free\)", _row("free", False)],
        "gpu_layers": ["last", r"offloaded (\d+)/\d+ layers to GPU"],
        "model_layers": ["last", r"offloaded \d+/(\d+) layers to GPU"],
        "weights_gib": ["device:MiB", DEVICE + r" (?:model )?buffer size =\s+" + SIZE, _row("model")],
        "kv_gib": ["device:MiB", DEVICE + r" KV buffer size =\s+" + SIZE, _row("context")],
        "kv_total_gib": ["last", r"KV self size\s+=\s+" + SIZE],
        "kv_dtype": ["first", r"K \((\w+)\):"],
        "compute_gib": ["device:MiB", DEVICE + r" compute buffer size =\s+" + SIZE, _row("compute")],
        "devices": ["count", _row("total")],
        # llama.cpp's --fit (on by default since 2026): its own projection at the settings it was started with
        "fit_projected_gib": ["last", r"params_fit_impl: projected to use (\d+) (MiB) of device memory"],
        "fit_free_gib": ["last", r"params_fit_impl: projected to use \d+ MiB of device memory vs\. (\d+) (MiB) of free device memory"],
        "fit_margin_gib": ["last", r"params_fit_impl: will leave -?\d+ >= (\d+) (MiB) of free device memory"],
        # with several GPUs it also prints one line a device; its totals then hide a device that is over
        "fit_devices": ["count", r"params_fit_impl:\s+- (" + GPU + r") \([^)\n]*\):\s+\d+ total"],
        "context": ["first", r"\bn_ctx\s+= (\d+)", r"--ctx-size[= ](\d+)", r"\s-c (\d+)", r"\bn_ctx_seq \((\d+)\)",
                    r"\bn_ctx_slot = (\d+)"],
        "seqs": ["first", r"\bn_seq_max\s+= (\d+)", r"--parallel[= ](\d+)", r"\s-np (\d+)"],
        "failed_alloc_gib": ["last", r"allocating " + SIZE + r" on device", r"failed to allocate \w+ buffer of size (\d+)()"],
        "failure": ["first", r"(\w+: allocating [\d.]+ MiB on device \d+: cudaMalloc failed: out of memory)",
                    r"(cudaMalloc failed: out of memory)", r"(failed to allocate \w+ buffer of size \d+)",
                    r"(failed to create context with model[^\n]*)", r"(error loading model[^\n]*)", r"(out of memory[^\n]*)"],
    },
    "ollama": {
        "release": ["first", r"\(version ([0-9][\w.+-]*)\)", r"\bversion=([0-9][\w.+-]*)"],
        "library": ["first", r"msg=\"?offload(?: to \w+)?\"? library=(\w+)", r"msg=\"offload to (\w+)\""],
        # 0.12.4 and later: name=CUDA0 description="NVIDIA GeForce RTX 4090" libdirs=...
        "gpu_name": ["first", r"description=\"(?:NVIDIA )?([^\"]+)\" libdirs=", r"name=\"(?:NVIDIA )?([^\"]+)\" (?:libdirs=\S+ )?(?:driver=\S+ )?(?:pci_id=\S+ )?(?:type=\S+ )?total="],
        "gpu_total_gib": ["first", r"\btotal=\"" + SIZE + "\" available="],
        "gpu_free_gib": ["first", r"memory\.available=\"\[" + SIZE, r"\" available=\"" + SIZE + "\"",
                         r"msg=\"gpu memory\"[^\n]* available=\"" + SIZE + "\""],
        "gpu_free_list": ["first", r"memory\.available=\"\[([^\]]+)\]"],
        "kv_gib": ["device", r"memory\.required\.(kv)=\"" + SIZE + "\"", r"msg=\"kv cache\" device=(\w+) size=\"" + SIZE + "\""],
        "weights_gib": ["device", r"memory\.weights\.(total)=\"" + SIZE + "\"", r"msg=\"model weights\" device=(\w+) size=\"" + SIZE + "\""],
        "graph_gib": ["device", r"memory\.graph\.(full)=\"" + SIZE + "\"", r"msg=\"compute graph\" device=(\w+) size=\"" + SIZE + "\""],
        "required_gib": ["first", r"memory\.required\.full=\"" + SIZE + "\"", r"msg=\"total memory\" size=\"" + SIZE + "\""],
        # 0.30 and later start llama-server: msg="starting llama-server" cmd="... -c NUM_CTX_X_PARALLEL -np PARALLEL ..."
        "ctx_size": ["last", r"--ctx-size[= ](\d+)", r"\bKvSize:(\d+)", r"starting llama-server\"? cmd=\"[^\"\n]* -c (\d+)"],
        # OLLAMA_CONTEXT_LENGTH:0 is unset: 0.30+ then picks num_ctx from the GPU memory ("vram-based default context")
        "default_ctx": ["last", r"default_num_ctx=(\d+)"],
        "context": ["first", r"OLLAMA_CONTEXT_LENGTH:([1-9]\d*)", r"\bn_ctx_per_seq\s+= (\d+)", r"\bn_ctx_seq\s+= (\d+)",
                    r"\bn_ctx_slot = (\d+)"],
        "seqs": ["last", r"--parallel[= ](\d+)", r"starting llama-server\"? cmd=\"[^\"\n]* -np (\d+)",
                 r"OLLAMA_NUM_PARALLEL:([1-9]\d*)", r"\bn_seq_max\s+= (\d+)", r"\bn_slots = (\d+)",
                 r"load request=\"\{[^\n]*\bParallel:(\d+)"],
        "gpu_layers": ["last", r"layers\.offload=(\d+)", r"--n-gpu-layers[= ](\d+)"],
        "model_layers": ["last", r"layers\.model=(\d+)"],
        "kv_dtype": ["first", r"OLLAMA_KV_CACHE_TYPE:(\w+)", r"K \((\w+)\):"],
        "failure": ["first", r"(model requires more system memory[^\"\n]*)", r"(cudaMalloc failed: out of memory)",
                    r"error=\"([^\"]*(?:memory|alloc)[^\"]*)\""],
    },
    "sglang": {
        "release": ["first", r"sglang(?:==| version:? )([0-9][\w.+-]*)"],
        "model": ["first", r"--model(?:-path)?[= ]([^\s\\]+)", r"model_path='([^']+)'", r"\btype=(\w+ForCausalLM)"],
        "weights_gib": ["first", r"Load weight end\.[^\n]*mem usage=" + SIZE],
        "free_after_weights_gib": ["first", r"Load weight end\.[^\n]*avail mem=" + SIZE],
        "kv_tokens": ["last", r"KV Cache is allocated\.[^\n]*#tokens: (\d+)", r"max_total_num_tokens=(\d+)"],
        "k_gib": ["last", r"K size: " + SIZE],
        "v_gib": ["last", r"\bV size: " + SIZE],
        "kv_size_gib": ["last", r"KV size: " + SIZE],
        "mem_fraction_static": ["first", r"--mem-fraction-static[= ]([\d.]+)", r"mem_fraction_static[=:]? ?([\d.]+)"],
        "context": ["first", r"--context-length[= ](\d+)", r"\bcontext_len=(\d+)", r"context_length=(\d+)"],
        "tp": ["first", r"--tp(?:-size)?[= ](\d+)", r"\btp_size=(\d+)"],
        "seqs": ["first", r"--max-running-requests[= ](\d+)", r"max_running_requests=(\d+)"],
        "available_gpu_gib": ["last", r"available_gpu_mem=" + SIZE],
        "failure": ["first", r"(Not enough memory\. Please try to increase --mem-fraction-static[^\n]*)",
                    r"(Input length \(\d+ tokens\) exceeds the maximum allowed length \(\d+ tokens\))",
                    r"(RuntimeError: [^\n]*(?:memory|Not enough)[^\n]*)", r"(CUDA out of memory[^\n]*)"],
    },
}
# An Ollama log carries llama.cpp's own lines: what Ollama does not print itself is read from those.
INHERIT = {"ollama": "llamacpp"}

# What a failure line means, and the KB entry that explains it (the calculator's links.py ids and two more).
FAILURES = [
    ("vllm", r"Free memory on device", "vllm_free_memory", "vllm-free-memory-less-than-utilization"),
    ("vllm", r"max seq len|KV cache is needed|estimated maximum model length", "vllm_max_seq_len",
     "vllm-max-seq-len-exceeds-kv-cache"),
    ("vllm", r"No available memory for the cache blocks|cache blocks", "vllm_no_blocks", "vllm-no-available-kv-cache-blocks"),
    ("sglang", r"Not enough memory|exceeds the maximum allowed length|out of memory", "sglang_memory",
     "sglang-kv-cache-out-of-memory"),
    ("ollama", r"requires more system memory", "ollama_memory", "ollama-requires-more-system-memory"),
    ("*", r"cudaMalloc failed|failed to allocate", "gguf_malloc", "llamacpp-cuda-malloc-failed"),
    ("*", r"out of memory|OutOfMemoryError", "oom", "cuda-oom-loading-model"),
]
TO_GIB = {"GiB": 1.0, "GB": 1.0, "MiB": 1 / 1024, "MB": 1 / 1024, "B": 1 / 1024**3, "": 1 / 1024**3}
NUMBER_FIELDS = ("kv_tokens", "gpu_blocks", "concurrency", "util", "context", "tp", "seqs", "batched", "estimated_max_len", "n_layer",
                 "n_head_kv", "n_embd_head_k", "n_swa", "n_ctx_train", "kv_lora_rank", "gpu_layers", "model_layers",
                 "mem_fraction_static", "ctx_size", "devices", "fit_devices", "default_ctx")


# Words in a checkpoint's name that say how it is packaged, not which model it is.
PACKAGING = (r"^(meta|instruct|chat|it|hf|gguf|fp8|bf16|f16|awq|gptq|mxfp4|int4|int8|dynamic|quantized.*|"
             r"w\d+a\d+|q\d.*|iq\d.*|ud)$")
GPU_NOISE = ("nvidia", "geforce", "amd", "radeon", "tesla")


def model_key(name: str) -> str:
    """'neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8' -> 'llama-3.1-70b' (the words that name the model)."""
    base = name.strip().rstrip("/").split("/")[-1].lower()
    base = base[:-5] if base.endswith(".gguf") else base
    return "-".join(w for w in re.split(r"[-_ ]+", base) if w and not re.match(PACKAGING, w))


def gpu_key(name: str) -> str:
    return " ".join(w for w in re.sub(r"[^a-z0-9 ]", " ", name.lower()).split() if w not in GPU_NOISE)


def detect(text: str) -> str | None:
    for engine, pattern in DETECT:
        if re.search(pattern, text):
            return engine
    return None


def _value(match: re.Match, field: str, first: int = 1, default_unit: str = "GiB"):
    raw = match.group(first).strip()
    if field.endswith("_gib"):
        unit = match.group(first + 1) if match.re.groups > first else default_unit
        return float(raw) * TO_GIB[unit or ""]
    if field in NUMBER_FIELDS:
        return float(raw.replace(",", ""))
    return raw


def _apply(table: dict, text: str, out: dict) -> None:
    for field, (spec, *patterns) in table.items():
        if out.get(field) is not None:
            continue
        mode, _, unit = spec.partition(":")  # "device:MiB": sizes printed without a unit are MiB
        unit = unit or "GiB"
        values: list = []
        for pattern in patterns:
            found = list(re.finditer(pattern, text, re.M))
            if mode == "device":
                values = list({m.group(1): _value(m, field, 2, unit) for m in found}.values())
            elif mode == "count":  # how many different values group 1 takes (the devices of a table)
                values = [len({m.group(1) for m in found})] if found else []
            else:
                values = [_value(m, field, 1, unit) for m in found]
            if values:
                break
        if values:
            out[field] = sum(values) if mode in ("sum", "device") else values[0] if mode == "first" else values[-1]


def _tidy(r: dict) -> dict:
    """The engine-specific meaning of what was read, so every engine fills the same fields."""
    engine = r["engine"]
    if engine == "vllm" and r.get("kv_tokens") is None and r.get("gpu_blocks"):
        r["kv_tokens"] = r["gpu_blocks"] * 16  # V0 printed blocks of 16 tokens
    if engine == "vllm" and r.get("kv_tokens") is None and r.get("concurrency") and r.get("context"):
        r["kv_tokens"] = round(r["context"] * r["concurrency"])  # "Maximum concurrency for C tokens per request: Nx"
    if engine == "llamacpp" and r.get("kv_gib") is None:
        r["kv_gib"] = r.get("kv_total_gib")
    if engine == "ollama" and r.get("ctx_size") and r.get("context") is None:
        r["context"] = r["ctx_size"] // (r.get("seqs") or 1)  # the runner's --ctx-size is num_ctx x num_parallel
    default_ctx = r.pop("default_ctx", None)
    if engine == "ollama" and r.get("context") is None and default_ctx:
        r["context"] = default_ctx  # nothing asked for more: the default num_ctx Ollama printed for this GPU
    if engine == "ollama" and r.get("gpu_free_list"):  # "[22.0 GiB 22.0 GiB]": one size a GPU the model is spread over
        sizes = [float(v) * TO_GIB[u] for v, u in re.findall(SIZE, r.pop("gpu_free_list"))]
        if sizes:
            r["tp"], r["gpu_free_gib"] = len(sizes), sum(sizes) / len(sizes)
    if engine == "sglang":
        if r.get("k_gib") is not None:
            r["kv_gib"] = r["k_gib"] + (r.get("v_gib") or 0)
        elif r.get("kv_size_gib") is not None:
            r["kv_gib"] = r["kv_size_gib"]
        if r.get("weights_gib") is not None and r.get("free_after_weights_gib") is not None:
            r["gpu_total_gib"] = r["weights_gib"] + r["free_after_weights_gib"]  # what the GPU had before loading
    if engine in ("llamacpp", "ollama") and r.get("tp") is None and (r.get("devices") or 0) > 1:
        r["tp"] = r["devices"]  # llama.cpp's memory table has a row for each GPU the model is spread over
    for key in ("context", "seqs", "tp", "kv_tokens", "gpu_layers", "model_layers", "batched"):
        if r.get(key) is not None:
            r[key] = int(r[key])
    text = r.get("failure") or ""
    r["failure_kind"] = r["error_id"] = None
    for engine_of, pattern, kind, entry in FAILURES:
        if (engine_of in ("*", engine)) and text and re.search(pattern, text):
            r["failure_kind"], r["error_id"] = kind, entry
            break
    if r["failure_kind"] is None and engine == "vllm" and r.get("kv_gib") is not None and r["kv_gib"] <= 0:
        r["failure_kind"], r["error_id"] = "vllm_no_blocks", "vllm-no-available-kv-cache-blocks"
    if r["failure_kind"] is None and engine == "ollama" and r.get("library") == "cpu":
        # Ollama planned for system RAM: it found no GPU it can use (its memory.available is then RAM)
        r["failure_kind"], r["error_id"] = "ollama_cpu_only", "ollama-gpu-not-used"
    if r["failure_kind"] is None and engine == "llamacpp" and r.get("gpu_layers") == 0 and (r.get("model_layers") or 0) > 0:
        # no layer on a GPU (-ngl 0, a build without GPU support, or --fit found no room): the model is in system RAM
        r["failure_kind"] = "llamacpp_cpu_only"
    return r


def read_log(text: str) -> dict:
    """Every memory fact the log states; fields it does not state are absent (not guessed)."""
    engine = detect(text)
    out: dict = {"engine": engine}
    if engine is None:
        return {"engine": None, "failure_kind": None, "error_id": None}
    _apply(PATTERNS[engine], text, out)
    if engine in INHERIT:
        # llama.cpp's n_ctx and n_seq_max inside Ollama are totals over the parallel slots: Ollama's own lines decide
        _apply({k: v for k, v in PATTERNS[INHERIT[engine]].items() if k not in ("context", "seqs")}, text, out)
    return _tidy(out)


def export() -> dict:
    """The patterns and rules as JSON-ready data, for the browser's fromlog.mjs (through calculator.json);
    the proposal's own limits travel with them."""
    return {"detect": [list(d) for d in DETECT], "patterns": PATTERNS, "inherit": dict(INHERIT),
            "failures": [list(f) for f in FAILURES], "to_gib": dict(TO_GIB), "size": SIZE, "packaging": PACKAGING,
            "gpu_noise": list(GPU_NOISE), "number_fields": list(NUMBER_FIELDS),
            "proposal": {"gpu_counts": list(proposal.GPU_COUNTS), "max_util": proposal.MAX_UTIL,
                         "cache_steps": {k: list(v) for k, v in proposal.CACHE_STEPS.items()},
                         "context_ceiling": proposal.CONTEXT_CEILING}}
