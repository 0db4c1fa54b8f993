"""The one place that knows the order of the stages.

load (YAML → models) → link (graph) → pages (Markdown) + api (JSON).
``build(root, settings)`` returns everything a site generator needs, and every
problem found; the caller decides to refuse publishing when there are any.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from errorkb.build.api import dump, export_api
from errorkb.build.feeds import export_feeds
from errorkb.build.census import coverage, read_census
from errorkb.build.home import about_page, site_home
from errorkb.calculator.hardware import CALCULATOR, calculator_data, hardware_pages
from errorkb.calculator.methodology import fill as fill_methodology
from errorkb.build.linker import Graph, link
from errorkb.build.loader import load
from errorkb.build.pages import GeneratedFile, GeneratedPage, Settings, all_snippets, build_pages
from errorkb.build.problems import Problem
from errorkb.build.urls import broken_urls


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


def settings_from(extra: dict, site_url: str | None, repo_url: str | None) -> Settings:
    """Settings from mkdocs.yml: ``site_url``, ``repo_url`` and the ``extra.kb`` block."""
    kb = (extra or {}).get("kb", {}) or {}
    base = Settings()
    return Settings(
        site_url=(site_url or base.site_url).rstrip("/") + "/",
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


def build(root: Path, settings: Settings) -> Site:
    loaded = load(root)
    graph = link(loaded)
    site = Site(graph=graph, problems=sorted(loaded.problems + graph.problems + broken_urls(graph), key=Problem.sort_key))
    if site.problems:
        return site
    snips = all_snippets(graph, settings)
    site.pages, redirects = build_pages(graph, settings, snips)
    site.pages.append(contribute_page(root))
    site.pages.append(site_home(graph, settings))
    site.pages.append(about_page(graph, settings, coverage(read_census(root), graph)))
    models, gpus = loaded.entries.get("models", {}), loaded.entries.get("gpus", {})
    site.pages += [GeneratedPage(uri, markdown) for uri, markdown in hardware_pages(models, gpus)]
    site.files = redirects + export_api(graph, settings, snips) + export_feeds(graph, settings)
    site.files.append(GeneratedFile("api/v1/calculator.json", dump(calculator_data(models, gpus))))
    site.files += vendored_files()
    return site
