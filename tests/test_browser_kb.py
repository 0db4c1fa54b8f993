"""What a visitor does, in Debian's chromium: browse to an entry, follow a link, search."""

from __future__ import annotations

import re

import yaml

from conftest import ROOT


def h1(page) -> str:
    return page.locator("h1").first.inner_text().rstrip("¶").strip()


def first_error_with_related():
    for path in sorted((ROOT / "entries" / "errors").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        if data.get("related_errors"):
            return path.stem, data
    raise AssertionError("no entry with related errors")


def test_browse_home_category_entry_and_related_link(page, site_server):
    entry_id, data = first_error_with_related()
    category_name = yaml.safe_load((ROOT / "entries" / "categories.yaml").read_text())[data["category"]]["name"]
    page.goto(site_server + "errors/")
    assert h1(page) == "Errors KB"
    page.get_by_role("article").get_by_role("link", name=category_name, exact=True).first.click()
    page.wait_for_url(re.compile(rf"/categories/{data['category']}/$"))
    page.get_by_role("article").get_by_role("link", name=data["title"], exact=True).click()
    page.wait_for_url(re.compile(rf"/errors/{entry_id}/$"))
    assert h1(page) == data["title"]
    assert page.locator("#step-1").is_visible()
    assert page.locator("time").first.get_attribute("datetime") == str(data["last_verified"])
    related_id = data["related_errors"][0]
    related = yaml.safe_load((ROOT / "entries" / "errors" / f"{related_id}.yaml").read_text())
    page.locator("#related-errors ~ ul").first.get_by_role("link", name=related["title"], exact=True).click()
    page.wait_for_url(re.compile(rf"/errors/{related_id}/$"))
    # the reverse link is there without the related entry having written it
    back = page.locator("#related-errors ~ ul").first.get_by_role("link", name=data["title"], exact=True)
    assert back.count() == 1


def test_find_an_entry_by_typing_its_error_text(page, site_server):
    entry_id, data = first_error_with_related()
    page.goto(site_server)
    page.keyboard.press("/")  # Material's shortcut to the search box; clicking works too
    box = page.locator("input[data-md-component=search-query], input.pagefind-ui__search-input").first
    box.wait_for(state="visible")
    words = " ".join(re.findall(r"[A-Za-z]{4,}", data["error"])[:6])
    box.fill(words)
    result = page.locator(f"a[href*='errors/{entry_id}/']").first
    result.wait_for(state="visible", timeout=15000)
    result.click()
    page.wait_for_url(re.compile(rf"/errors/{entry_id}/"))
    assert h1(page) == data["title"]
