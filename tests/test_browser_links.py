"""Support engineers' links in a real browser: copy for email, step links, short links, redirects, print."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, run_kb

ENTRY = "vllm-no-available-kv-cache-blocks"


@pytest.fixture
def clip_page(browser):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    pg = context.new_page()
    yield pg
    context.close()


def test_copy_for_email_gives_what_kb_cite_prints(clip_page, site_server):
    clip_page.goto(f"{site_server}errors/{ENTRY}/")
    clip_page.get_by_role("button", name="Copy for email").click()
    clip_page.get_by_role("status").filter(has_text="Copied").wait_for()
    copied = clip_page.evaluate("navigator.clipboard.readText()")
    expected = run_kb("cite", ENTRY).stdout
    assert copied == expected


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
