"""Site search on Pagefind: the query → entry cases of tests/search_cases.yaml, and the header's box, in a real browser."""

from __future__ import annotations

import re

import pytest
import yaml

from conftest import FIXTURES, ROOT, make_kb, mkdocs_build
from errorkb.build.loader import load
from errorkb.build.search import filters

CASES = yaml.safe_load((ROOT / "tests" / "search_cases.yaml").read_text(encoding="utf-8"))["cases"]
# The header box's order: Pagefind's results, then search.mjs's titleFirst over the first 20.
RUN_CASES = """async (cases) => {
  const pagefind = await import("/pagefind/pagefind.js");
  const { titleFirst } = await import("/javascripts/search.mjs");
  await pagefind.init();
  const out = [];
  for (const c of cases) {
    const search = await pagefind.search(c.query, { filters: c.filters || {} });
    const read = await Promise.all(search.results.slice(0, 20).map((r) => r.data()));
    out.push(titleFirst(c.query, read).slice(0, 5).map((d) => d.url));
  }
  return out;
}"""


def entry_ids(urls: list[str]) -> list[str]:
    return [url.strip("/").split("/")[-1] for url in urls]


def test_every_search_case(page, site_server):
    # One query per fresh page, as a visitor searches: Pagefind's scores shift with the index chunks an
    # earlier search in the same page has already loaded.
    results = []
    for case in CASES:
        page.goto(site_server + "about/")
        results += page.evaluate(RUN_CASES, [case])
    failures = []
    for case, urls in zip(CASES, results):
        ids = entry_ids(urls)
        top = case.get("top", 1)
        if case["expect"] not in ids[:top]:
            failures.append(f"{case['query']!r} {case.get('filters', '')}: wanted {case['expect']} in the first {top}, got {ids}")
    assert not failures, "\n".join(failures)


def test_the_lunr_index_is_not_shipped(built_site):
    assert (built_site / "pagefind" / "pagefind.js").is_file()
    assert not (built_site / "search" / "search_index.json").exists()


def test_listing_pages_and_redirects_are_not_indexed(built_site):
    entry = (built_site / "errors" / "nccl-error" / "index.html").read_text(encoding="utf-8")
    listing = (built_site / "errors" / "index.html").read_text(encoding="utf-8")
    assert "data-pagefind-body" in entry and 'data-pagefind-filter="tool:NCCL"' in entry
    assert "data-pagefind-body" not in listing


def test_the_header_box_searches_with_facets_and_the_keyboard(page, site_server):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(site_server + "errors/nccl-error/")
    page.keyboard.press("/")
    box = page.locator(".md-search__input")
    page.wait_for_function("document.activeElement.classList.contains('md-search__input')")
    assert page.locator("#__search").is_checked()
    box.type("hipErrorOutOfMemory")
    first = page.locator("#kb-search-results li a").first
    first.wait_for()
    assert first.get_attribute("href").endswith("/errors/rocm-hip-out-of-memory/")
    assert page.locator(".kb-search__facet").count() == 0  # the facets load only when opened
    page.locator(".kb-search__filters summary").click()
    page.locator(".kb-search__facet").first.wait_for()
    labels = page.locator(".kb-search__facet label").all_inner_texts()
    assert labels == ["Tool", "Platform", "Category", "Severity"]
    box.fill("out of memory")
    page.locator(".md-search-result__meta", has_text="matching pages").wait_for()
    unfiltered = page.locator(".md-search-result__meta").inner_text()
    page.select_option("#kb-facet-platform", "Apple Metal")
    page.wait_for_function("t => document.querySelector('.md-search-result__meta').textContent !== t", arg=unfiltered)
    found = entry_ids([a.get_attribute("href") for a in page.locator("#kb-search-results li a").all()])
    metal = {p.stem for p in (ROOT / "entries").glob("[eg]*/*.yaml") if "apple-metal" in yaml.safe_load(p.read_text()).get("platforms", [])}
    assert "metal-out-of-memory" in found and set(found) <= metal, found
    box.focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.classList.contains('md-search-result__link')")
    page.keyboard.press("Escape")
    assert not page.locator("#__search").is_checked()
    assert not any("search_index.json" in url for url in requests)
    assert any(re.search(r"/pagefind/pagefind\.js$", url) for url in requests)


@pytest.mark.parametrize("query", ["CUDA_LAUNCH_BLOCKING", "expandable_segments:True", "--kv-cache-dtype"])
def test_identifiers_are_found_as_typed(page, site_server, query):
    page.goto(site_server + "about/")
    urls = page.evaluate(RUN_CASES, [{"query": query}])[0]
    assert urls, f"{query} finds nothing"


INDEXED = {"error": "errors/rocm-hip-out-of-memory/", "guide": "guides/vllm-oom-checklist/", "model": "models/llama-3.1-8b/",
           "gpu": "gpus/rtx-4090/", "hand-written": "about/"}
LISTINGS = ["", "errors/", "guides/", "models/", "gpus/", "categories/out-of-memory/", "tools/vllm/", "errors/needs-review/"]
INDEXED_DATA = """async ([query, url]) => {
  const pagefind = await import("/pagefind/pagefind.js");
  await pagefind.init();
  const search = await pagefind.search(query);
  for (const r of search.results) { const d = await r.data(); if (d.url === url) return d; }
  return null;
}"""


def indexed(page, site_server: str, path: str) -> dict:
    """What Pagefind holds for one page (its text, filters and word weights), found by its title as a visitor would."""
    page.goto(site_server + path)
    title = page.locator("article h1").evaluate("h => h.firstChild.textContent")
    page.goto(site_server + "about/")
    data = page.evaluate(INDEXED_DATA, [title, "/" + path])
    assert data, f"/{path} is not in the search index"
    return data


def expected_filters(kind: str, entry_id: str) -> dict[str, list[str]]:
    loaded = load(ROOT)
    out: dict[str, list[str]] = {}
    for key, value in filters(loaded.entries[kind][entry_id], loaded.taxonomies):
        out.setdefault(key, []).append(value)
    return {key: sorted(values) for key, values in out.items()}


@pytest.mark.parametrize("kind", sorted(INDEXED))
def test_indexed_kinds_open_their_article_for_pagefind(page, site_server, kind):
    page.goto(site_server + INDEXED[kind])
    assert page.locator("article.md-content__inner[data-pagefind-body]").count() == 1
    assert page.locator("[data-pagefind-body]").count() == 1


@pytest.mark.parametrize("path", LISTINGS)
def test_listings_are_not_indexed(built_site, path):
    html = (built_site / path / "index.html").read_text(encoding="utf-8")
    assert "md-content__inner" in html and "data-pagefind-body" not in html


@pytest.mark.parametrize("kind", ["errors", "guides"])
def test_entry_pages_mark_what_search_reads_and_what_it_leaves_out(page, site_server, kind):
    path = INDEXED[kind[:-1]]
    entry_id = path.strip("/").split("/")[-1]
    page.goto(site_server + path)
    article = page.locator("article[data-pagefind-body]")
    spans = article.locator(":scope > span[hidden][data-pagefind-filter]").evaluate_all("els => els.map(e => e.dataset.pagefindFilter)")
    want = expected_filters(kind, entry_id)
    assert want["severity"] and want["tool"]
    marked: dict[str, list[str]] = {}
    for span in spans:
        key, value = span.split(":", 1)
        marked.setdefault(key, []).append(value)
    assert {key: sorted(values) for key, values in marked.items()} == want
    for furniture in ("nav.kb-crumbs", ".kb-cite", ".kb-nav-section"):  # the related lists hold other entries' titles and summaries
        assert article.locator(furniture).get_attribute("data-pagefind-ignore") == "index", furniture
    printed = page.locator(".kb-print-url").inner_text()
    related = page.locator(".kb-nav-section li a").first.inner_text()  # an entry this page lists, by its title
    title = page.locator("article h1").evaluate("h => h.firstChild.textContent")
    assert printed.endswith(path) and page.locator("h2 a.headerlink").count()
    data = indexed(page, site_server, path)
    assert data["meta"]["title"] == title
    assert {key: sorted(values) for key, values in data["filters"].items()} == want
    assert printed not in data["content"]  # the printed URL is page furniture
    assert "¶" not in data["content"]  # so is the permalink sign after every heading
    if kind == "errors":  # a guide names its causes' errors in its own text too
        assert related and related not in data["content"]  # another entry's title is that entry's to be found by


def test_the_error_message_weighs_like_a_heading(page, site_server):
    path = INDEXED["error"]
    entry = load(ROOT).entries["errors"][path.strip("/").split("/")[-1]]
    page.goto(site_server + path)
    weight = float(page.locator("article[data-pagefind-body] .kb-error-text").get_attribute("data-pagefind-weight"))
    assert weight > 1
    data = indexed(page, site_server, path)
    first = len(entry.title.split())  # the message follows the title in the indexed text
    message = range(first, first + len(entry.error.split()))
    assert data["content"].split()[first:first + 3] == entry.error.split()[:3]
    weights = {w["location"]: w["weight"] for w in data["weighted_locations"]}
    in_message = [weights[i] for i in message if i in weights]
    assert in_message and max(in_message) == weight, weights


def test_a_build_with_material_search_carries_no_pagefind_markers(tmp_path):
    kb = make_kb(tmp_path / "kb", FIXTURES / "valid" / "entries")
    site = tmp_path / "site"
    result = mkdocs_build(kb, site, {"KB_SEARCH": "lunr"})
    assert result.returncode == 0, result.stderr
    assert (site / "search" / "search_index.json").is_file() and not (site / "pagefind").exists()
    pages = list(site.rglob("*.html"))
    assert pages and not [p for p in pages if "data-pagefind-body" in p.read_text(encoding="utf-8")]


def test_a_changed_pagefind_format_fails_loudly_and_names_the_cause(built_site, tmp_path):
    """The filter files are rewritten for reproducible builds; a format Pagefind changes must stop the build, not corrupt it."""
    import gzip
    import shutil

    from errorkb.build.search import PagefindFormatChanged, stable_filters

    bundle = tmp_path / "pagefind"
    shutil.copytree(built_site / "pagefind", bundle)
    stable_filters(bundle)  # the real, current format is read and written back
    victim = sorted((bundle / "filter").glob("*.pf_filter"))[0]
    victim.write_bytes(gzip.compress(b"pagefind_xyz" + b"\x00" * 8))
    with pytest.raises(PagefindFormatChanged, match="changed its index format"):
        stable_filters(bundle)