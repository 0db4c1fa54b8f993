"""The calculator against real start-up logs: llama.cpp and Ollama KV sizes exact at the printed
precision, vLLM's block layout within 1% of the tokens it printed, its KV pool within 10%.

The rows come from bench/accuracy.py, which prints the same checks as a table (make bench).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import accuracy  # noqa: E402

ROWS = accuracy.rows(ROOT)
CHECKED = [r for r in ROWS if r.ok is not None]


@pytest.mark.parametrize("row", CHECKED, ids=[f"{r.case}:{r.quantity}" for r in CHECKED])
def test_log(row):
    assert row.ok, f"{row.case}: {row.quantity} reported {row.reported}, predicted {row.predicted} ({row.note})"


def test_unchecked_rows_say_why():
    """A row is left unchecked only when its log lacks an input (or it is shown for information), and says so."""
    for row in ROWS:
        if row.ok is None:
            assert row.note.strip(), row.case
    assert len(CHECKED) >= len(ROWS) // 2


@pytest.mark.parametrize("engine,quantity", [("llamacpp", "KV cache"), ("ollama", "KV cache (memory.required.kv)"),
                                             ("vllm", "KV pool"), ("vllm", "KV tokens for the printed pool")])
def test_each_engine_is_checked_against_real_logs(engine, quantity):
    checked = [r for r in ROWS if r.engine == engine and r.quantity == quantity and r.ok is not None]
    assert checked, f"no real {engine} log gives what the {quantity} check needs"


def test_the_table_prints_every_row():
    text = accuracy.table(ROWS)
    assert all(r.case in text for r in ROWS)
    assert "passed" in text.splitlines()[-1]
