"""`kb will-it-run --from-log FILE`: the calculator filled from a start-up or crash log.

Input: a log file (``-`` for standard input) and the model and GPU entries. Output:
what the log says, the budget it implies, why it failed with the KB entry that
explains it, and the nearest settings that start, each as a command; with --json
one object. Exit 0 when the log's own settings start, 1 when they do not, 2 when
the log is not one the reader knows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from errorkb.build.loader import load
from errorkb.build.pages import page_url
from errorkb.calculator.facts import ENGINE_NAMES, GIB, MIB
from errorkb.calculator.fromlog import gpu_key, model_key, read_log
from errorkb.calculator.hardware import arch_of
from errorkb.calculator.proposal import propose
from errorkb.cli.settings import read_settings

def resolve_model(name: str | None, models: dict):
    if not name:
        return None, None
    key = model_key(name)
    for mid, m in sorted(models.items()):
        if key and key in (model_key(mid), model_key(m.hf_repo)):
            return mid, m
    return None, None


def resolve_gpu(name: str | None, gpus: dict):
    if not name:
        return None, None
    key = gpu_key(name)
    for gid, g in sorted(gpus.items()):
        if key and gpu_key(g.title).startswith(key):
            return gid, g
    return None, None


def gib(n: float | None) -> str:
    return "?" if n is None else f"{n / GIB:,.2f} GiB"


def report(r: dict, out: dict, model_id: str | None, gpu_id: str | None, site_url: str) -> str:
    name = ENGINE_NAMES.get(r["engine"], r["engine"] or "?")
    said = [f"engine {name}" + (f" {r['release']}" if r.get("release") else ""),
            f"model {r.get('model') or '?'}" + (f" (entry {model_id})" if model_id else ""),
            f"GPU {r.get('gpu_name') or '?'}" + (f" (entry {gpu_id})" if gpu_id else "")]
    cpu = r.get("failure_kind") == "ollama_cpu_only"
    for key, label in (("weights_gib", "weights"), ("kv_gib", "KV cache"), ("cuda_graph_gib", "CUDA graphs (vLLM's estimate)"),
                       ("gpu_total_gib", "GPU memory"),
                       ("gpu_free_gib", "free in system RAM" if cpu else "free on the GPU")):
        if r.get(key) is not None:
            said.append(f"{label} {r[key]:,.2f} GiB")
    for key, label in (("context", "context"), ("seqs", "sequences"), ("util", "utilisation"),
                       ("mem_fraction_static", "mem-fraction-static"), ("tp", "GPUs")):
        if r.get(key) is not None:
            said.append(f"{label} {r[key]:g}")
    lines = ["What the log says: " + "; ".join(said), ""]
    if out.get("starts") is not None:
        gguf = r["engine"] in ("llamacpp", "ollama")
        verdict = ("it fits on the GPU" if gguf else "it starts") if out["starts"] else \
            ("it does not fit on the GPU (layers or the cache go to the CPU, or it fails)" if gguf else "it does not start")
        if r.get("failure_kind") == "ollama_cpu_only":
            verdict = "it fits in system memory" if out["starts"] else "it does not fit in system memory"
        if out.get("capped_tokens"):
            verdict = "a request that long does not fit, but SGLang still starts"
        if out.get("need_bytes") is not None and out.get("room_bytes") is not None:
            what = (f"the KV cache for {out['asked']['context']:,} tokens" if out["asked"]["context"]
                    else "the KV cache the log sized (its context is not printed)")
            lines.append(f"Budget: {what} needs {gib(out['need_bytes'])} a GPU; "
                         f"the log leaves {gib(out['room_bytes'])} for it: {verdict}.")
        elif out.get("fit"):
            f = out["fit"]
            lines.append(f"Budget: llama.cpp's own projection (--fit) at the settings it was started with, "
                         f"{gib(f['projected_bytes'])} against {gib(f['free_bytes'])} free"
                         + (f", keeping {gib(f['margin_bytes'])}" if f["margin_bytes"] else " (all GPUs together)") + f": {verdict}.")
        else:
            lines.append(f"Budget: a sequence of {out['asked']['context']:,} tokens against the {out['pool_tokens']:,} tokens "
                         f"the engine's KV pool holds (as the log prints it): {verdict}.")
    if out.get("note"):
        lines.append(out["note"])
    if r.get("failure"):
        lines.append(f"Why it failed: {r['failure']}")
    if r.get("failure_kind") == "ollama_cpu_only":
        lines.append(CPU_ONLY)
    if r.get("failure_kind") == "llamacpp_cpu_only":
        lines.append(LLAMACPP_CPU_ONLY.format(layers=r["model_layers"]))
        lines.append(f"  if a GPU was meant to be used: {site_url}{page_url('guides', 'gpu-not-used')}")
    if r.get("error_id"):
        lines.append(f"  explained at {site_url}{page_url('errors', r['error_id'])}")
    if out["proposals"]:
        lines += ["", "Nearest settings that start:"]
        for p in out["proposals"]:
            what = {"context": f"context {p['context']:,}", "util": f"utilisation {p.get('util')}",
                    "kv": f"KV cache {p['kv']}", "gpus": f"{p['gpus']} GPUs"}[p["change"]]
            lines.append(f"  {what}:  {p['command']}")
            if p.get("model_limit_unknown"):
                lines.append(f"    (only if the model's own limit, max_position_embeddings, is at least {p['context']:,} tokens: "
                             "the log does not give it)")
    return "\n".join(lines)


LLAMACPP_CPU_ONLY = ("No layer is on a GPU (0 of {layers} offloaded): llama.cpp keeps the model in system RAM and runs it "
                     "on the CPU (-ngl 0, a build without GPU support, or --fit found no room on the GPU).")
CPU_ONLY = ("Ollama found no GPU it can use (library=cpu): the memory figures are system RAM and the model runs "
            "on the CPU.")


def cmd_from_log(path: str, as_json: bool, root: Path) -> int:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8", errors="replace")
    r = read_log(text)
    if r["engine"] is None:
        print("not a vLLM, llama.cpp, Ollama or SGLang log the reader knows", file=sys.stderr)
        return 2
    entries = load(root).entries
    model_id, model = resolve_model(r.get("model"), entries.get("models", {}))
    gpu_id, gpu = resolve_gpu(r.get("gpu_name"), entries.get("gpus", {}))
    arch = arch_of(model) if model else None
    gpu_gib = gpu.memory_mib * MIB / GIB if gpu else None
    out = propose(r, arch, gpu_gib, arch["native_context"] if arch else None)
    if as_json:
        print(json.dumps({"reading": r, "model_id": model_id, "gpu_id": gpu_id, **out}, indent=1, sort_keys=True))
    else:
        print(report(r, out, model_id, gpu_id, read_settings(root).site_url))
    return 1 if out.get("starts") is False or r.get("failure") else 0
