"""The log reader and the settings it proposes: the shared cases (tests/fromlog_cases.json, also run by
tests/js/fromlog.test.mjs), every real log of tests/data/real-memory-logs, and `kb will-it-run --from-log`."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "hooks") not in sys.path:
    sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.build.loader import load  # noqa: E402
from errorkb.calculator import fromlog, proposal  # noqa: E402
from errorkb.calculator.facts import GIB, MIB  # noqa: E402
from errorkb.calculator.hardware import arch_of  # noqa: E402
from errorkb.cli import main as cli  # noqa: E402
from errorkb.cli.fromlog import resolve_gpu, resolve_model  # noqa: E402

CASES = json.loads((ROOT / "tests" / "fromlog_cases.json").read_text(encoding="utf-8"))["cases"]
LOGS = sorted((ROOT / "tests" / "data" / "real-memory-logs").glob("*.yaml"))
ENTRIES = load(ROOT).entries


def same(a, b) -> bool:
    return math.isclose(a, b, rel_tol=1e-9) if isinstance(a, float) or isinstance(b, float) else a == b


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_shared_case(case):
    r = fromlog.read_log(case["log"])
    for key, want in case["expect"].items():
        assert r.get(key) is not None or want is None, f"{key} not read"
        assert same(r.get(key), want), f"{key}: read {r.get(key)!r}, want {want!r}"
    if "proposal" in case:
        arch = None
        if "model" in case:  # the case carries the architecture for the browser's test; it must be the entry's own
            arch = arch_of(ENTRIES["models"][case["model"]])
            assert case["arch"] == json.loads(json.dumps(arch)), "refresh the case's arch from the model entry"
        out = proposal.propose(r, arch, None, arch["native_context"] if arch else None)
        want = case["proposal"]
        assert out["starts"] == want["starts"]
        assert [p["change"] for p in out["proposals"]] == want["changes"]
        if "context" in want:
            assert out["proposals"][0]["context"] == want["context"], want.get("why")
        if out["proposals"] and out["proposals"][0]["change"] == "context":  # a longer context than the model allows?
            assert out["proposals"][0].get("model_limit_unknown", False) == want.get("model_limit_unknown", False)
        if "room_gib" in want:
            assert math.isclose(out["room_bytes"] / 2**30, want["room_gib"], rel_tol=0.005)
        for p in out["proposals"]:
            assert p["fits"]


def test_the_browser_copy_of_the_patterns_is_current():
    """tests/fromlog_patterns.json is what the node tests load; the build exports the same in calculator.json."""
    copy = json.loads((ROOT / "tests" / "fromlog_patterns.json").read_text(encoding="utf-8"))
    assert copy == json.loads(json.dumps(fromlog.export())), "refresh: python -c 'export()' into tests/fromlog_patterns.json"


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_real_log(path):
    """Each real log is read as its engine; every proposal fits when fed back through the budget, with the model's
    architecture when the log names a known model; a printed engine limit is met within 1%."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    r = fromlog.read_log(data["log"])
    want = {"llamacpp": ("llamacpp", "ollama")}.get(data["engine"], (data["engine"],))
    assert r["engine"] in want
    _, model = resolve_model(r.get("model") or (data.get("model") and ENTRIES["models"][data["model"]].hf_repo),
                             ENTRIES["models"])
    arch = arch_of(model) if model else None
    gpu = ENTRIES["gpus"].get(data["settings"].get("gpu") or "")
    gpu_gib = gpu.memory_mib * MIB / GIB if gpu else None
    for a in (None, arch) if arch else (None,):
        out = proposal.propose(r, a, gpu_gib)
        budget = proposal.pool_from_tokens(r, a)  # a pool printed in tokens only is sized from the architecture
        for p in out["proposals"]:
            assert p["fits"], (p, out)
            settings = {k: p[k] for k in ("context", "seqs", "kv", "gpus", "util")}
            assert proposal.fits(budget, a, {**settings, "kv0": out["asked"]["kv"]}, gpu_gib)
            assert p["command"].split()[0] in ("vllm", "python", "llama-server", "OLLAMA_NUM_PARALLEL=" + str(p["seqs"]))
        printed = r.get("estimated_max_len") or (r.get("kv_tokens") if r["engine"] in ("vllm", "sglang") else None)
        derived = r.get("kv_gib") is None and budget.get("kv_gib") is not None
        plain = a is None or (derived and not a.get("sliding_window") and not a.get("layer_pattern"))
        if plain and printed and out["proposals"] and out["proposals"][0]["change"] == "context":
            assert abs(out["proposals"][0]["context"] - printed) <= 0.01 * printed
        if r.get("failure_kind") in ("vllm_max_seq_len", "vllm_no_blocks", "sglang_memory"):
            assert out["starts"] is not True, "the log failed for want of KV memory; the budget says it starts"
        if data.get("outcome") == "start" and not r.get("failure"):
            assert out["starts"] is not False, "the log started; the budget says it does not"


def test_failing_logs_name_their_entry():
    for path in LOGS:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        r = fromlog.read_log(data["log"])
        if data.get("outcome") == "fail" and r.get("failure"):
            assert r["error_id"] and (ROOT / "entries" / "errors" / f"{r['error_id']}.yaml").exists(), path.stem


def test_names_resolve_to_entries():
    assert resolve_model("neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8", ENTRIES["models"])[0] == "llama-3.1-70b"
    assert resolve_model("/home/user/DeepSeek-V2-Lite-Chat/", ENTRIES["models"])[0] == "deepseek-v2-lite"
    assert resolve_model("/home/user/DeepSeek-V2-Chat/", ENTRIES["models"])[0] is None  # no entry, no neighbour
    assert resolve_gpu("GeForce RTX 4090", ENTRIES["gpus"])[0] == "rtx-4090"


def test_cli_from_log(tmp_path, capsys):
    log = tmp_path / "start.log"
    log.write_text(next(c["log"] for c in CASES if c["name"].startswith("vLLM V0")), encoding="utf-8")
    code = cli.main(["--root", str(ROOT), "will-it-run", "--from-log", str(log), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["error_id"] == "vllm-max-seq-len-exceeds-kv-cache"
    assert {p["change"] for p in out["proposals"]} == {"context", "util", "kv", "gpus"}
    assert all(p["fits"] for p in out["proposals"])
    code = cli.main(["--root", str(ROOT), "will-it-run", "--from-log", str(log)])
    text = capsys.readouterr().out
    assert "--max-model-len 23648" in text and "/errors/vllm-max-seq-len-exceeds-kv-cache/" in text
    log.write_text("nothing an engine prints", encoding="utf-8")
    assert cli.main(["--root", str(ROOT), "will-it-run", "--from-log", str(log)]) == 2


def test_a_llamacpp_log_of_an_mla_gguf_without_mla_keys_is_sized_with_full_heads():
    """DeepSeek R1 printed with n_head_kv 128 (a GGUF without key_length_mla) caches 128 heads x (192 K + 128 V) per
    layer and cell; with the keys llama.cpp prints n_head_kv 1 and keeps the 576-wide latent."""
    arch = arch_of(ENTRIES["models"]["deepseek-r1"])
    s = {"context": 8192, "seqs": 1, "kv": "f16", "gpus": 1}
    latent = proposal.kv_need({"engine": "llamacpp", "n_head_kv": 1}, arch, s)
    heads = proposal.kv_need({"engine": "llamacpp", "n_head_kv": 128}, arch, s)
    assert latent == 61 * 8192 * 576 * 2
    assert heads == 61 * 8192 * 128 * (192 + 128) * 2
