"""Hardware stage: model and GPU entries → calculator data and their pages.

Input: the validated ``ModelEntry`` and ``GpuEntry`` dicts (by id). Output:
``calculator_data`` (the JSON the "Will it run?" page loads, written by api.py
to api/v1/calculator.json) and ``hardware_pages`` ((src_uri, Markdown) pairs for
models/<id>.md, gpus/<id>.md and both indexes). The memory figures come from
``vram`` only, so a page, the CLI and the calculator cannot disagree.
"""

from __future__ import annotations

import posixpath
from urllib.parse import urlencode

from errorkb.build.pages import page_url
from errorkb.build.render import render
from errorkb.calculator import facts, fromlog, vram

FIT_CONTEXTS = (8192, 32768)
GGUF_QUANTS = ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_L", "Q2_K")
VLLM_QUANTS = ("bf16", "fp8", "awq-int4")
CALCULATOR = "will-it-run.md"
# Architecture names whose memory quirks an engine special-cases (Ollama's estimate does).
FAMILIES = (("gemma-3", "gemma3"), ("gemma3", "gemma3"), ("gpt-oss", "gpt-oss"))


def family_of(hf_repo: str) -> str | None:
    name = hf_repo.lower()
    return next((family for needle, family in FAMILIES if needle in name), None)


def arch_of(model) -> dict:
    """The fields of a ModelEntry the math reads, as a plain dict (the same shape the page uses)."""
    data = model.model_dump(include={
        "params_total", "params_active", "layers", "hidden_size", "attention_heads", "kv_heads", "head_dim",
        "vocab_size", "native_context", "native_dtype", "sliding_window", "layer_pattern", "mla",
        "tie_word_embeddings"})
    data["family"] = family_of(model.hf_repo)
    data["experts"] = model.experts.total if model.experts else None
    if model.experts and model.experts.intermediate_size:  # only the engines that pad expert tensors read it
        data["expert_intermediate"] = model.experts.intermediate_size
    return data


def gpu_of(gpu) -> dict:
    return {"title": gpu.title, "vendor": gpu.vendor, "memory_mib": gpu.memory_mib,
            "memory_mib_reported": gpu.memory_mib_reported, "unified_memory": gpu.unified_memory,
            "gpu_share_default": gpu.gpu_share_default, "fp8": gpu.fp8, "bf16": gpu.bf16,
            "compute_capability": gpu.compute_capability}


def scenario(gpu_id: str, gpu: dict, engine: str, context: int, quant: str | None = None, kv_dtype: str = "auto",
             seqs: int = 1, gpus: int = 1, utilization: float = facts.VLLM_DEFAULT_UTIL) -> dict:
    """The calculator's scenario for a GPU entry (``gpu_of``); ``scenario`` in site_src/javascripts/calculator/inputs.mjs is its twin."""
    return {"engine": engine, "quant": quant, "kv_dtype": kv_dtype, "context": context, "seqs": seqs, "gpus": gpus,
            "vram_bytes": gpu["memory_mib"] * facts.MIB, "vendor": gpu["vendor"], "gpu_id": gpu_id,
            "compute_capability": gpu.get("compute_capability"), "unified_share": gpu["gpu_share_default"], "gpu_memory_utilization": utilization}


def calculator_data(models: dict, gpus: dict) -> dict:
    """Everything the page needs besides its own math: models, GPUs, formats and the error pages."""
    return {
        "version": 1,
        "models": {mid: {"title": m.title, "hf_repo": m.hf_repo, "params_active": m.params_active,
                         "experts": m.experts.model_dump() if m.experts else None, "arch": arch_of(m)}
                   for mid, m in sorted(models.items())},
        "gpus": {gid: gpu_of(g) for gid, g in sorted(gpus.items())},
        "quants": {name: {"engines": list(q["engines"]), "bpw": q["bpw"], "embed_bpw": q["embed_bpw"]}
                   for name, q in vram.QUANTS.items()},
        "kv_types": {engine: list(types) for engine, types in vram.KV_BY_ENGINE.items()},
        "errors": {eid: page_url("errors", eid) for eid in
                   sorted(set(facts.ERROR_IDS.values()) | {f[3] for f in fromlog.FAILURES})},
        "facts": facts.export(),
        "log_reader": fromlog.export(),
    }


# ------------------------------------------------------------------ pages

def calc_link(from_uri: str, **params: object) -> str:
    """A relative Markdown link to the calculator, filled in through its query string."""
    target = posixpath.relpath(CALCULATOR, posixpath.dirname(from_uri) or ".")
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{target}?{query}" if query else target


def gib(n: int | float) -> str:
    return f"{n / vram.GIB:.2f} GiB"


def default_quant(engine: str, model) -> str:
    return vram.default_quant(engine, model.native_dtype)


def fit_cells(uri: str, mid: str, model, gid: str, gpu) -> list[dict]:
    """One cell per (engine, context) of the fit tables; each links to the filled-in calculator."""
    cells = []
    for engine in ("llamacpp", "vllm"):
        quant = default_quant(engine, model)
        for ctx in FIT_CONTEXTS:
            if ctx > model.native_context:
                cells.append({"mark": "n/a", "link": None})
                continue
            result = vram.assess(arch_of(model), scenario(gid, gpu_of(gpu), engine, ctx, quant))
            mark = result["verdict"] if result["ok"] else "n/a"
            cells.append({"mark": mark, "link": calc_link(uri, m=mid, e=engine, q=quant, ctx=ctx, g=gid)})
    return cells


def model_page(mid: str, model, gpus: dict, cells: dict) -> str:
    uri = f"models/{mid}.md"
    arch = arch_of(model)
    kv_rows = []
    for engine, types in vram.KV_BY_ENGINE.items():
        for kv in types:
            per_token = vram.kv_cache_per_token(arch, engine, kv)
            kv_rows.append({"engine": vram.ENGINE_NAMES[engine], "kv": kv, "per_token": per_token,
                            "per_1k": per_token * 1024})
    weights = [{"quant": q, "engine": "llama.cpp / Ollama", "bytes": vram.weights_bytes(arch, q)} for q in GGUF_QUANTS]
    weights += [{"quant": q, "engine": "vLLM", "bytes": vram.weights_bytes(arch, q)} for q in VLLM_QUANTS]
    fits = [{"title": g.title, "uri": posixpath.relpath(f"gpus/{gid}.md", "models"),
             "cells": cells[mid, gid]} for gid, g in sorted(gpus.items())]
    return render("model.md.j2", id=mid, model=model, arch=arch, kv_rows=kv_rows, weights=weights, fits=fits,
                  contexts=FIT_CONTEXTS, gib=gib, calc=calc_link(uri, m=mid), default_util=facts.VLLM_DEFAULT_UTIL,
                  sliding=vram.layer_kinds(arch).count("sliding"))


def gpu_page(gid: str, gpu, models: dict, cells: dict) -> str:
    uri = f"gpus/{gid}.md"
    rows = [{"title": m.title, "uri": posixpath.relpath(f"models/{mid}.md", "gpus"),
             "cells": cells[mid, gid]} for mid, m in sorted(models.items())]
    usable = gpu.memory_mib * vram.MIB * (gpu.gpu_share_default or vram.APPLE_SHARE_FALLBACK
                                           if gpu.unified_memory else 1)
    return render("gpu.md.j2", id=gid, gpu=gpu, rows=rows, contexts=FIT_CONTEXTS, gib=gib,
                  usable=usable, calc=calc_link(uri, g=gid), default_util=facts.VLLM_DEFAULT_UTIL)


def hardware_pages(models: dict, gpus: dict) -> list[tuple[str, str]]:
    # model and GPU pages sit one folder deep, so one set of cells (and links) serves both
    cells = {(mid, gid): fit_cells(f"models/{mid}.md", mid, m, gid, g)
             for mid, m in models.items() for gid, g in gpus.items()}
    pages = [(f"models/{mid}.md", model_page(mid, m, gpus, cells)) for mid, m in sorted(models.items())]
    pages += [(f"gpus/{gid}.md", gpu_page(gid, g, models, cells)) for gid, g in sorted(gpus.items())]
    pages.append(("models/index.md", render("models-index.md.j2", models=sorted(models.items()), gib=gib,
                                              weights=lambda m: vram.weights_bytes(arch_of(m), facts.DEFAULT_GGUF_QUANT),
                                              calc=calc_link("models/index.md"))))
    pages.append(("gpus/index.md", render("gpus-index.md.j2", gpus=sorted(gpus.items()),
                                            calc=calc_link("gpus/index.md"))))
    return pages
