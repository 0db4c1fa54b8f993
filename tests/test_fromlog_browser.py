"""Paste a real start-up log into the calculator page in a real browser: the form is filled from the log and the
page proposes the same settings, with the same commands, as `kb will-it-run --from-log`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "hooks") not in sys.path:
    sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.calculator import fromlog, proposal  # noqa: E402

CASES = json.loads((ROOT / "tests" / "fromlog_cases.json").read_text(encoding="utf-8"))["cases"]
LOG = next(c for c in CASES if c["name"].startswith("vLLM V0"))["log"]  # vllm-project/vllm#10517, RTX 3090, 29k refused


def open_log_box(page, site_server):
    page.goto(site_server + "will-it-run/")
    page.wait_for_selector("#wir[data-ready]", timeout=15_000)
    page.click("#wir-log-box summary")


def test_paste_a_refused_start_up(page, site_server):
    open_log_box(page, site_server)
    page.fill("#wir-log", LOG)
    page.click("#wir-log-read")
    page.wait_for_selector("#wir-log-proposals li")

    # the calculator is filled from the log
    assert page.is_checked("input[name=engine][value=vllm]")
    assert page.input_value("#wir-context") == "29000"
    assert page.input_value("#wir-util") == "0.9"
    assert page.input_value("#wir-vram") == "23.58"
    assert "ctx=29000" in page.url

    # the same proposal as the Python reader, command for command
    expected = proposal.propose(fromlog.read_log(LOG))
    items = page.locator("#wir-log-proposals li")
    assert items.count() == len(expected["proposals"]) == 4
    for i, p in enumerate(expected["proposals"]):
        assert items.nth(i).get_attribute("data-change") == p["change"]
        assert items.nth(i).locator("code").text_content() == p["command"]
    assert "--max-model-len 23648" in items.first.text_content()  # the limit vLLM printed for this pool
    assert "does not fit" in page.text_content("#wir-log-budget")
    link = page.locator("#wir-log-entry")
    assert link.get_attribute("href").endswith("/errors/vllm-max-seq-len-exceeds-kv-cache/")


def test_pasted_text_is_never_markup(page, site_server):
    open_log_box(page, site_server)
    hostile = LOG.replace("Loading model weights took", "<img src=x onerror=window.__owned=1> Loading model weights took")
    hostile += "\nvllm serve <b>x</b>\n"
    page.fill("#wir-log", hostile)
    page.click("#wir-log-read")
    page.wait_for_selector("#wir-log-proposals li")
    assert page.evaluate("window.__owned") is None
    assert page.locator("#wir-log-out img, #wir-log-out b").count() == 0
    assert "<b>x</b>" in page.locator("#wir-log-proposals code").first.text_content()


def test_not_a_log(page, site_server):
    open_log_box(page, site_server)
    page.fill("#wir-log", "hello")
    page.click("#wir-log-read")
    assert "does not look like" in page.text_content("#wir-log-said")


def test_a_longer_context_than_an_unknown_model_allows_is_flagged(page, site_server):
    """vLLM refuses a --max-model-len above the model's own limit: for a model the site has no entry for, the
    page says the longer context holds only if the model allows it (noonghunna/club-3090#612)."""
    log = next(c for c in CASES if c.get("source") == "noonghunna/club-3090#612")["log"]
    open_log_box(page, site_server)
    page.fill("#wir-log", log)
    page.click("#wir-log-read")
    page.wait_for_selector("#wir-log-proposals li")
    item = page.locator("#wir-log-proposals li").first
    assert item.locator("code").text_content().endswith("--max-model-len 567978 --kv-cache-dtype fp8")
    assert "only if the model's own limit, max_position_embeddings, is at least 567,978 tokens" in item.text_content()
