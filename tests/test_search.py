"""Site search on Pagefind: the query → entry cases of tests/search_cases.yaml, and the header's box, in a real browser."""

from __future__ import annotations

import re

import pytest
import yaml

from conftest import ROOT

CASES = yaml.safe_load((ROOT / "tests" / "search_cases.yaml").read_text(encoding="utf-8"))["cases"]
RUN_CASES = """async (cases) => {
  const pagefind = await import("/pagefind/pagefind.js");
  await pagefind.init();
  const out = [];
  for (const c of cases) {
    const search = await pagefind.search(c.query, { filters: c.filters || {} });
    const shown = await Promise.all(search.results.slice(0, 5).map((r) => r.data()));
    out.push(shown.map((d) => d.url));
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


def test_annotate_marks_articles_with_facets_and_leaves_listings(monkeypatch):
    from errorkb.build.linker import link
    from errorkb.build.loader import load
    from errorkb.build.search import ARTICLE, annotate

    graph = link(load(ROOT))
    html = f'<body>{ARTICLE}<h1>T<a class="headerlink" href="#t">¶</a></h1><div class="kb-error-text">x</div></article></body>'
    marked = annotate(html, "error", "errors/rocm-hip-out-of-memory.md", graph)
    assert "data-pagefind-body" in marked and 'data-pagefind-weight="5"' in marked
    assert 'data-pagefind-filter="platform:AMD ROCm"' in marked and 'data-pagefind-filter="severity:Fatal"' in marked
    assert '<a class="headerlink" data-pagefind-ignore' in marked
    assert annotate(html, "index", "categories/out-of-memory.md", graph) == html
    monkeypatch.setenv("KB_SEARCH", "lunr")
    assert annotate(html, "error", "errors/rocm-hip-out-of-memory.md", graph) == html


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