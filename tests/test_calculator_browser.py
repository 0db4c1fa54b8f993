"""The "Will it run?" page in a real browser: fill the form, read the answer, reload it from the
copied link, and check that the page and the Python calculator (the CLI's) give the same numbers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "hooks") not in sys.path:
    sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.calculator import hardware
from errorkb.calculator import vram  # noqa: E402
from errorkb.build.loader import load  # noqa: E402

MODEL, GPU = "llama-3.1-8b", "rtx-4090"


@pytest.fixture(scope="module")
def entries():
    loaded = load(ROOT)
    models, gpus = loaded.entries["models"], loaded.entries["gpus"]
    if MODEL not in models or GPU not in gpus:
        pytest.fail(f"the browser test needs entries/models/{MODEL}.yaml and entries/gpus/{GPU}.yaml")
    return models, gpus


def open_calculator(page, url):
    page.goto(url)
    if not page.locator("script[src*='will-it-run.mjs']").count():
        pytest.fail("the page does not load javascripts/will-it-run.mjs: add it to extra_javascript (type: module) in mkdocs.yml")
    page.wait_for_selector("#wir[data-ready]", timeout=15_000)


def answer(page) -> dict:
    return {key: page.text_content(f"#wir-{key}") for key in ("verdict", "max-context", "max-seqs", "command", "val-weights", "val-kv")}


def expected(entries, engine, context, seqs=1, kv="auto"):
    models, gpus = entries
    sc = hardware.scenario(GPU, hardware.gpu_of(gpus[GPU]), engine, context, None, kv, seqs)
    return vram.evaluate(hardware.arch_of(models[MODEL]), sc)


def test_fill_the_form_then_reload_from_the_copied_link(page, site_server, entries):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_server.rstrip("/"))
    open_calculator(page, site_server + "will-it-run/")
    page.select_option("#wir-model", MODEL)
    page.check("input[name=engine][value=vllm]")
    page.select_option("#wir-gpu", GPU)
    page.fill("#wir-context", "65536")
    page.fill("#wir-seqs", "2")
    first = answer(page)
    assert first["verdict"].startswith("Does not fit")
    out = expected(entries, "vllm", 65536, 2)
    assert out["verdict"] == "no"
    assert first["max-context"] == f"{out['max_context']:,} tokens"  # the page agrees with errorkb.vram
    assert f"--max-model-len {out['max_context']}" in first["command"]
    links = page.locator("#wir-errors a")
    assert links.count() >= 1 and links.first.get_attribute("href").endswith("/errors/vllm-max-seq-len-exceeds-kv-cache/")

    page.click("#wir-copy")
    page.wait_for_function("document.getElementById('wir-copy-status').textContent !== ''")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(site_server) and "ctx=65536" in copied

    again = page.context.new_page()
    open_calculator(again, copied)
    assert answer(again) == first
    assert again.input_value("#wir-context") == "65536"
    assert again.is_checked("input[name=engine][value=vllm]")


@pytest.mark.parametrize("engine,context,kv", [("llamacpp", 32768, "q8_0"), ("ollama", 8192, "f16"), ("vllm", 8192, "fp8"),
                                               ("sglang", 8192, "fp8")])
def test_page_and_cli_agree(page, site_server, entries, engine, context, kv):
    open_calculator(page, f"{site_server}will-it-run/?m={MODEL}&e={engine}&ctx={context}&g={GPU}&kv={kv}")
    out = expected(entries, engine, context, kv=kv)
    shown = answer(page)
    assert shown["max-context"] == f"{out['max_context']:,} tokens"
    assert shown["max-seqs"].startswith(f"{out['max_seqs']:,} at")
    for key, field in (("kv", "kv_cache_bytes"), ("weights", "weights_bytes"), ("overhead", "overhead_bytes")):
        assert int(page.get_attribute(f"#wir-val-{key}", "data-bytes")) == out[field], key


def test_keyboard_only(page, site_server, entries):
    open_calculator(page, f"{site_server}will-it-run/?m={MODEL}&g={GPU}")
    page.focus("#wir-search")
    page.keyboard.type("gemma")
    page.wait_for_function("document.getElementById('wir-verdict').textContent.includes('Gemma')")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "wir-model"
    before = page.text_content("#wir-verdict")
    page.keyboard.press("ArrowDown")
    page.wait_for_function("t => document.getElementById('wir-verdict').textContent !== t", arg=before)
    assert "Gemma" in page.text_content("#wir-verdict")
    assert page.get_attribute("#wir-verdict", "aria-live") == "polite"
    unlabeled = page.evaluate("""[...document.querySelectorAll('#wir-form input, #wir-form select')]
        .filter(e => e.type !== 'radio' && !document.querySelector(`label[for="${e.id}"]`)).map(e => e.id)""")
    assert unlabeled == []


@pytest.mark.parametrize("value", ["-5", "0", "0.5", "1e30", ""])
def test_nonsense_gets_a_message_never_nan(page, site_server, entries, value):
    open_calculator(page, f"{site_server}will-it-run/?m={MODEL}&g={GPU}")
    page.fill("#wir-context", value)
    page.wait_for_function("document.getElementById('wir-result').dataset.verdict === 'error'")
    text = page.inner_text("#wir-result")
    assert "Context must be" in text or "longer than the model" in text
    assert "NaN" not in text and "Infinity" not in text


def test_model_page_links_to_the_filled_in_calculator(page, site_server, entries):
    page.goto(f"{site_server}models/{MODEL}/")
    link = page.locator(f"a[href*='will-it-run/?m={MODEL}'][href*='g={GPU}']").first
    href = link.get_attribute("href")
    link.click()
    page.wait_for_selector("#wir[data-ready]", timeout=15_000)
    assert page.input_value("#wir-model") == MODEL and page.input_value("#wir-gpu") == GPU
    assert "ctx=" in href and page.input_value("#wir-context") == href.split("ctx=")[1].split("&")[0]


def test_deepseek_with_ollama_shows_the_mla_cache_choice(page, site_server, entries):
    """The Ollama library's DeepSeek GGUFs cache every head: the page says so, counts it as the CLI does, and lets
    a visitor with a GGUF that has the MLA keys switch to the latent cache (kept in the link)."""
    models, gpus = load(ROOT).entries["models"], load(ROOT).entries["gpus"]
    arch = hardware.arch_of(models["deepseek-r1"])
    sc = hardware.scenario("h200", hardware.gpu_of(gpus["h200"]), "ollama", 32768, None, "f16", 1, 8)
    heads, latent = vram.evaluate(arch, sc), vram.evaluate(arch, {**sc, "mla_full_heads": False})
    assert heads["kv_cache_bytes"] > 50 * latent["kv_cache_bytes"]
    open_calculator(page, f"{site_server}will-it-run/?m=deepseek-r1&e=ollama&g=h200&n=8&ctx=32768&kv=f16")
    assert page.is_visible("#wir-mla-field")
    assert int(page.get_attribute("#wir-val-kv", "data-bytes")) == heads["kv_cache_bytes"]
    assert "no MLA keys" in page.inner_text("#wir-result")
    page.select_option("#wir-mla", "latent")
    page.wait_for_function(f"document.getElementById('wir-val-kv').dataset.bytes === '{latent['kv_cache_bytes']}'")
    assert "mla=latent" in page.url
    page.check("input[name=engine][value=vllm]")
    assert not page.is_visible("#wir-mla-field")
