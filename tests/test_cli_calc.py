"""`kb will-it-run` and the hardware pages: JSON fields, exit codes, and the same command as the page."""

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

from errorkb.cli import main as cli
from errorkb.cli import calc as cli_calc
from errorkb.calculator import hardware
from errorkb.calculator import facts, fromlog, vram  # noqa: E402
from errorkb.build.loader import load  # noqa: E402

ENTRIES = load(ROOT).entries
MODELS, GPUS = ENTRIES["models"], ENTRIES["gpus"]
REQUIRED = {"weights_bytes", "kv_cache_bytes", "overhead_bytes", "total_bytes", "available_bytes", "fits", "max_context"}


def kb_json(capsys, *args: str) -> tuple[int, dict]:
    code = cli.main(["--root", str(ROOT), "will-it-run", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_json_has_the_promised_fields(capsys):
    code, out = kb_json(capsys, "--model", "llama-3.1-8b", "--engine", "vllm", "--context", "8192", "--gpu", "rtx-4090")
    assert code == 0 and REQUIRED | {"kv_pool_bytes", "kv_pool_tokens"} <= out.keys()
    assert out["total_bytes"] == out["weights_bytes"] + out["kv_cache_bytes"] + out["overhead_bytes"]
    assert out["kv_pool_tokens"] % 16 == 0


def test_sglang_json_and_command(capsys):
    """SGLang's default fraction for the card is in the answer and in the command that starts it."""
    code, out = kb_json(capsys, "--model", "llama-3.1-8b", "--engine", "sglang", "--context", "8192", "--gpu", "rtx-4090",
                        "--kv-dtype", "fp8")
    assert code == 0 and REQUIRED | {"kv_pool_bytes", "kv_pool_tokens", "mem_fraction_static"} <= out.keys()
    expected = vram.sglang_mem_fraction(GPUS["rtx-4090"].memory_mib * vram.MIB, 1, False, True)
    assert out["mem_fraction_static"] == expected
    assert f"--mem-fraction-static {expected}" in out["command"] and "--kv-cache-dtype fp8_e5m2" in out["command"]
    assert out["command"].startswith("python -m sglang.launch_server --model-path meta-llama/")
    code, fixed = kb_json(capsys, "--model", "llama-3.1-8b", "--engine", "sglang", "--context", "8192", "--gpu", "rtx-4090",
                          "--mem-fraction-static", "0.5")
    assert code == 1 and fixed["mem_fraction_static"] == 0.5 and fixed["error_ids"] == ["sglang-kv-cache-out-of-memory"]


def test_vram_gib_is_the_driver_total(capsys):
    _, by_gpu = kb_json(capsys, "--model", "llama-3.1-8b", "--engine", "llamacpp", "--context", "8192", "--gpu", "rtx-4090")
    _, by_size = kb_json(capsys, "--model", "llama-3.1-8b", "--engine", "llamacpp", "--context", "8192",
                         "--vram-gib", str(GPUS["rtx-4090"].memory_mib / 1024))
    assert by_gpu["available_bytes"] == by_size["available_bytes"] == GPUS["rtx-4090"].memory_mib * vram.MIB


def test_exit_codes(capsys):
    assert cli.main(["--root", str(ROOT), "will-it-run", "--model", "llama-3.1-70b", "--engine", "vllm", "--context", "8192",
                     "--gpu", "rtx-4090"]) == 1
    assert "DOES NOT FIT" in capsys.readouterr().out
    assert cli.main(["--root", str(ROOT), "will-it-run", "--model", "llama-3.1-8b", "--engine", "llamacpp", "--context", "-4",
                     "--vram-gib", "24"]) == 2
    assert "Context must be" in capsys.readouterr().err
    assert cli.main(["--root", str(ROOT), "will-it-run", "--model", "no-such-model", "--engine", "ollama", "--context", "8",
                     "--vram-gib", "8"]) == 2


SCENARIOS = [
    ("llama-3.1-8b", {"engine": "vllm", "context": 8192, "seqs": 300, "gpus": 2, "kv_dtype": "fp8", "quant": "fp8"}),
    ("llama-3.1-8b", {"engine": "vllm", "context": 65536, "quant": "awq-int4", "gpu_memory_utilization": 0.85}),
    ("gemma-3-27b", {"engine": "llamacpp", "context": 32768, "seqs": 2, "kv_dtype": "q8_0"}),
    ("llama-3.1-70b", {"engine": "llamacpp", "context": 8192, "quant": "Q4_K_M"}),
    ("qwen3-8b", {"engine": "ollama", "context": 16384, "seqs": 4, "kv_dtype": "q4_0"}),
    ("llama-3.1-8b", {"engine": "sglang", "context": 8192, "seqs": 3, "kv_dtype": "fp8", "gpus": 2}),
    ("llama-3.1-8b", {"engine": "sglang", "context": 131072, "quant": "awq-int4", "mem_fraction_static": 0.85}),
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_and_cli_print_the_same_command():
    jobs, expected = [], []
    for mid, change in SCENARIOS:
        arch = hardware.arch_of(MODELS[mid])
        sc = {**hardware.scenario("rtx-4090", hardware.gpu_of(GPUS["rtx-4090"]), change["engine"], change["context"]), **change,
              "native_dtype": arch["native_dtype"]}
        out = vram.evaluate(arch, sc)
        s = vram.check_inputs(arch, sc)[0] | {"native_dtype": arch["native_dtype"]}
        expected.append(cli_calc.command_for(mid, MODELS[mid].hf_repo, s, out))
        jobs.append({"name": mid, "repo": MODELS[mid].hf_repo, "arch": arch, "scenario": sc})
    script = ("import * as v from './site_src/javascripts/vram.mjs';"
              "import { commandFor } from './site_src/javascripts/calculator/commands.mjs';"
              "v.configure(JSON.parse(process.argv[2]));"
              "const jobs = JSON.parse(process.argv[1]);"
              "console.log(JSON.stringify(jobs.map(j => { const o = v.evaluate(j.arch, j.scenario);"
              " return commandFor(j.name, j.repo, o.scenario, o); })));")
    got = json.loads(subprocess.run(["node", "--input-type=module", "-e", script, json.dumps(jobs),
                                     json.dumps(facts.export())], cwd=ROOT, check=True,
                                    capture_output=True, text=True).stdout)
    assert got == expected


def test_the_page_spells_every_flag_as_the_facts_do():
    """commands.mjs keeps a copy of facts.ENGINE_FLAGS (calculator.json does not carry it): a renamed flag must change both."""
    script = "import { FLAGS } from './site_src/javascripts/calculator/commands.mjs'; console.log(JSON.stringify(FLAGS));"
    got = json.loads(subprocess.run(["node", "--input-type=module", "-e", script], cwd=ROOT, check=True,
                                    capture_output=True, text=True).stdout)
    assert got == facts.ENGINE_FLAGS


def test_calculator_data_is_json_and_complete():
    data = hardware.calculator_data(MODELS, GPUS)
    assert json.loads(json.dumps(data)) == data
    assert set(data["models"]) == set(MODELS) and set(data["gpus"]) == set(GPUS)
    # the calculator's failures and the ones the log reader names (a pasted log links its entry)
    assert set(data["errors"]) == set(facts.ERROR_IDS.values()) | {f[3] for f in fromlog.FAILURES}
    assert all((ROOT / "entries" / "errors" / f"{eid}.yaml").exists() for eid in data["errors"])
    assert data["facts"] == facts.export()
    assert data["log_reader"] == json.loads(json.dumps(fromlog.export()))


def test_every_failure_links_to_a_real_entry():
    """The ids a predicted failure links to are entries of the KB, so no link from the calculator is dead."""
    missing = sorted(set(facts.ERROR_IDS.values()) - set(ENTRIES["errors"]))
    assert not missing, f"calculator links to entries that do not exist: {missing}"


def test_every_real_entry_gets_a_page():
    pages = dict(hardware.hardware_pages(MODELS, GPUS))
    assert {f"models/{m}.md" for m in MODELS} | {f"gpus/{g}.md" for g in GPUS} | {"models/index.md", "gpus/index.md"} == set(pages)
    page = pages["models/llama-3.1-8b.md"]
    assert "131,072 bytes" in page  # 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes
    assert "will-it-run.md?m=llama-3.1-8b" in page


def test_ollama_counts_full_heads_for_deepseek_and_mla_cache_switches_it(capsys):
    """The Ollama library's DeepSeek GGUFs have no MLA keys: 128 heads x (192 + 128) values per layer and token;
    --mla-cache latent counts llama.cpp's 576-wide latent instead."""
    base = ("--model", "deepseek-r1", "--engine", "ollama", "--context", "8192", "--gpu", "h200", "--gpus", "8", "--kv-dtype", "f16")
    code, heads = kb_json(capsys, *base)
    assert code == 0 and heads["mla_full_heads"] is True
    code, latent = kb_json(capsys, *base, "--mla-cache", "latent")
    assert code == 0 and latent["mla_full_heads"] is False
    assert heads["kv_cache_bytes"] == 61 * 8192 * 128 * (192 + 128) * 2
    assert latent["kv_cache_bytes"] == 61 * 8192 * 576 * 2
    code, llamacpp = kb_json(capsys, *base[:2], "--engine", "llamacpp", *base[4:])
    assert code == 0 and llamacpp["kv_cache_bytes"] == latent["kv_cache_bytes"]
