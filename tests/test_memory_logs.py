"""The calculator against real start-up logs (tests/data/real-memory-logs/): every log gives rows, every row is
either checked or says why not, and every checked row meets issue 13's bar (llama.cpp and Ollama KV to the printed
digit, vLLM and SGLang pool within 10%, weights within 3%, verdict equal to the log's outcome), except the misses a
log file explains under known_misses, which must stay misses.

The rows come from bench/accuracy.py, which prints the same checks as a table (make bench).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import accuracy  # noqa: E402

LOGS = accuracy.read_logs()
ROWS = accuracy.rows(ROOT)
CHECKED = [r for r in ROWS if r.ok is not None]


@pytest.mark.parametrize("row", CHECKED, ids=[f"{r.case}:{r.quantity}" for r in CHECKED])
def test_log(row):
    if row.known:  # explained in the log file; if it starts to pass, the explanation is stale
        assert not row.ok, f"{row.case}: {row.quantity} now passes; remove it from known_misses"
    else:
        assert row.ok, f"{row.case}: {row.quantity} reported {row.reported}, predicted {row.predicted} ({row.note})"


@pytest.mark.parametrize("name,log", LOGS, ids=[name for name, _ in LOGS])
def test_every_log_is_checked_or_says_why(name, log):
    """No log is skipped: it gives at least one row, each unchecked row gives its reason, and a log that shows
    the engine starting or refusing to gets a verdict row."""
    rows = [r for r in ROWS if r.case == name]
    assert rows, f"{name} gives no row"
    for row in rows:
        assert row.ok is not None or row.note.strip(), f"{name}: {row.quantity} is unchecked without a reason"
    if log.get("outcome"):
        assert any("verdict" in r.quantity for r in rows), f"{name} shows an outcome but has no verdict row"
    for quantity in log.get("known_misses") or {}:
        assert any(r.quantity == quantity and r.ok is not None for r in rows), f"{name}: known miss {quantity!r} is no row"


def test_most_rows_are_checked():
    assert len(CHECKED) >= len(ROWS) * 3 // 4, f"only {len(CHECKED)} of {len(ROWS)} rows are checked"


@pytest.mark.parametrize("engine,quantity", [
    ("llamacpp", "KV cache"), ("llamacpp", "KV on the GPU"), ("ollama", "KV cache (memory.required.kv)"),
    ("ollama", "KV cache (llama.cpp inside Ollama)"), ("vllm", "KV pool"), ("vllm", "KV tokens for the printed pool"),
    ("vllm", "weights"), ("vllm", "verdict"), ("sglang", "K size for the printed #tokens"),
    ("sglang", "token pool from --mem-fraction-static"), ("sglang", "KV pool size (K + V)"), ("sglang", "verdict")])
def test_each_engine_is_checked_against_real_logs(engine, quantity):
    checked = [r for r in CHECKED if r.engine == engine and r.quantity.startswith(quantity)]
    assert checked, f"no real {engine} log gives what the {quantity} check needs"


def test_the_corpus_meets_its_counts():
    """Issue 13's corpus: 40 logs, 12 vLLM on 4 GPU types, 10 llama.cpp, 8 Ollama, 5 SGLang, each with a source."""
    engines = [log["engine"] for _, log in LOGS]
    assert len(LOGS) >= 40
    for engine, least in (("vllm", 12), ("llamacpp", 10), ("ollama", 8), ("sglang", 5)):
        assert engines.count(engine) >= least, engine
    gpus = {log["settings"].get("gpu") or log["settings"].get("vram_gib") for _, log in LOGS if log["engine"] == "vllm"}
    assert len(gpus - {None}) >= 4
    for name, log in LOGS:
        assert log["source"] and log["url"].startswith("https://github.com/"), name
        assert log.get("split", "test") in ("train", "test"), name
        assert log.get("outcome") in (None, "start", "fail"), name


def test_the_table_prints_every_row():
    text = accuracy.table(ROWS)
    assert all(r.case in text for r in ROWS)
    assert "passed" in text.splitlines()[-1]
    assert "bar" in accuracy.summary(ROWS)
