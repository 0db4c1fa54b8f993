"""Accuracy checks, one function per engine: what the calculator predicts for one real start-up log.

Input: a log file of tests/data/real-memory-logs (its settings, the values the engine printed, the log text)
and the model's architecture. Output: ``Row``s, one per quantity; a quantity the log does not allow to predict
is a row with ``ok=None`` and the reason, never a missing row. bench/accuracy.py gathers and prints them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "hooks") not in sys.path:
    sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.calculator import vram  # noqa: E402

MIB, GIB = vram.MIB, vram.GIB
POOL_TOLERANCE = 0.10     # vLLM and SGLang KV pool (issue 13's bar)
WEIGHTS_TOLERANCE = 0.03  # weights against the logged load size
PARTIAL_ARCH = "only the cache layout of this model is given (it is not a model entry), so {} cannot be predicted"


@dataclass
class Row:
    case: str
    engine: str
    quantity: str
    reported: str
    predicted: str
    error: float | None  # (predicted - reported) / reported
    ok: bool | None  # None: not checked, and note says why
    note: str = ""
    split: str = "test"  # train: a constant was fitted on this log (field `split` of the log file)
    release: str = "?"  # engine_version of the log file
    known: str = ""  # a miss the log file explains (known_misses); the test expects it to stay a miss


def rel(predicted: float, reported: float) -> float | None:
    return None if not reported else (predicted - reported) / abs(reported)


def unchecked(name: str, engine: str, quantity: str, reported: str, why: str) -> Row:
    return Row(name, engine, quantity, reported, "n/a", None, None, why)


def legacy_llamacpp(text: str) -> bool:
    return "llama_kv_cache_init" in text or "llama_new_context_with_model" in text or "llama_kv_cache_unified" in text


def ollama_text(n_bytes: float) -> str:
    """How Ollama prints a size (format.HumanBytes2): one decimal, MiB under 1 GiB."""
    return f"{n_bytes / GIB:.1f} GiB" if n_bytes >= GIB else f"{n_bytes / MIB:.1f} MiB"


def llamacpp_cells(arch: dict, st: dict, text: str, engine: str = "llamacpp") -> int:
    """Bytes of the cache llama.cpp allocates for the log's settings: builds before the 2025 KV-cache rewrite keep
    one unified cache of n_ctx cells (padded to 32 without flash attention), current builds one stream per sequence.
    An MLA model under Ollama is counted as the calculator counts it by default: full heads (the library's GGUFs
    have no MLA keys)."""
    total, seqs, kv = st["context"], st.get("parallel") or 1, st.get("kv_dtype") or "f16"
    if engine == "ollama" and arch.get("mla"):
        return vram.llamacpp_kv(arch, total // seqs, seqs, kv, mla_full_heads=True)
    if legacy_llamacpp(text):
        flash = any(s in text for s in ("flash_attn    = 1", "flash_attn = 1", "--flash-attn"))
        return vram.llamacpp_kv(arch, total, 1, kv, vram.LLAMACPP_PAD if flash else vram.LLAMACPP_PAD_LEGACY)
    return vram.llamacpp_kv(arch, total // seqs, seqs, kv)


def check_gguf(name: str, log: dict, arch: dict | None) -> list[Row]:
    """llama.cpp's cache (and the share on the GPU in a partial offload); Ollama's estimate, or llama.cpp's cache
    when an Ollama log prints the runner's allocation (kv_source: llamacpp)."""
    engine, st, rep = log["engine"], log["settings"], log["reported"]
    text = log.get("log", "")
    if rep.get("kv_cache_mib") is None:
        return [unchecked(name, engine, "KV cache", "?", "the log prints no KV cache size")]
    mib = rep["kv_cache_mib"]
    missing = "architecture" if arch is None else "context" if not st.get("context") else None
    if missing:
        return [unchecked(name, engine, "KV cache", f"{mib:.2f} MiB", f"the log does not give the {missing}")]
    if engine == "llamacpp" or rep.get("kv_source") == "llamacpp":
        predicted = llamacpp_cells(arch, st, text, engine)
        quantity = "KV cache" if engine == "llamacpp" else "KV cache (llama.cpp inside Ollama)"
        rows = [Row(name, engine, quantity, f"{mib:.2f} MiB", f"{predicted / MIB:.2f} MiB",
                    rel(predicted / MIB, mib), abs(predicted / MIB - mib) < 1.0, "must match to the MiB")]
    else:
        seqs = st.get("parallel") or 1
        predicted = vram.ollama_kv(arch, st["context"] // seqs, seqs, st.get("kv_dtype") or "f16")
        rows = [Row(name, engine, "KV cache (memory.required.kv)", ollama_text(mib * MIB), ollama_text(predicted),
                    rel(predicted / MIB, mib), ollama_text(predicted) == ollama_text(mib * MIB),
                    "must match at the precision Ollama prints")]
    if rep.get("kv_gpu_mib") is not None:  # partial offload: each offloaded layer keeps its cache on the GPU
        layers = st.get("gpu_layers")
        if layers is None:
            rows.append(unchecked(name, engine, "KV on the GPU", f"{rep['kv_gpu_mib']:.2f} MiB",
                                  "the log does not say how many layers were offloaded"))
        else:
            on_gpu = predicted * layers / arch["layers"] / MIB
            rows.append(Row(name, engine, f"KV on the GPU ({layers} of {arch['layers']} layers)",
                            f"{rep['kv_gpu_mib']:.2f} MiB", f"{on_gpu:.2f} MiB", rel(on_gpu, rep["kv_gpu_mib"]),
                            abs(on_gpu - rep["kv_gpu_mib"]) < 1.0, "the offloaded layers' share, to the MiB"))
    if log.get("outcome"):
        rows.append(unchecked(name, engine, "verdict", log["outcome"],
                              "the log does not give the GPU memory and weight file the verdict needs"))
    return rows


def vllm_quant(st: dict, arch: dict) -> str | None:
    """The weight format of the log: named in the settings, else the checkpoint as published."""
    given = (st.get("quant") or "").lower()
    if given in vram.QUANTS and "vllm" in vram.QUANTS[given]["engines"]:
        return given
    if given.startswith("fp8"):
        return "fp8"
    native = {"bf16": "bf16", "f16": "f16", "fp8": "fp8", "mxfp4": "mxfp4"}.get(arch["native_dtype"])
    return native if not given or given.startswith(arch["native_dtype"]) else None


def vllm_v0(text: str) -> bool:
    """The V0 engine: its executor prints CPU blocks, and before 0.8 its runner said "Loading model weights took"."""
    return "# CPU blocks" in text or "Loading model weights took" in text


def verdict_on_printed_pool(name: str, log: dict, arch: dict, page: int, group_size: int, why: str) -> Row:
    """When the pool cannot be predicted, the start rule can still be checked on the pool the engine printed:
    vLLM starts when one request of max_model_len fits (the calculator's _plan_vllm rule)."""
    st, rep = log["settings"], log["reported"]
    pool = (rep["available_kv_gib"] * GIB if rep.get("available_kv_gib") is not None
            else (rep.get("gpu_blocks") or 0) * page * group_size if rep.get("gpu_blocks") is not None else None)
    if pool is None or (pool > 0 and not st.get("context")):
        return unchecked(name, "vllm", "verdict", log["outcome"], why)
    one = group_size * page * vram.vllm_blocks_per_request(arch, st["context"], vram.VLLM_BATCHED_SMALL) if pool > 0 else 0
    said = "start" if 0 < pool and one <= pool else "fail"
    return Row(name, "vllm", "verdict on the printed pool", log["outcome"], said, None, said == log["outcome"],
               f"the start rule applied to the pool the log prints; the pool itself is not predicted: {why}")


def check_vllm(name: str, log: dict, arch: dict | None, gpus: dict, partial: bool) -> list[Row]:
    st, rep, text = log["settings"], log["reported"], log.get("log", "")
    if arch is None:
        return [unchecked(name, "vllm", "KV pool", "?", "the log does not name the model")]
    tp = st.get("tensor_parallel") or 1
    kv = "fp8" if (st.get("kv_dtype") or "").startswith("fp8") else "bf16" if arch["native_dtype"] != "f16" else "f16"
    page = vram.vllm_page(arch, kv, tp)
    group_size, g_full, g_slide = vram.vllm_groups(arch)
    rows = []
    avail = rep.get("available_kv_gib")
    if avail is not None and avail > 0 and (rep.get("kv_cache_tokens") or rep.get("gpu_blocks")):
        blocks = int(avail * GIB) // page // group_size
        if rep.get("kv_cache_tokens"):
            predicted, reported, unit = blocks // (g_full + g_slide) * vram.VLLM_BLOCK, rep["kv_cache_tokens"], "tokens"
        else:
            predicted, reported, unit = blocks, rep["gpu_blocks"], "blocks"
        error = rel(predicted, reported)
        if tp > 1:  # each rank prints its own pool; the engine sizes every rank by the smallest one
            ok, note = -0.005 <= error <= 0.02, "one rank's pool; the smallest rank decides, so up to 2% above"
        else:
            ok, note = abs(error) <= 0.01, "pool printed with 2 decimals, so within 1%"
        rows.append(Row(name, "vllm", f"KV {unit} for the printed pool", f"{reported:,}", f"{predicted:,}", error, ok, note))
    if rep.get("needed_kv_gib") is not None and st.get("context"):  # the refusal names what one request needs
        one = group_size * page * vram.vllm_blocks_per_request(arch, st["context"], vram.VLLM_BATCHED_SMALL) / GIB
        rows.append(Row(name, "vllm", "KV for one request", f"{rep['needed_kv_gib']:.2f} GiB", f"{one:.2f} GiB",
                        rel(one, rep["needed_kv_gib"]), abs(one - rep["needed_kv_gib"]) < 0.005 + 1e-9,
                        "printed with 2 decimals"))
    if partial:
        for what, value in (("weights", rep.get("weights_gib")), ("KV pool", avail)):
            if value is not None:
                rows.append(unchecked(name, "vllm", what, f"{value:.2f} GiB", PARTIAL_ARCH.format("the " + what)))
        if log.get("outcome"):
            rows.append(verdict_on_printed_pool(name, log, arch, page, group_size, PARTIAL_ARCH.format("the pool")))
        return rows
    quant = vllm_quant(st, arch)
    if rep.get("weights_gib") is not None:
        reported = f"{rep['weights_gib']:.2f} GiB"
        if quant is None or st.get("quant_from_weights"):
            why = ("the weight format was read from this very size" if st.get("quant_from_weights")
                   else "the log does not give the weight format")
            rows.append(unchecked(name, "vllm", "weights", reported, why))
        else:
            w = vram.vllm_weights(arch, quant) / tp / GIB
            error = rel(w, rep["weights_gib"])
            rows.append(Row(name, "vllm", "weights", reported, f"{w:.2f} GiB", error,
                            abs(error) <= WEIGHTS_TOLERANCE, "within 3% of 'Model loading took'"))
    total = st["vram_gib"] * GIB if st.get("vram_gib") else gpus[st["gpu"]].memory_mib * MIB if st.get("gpu") in gpus else None
    missing = [what for what, value in (("GPU memory", total), ("gpu_memory_utilization", st.get("gpu_memory_utilization")),
                                        ("weight format", quant)) if value is None]
    if missing:
        why = "the log does not give the " + ", ".join(missing)
        if avail is not None:
            rows.append(unchecked(name, "vllm", "KV pool", f"{avail:.2f} GiB", why))
        if log.get("outcome"):
            rows.append(verdict_on_printed_pool(name, log, arch, page, group_size, why))
        return rows
    context = min(st.get("context") or 2048, arch["native_context"])
    scenario = {"engine": "vllm", "quant": quant, "kv_dtype": kv, "context": context, "seqs": 1, "gpus": tp,
                "vram_bytes": total, "gpu_memory_utilization": st["gpu_memory_utilization"], "gpu_id": st.get("gpu")}
    note = "within 10%"
    if vllm_v0(text):
        # V0 profiles max(max_model_len, 2048) tokens without chunked prefill; above 32K it turns chunked prefill
        # on with 2048 batched tokens (EngineArgs of 0.6-0.7: "Chunked prefill is enabled by default ... > 32K")
        scenario["max_num_batched_tokens"] = max(context, 2048) if context <= 32768 else vram.VLLM_BATCHED_SMALL
        scenario["vllm_v0"] = True
        note += "; V0 engine: profile over max_model_len tokens (2048 above 32K)"
    if st.get("max_num_batched_tokens"):
        scenario["max_num_batched_tokens"] = st["max_num_batched_tokens"]
    out = vram.plan(arch, vram.check_inputs(arch, scenario)[0])
    if avail is not None:
        # kv_pool_bytes is one GPU's pool; a negative pool is read from the totals, which count every GPU
        predicted = (out["kv_pool_bytes"] / GIB if out["kv_pool_bytes"] > 0
                     else (out["available_bytes"] - out["weights_bytes"] - out["overhead_bytes"]) / tp / GIB)
        error = rel(predicted, avail)
        rows.append(Row(name, "vllm", "KV pool", f"{avail:.2f} GiB", f"{predicted:.2f} GiB", error,
                        abs(error) <= POOL_TOLERANCE, note))
    if log.get("outcome"):  # the log shows the engine starting or refusing to
        said = "start" if out["starts"] else "fail"
        rows.append(Row(name, "vllm", "verdict", log["outcome"], said, None, said == log["outcome"],
                        "the engine's own start-up check on the predicted pool"))
    return rows


def check_sglang(name: str, log: dict, arch: dict | None, gpus: dict, partial: bool) -> list[Row]:
    """SGLang: the bytes a cached token takes (K size for the printed #tokens), the token pool and its size from
    --mem-fraction-static (sglang.py through vram.plan), the weights and the verdict."""
    st, rep = log["settings"], log["reported"]
    tokens, printed = rep.get("kv_cache_tokens"), rep.get("k_size_gib")
    if arch is None:
        why = log.get("not_modelled") or "the log does not name the model"
        rows = [unchecked(name, "sglang", "token pool", f"{tokens:,} tokens" if tokens else "?", why)]
        if log.get("outcome") and tokens:  # SGLang starts with any pool; the printed one decides
            said = "start" if tokens > 0 else "fail"
            rows.append(Row(name, "sglang", "verdict on the printed pool", log["outcome"], said, None,
                            said == log["outcome"], f"a pool of at least one token; the pool itself is not predicted: {why}"))
        return rows
    tp = st.get("tensor_parallel") or 1
    kv = st.get("kv_dtype") or "bf16"
    cell = vram.sglang_cell(arch, kv, tp)
    rows = []
    if tokens and printed is not None:
        k_size = tokens * cell / 2 / GIB if not arch.get("mla") else tokens * cell / GIB
        rows.append(Row(name, "sglang", "K size for the printed #tokens", f"{printed:.2f} GiB", f"{k_size:.2f} GiB",
                        rel(k_size, printed), abs(k_size - printed) < 0.005 + 1e-9, "printed with 2 decimals"))
    quant = (st.get("quant") or "").lower() or vram.default_quant("sglang", arch["native_dtype"])
    quant = "fp8" if quant.startswith("fp8") else quant if quant in vram.QUANTS else None
    vendor = "amd" if st.get("vendor") == "amd" or "mi3" in (st.get("gpu") or "") else st.get("vendor") or "nvidia"
    card = gpus.get(st.get("gpu") or "")
    if rep.get("weights_gib") is not None:
        w = vram.sglang_weights(arch, quant, vendor, card.compute_capability if card else None) / tp / GIB if quant else None
        rows.append(Row(name, "sglang", "weights", f"{rep['weights_gib']:.2f} GiB", f"{w:.2f} GiB",
                        rel(w, rep["weights_gib"]), abs(rel(w, rep["weights_gib"])) <= WEIGHTS_TOLERANCE,
                        "within 3% of 'Load weight end ... mem usage'" + (f"; MXFP4 experts padded as on compute capability {card.compute_capability}" if card and quant == "mxfp4" else "")) if w is not None else
                    unchecked(name, "sglang", "weights", f"{rep['weights_gib']:.2f} GiB", "the log does not give the weight format"))
    if tokens and rep.get("aiter_workspace_gib") is not None and st.get("context"):
        running = vram.sglang_max_running(tokens, st["context"])
        ws = vram.sglang_aiter_workspace(arch, running, st["context"], tp) / GIB
        rows.append(Row(name, "sglang", "aiter workspace for the printed #tokens", f"{rep['aiter_workspace_gib']:.2f} GiB",
                        f"{ws:.2f} GiB", rel(ws, rep["aiter_workspace_gib"]), abs(ws - rep["aiter_workspace_gib"]) < 0.005 + 1e-9,
                        f"printed with 2 decimals; {running} running requests"))
    if not tokens:
        if rep.get("pool_note"):
            rows.append(unchecked(name, "sglang", "token pool", "?", rep["pool_note"]))
        return rows
    total = st["vram_gib"] * GIB if st.get("vram_gib") else gpus[st["gpu"]].memory_mib * MIB if st.get("gpu") in gpus else None
    missing = [w for w, v in (("GPU memory", total), ("weight format", quant)) if v is None]
    if partial or missing:
        why = PARTIAL_ARCH.format("the pool") if partial else "the log does not give the " + ", ".join(missing)
        rows.append(unchecked(name, "sglang", "token pool from --mem-fraction-static", f"{tokens:,} tokens", why))
        return rows
    scenario = {"engine": "sglang", "quant": quant, "kv_dtype": kv, "context": min(st.get("context") or 2048, arch["native_context"]),
                "seqs": 1, "gpus": tp, "vram_bytes": total, "vendor": vendor, "mem_fraction_static": st.get("mem_fraction_static"),
                "compute_capability": card.compute_capability if card else None}
    s, errors, _ = vram.check_inputs(arch, scenario)
    if errors:
        rows.append(unchecked(name, "sglang", "token pool from --mem-fraction-static", f"{tokens:,} tokens", "; ".join(errors)))
        return rows
    out = vram.plan(arch, s)
    fraction = "given" if st.get("mem_fraction_static") else f"default {out['mem_fraction_static']}"
    if out.get("mem_fraction_effective") != out["mem_fraction_static"]:
        fraction += f", x 0.85 by aiter = {out['mem_fraction_effective']:.3f}"
    if st.get("pool_rule"):
        fraction += f"; the log is from {st['pool_rule']}"
    rows.append(Row(name, "sglang", "token pool from --mem-fraction-static", f"{tokens:,} tokens",
                    f"{out['kv_pool_tokens']:,} tokens", rel(out["kv_pool_tokens"], tokens),
                    abs(rel(out["kv_pool_tokens"], tokens)) <= POOL_TOLERANCE, f"within 10%; fraction {fraction}"))
    printed_pool = (rep.get("k_size_gib") or 0) + (rep.get("v_size_gib") or 0) if not arch.get("mla") else rep.get("k_size_gib")
    pool_gib = printed_pool or tokens * cell / GIB
    predicted_gib = out["kv_pool_bytes"] / GIB
    rows.append(Row(name, "sglang", "KV pool size (K + V)", f"{pool_gib:.2f} GiB", f"{predicted_gib:.2f} GiB",
                    rel(predicted_gib, pool_gib), abs(rel(predicted_gib, pool_gib)) <= POOL_TOLERANCE,
                    "within 10% of the K and V sizes printed" if printed_pool else "within 10%; #tokens times the bytes a token takes"))
    if log.get("outcome"):
        said = "start" if out["starts"] else "fail"
        rows.append(Row(name, "sglang", "verdict", log["outcome"], said, None, said == log["outcome"],
                        "a pool of at least one token"))
    return rows
