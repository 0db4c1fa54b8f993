"""Accuracy of the calculator against real start-up logs (tests/data/real-memory-logs/).

Input: the log files (settings, printed values, the log text) and the model and
GPU entries. Output: one table row per check (accuracy_checks.py, one function
per engine): llama.cpp and Ollama KV cache sizes (at the precision the engine
prints) and a partial offload's GPU share; vLLM's and SGLang's token count for
the pool they printed (the cache layout), their KV pool from the card's memory
(within 10%), weights (within 3%) and the verdict against the log's outcome.
A check whose inputs a log lacks is a row marked "-" with the reason; then a
summary per engine, release and split (train: a constant was fitted on the log).

    python bench/accuracy.py            # the table
    python bench/accuracy.py --json     # the rows as JSON
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "real-memory-logs"
if str(ROOT / "hooks") not in sys.path:
    sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.calculator import vram  # noqa: E402
from errorkb.calculator.hardware import arch_of, family_of  # noqa: E402
from errorkb.build.loader import load  # noqa: E402

from accuracy_checks import Row, check_gguf, check_sglang, check_vllm  # noqa: E402,F401

MIB, GIB = vram.MIB, vram.GIB


def read_logs(folder: Path = LOGS) -> list[tuple[str, dict]]:
    return [(p.stem, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in sorted(folder.glob("*.yaml"))]


def arch_for(log: dict, models: dict) -> tuple[dict | None, bool]:
    """(architecture, partial): the model entry's (with the log's overrides, e.g. a fine-tune's longer context),
    or the cache layout the log file gives, which is enough for KV sizes but not for weights or activations."""
    if log.get("model"):
        model = models.get(log["model"])
        return ({**arch_of(model), **(log.get("architecture_overrides") or {})} if model else None), False
    given = log.get("architecture")
    if not given:
        return None, False
    return {"params_total": 10**9, "hidden_size": 4096, "attention_heads": given["kv_heads"] * 4, "vocab_size": 32000,
            "native_context": 10**7, "native_dtype": "bf16", "mla": given.get("mla"), "family": None,
            "tie_word_embeddings": False, **{k: v for k, v in given.items() if k != "mla"}}, True


def rows(root: Path = ROOT) -> list[Row]:
    entries = load(root).entries
    models, gpus = entries.get("models", {}), entries.get("gpus", {})
    out: list[Row] = []
    for name, log in read_logs(root / "tests" / "data" / "real-memory-logs"):
        arch, partial = arch_for(log, models)
        if arch is not None and log.get("model") is None and arch.get("family") is None:
            arch["family"] = family_of(log.get("architecture_source") or "")
        if log["engine"] == "vllm":
            found = check_vllm(name, log, arch, gpus, partial)
        elif log["engine"] == "sglang":
            found = check_sglang(name, log, arch, gpus, partial)
        else:
            found = check_gguf(name, log, arch)
        for row in found:
            row.split = log.get("split") or "test"
            row.release = str(log.get("engine_version") or "?")
            row.known = (log.get("known_misses") or {}).get(row.quantity, "")
        out += found
    return out


# Issue 13's bars, by the kind of quantity a row checks (the rows' own notes say how each is compared).
BARS = (("verdict", "verdict", "equals the outcome"), ("workspace", "workspace", "to the printed 2 decimals"), ("KV on the GPU", "partial offload", "to the MiB"), ("KV cache", "KV cache", "0.5% (to the printed digit)"),
        ("for the printed", "cache layout", "1% (2 printed decimals)"), ("for one request", "cache layout", "1% (2 printed decimals)"),
        ("pool", "KV pool", "10%"), ("weights", "weights", "3%"))


def kind_of(quantity: str) -> tuple[str, str]:
    return next((kind, bar) for needle, kind, bar in (*BARS, ("", "other", "-")) if needle in quantity)


def summary(items: list[Row]) -> str:
    """Per engine, release and split: checks passed and the largest error; then per engine and kind of quantity
    against the bar, with the logs and rows that could not be checked."""
    groups: dict[tuple, list[Row]] = {}
    for r in items:
        if r.ok is not None:
            groups.setdefault((r.engine, r.release, r.split), []).append(r)
    lines = ["engine    release                    split  passed  largest |error|"]
    for (engine, release, split), rows_ in sorted(groups.items()):
        worst = max((abs(r.error) for r in rows_ if r.error is not None), default=0.0)
        lines.append(f"{engine:<9} {release:<26} {split:<6} {sum(r.ok for r in rows_):>2}/{len(rows_):<4} {100 * worst:.1f}%")
    kinds: dict[tuple, list[Row]] = {}
    for r in items:
        kinds.setdefault((r.engine, *kind_of(r.quantity), r.split), []).append(r)
    lines += ["", "engine    quantity         bar                          split  passed  not checked"]
    for (engine, kind, bar, split), rows_ in sorted(kinds.items()):
        checked = [r for r in rows_ if r.ok is not None]
        lines.append(f"{engine:<9} {kind:<16} {bar:<28} {split:<6} {sum(r.ok for r in checked):>2}/{len(checked):<5} "
                     f"{len(rows_) - len(checked)}")
    return "\n".join(lines)


def table(items: list[Row]) -> str:
    head = ("case", "split", "engine", "quantity", "reported", "predicted", "error", "result")
    body = [(r.case, r.split, r.engine, r.quantity, r.reported, r.predicted, "" if r.error is None else f"{100 * r.error:+.1f}%",
             {True: "ok", False: "OFF", None: "-"}[r.ok] + (f" ({r.note})" if r.note else "")
             + (f" [known miss: {r.known}]" if r.known else "")) for r in items]
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head) - 1)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)) + "  " + line[-1] for line in [head, *body]]
    checked = [r for r in items if r.ok is not None]
    known = sum(bool(r.known) and not r.ok for r in checked)
    lines.append(f"\n{sum(r.ok for r in checked)} passed, {sum(not r.ok for r in checked)} failed "
                 f"({known} of them known misses the log files explain), {len(items) - len(checked)} not checked")
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
