"""Support engineers' links in a real browser: copy for email, step links, short links, redirects, print."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_kb
from errorkb.build.linker import link
from errorkb.build.loader import load
from errorkb.build.pages import snippets_of
from errorkb.cli.main import cite
from errorkb.cli.settings import read_settings

ENTRY = "vllm-no-available-kv-cache-blocks"


@pytest.fixture
def clip_page(browser):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    pg = context.new_page()
    yield pg
    context.close()


def copy_by_click(page, button) -> str:
    """Empty the clipboard, click, and read what the click put there."""
    page.evaluate("navigator.clipboard.writeText('')")
    button.click()
    page.wait_for_function("navigator.clipboard.readText().then(t => t.length > 0)", polling=50, timeout=5000)
    return page.evaluate("navigator.clipboard.readText()")


def test_copy_for_email_gives_what_kb_cite_prints(clip_page, site_server):
    clip_page.goto(f"{site_server}errors/{ENTRY}/")
    clip_page.get_by_role("button", name="Copy for email", exact=True).click()
    clip_page.get_by_role("status").filter(has_text="Copied").wait_for()
    copied = clip_page.evaluate("navigator.clipboard.readText()")
    assert copied == run_kb("cite", ENTRY).stdout
    step = copy_by_click(clip_page, clip_page.get_by_role("button", name="Copy step 2 for email"))
    assert step == run_kb("cite", ENTRY, "--step", "2").stdout


def test_every_copy_button_gives_kb_cite_and_every_command_of_the_step(clip_page, site_server):
    """Every entry and every step of the real KB, through the clipboard, against `kb cite` (its function, one graph)."""
    graph, settings = link(load(ROOT)), read_settings(ROOT)
    entries = steps = 0
    for kind in ("errors", "guides"):
        word = "step" if kind == "errors" else "cause"
        for entry_id, entry in sorted(graph.loaded.entries[kind].items()):
            clip_page.goto(f"{site_server}{kind}/{entry_id}/")
            copied = copy_by_click(clip_page, clip_page.get_by_role("button", name="Copy for email", exact=True))
            assert copied == cite(graph, settings, entry_id, None), entry_id
            snips = snippets_of(graph, settings, kind, entry_id)  # what `kb cite --step N` prints
            entries += 1
            count = len(entry.solution if kind == "errors" else entry.causes)
            for n in range(1, count + 1):
                copied = copy_by_click(clip_page, clip_page.get_by_role("button", name=f"Copy {word} {n} for email"))
                assert copied == snips["steps"][n - 1]["text"], (entry_id, n)
                # every command the page shows in this step is in what was copied, whole and indented
                section = clip_page.locator(f"xpath=//*[@id='{word}-{n}']/following-sibling::*[following-sibling::p[@data-kb-step='{n}'] or self::p[@data-kb-step='{n}']]")
                for code in section.locator("pre code").all_inner_texts():
                    for line in code.rstrip("\n").split("\n"):
                        if line.strip():
                            assert any(c.startswith("    ") and c.strip() == line.strip() for c in copied.split("\n")), (entry_id, n, line)
                steps += 1
    print(f"copied {entries} entries and {steps} steps in the browser")
    assert entries == len(graph.errors) + len(graph.guides) and steps > 3 * entries


def test_copy_link_to_a_step(clip_page, site_server):
    clip_page.goto(f"{site_server}errors/{ENTRY}/")
    clip_page.get_by_role("button", name="Copy link to step 2").click()
    clip_page.get_by_role("status").filter(has_text="Copied").wait_for()
    copied = clip_page.evaluate("navigator.clipboard.readText()")
    assert copied == run_kb("cite", ENTRY, "--step", "2").stdout.splitlines()[-1]


def test_short_link_and_step_anchor_survive_the_redirect(page, site_server):
    page.goto(f"{site_server}e/{ENTRY}/#step-2")
    page.wait_for_url(re.compile(rf"/errors/{ENTRY}/#step-2$"))
    assert page.locator("#step-2").is_visible()


def test_redirects_work_without_javascript(browser, site_server):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{site_server}e/{ENTRY}/")
    pg.wait_for_url(re.compile(rf"/errors/{ENTRY}/$"), timeout=10000)
    assert pg.locator("#step-1").count() == 1
    context.close()


def test_an_entry_prints_on_two_pages_at_most_with_its_url(page, site_server):
    sizes = {}
    for path in sorted((ROOT / "entries" / "errors").glob("*.yaml")):
        page.goto(f"{site_server}errors/{path.stem}/")
        page.emulate_media(media="print")
        assert page.locator(".md-header").is_hidden()
        url = page.locator(".kb-print-url")
        assert url.is_visible() and url.inner_text().endswith(f"/errors/{path.stem}/")
        pdf = page.pdf(format="A4")
        sizes[path.stem] = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
        page.emulate_media(media="screen")
    too_long = {k: v for k, v in sizes.items() if v > 2}
    assert too_long == {}, sizes
