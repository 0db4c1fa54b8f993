"""Accuracy of the calculator against real start-up logs (tests/data/real-memory-logs/).

For every log it predicts what the engine printed and prints one table row per
check: llama.cpp and Ollama KV cache sizes (must match at the precision the
engine prints), vLLM's token count for the pool it printed (checks the block
layout), vLLM's KV pool from the card's memory (within 10%) and vLLM's weights.
Checks whose inputs the log does not give are listed as n/a with the reason.

    python bench/accuracy.py            # the table
    python bench/accuracy.py --json     # the rows as JSON
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "real-memory-logs"
if str(ROOT / "hooks") not in sys.path:
    sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.calculator import vram  # noqa: E402
from errorkb.calculator.hardware import arch_of, family_of  # noqa: E402
from errorkb.build.loader import load  # noqa: E402

MIB, GIB = vram.MIB, vram.GIB
VLLM_POOL_TOLERANCE = 0.10
WEIGHTS_TOLERANCE = 0.03


@dataclass
class Row:
    case: str
    engine: str
    quantity: str
    reported: str
    predicted: str
    error: float | None  # (predicted - reported) / reported
    ok: bool | None  # None: not checked (inputs missing or informative only)
    note: str = ""
    split: str = "test"  # train: a constant was fitted on this log (field `split` of the log file)
    release: str = "?"  # engine_version of the log file


def read_logs(folder: Path = LOGS) -> list[tuple[str, dict]]:
    return [(p.stem, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in sorted(folder.glob("*.yaml"))]


def arch_for(log: dict, models: dict) -> dict | None:
    """The model's architecture: its entry, or the partial one the log file gives (enough for KV sizes)."""
    if log.get("model"):
        model = models.get(log["model"])
        return arch_of(model) if model else None
    given = log.get("architecture")
    if not given:
        return None
    return {"params_total": 10**9, "hidden_size": 4096, "attention_heads": given["kv_heads"] * 4, "vocab_size": 32000,
            "native_context": 10**7, "native_dtype": "bf16", "mla": given.get("mla"), "family": None,
            "tie_word_embeddings": False, **{k: v for k, v in given.items() if k != "mla"}}


def legacy_llamacpp(text: str) -> bool:
    return "llama_kv_cache_init" in text or "llama_new_context_with_model" in text


def ollama_text(n_bytes: float) -> str:
    """How Ollama prints a size (format.HumanBytes2): one decimal, MiB under 1 GiB."""
    return f"{n_bytes / GIB:.1f} GiB" if n_bytes >= GIB else f"{n_bytes / MIB:.1f} MiB"


def rel(predicted: float, reported: float) -> float | None:
    return None if not reported else (predicted - reported) / abs(reported)


def check_gguf(name: str, log: dict, arch: dict | None) -> list[Row]:
    engine, st, rep = log["engine"], log["settings"], log["reported"]["kv_cache_mib"]
    if rep is None:
        return []
    reported = f"{rep:.2f} MiB"
    missing = "architecture" if arch is None else "context" if not st.get("context") else None
    if missing:
        return [Row(name, engine, "KV cache", reported, "n/a", None, None, f"the log does not give the {missing}")]
    total, seqs = st["context"], st.get("parallel") or 1
    kv = st.get("kv_dtype") or "f16"
    text = log.get("log", "")
    if engine == "llamacpp":
        if legacy_llamacpp(text):  # one unified cache of n_ctx cells
            flash = "flash_attn    = 1" in text or "flash_attn = 1" in text or "--flash-attn" in text
            pad = vram.LLAMACPP_PAD if flash else vram.LLAMACPP_PAD_LEGACY
            predicted = vram.llamacpp_kv(arch, total, 1, kv, pad)
        else:
            predicted = vram.llamacpp_kv(arch, total // seqs, seqs, kv)
        ok = abs(predicted / MIB - rep) < 1.0
        return [Row(name, engine, "KV cache", reported, f"{predicted / MIB:.2f} MiB", rel(predicted / MIB, rep), ok,
                    "must match to the MiB")]
    predicted = vram.ollama_kv(arch, total // seqs, seqs, kv)
    ok = ollama_text(predicted) == ollama_text(rep * MIB)
    return [Row(name, engine, "KV cache (memory.required.kv)", ollama_text(rep * MIB), ollama_text(predicted),
                rel(predicted / MIB, rep), ok, "must match at the precision Ollama prints")]


def check_vllm(name: str, log: dict, arch: dict | None, gpus: dict) -> list[Row]:
    st, rep, text = log["settings"], log["reported"], log.get("log", "")
    if arch is None:
        return [Row(name, "vllm", "KV pool", "?", "n/a", None, None, "the log does not name the model")]
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
    total = st.get("vram_gib") * GIB if st.get("vram_gib") else gpus[st["gpu"]].memory_mib * MIB if st.get("gpu") in gpus else None
    quant = {"bf16": "bf16", "f16": "f16", "fp8": "fp8", "mxfp4": "mxfp4"}.get(arch["native_dtype"])
    if (st.get("quant") or "").lower().startswith("fp8"):
        quant = "fp8"
    elif st.get("quant") and not (st["quant"].lower().startswith(arch["native_dtype"])):
        quant = None
    if rep.get("needed_kv_gib") is not None and st.get("context"):  # the refusal names what one request needs
        group_size = vram.vllm_groups(arch)[0]
        one = group_size * page * vram.vllm_blocks_per_request(arch, st["context"], vram.VLLM_BATCHED_SMALL) / GIB
        error = rel(one, rep["needed_kv_gib"])
        rows.append(Row(name, "vllm", "KV for one request", f"{rep['needed_kv_gib']:.2f} GiB", f"{one:.2f} GiB", error,
                        abs(one - rep["needed_kv_gib"]) < 0.005 + 1e-9, "printed with 2 decimals"))
    if rep.get("weights_gib") is not None:
        if quant:
            w = vram.vllm_weights(arch, quant) / tp / GIB
            error = rel(w, rep["weights_gib"])
            rows.append(Row(name, "vllm", "weights", f"{rep['weights_gib']:.2f} GiB", f"{w:.2f} GiB",
                            error, abs(error) <= WEIGHTS_TOLERANCE, "within 3% of 'Model loading took'"))
    if avail is None:
        return rows
    missing = [what for what, value in (("GPU memory", total), ("gpu_memory_utilization", st.get("gpu_memory_utilization")),
                                        ("weight format", quant)) if value is None]
    if missing:
        rows.append(Row(name, "vllm", "KV pool", f"{avail:.2f} GiB", "n/a", None, None,
                        "the log does not give the " + ", ".join(missing)))
        return rows
    scenario = {"engine": "vllm", "quant": quant, "kv_dtype": kv, "context": min(st.get("context") or 2048, arch["native_context"]),
                "seqs": 1, "gpus": tp, "vram_bytes": total, "gpu_memory_utilization": st["gpu_memory_utilization"],
                "gpu_id": st.get("gpu")}
    note = "within 10%"
    if "# CPU blocks" in text:  # the V0 engine profiled max(max_model_len, 2048) tokens (no chunked prefill up to 32K)
        scenario["max_num_batched_tokens"] = max(scenario["context"], 2048)
        scenario["vllm_v0"] = True
        note += "; V0 engine: profile over max_model_len tokens"
    if st.get("max_num_batched_tokens"):
        scenario["max_num_batched_tokens"] = st["max_num_batched_tokens"]
    out = vram.plan(arch, vram.check_inputs(arch, scenario)[0])
    predicted = out["kv_pool_bytes"] / GIB if out["kv_pool_bytes"] > 0 else (out["available_bytes"] - out["weights_bytes"] - out["overhead_bytes"]) / tp / GIB
    error = rel(predicted, avail)
    rows.append(Row(name, "vllm", "KV pool", f"{avail:.2f} GiB", f"{predicted:.2f} GiB", error,
                    abs(error) <= VLLM_POOL_TOLERANCE, note))
    if log.get("outcome"):  # the log shows the engine starting or refusing to
        said = "start" if out["starts"] else "fail"
        rows.append(Row(name, "vllm", "verdict", log["outcome"], said, None, said == log["outcome"],
                        "the engine's own start-up check on the predicted pool"))
    return rows


def check_sglang(name: str, log: dict, arch: dict | None) -> list[Row]:
    """SGLang's token pool: the K and V sizes it prints for its #tokens, from the model's KV layout per GPU.

    SGLang sizes the pool from --mem-fraction-static; that arithmetic belongs to the SGLang engine module, so
    until one exists the pool size is listed unchecked and only the layout (bytes per token) is checked.
    """
    st, rep = log["settings"], log["reported"]
    tokens = rep.get("kv_cache_tokens")
    printed = rep.get("k_size_gib")
    if arch is None or not tokens or printed is None:
        why = "the sparse-attention (NSA) cache of this model is not modelled" if arch is None else "the log prints no K size"
        return [Row(name, "sglang", "KV bytes per token", f"{rep.get('kv_size_gib') or '?'} GiB", "n/a", None, None, why)]
    tp = st.get("tensor_parallel") or 1
    kv = st.get("kv_dtype") or "bf16"
    if arch.get("mla"):
        per_token = arch["layers"] * (arch["mla"]["kv_lora_rank"] + arch["mla"]["qk_rope_head_dim"]) * vram.KV_TYPES[kv][0]
    else:
        per_token = arch["layers"] * max(1, arch["kv_heads"] // tp) * arch["head_dim"] * vram.KV_TYPES[kv][0]
    predicted = tokens * per_token / GIB
    rows = [Row(name, "sglang", "K size for the printed #tokens", f"{printed:.2f} GiB", f"{predicted:.2f} GiB",
                rel(predicted, printed), abs(predicted - printed) < 0.005 + 1e-9, "printed with 2 decimals")]
    rows.append(Row(name, "sglang", "token pool from --mem-fraction-static", f"{tokens:,} tokens", "n/a", None, None,
                    "no SGLang engine module on this branch yet"))
    return rows


def rows(root: Path = ROOT) -> list[Row]:
    entries = load(root).entries
    models, gpus = entries.get("models", {}), entries.get("gpus", {})
    out: list[Row] = []
    for name, log in read_logs(root / "tests" / "data" / "real-memory-logs"):
        arch = arch_for(log, models)
        if arch is not None and log.get("model") is None and arch.get("family") is None:
            arch["family"] = family_of(log.get("architecture_source") or "")
        if log["engine"] == "vllm":
            found = check_vllm(name, log, arch, gpus)
        elif log["engine"] == "sglang":
            found = check_sglang(name, log, arch)
        else:
            found = check_gguf(name, log, arch)
        for row in found:
            row.split = log.get("split") or "test"
            row.release = str(log.get("engine_version") or "?")
        out += found
    return out


def summary(items: list[Row]) -> str:
    """Per engine, release and split: checks passed and the largest error."""
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for r in items:
        if r.ok is not None:
            groups.setdefault((r.engine, r.release, r.split), []).append(r)
    lines = ["engine    release   split  passed  largest |error|"]
    for (engine, release, split), rows_ in sorted(groups.items()):
        worst = max((abs(r.error) for r in rows_ if r.error is not None), default=0.0)
        lines.append(f"{engine:<9} {release:<9} {split:<6} {sum(r.ok for r in rows_):>2}/{len(rows_):<4} {100 * worst:.1f}%")
    return "\n".join(lines)


def table(items: list[Row]) -> str:
    head = ("case", "split", "engine", "quantity", "reported", "predicted", "error", "result")
    body = [(r.case, r.split, r.engine, r.quantity, r.reported, r.predicted, "" if r.error is None else f"{100 * r.error:+.1f}%",
             {True: "ok", False: "OFF", None: "-"}[r.ok] + (f" ({r.note})" if r.note else "")) for r in items]
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head) - 1)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)) + "  " + line[-1] for line in [head, *body]]
    checked = [r for r in items if r.ok is not None]
    lines.append(f"\n{sum(r.ok for r in checked)} passed, {sum(not r.ok for r in checked)} failed, "
                 f"{len(items) - len(checked)} not checked")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    items = rows()
    print(json.dumps([asdict(r) for r in items], indent=1) if args.json else table(items) + "\n\n" + summary(items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
