"""The one place that knows the order of the stages.

load (YAML → models) → link (graph) → pages (Markdown) + api (JSON).
``build(root, settings)`` returns everything a site generator needs, and every
problem found; the caller decides to refuse publishing when there are any.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from errorkb.build.api import dump, entry_file, export_api, index_fragment
from errorkb.build.cache import BuildCache, digest_folder
from errorkb.build.feeds import export_feeds
from errorkb.build.census import coverage, read_census
from errorkb.build.home import about_page, site_home
from errorkb.calculator.hardware import CALCULATOR, calculator_data, hardware_pages
from errorkb.calculator.methodology import fill as fill_methodology
from errorkb.build.linker import Graph, link
from errorkb.build.loader import load
from errorkb.build.parallel import fork_map, workers_for
from errorkb.build.pages import GeneratedFile, GeneratedPage, Settings, build_pages, entry_page, listing_key, plain_listing, snippets_of
from errorkb.build.problems import Problem
from errorkb.build.render import TEMPLATES_DIR
from errorkb.build.schema import TAXONOMIES
from errorkb.build.urls import broken_urls
from errorkb.matcher.related import entry_words
from errorkb.matcher.score import record_fragment


@dataclass
class Site:
    graph: Graph
    pages: list[GeneratedPage] = field(default_factory=list)
    files: list[GeneratedFile] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def build_date() -> dt.date:
    """Today, or the date of SOURCE_DATE_EPOCH so two builds of one commit are identical."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc).date()
    return dt.date.today()


class SettingsError(ValueError):
    """mkdocs.yml lacks what the build needs (it says what and where)."""


def settings_from(extra: dict, site_url: str | None, repo_url: str | None) -> Settings:
    """Settings from mkdocs.yml: ``site_url``, ``repo_url`` and the ``extra.kb`` block.

    There is no fallback for ``site_url``: canonical links, the sitemap, the feeds,
    the API's URLs and what ``kb cite`` prints are absolute, and a guessed address
    would publish links to someone else's site.
    """
    if not site_url:
        raise SettingsError("mkdocs.yml has no site_url: set it to the address the site is published at "
                            "(e.g. site_url: https://kb.example.org/); canonical links, feeds, the sitemap and the API are built from it")
    kb = (extra or {}).get("kb", {}) or {}
    base = Settings(site_url=site_url)
    return Settings(
        site_url=site_url.rstrip("/") + "/",
        repo_url=(repo_url or base.repo_url).rstrip("/"),
        repo_branch=kb.get("repo_branch", base.repo_branch),
        freshness_days=int(kb.get("freshness_days", base.freshness_days)),
        report=kb.get("report", base.report),
        report_email=kb.get("report_email", base.report_email),
        start_here=tuple(kb.get("start_here") or ()),
        today=build_date(),
    )


def nav_sections(site: Site) -> dict[str, list[tuple[str, str]]]:
    """Navigation children for generated sections: sections and indexes only, never one item per entry."""
    categories = site.graph.loaded.taxonomies.get("categories", {})
    return {"errors/index.md": [(term.name, f"categories/{slug}.md") for slug, term in categories.items()]}


def expand_nav(items: list, sections: dict[str, list[tuple[str, str]]]) -> list:
    """A nav (as in mkdocs.yml) with each item that points at a generated index turned into a section of its index pages."""
    out = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, str) and value in sections:
                item = {title: [value] + [{name: uri} for name, uri in sections[value]]}
            elif isinstance(value, list):
                item = {title: expand_nav(value, sections)}
        out.append(item)
    return out


def contribute_page(root: Path) -> GeneratedPage:
    """The Contribute page is CONTRIBUTING.md itself, so the repository and the site never disagree."""
    text = (root / "CONTRIBUTING.md").read_text(encoding="utf-8") if (root / "CONTRIBUTING.md").is_file() else "# Contribute\n"
    front = '---\ntitle: Contribute\ndescription: "How to add or correct an entry: the fields, an annotated example and every problem code."\n---\n\n'
    return GeneratedPage("contributing.md", front + text)


# Third-party browser code the site ships as it is, from the project's node_modules (`npm ci`).
PROJECT = Path(__file__).resolve().parents[3]
VENDORED = {"javascripts/vendor/re2js.js": "node_modules/re2js/build/index.js"}


class MissingVendored(RuntimeError):
    """A browser library the site needs is not installed."""


def vendored_files() -> list[GeneratedFile]:
    files = []
    for dest, src in VENDORED.items():
        path = PROJECT / src
        if not path.is_file():
            raise MissingVendored(f"{src} is missing: run `npm ci` in {PROJECT} (`make serve`, `make build` and `make test` do it)")
        files.append(GeneratedFile(dest, path.read_bytes()))
    return files


def fill_page(src_uri: str, markdown: str) -> str:
    """A hand-written page's Markdown with the sections the build writes (the calculator's Methodology, from its facts)."""
    return fill_methodology(markdown) if src_uri == CALCULATOR else markdown


def _hardware_key(loaded, templates: str) -> tuple:
    """What the model and GPU pages and the calculator's data are made from."""
    return (templates, tuple(sorted((ref, d) for ref, d in loaded.digests.items() if ref[0] in ("models", "gpus") and ref[1] in loaded.entries[ref[0]])))


def _taxonomy_key(root: Path) -> str:
    h = hashlib.sha256()
    for name in TAXONOMIES:
        path = root / "entries" / f"{name}.yaml"
        h.update(path.read_bytes() if path.is_file() else b"-")
    return h.hexdigest()


def _snippets(graph: Graph, settings: Settings, cache: BuildCache | None):
    """kind, id -> the entry's snippets, made once a build (pages and API share them) and, under serve, kept while the
    entry's file and the settings are unchanged: a snippet reads nothing but its own entry."""
    made: dict = {}

    def of(kind: str, entry_id: str) -> dict:
        ref = (kind, entry_id)
        if ref not in made:
            def make() -> dict:
                return snippets_of(graph, settings, kind, entry_id)
            key = (settings, graph.loaded.files[ref], graph.loaded.digests.get(ref))
            made[ref] = make() if cache is None else cache.get("snippets", ref, key, make)
        return made[ref]

    return of


def _cached_renderers(cache: BuildCache, graph: Graph, root: Path, settings: Settings, templates: str, page_of, file_of):
    """Entry pages, listings and entry API files through ``cache``: each keyed by everything it reads.

    An entry page shows its own entry and the titles and summaries of the entries
    it is related to (both directions), so its key holds its own digest, those
    entries' ids, titles and summaries in order, the taxonomies, the templates and
    the settings; a category or tool page, the same of every entry it lists. An
    entry's API file holds its own fields and the ids it links to and is linked from.
    """
    loaded = graph.loaded
    taxonomies = _taxonomy_key(root)

    def related_ids(ref):
        return tuple(graph.related_errors.get(ref, ())), tuple(graph.related_guides.get(ref, ()))

    def render_entry(graph: Graph, settings: Settings, kind: str, entry_id: str) -> GeneratedPage:
        ref = (kind, entry_id)
        shown = listing_key(graph, [("errors", i) for i in graph.related_errors.get(ref, ())] + [("guides", i) for i in graph.related_guides.get(ref, ())])
        key = (templates, taxonomies, settings, loaded.files[ref], loaded.digests[ref], shown)
        return cache.get("pages", ref, key, lambda: page_of(graph, settings, kind, entry_id))

    def listing(uri: str, refs: list, make) -> GeneratedPage:
        return cache.get("listings", uri, (templates, taxonomies, settings, listing_key(graph, refs)), make)

    def api_file(graph: Graph, settings: Settings, kind: str, entry_id: str, links_to: dict) -> GeneratedFile:
        ref = (kind, entry_id)
        key = (settings, loaded.files[ref], loaded.digests[ref], related_ids(ref), tuple(sorted(links_to.get(entry_id, ()))))
        return cache.get("api", ref, key, lambda: file_of(graph, settings, kind, entry_id, links_to))

    return render_entry, listing, api_file


def parallel_products(graph: Graph, settings: Settings, workers: int) -> tuple[dict, dict]:
    """Every entry's page and API file, and its records in the three API indexes (entries.json, matcher.json and
    the words related.json weighs), made by ``workers`` forked processes that share the graph. Each reads only the
    graph and its own entry, so the result is the one a single process makes. Returns the products by entry and
    the records by ``(table, name)``, the tables and names under which ``export_api`` asks its memo for them."""
    def products(ref: tuple[str, str]) -> tuple[GeneratedPage, GeneratedFile, list]:
        kind, entry_id = ref
        snips = snippets_of(graph, settings, *ref)
        records = [(("index-records", ref), index_fragment(graph, settings, kind, entry_id))]
        if kind == "errors":
            records.append((("matcher-records", entry_id), record_fragment(graph, entry_id)))
        records.append((("related-words", ref), entry_words(graph, kind, entry_id)))  # related_index asks for those it weighs
        return entry_page(graph, settings, *ref, snips), entry_file(graph, settings, *ref, graph.linked_from, snips), records

    refs = [(kind, i) for kind in ("errors", "guides") for i in sorted(graph.loaded.entries.get(kind, {}))]
    made, records = {}, {}
    for ref, (page, file, extra) in zip(refs, fork_map(products, refs, workers)):
        made[ref] = (page, file)
        records.update(extra)
    return made, records


def _prefilled(records: dict, memo=None):
    """A memo for ``export_api`` that hands out the records the forked processes made and makes any other; under
    ``mkdocs serve`` (``memo`` is the server's cache) the first build keeps the workers' records in the cache."""
    def prefilled(table, name, key, make):
        def made():
            found = records.get((table, name))
            return make() if found is None else found
        return made() if memo is None else memo(table, name, key, made)
    return prefilled


def build(root: Path, settings: Settings, cache: BuildCache | None = None) -> Site:
    """Every page and file of the site, or the problems that stop it (``_build``), made with Python's cycle
    collector paused. Reading and rendering thousands of entries makes millions of small objects and next to no
    reference cycles; the collector's passes over them took a third of the loading time at 10,000 entries. The
    forked workers inherit the pause and end with their pool; the server's process gets the collector back."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        return _build(root, settings, cache)
    finally:
        if was_on:
            gc.enable()


def _build(root: Path, settings: Settings, cache: BuildCache | None = None) -> Site:
    """Every page and file of the site, or the problems that stop it.

    ``cache`` is for ``mkdocs serve``: a save then re-reads only the entry files
    whose bytes changed and re-renders only the entry pages and API files whose
    inputs changed; what it returns is the same as a build without it.
    """
    if cache is not None:
        cache.start()
    first = cache is None or cache.cold  # a full build, or the server's first: per-entry work may be shared out
    loaded = load(root, cache=cache, parallel=first)
    graph = link(loaded)
    site = Site(graph=graph, problems=sorted(loaded.problems + graph.problems + broken_urls(graph), key=Problem.sort_key))
    if site.problems:
        return site
    snips_of = _snippets(graph, settings, cache)

    def render_entry(graph: Graph, settings: Settings, kind: str, entry_id: str) -> GeneratedPage:
        return entry_page(graph, settings, kind, entry_id, snips_of(kind, entry_id))

    def api_file(graph: Graph, settings: Settings, kind: str, entry_id: str, links_to: dict) -> GeneratedFile:
        return entry_file(graph, settings, kind, entry_id, links_to, snips_of(kind, entry_id))

    workers = workers_for(len(graph.errors) + len(graph.guides)) if first else 0
    memo = None if cache is None else cache.get
    if workers:
        made, records = parallel_products(graph, settings, workers)
        memo = _prefilled(records, memo)

        def render_entry(graph: Graph, settings: Settings, kind: str, entry_id: str) -> GeneratedPage:
            return made[(kind, entry_id)][0]

        def api_file(graph: Graph, settings: Settings, kind: str, entry_id: str, links_to: dict) -> GeneratedFile:
            return made[(kind, entry_id)][1]

    templates, listing = "", plain_listing
    if cache is not None:
        templates = digest_folder(TEMPLATES_DIR)
        render_entry, listing, api_file = _cached_renderers(cache, graph, root, settings, templates, render_entry, api_file)
    site.pages, redirects = build_pages(graph, settings, render_entry, listing)
    site.pages.append(contribute_page(root))
    site.pages.append(site_home(graph, settings))
    site.pages.append(about_page(graph, settings, coverage(read_census(root), graph)))
    models, gpus = loaded.entries.get("models", {}), loaded.entries.get("gpus", {})

    def hardware() -> tuple[list[GeneratedPage], GeneratedFile]:
        pages = [GeneratedPage(uri, markdown) for uri, markdown in hardware_pages(models, gpus)]
        return pages, GeneratedFile("api/v1/calculator.json", dump(calculator_data(models, gpus)))

    hardware_out, calculator = hardware() if cache is None else cache.get("hardware", "all", _hardware_key(loaded, templates), hardware)
    site.pages += hardware_out
    site.files = redirects + export_api(graph, settings, api_file, memo) + export_feeds(graph, settings)
    site.files.append(calculator)
    site.files += vendored_files()
    if cache is not None:
        refs = {r for r in loaded.digests}
        cache.keep("pages", refs)
        cache.keep("api", refs)
        cache.keep("snippets", refs)
        cache.keep("listings", {p.src_uri for p in site.pages})
        cache.keep("index-records", refs)
        cache.keep("matcher-records", set(graph.errors))
        for table in ("related-words", "related-records"):  # keyed by (kind, id): guides take part
            cache.keep(table, refs)
        cache.keep("files", set(loaded.files.values()))
        cache.keep("digests", set(loaded.files.values()))
    return site
