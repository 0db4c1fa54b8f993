"""errorkb.vram against the shared hand-computed cases, plus properties that must hold for any input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "hooks") not in sys.path:
    sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.calculator import vram  # noqa: E402
from errorkb.calculator import facts as _facts  # noqa: E402
from errorkb.calculator.hardware import scenario  # noqa: E402

CASES = json.loads((ROOT / "tests" / "calculator_cases.json").read_text(encoding="utf-8"))
ARCHS = CASES["archs"]
GIB = vram.GIB


def arch_of(case: dict) -> dict:
    return ARCHS[case["arch"]] if isinstance(case["arch"], str) else case["arch"]


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_case(case):
    call = case.get("call", "evaluate")
    if call == "kv_cache_for":
        out = {"value": vram.kv_cache_for(arch_of(case), *case["args"])}
    elif call == "scenario":
        out = {"value": scenario(*case["args"])}
    else:
        out = getattr(vram, call)(arch_of(case), case["scenario"])
    expect = dict(case["expect"])
    text = expect.pop("errors_contain", None)
    if text is not None:
        assert any(text in message for message in out["errors"]), out["errors"]
    for key, value in expect.items():
        assert out[key] == value, f"{key}: got {out[key]!r}, expected {value!r} ({case['why']})"


def test_every_case_explains_its_numbers():
    for case in CASES["cases"]:
        assert len(case["why"]) > 20, case["name"]


ENGINE_DEFAULTS = {"vllm": ("bf16", ("fp8", "bf16")), "llamacpp": ("Q4_K_M", ("q4_0", "q8_0", "f16")),
                   "ollama": ("Q4_K_M", ("q4_0", "q8_0", "f16")), "sglang": ("bf16", ("fp8", "bf16"))}
CONTEXTS = [1, 100, 255, 256, 257, 1000, 4096, 5000, 8192, 16385, 32768, 65536, 131072]


@pytest.mark.parametrize("name", sorted(ARCHS))
@pytest.mark.parametrize("engine", vram.ENGINES)
@pytest.mark.parametrize("seqs", [1, 3])
def test_more_context_never_needs_less_memory(name, engine, seqs):
    quant, kv_types = ENGINE_DEFAULTS[engine]
    for kv in kv_types:
        previous = None
        for ctx in CONTEXTS:
            if ctx > ARCHS[name]["native_context"]:
                continue
            out = vram.evaluate(ARCHS[name], {"engine": engine, "quant": quant, "kv_dtype": kv, "context": ctx, "seqs": seqs,
                                              "gpus": 1, "vram_bytes": 80 * GIB})
            assert out["ok"], out["errors"]
            if previous is not None:
                assert out["kv_cache_bytes"] >= previous["kv_cache_bytes"], (kv, ctx)
                assert out["total_bytes"] >= previous["total_bytes"], (kv, ctx)
            previous = out


@pytest.mark.parametrize("name", sorted(ARCHS))
@pytest.mark.parametrize("engine", vram.ENGINES)
def test_smaller_cache_type_never_needs_more(name, engine):
    quant, kv_types = ENGINE_DEFAULTS[engine]  # listed smallest first
    for ctx in (512, 8192, 40000):
        sizes = [vram.evaluate(ARCHS[name], {"engine": engine, "quant": quant, "kv_dtype": kv, "context": ctx,
                                             "vram_bytes": 80 * GIB})["kv_cache_bytes"] for kv in kv_types]
        assert sizes == sorted(sizes), (ctx, dict(zip(kv_types, sizes)))
        assert sizes[0] < sizes[-1]


@pytest.mark.parametrize("engine", vram.ENGINES)
@pytest.mark.parametrize("vram_gib", [6, 12, 24, 48])
def test_max_context_is_the_boundary(engine, vram_gib):
    arch = ARCHS["llama-3.1-8b"]
    base = {"engine": engine, "context": 4096, "seqs": 2, "vram_bytes": vram_gib * GIB}
    out = vram.evaluate(arch, base)
    top = out["max_context"]
    if 0 < top < arch["native_context"]:
        seqs = 1 if engine in ("vllm", "sglang") else 2  # their limit is one request of the maximum length
        at = vram.evaluate(arch, {**base, "context": top, "seqs": seqs})
        over = vram.evaluate(arch, {**base, "context": top + 1, "seqs": seqs})
        assert at["fits"] and not over["fits"]


def test_weights_of_moe_count_every_expert():
    arch = {**ARCHS["llama-3.1-8b"], "params_active": 1_000_000_000}
    assert vram.weights_bytes(arch, "bf16") == vram.weights_bytes(ARCHS["llama-3.1-8b"], "bf16")


def test_no_nan_anywhere_on_valid_input():
    for engine in vram.ENGINES:
        out = vram.evaluate(ARCHS["gemma-3-27b"], {"engine": engine, "context": 1, "vram_bytes": 0.25 * GIB})
        for key, value in out.items():
            if isinstance(value, float):
                assert value == value and value not in (float("inf"), float("-inf")), key


def test_the_facts_file_the_javascript_tests_read_is_current(update_golden):
    """tests/calculator_facts.json is what the build exports; node --test reads it in place of the site's JSON."""
    path = ROOT / "tests" / "calculator_facts.json"
    text = json.dumps(_facts.export(), indent=1, sort_keys=True) + "\n"
    if update_golden:
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, "stale: run pytest --update-golden tests/test_vram.py"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_has_no_copy_of_a_fact():
    """vram.mjs reads its tables from the facts: with other facts installed, it must answer differently."""
    changed = _facts.export()
    changed["numbers"]["LLAMACPP_PAD"] = 512
    changed["quants"]["Q4_K_M"]["bpw"] = 8
    changed["error_ids"]["llamacpp_malloc"] = "some-other-entry"
    arch = ARCHS["llama-3.1-8b"]
    sc = {"engine": "llamacpp", "context": 300, "vram_bytes": 1 * GIB}
    script = ("import * as v from './site_src/javascripts/vram.mjs';"
              "const [facts, arch, sc] = process.argv.slice(1).map(JSON.parse); v.configure(facts);"
              "const o = v.evaluate(arch, sc); console.log(JSON.stringify([o.kv_cache_bytes, o.weights_bytes, o.error_ids]));")
    run = lambda f: json.loads(subprocess.run(["node", "--input-type=module", "-e", script, json.dumps(f), json.dumps(arch),
                                               json.dumps(sc)], cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    out = vram.evaluate(arch, sc)
    assert run(_facts.export()) == [out["kv_cache_bytes"], out["weights_bytes"], out["error_ids"]]
    kv, weights, ids = run(changed)
    assert kv == vram.llamacpp_kv(arch, 512, 1, "f16") and weights > out["weights_bytes"] and "some-other-entry" in ids
