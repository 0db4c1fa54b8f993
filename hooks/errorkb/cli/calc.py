"""`kb will-it-run`: the calculator on the command line.

Input: a model id and a GPU id from entries/ (or --vram-gib), the engine and
its settings. Output: the verdict with the working, or with --json one object
(the same fields the page computes). Exit 0 when it fits (or is tight), 1 when
it does not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from errorkb.build.loader import load
from errorkb.build.pages import page_url
from errorkb.calculator import vram
from errorkb.calculator.commands import command_for, number_text
from errorkb.calculator.hardware import arch_of, family_of, gpu_of, scenario
from errorkb.cli.fromlog import cmd_from_log
from errorkb.cli.settings import read_settings


def gib(n: float) -> str:
    return f"{n / vram.GIB:,.2f} GiB"


def defaults_text(s: dict, out: dict) -> list[str]:
    """What the engine does by itself; the command pins the choice (the page's defaultsFor says the same)."""
    lines = []
    if out.get("llamacpp_defaults"):
        d = out["llamacpp_defaults"]
        lines.append(f"llama.cpp defaults (no -c, no -ngl, --fit on): {d['context']:,} tokens per sequence, "
                     f"{d['gpu_layers']} of {out['layers']} layers on the GPU; with -c as set: {out['fit_gpu_layers']} layers")
    if out.get("ollama_defaults"):
        d = out["ollama_defaults"]
        lines.append(f"Ollama defaults here: num_ctx {d['num_ctx']:,}, OLLAMA_NUM_PARALLEL={d['num_parallel']}; "
                     f"at the context asked, --fit puts {out['fit_gpu_layers']} of {out['layers']} layers on the GPU")
    if s["engine"] == "vllm":
        lines.append(f"--max-model-len auto would pick {out['max_context']:,} tokens")
    lines.append(f"Numbers follow {out['release']}.")
    return lines


def report(model_title: str, s: dict, out: dict, site_url: str) -> str:
    word = {"fits": "FITS", "tight": "TIGHT", "no": "DOES NOT FIT"}[out["verdict"]]
    lines = [f"{model_title} on {s['label']} with {vram.ENGINE_NAMES[s['engine']]}: {word}", ""]
    rows = [("weights", out["weights_bytes"], s["quant"]),
            ("KV cache", out["kv_cache_bytes"], f"{s['context']:,} tokens x {s['seqs']} seq, {s['kv_dtype']}"
             + (", every head's K and V: a GGUF without MLA keys" if out.get("mla_full_heads") else ""))]
    rows += [(name, size, "") for name, size in out["overhead_parts"].items()]
    rows += [("total", out["total_bytes"], ""), ("usable", out["available_bytes"], "")]
    if s["engine"] == "vllm":
        rows.append(("KV pool", out["kv_pool_bytes"], f"{out['kv_pool_tokens']:,} tokens in blocks of 16"))
    if s["engine"] == "sglang":
        rows.append(("KV pool", out["kv_pool_bytes"], f"{out['kv_pool_tokens']:,} tokens (max_total_num_tokens), "
                     f"--mem-fraction-static {number_text(out['mem_fraction_static'])}"))
    for name, size, note in rows:
        lines.append(f"  {name:<24}{gib(size):>12}" + (f"   ({note})" if note else ""))
    if s["engine"] == "sglang" and out["fits"] and not out["fits_all"]:
        lines.append(f"  SGLang starts, but only {out['max_seqs']} of the {s['seqs']} sequences fit at full length at once; the rest wait")
    if s["engine"] == "vllm" and out["starts"] and not out["fits_all"]:
        lines.append(f"  vLLM starts, but only {out['max_seqs']} of the {s['seqs']} sequences fit at full length at once; the rest wait")
    if out.get("gpu_layers") is not None:
        lines.append(f"  on the GPU: {out['gpu_layers']} of {out['layers']} layers (the rest on the CPU, much slower)")
    lines += ["", f"Largest context that fits: {out['max_context']:,} tokens",
              f"Largest number of concurrent sequences at {s['context']:,} tokens: {out['max_seqs']:,}"]
    for warning in out["warnings"]:
        lines.append(f"Note: {warning}")
    lines += defaults_text(s, out)
    lines += ["", "Command:", command_for(s["name"], s["hf_repo"], s, out)]
    if out["error_ids"]:
        lines += ["", "What you would see:"] + [f"  {site_url}{page_url('errors', eid)}" for eid in out["error_ids"]]
    return "\n".join(lines)


def cmd_will_it_run(args: argparse.Namespace, root: Path) -> int:
    if args.from_log:
        return cmd_from_log(args.from_log, args.json, root)
    missing = [flag for flag, value in (("--model", args.model), ("--engine", args.engine), ("--context", args.context),
                                        ("--gpu or --vram-gib", args.gpu or args.vram_gib)) if value is None]
    if missing:
        print("will-it-run needs " + ", ".join(missing) + " (or --from-log FILE)", file=sys.stderr)
        return 2
    loaded = load(root)
    models, gpus = loaded.entries.get("models", {}), loaded.entries.get("gpus", {})
    model = models.get(args.model)
    if model is None:
        print(f"no model entry '{args.model}' (known: {', '.join(sorted(models)) or 'none'})", file=sys.stderr)
        return 2
    if args.gpu is not None:
        gpu = gpus.get(args.gpu)
        if gpu is None:
            print(f"no GPU entry '{args.gpu}' (known: {', '.join(sorted(gpus)) or 'none'})", file=sys.stderr)
            return 2
        sc = scenario(args.gpu, gpu_of(gpu), args.engine, args.context, args.quant, args.kv_dtype or "auto",
                      args.seqs, args.gpus, args.gpu_memory_utilization)
        label = f"{args.gpus} x {gpu.title}" if args.gpus > 1 else gpu.title
    else:
        sc = {"engine": args.engine, "quant": args.quant, "kv_dtype": args.kv_dtype or "auto", "context": args.context,
              "seqs": args.seqs, "gpus": args.gpus, "vram_bytes": args.vram_gib * vram.GIB, "vendor": args.vendor,
              "gpu_memory_utilization": args.gpu_memory_utilization}
        label = f"{args.gpus} x {args.vram_gib:g} GiB" if args.gpus > 1 else f"{args.vram_gib:g} GiB"
    if args.mem_fraction_static is not None:
        sc["mem_fraction_static"] = args.mem_fraction_static
    if args.mla_cache is not None:
        sc["mla_full_heads"] = args.mla_cache == "heads"
    arch = arch_of(model)
    out = vram.evaluate(arch, sc)
    if not out["ok"]:
        for message in out["errors"]:
            print(message, file=sys.stderr)
        return 2
    s, _, _ = vram.check_inputs(arch, sc)
    s.update(label=label, name=args.model, hf_repo=model.hf_repo, native_dtype=model.native_dtype)
    out["command"] = command_for(args.model, model.hf_repo, s, out)
    if args.json:
        print(json.dumps({**out, "model": args.model, "quant": s["quant"], "kv_dtype": s["kv_dtype"],
                          "family": family_of(model.hf_repo)}, indent=1, sort_keys=True))
    else:
        print(report(model.title, s, out, read_settings(root).site_url))
    return 0 if out["fits"] else 1


def register(subparsers) -> None:
    p = subparsers.add_parser("will-it-run", help="does a model fit on a GPU with an engine, and how much context fits")
    p.add_argument("--from-log", metavar="FILE", help="fill everything from a start-up or crash log (- for stdin)")
    p.add_argument("--model", help="model id from entries/models/")
    p.add_argument("--engine", choices=vram.ENGINES)
    p.add_argument("--quant", help="weight format (default: published dtype for vLLM and SGLang, Q4_K_M for GGUF engines)")
    p.add_argument("--kv-dtype", choices=["auto", "f16", "bf16", "fp8", "q8_0", "q4_0"])
    p.add_argument("--context", type=int, help="tokens per sequence")
    p.add_argument("--seqs", type=int, default=1, help="sequences served at the same time")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--gpu", help="GPU id from entries/gpus/")
    where.add_argument("--vram-gib", type=float, help="total memory per GPU as the driver reports it, in GiB")
    p.add_argument("--gpus", type=int, default=1, help="number of GPUs (tensor parallel for vLLM and SGLang, layer split otherwise)")
    p.add_argument("--vendor", choices=["nvidia", "amd", "apple"], default="nvidia", help="with --vram-gib")
    p.add_argument("--gpu-memory-utilization", type=float, default=vram.VLLM_DEFAULT_UTIL, help="vLLM memory fraction")
    p.add_argument("--mem-fraction-static", type=float, help="SGLang static memory fraction (default: SGLang's own for the card)")
    p.add_argument("--mla-cache", choices=["latent", "heads"],
                   help="DeepSeek-style (MLA) models with llama.cpp or Ollama: 'heads' for a GGUF without llama.cpp's MLA "
                        "keys, which caches every head's K and V (the default for Ollama, whose library files are such); "
                        "'latent' for one with them (the default for llama.cpp)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_will_it_run)
