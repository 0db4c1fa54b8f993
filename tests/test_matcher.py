"""The matcher: normalisation, ranking, the exported index, agreement with the JavaScript, bounded time, `kb match`."""

from __future__ import annotations

import io
import json
import random
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_kb
from errorkb.cli.match import format_text, read_bounded
from errorkb.build.linker import link
from errorkb.build.loader import load
from errorkb.matcher.score import compile_index, match, matcher_index
from errorkb.matcher.normalise import MAX_INPUT, ROUGH_CUT, normalise

CASES = json.loads((ROOT / "tests" / "matcher_cases.json").read_text(encoding="utf-8"))
REAL_LOGS = sorted((ROOT / "tests" / "data" / "real-logs").glob("*.yaml"))


@pytest.fixture(scope="module")
def real_index() -> dict:
    return matcher_index(link(load(ROOT)))


@pytest.mark.parametrize("case", CASES["normalise"], ids=lambda c: c["name"])
def test_normalise_shared_cases(case):
    assert normalise(case["log"]).flat == case["flat"]


@pytest.mark.parametrize("case", CASES["rank"], ids=lambda c: c["name"])
def test_rank_shared_cases(case):
    got = [[m.id, m.score, m.confident] for m in match(case["log"], CASES["index"])]
    assert got == case["expect"]


@pytest.mark.parametrize("case", CASES["spans"], ids=lambda c: c["name"])
def test_spans_shared_cases(case):
    found = {m.id: m for m in match(case["log"], CASES["index"])}
    assert [[s.start, s.end, s.kind] for s in found[case["id"]].spans] == case["spans"]


def test_normalised_lines_keep_the_message_readable():
    text = "vllm-1  | \x1b[31mERROR\x1b[0m 11-05 12:19:32 [core.py:708] boom\n\n  File \"/usr/lib/python3/site-packages/vllm/x.py\", line 3\n"
    assert normalise(text).lines == ["boom", '  File "\u2026/vllm/x.py", line 3']


def test_a_wrapper_alone_is_confident_and_demoted_beside_a_root_cause():
    alone = match("AsyncEngineDeadError: Background loop has errored already.", CASES["index"])
    assert [(m.id, m.confident, m.wrapper) for m in alone] == [("engine-dead", True, True)]
    both = match("CUDA error: an illegal memory access was encountered\nAsyncEngineDeadError", CASES["index"])
    assert [m.id for m in both] == ["illegal", "engine-dead"] and not both[1].confident


def test_top_limits_and_ties_break_by_position_then_id():
    log = "CUDA out of memory. Tried to allocate 2 MiB"
    assert [m.id for m in match(log, CASES["index"])] == ["oom-load", "oom-run"]
    assert [m.id for m in match(log, CASES["index"], top=1)] == ["oom-load"]


def test_the_index_holds_every_error_entry_and_what_the_browser_needs(real_index):
    graph = link(load(ROOT))
    assert [e["id"] for e in real_index["entries"]] == sorted(graph.errors)
    assert set(real_index) == {"version", "confident", "weights", "entries", "facts"}  # the browser scores with what it downloads
    for record in real_index["entries"]:
        entry = graph.errors[record["id"]]
        assert record["url"] == f"errors/{record['id']}/"
        assert record["s"] == list(entry.signatures) and record.get("c", []) == list(entry.context)
        assert bool(record.get("w")) == entry.wrapper
    assert {e["id"] for e in real_index["entries"] if e.get("w")} >= {"vllm-async-engine-dead", "vllm-worker-failed-to-start", "nccl-error"}


def test_every_pattern_is_ascii_so_both_engines_fold_case_alike(real_index):
    for record in real_index["entries"]:
        for pattern in record["s"] + record.get("c", []):
            assert pattern.isascii(), f"{record['id']}: {pattern!r}"


def test_the_built_site_ships_the_index(built_site, real_index):
    shipped = json.loads((built_site / "api" / "v1" / "matcher.json").read_text(encoding="utf-8"))
    assert shipped == real_index


def _node_matches(index: dict, logs: list[str], tmp_path: Path) -> list:
    data = tmp_path / "input.json"
    data.write_text(json.dumps({"index": index, "logs": logs}), encoding="utf-8")
    script = f"""
import {{ readFileSync }} from "node:fs";
import {{ compileIndex, match }} from {json.dumps((ROOT / "site_src" / "javascripts" / "matcher.mjs").as_uri())};
const d = JSON.parse(readFileSync({json.dumps(str(data))}, "utf8"));
const entries = compileIndex(d.index);  // once, as the paste box does: compiling per log costs more than matching
const out = d.logs.map((log) => {{
  const r = match(log, entries);
  return {{ flat: r.normalised.flat, matches: r.matches.map((m) => [m.id, m.score, m.confident, m.spans.map((s) => [s.start, s.end, s.kind])]) }};
}});
process.stdout.write(JSON.stringify(out));
"""
    result = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_python_and_javascript_agree_on_every_real_log(real_index, tmp_path):
    logs = [yaml.safe_load(p.read_text(encoding="utf-8"))["log"] for p in REAL_LOGS]
    logs.append("\n".join(logs))  # one long paste made of all of them
    entries = compile_index(real_index)
    expected = [
        {"flat": normalise(log).flat, "matches": [[m.id, m.score, m.confident, [[s.start, s.end, s.kind] for s in m.spans]] for m in match(log, entries)]}
        for log in logs
    ]
    assert _node_matches(real_index, logs, tmp_path) == expected


def _pathological() -> dict[str, str]:
    rng = random.Random(7)
    real = "\n".join(yaml.safe_load(p.read_text(encoding="utf-8"))["log"] for p in REAL_LOGS)
    return {
        "4 MB of real logs": real * (4_000_000 // len(real) + 1),
        "2 MB of binary noise": bytes(rng.getrandbits(8) for _ in range(2_000_000)).decode("latin-1"),
        "one 100 KB line": "".join(rng.choice("abcdef /\\:._-0123456789") for _ in range(100_000)),
        "a message repeated without end": "nccl error " * 50_000,
        "escapes and entities": "\\n\\u001b[&amp;" * 60_000,
        "one long path": "/" + "/a" * 200_000,
    }


@pytest.mark.parametrize("name", list(_pathological()))
def test_a_pathological_paste_returns_in_bounded_time(name, real_index):
    entries = compile_index(real_index)
    text = _pathological()[name]
    started = time.perf_counter()
    found = match(text, entries)
    elapsed = time.perf_counter() - started
    assert elapsed < 3.0, f"{name}: {elapsed:.2f} s"
    assert len(normalise(text).flat) <= MAX_INPUT + 1
    assert all(m.score <= 1.0 for m in found)


def test_the_command_line_reads_only_the_head_and_tail_of_a_huge_log():
    data = b"a" * ROUGH_CUT + b"MIDDLE" + b"z" * ROUGH_CUT
    text = read_bounded(io.BytesIO(data))
    assert "MIDDLE" not in text and text.startswith("a") and text.endswith("z") and len(text) == ROUGH_CUT + 1
    assert read_bounded(io.BytesIO(b"short log")) == "short log"


def test_kb_match_json(tmp_path, real_index):
    log = tmp_path / "log.txt"
    log.write_text("(pid=1) ERROR x\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n", encoding="utf-8")
    result = run_kb("match", str(log), "--json")
    assert result.returncode == 0, result.stderr
    matches = json.loads(result.stdout)["matches"]
    # the bare message: the three general siblings are confident, led by the one whose prior (the number of
    # real OOM logs of its own that show no phase) is highest; image generation needs its frames and is listed below
    siblings = ("cuda-oom-loading-model", "cuda-oom-long-context", "cuda-oom-training")
    priors = {e["id"]: e.get("p", 0) for e in real_index["entries"] if e["id"] in siblings}
    assert len(set(priors.values())) == 3, priors
    assert [m["id"] for m in matches if m["score"] >= 0.7][0] == max(priors, key=priors.get)
    assert {m["id"] for m in matches if m["score"] >= 0.7} == set(siblings)
    assert {m["id"] for m in matches if m["score"] < 0.7} == {"cuda-oom-image-generation"}
    assert all(set(m) == {"id", "title", "url", "score"} for m in matches)
    assert matches[0]["url"].startswith("https://") and matches[0]["url"].endswith(f"/errors/{matches[0]['id']}/")
    assert [m["score"] for m in matches] == sorted((m["score"] for m in matches), reverse=True)


def test_kb_match_stdin_top_and_text():
    log = "RuntimeError: CUDA error: an illegal memory access was encountered\nvllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue."
    top = run_kb("match", "-", "--json", "--top", "1", stdin=log)
    assert [m["id"] for m in json.loads(top.stdout)["matches"]] == ["cuda-illegal-memory-access"]
    text = run_kb("match", stdin=log)
    assert text.returncode == 0
    assert text.stdout.index("cuda-illegal-memory-access") < text.stdout.index("vllm-async-engine-dead")
    assert "matched: an illegal memory access was encountered" in text.stdout


def test_kb_match_nothing_and_usage_errors(tmp_path):
    none = run_kb("match", "--json", stdin="ValueError: this belongs to no entry\n")
    assert none.returncode == 1
    answer = json.loads(none.stdout)
    assert answer["matches"] == [] and answer["lines"] == ["ValueError: this belongs to no entry"]
    assert set(answer) == {"matches", "related", "facts", "lines", "steps"} and answer["steps"] == {}
    text = run_kb("match", stdin="hello").stdout
    assert "No entry's signature matches this log" in text and "Error line" not in text  # no error line, nothing to search
    assert run_kb("match", str(tmp_path / "missing.log")).returncode == 2
    assert run_kb("match", "--top", "-1", stdin="x").returncode == 2


def test_a_traceback_pasted_without_its_exception_is_looked_up_by_its_last_frame():
    """No exception line and no error line: the last frame's module and function, and its source line, are the query."""
    real = yaml.safe_load((ROOT / "tests/data/real-logs/torch-load-map-location--cmt-demo.yaml").read_text(encoding="utf-8"))["log"]
    answer = json.loads(run_kb("match", "--json", stdin=real).stdout)
    assert answer["matches"] == [] and answer["lines"] == ["torch serialization default_restore_location"]
    assert answer["related"] and answer["related"][0]["id"] == "torch-load-map-location"
    # a log with an exception line keeps it as the query, frames or not
    with_exception = json.loads(run_kb("match", "--json", stdin=real + "\nValueError: this belongs to no entry\n").stdout)
    assert with_exception["lines"] == ["ValueError: this belongs to no entry"]


def test_facts_of_current_vllm_and_ollama_releases_are_read_from_real_logs():
    """vLLM 0.15 and later print their version beside a logo, and 0.14 and later name the device when memory is short."""
    def facts(name: str) -> dict:
        log = yaml.safe_load((ROOT / "tests/data/real-logs" / f"{name}.yaml").read_text(encoding="utf-8"))["log"]
        return {f["kind"]: f["value"] for f in json.loads(run_kb("match", "--json", stdin=log).stdout)["facts"]}

    assert facts("none--vllm-0.27.1-tp2-a100-startup-ulimit-warning")["vllm"] == "0.27.1"
    short = facts("vllm-free-memory-less-than-utilization--ci-cuda0-1-53-of-22-gib")
    assert short["capacity"] == "22.05 GiB in all, 1.53 GiB free"
    # Ollama 0.12.4 and later name the GPU in description= (name= is the backend's device, CUDA0 or ROCm0)
    assert facts("none--ollama-amd-apu-strix-halo-two-rocm-devices")["gpu"] == "AMD Radeon Graphics, 24.0 GiB"


def test_the_last_frame_of_a_windows_or_a_bare_path():
    from errorkb.matcher.related import last_frame

    windows = ['  File "C:\\envs\\demo\\lib\\site-packages\\torch\\cuda\\__init__.py", line 210, in _lazy_init', "    ^^^^^^^^"]
    assert last_frame(windows) == ["torch cuda __init__ _lazy_init"]  # a caret line is no source line
    bare = ['File "/srv/app/tools/train.py", line 9, in <module>', "    main(cfg)", 'File "/srv/app/tools/run.py", line 3, in main']
    assert last_frame(bare) == ["tools run main"]
    assert last_frame(["no frame here"]) == []


ADVERSARIAL = json.loads((ROOT / "tests" / "adversarial_signatures.json").read_text())


@pytest.mark.parametrize("pattern", ADVERSARIAL["patterns"])
def test_patterns_that_would_hang_a_backtracking_engine_run_in_linear_time(pattern):
    from errorkb.matcher import language

    assert language.check(pattern) is None, "the language must accept it, or the test proves nothing"
    compiled = language.compile(pattern)
    started = time.perf_counter()
    for unit, count in ADVERSARIAL["logs"].values():
        compiled.search(unit * count)
    assert time.perf_counter() - started < 5, "RE2 took longer than a linear scan of 3 MB can"


def _analysis_json(result) -> dict:
    return {
        "matches": [[m.id, m.score, m.confident] for m in result.matches],
        "related": [[r.id, r.score, list(r.words)] for r in result.related],
        "lines": result.lines,
        "facts": [[f.kind, f.label, f.value, f.start, f.end] for f in result.facts],
        "versions": result.versions,
        "steps": {k: [[h.number, h.title, h.tool, h.fits] for h in v] for k, v in result.steps.items()},
    }


def test_python_and_javascript_read_every_real_log_alike(tmp_path):
    """The whole reading (matches, possibly related, error lines, facts, versions) is the same in both twins."""
    from errorkb.matcher.analyse import Bundle, analyse
    from errorkb.matcher.related import related_index

    graph = link(load(ROOT))
    indexes = {"matcher": matcher_index(graph), "related": related_index(graph)}
    bundle = Bundle.from_indexes(indexes["matcher"], indexes["related"])
    logs = [yaml.safe_load(p.read_text(encoding="utf-8"))["log"] for p in REAL_LOGS]
    data = tmp_path / "input.json"
    data.write_text(json.dumps(indexes | {"logs": logs}), encoding="utf-8")
    script = f"""
import {{ readFileSync }} from "node:fs";
import {{ analyse, compileBundle }} from {json.dumps((ROOT / "site_src" / "javascripts" / "matcher.mjs").as_uri())};
const d = JSON.parse(readFileSync({json.dumps(str(data))}, "utf8"));
const bundle = compileBundle(d.matcher, d.related);
process.stdout.write(JSON.stringify(d.logs.map((log) => {{
  const r = analyse(log, bundle);
  return {{ matches: r.matches.map((m) => [m.id, m.score, m.confident]), related: r.related.map((x) => [x.id, x.score, x.words]),
    lines: r.lines, facts: r.facts.map((f) => [f.kind, f.label, f.value, f.start, f.end]), versions: r.versions,
    steps: Object.fromEntries(Object.entries(r.steps).map(([k, v]) => [k, v.map((h) => [h.number, h.title, h.tool, h.fits])])) }};
}})));
"""
    result = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    expected = [_analysis_json(analyse(log, bundle)) for log in logs]
    assert sum(bool(e["facts"]) for e in expected) > 20 and sum(bool(e["related"]) for e in expected) > 100  # the test exercises both
    for number, (mine, theirs) in enumerate(zip(expected, got)):
        assert theirs == mine, REAL_LOGS[number].name


STEP_LOGS = {
    "vllm-old": "INFO 08-01 10:00:00 api_server.py:219] vLLM API server version 0.5.4\n"
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method\n",
    "vllm-new": "INFO 05-01 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method\n",
    "ollama-new": "$ ollama -v\nollama version is 0.5.7\nError: timed out waiting for llama runner to start - progress 0.00 - \n",
    "no-version": "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method\n",
}


def test_steps_for_the_version_in_the_log_lead_in_both_twins(tmp_path):
    """A step written for some releases is named first when the log's version is one of them, and set apart when not."""
    from errorkb.matcher.analyse import Bundle, analyse
    from errorkb.matcher.related import related_index

    graph = link(load(ROOT))
    indexes = {"matcher": matcher_index(graph), "related": related_index(graph)}
    bundle = Bundle.from_indexes(indexes["matcher"], indexes["related"])
    got = {name: analyse(log, bundle) for name, log in STEP_LOGS.items()}
    old, new = got["vllm-old"].steps["cuda-reinit-forked-subprocess"], got["vllm-new"].steps["cuda-reinit-forked-subprocess"]
    assert [(h.number, h.tool, h.fits) for h in old] == [(2, "vllm", True)]
    assert [(h.number, h.fits) for h in new] == [(2, False)]
    assert [(h.number, h.fits) for h in got["ollama-new"].steps["ollama-runner-start-timeout"]] == [(2, True)]
    assert got["no-version"].steps == {}
    text = format_text(got["vllm-old"], "https://example.org/")
    assert "for vLLM 0.5.4 (in this log), start with:" in text
    assert "step 2: Upgrade vLLM so it picks spawn by itself  https://example.org/errors/cuda-reinit-forked-subprocess/#step-2" in text
    assert "not for vLLM 0.8.5:" in format_text(got["vllm-new"], "https://example.org/")
    data = tmp_path / "input.json"
    data.write_text(json.dumps(indexes | {"logs": STEP_LOGS}), encoding="utf-8")
    script = f"""
import {{ readFileSync }} from "node:fs";
import {{ analyse, compileBundle }} from {json.dumps((ROOT / "site_src" / "javascripts" / "matcher.mjs").as_uri())};
const d = JSON.parse(readFileSync({json.dumps(str(data))}, "utf8"));
const bundle = compileBundle(d.matcher, d.related);
process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(d.logs).map(([name, log]) => [name,
  Object.fromEntries(Object.entries(analyse(log, bundle).steps).map(([k, v]) => [k, v.map((h) => [h.number, h.title, h.tool, h.fits])]))]))));
"""
    result = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    mine = {name: {k: [[h.number, h.title, h.tool, h.fits] for h in v] for k, v in r.steps.items()} for name, r in got.items()}
    assert json.loads(result.stdout) == mine
