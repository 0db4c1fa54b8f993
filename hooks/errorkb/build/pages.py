"""Stage 4, pages: the graph → generated Markdown pages and static files.

Input: a ``Graph`` and the site ``Settings``. Output: ``GeneratedPage``
(Markdown that MkDocs renders with the theme) and ``GeneratedFile`` (bytes
copied as they are: redirect pages). No mkdocs import: another generator can
take the same list.
"""

from __future__ import annotations

import datetime as dt
import html
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, urlencode

from errorkb.build import search, snippet, structured
from errorkb.build.linker import Graph
from errorkb.build.schema import TEXT_KINDS
from errorkb.build.render import environment, render

VERIFICATION = {
    "owner": "Reproduced by the maintainer",
    "editorial": "Reviewed by the editors against the sources",
    "community": "Submitted by the community, not yet reviewed",
}
KIND_DIRS = {"errors": "errors", "guides": "guides", "models": "models", "gpus": "gpus"}


@dataclass(frozen=True)
class Settings:
    site_url: str  # mkdocs.yml's site_url, ending in "/": every absolute URL the build writes starts with it
    repo_url: str = "https://github.com/errorkb/errorkb"
    repo_branch: str = "main"
    freshness_days: int = 365
    report: str = "issue"  # "issue": a prefilled issue form; "email": a mailto link
    report_email: str = ""
    today: dt.date = dt.date(1970, 1, 1)
    start_here: tuple[str, ...] = ()  # error ids the home page lists first


@dataclass(frozen=True)
class GeneratedPage:
    src_uri: str  # e.g. "errors/cuda-oom-loading-model.md"
    markdown: str


@dataclass(frozen=True)
class GeneratedFile:
    dest_uri: str  # e.g. "errors/old-id/index.html"
    content: bytes


def page_uri(kind: str, entry_id: str) -> str:
    return f"{KIND_DIRS[kind]}/{entry_id}.md"


def page_url(kind: str, entry_id: str) -> str:
    """The public path of an entry, relative to the site root: "errors/<id>/"."""
    return f"{KIND_DIRS[kind]}/{entry_id}/"


def relative(from_uri: str, to_uri: str) -> str:
    """A Markdown link from one source page to another (MkDocs resolves and validates it)."""
    return _relpath(to_uri, posixpath.dirname(from_uri) or ".")


@lru_cache(maxsize=65536)
def _relpath(path: str, start: str) -> str:
    # posixpath.relpath asks the OS for the working directory twice per call; pages make
    # about fifteen links each, so at 10,000 entries that was a large share of rendering.
    return posixpath.relpath(path, start)


def plain(markdown_text: str) -> str:
    """Markdown → one line of plain text, for summaries and email snippets."""
    text = re.sub(r"```.*?```", " ", markdown_text, flags=re.S)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[`*_#>]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def summary_of(entry) -> str:
    summary = getattr(entry, "summary", None)
    return _summary(summary, "" if summary else entry.cause)


@lru_cache(maxsize=65536)
def _summary(summary: str | None, cause: str) -> str:
    # Every listing and every related entry shows a summary: about five per entry and build. Strings keep
    # their hash, so a hit costs a dictionary lookup, and a changed cause is a new key.
    if summary:
        return re.sub(r"\s+", " ", summary).strip()
    text = plain(cause)
    match = re.match(r"(.{20,240}?[.!?])(\s|$)", text)
    return match.group(1) if match else text[:200].rstrip() + ("…" if len(text) > 200 else "")


def snippets_of(graph: Graph, settings: Settings, kind: str, entry_id: str) -> dict:
    """The entry's and its steps' snippets (snippet.py), made once a build and shared by pages, API and ``kb cite``."""
    entry = graph.loaded.entries[kind][entry_id]
    return snippet.snippets(kind, entry, summary_of(entry), settings.site_url + page_url(kind, entry_id))


def is_stale(entry, settings: Settings) -> bool:
    return (settings.today - entry.last_verified).days > settings.freshness_days


def edit_url(settings: Settings, rel: str) -> str:
    return f"{settings.repo_url.rstrip('/')}/edit/{settings.repo_branch}/{quote(rel)}"


def report_url(settings: Settings, kind: str, entry_id: str, title: str, step: int | None = None) -> str:
    """"Did this fix it?": the repository's issue form (or an email), prefilled with the entry and step."""
    step_text = f"Step {step}" if step else ""
    if settings.report == "email" and settings.report_email:
        body = f"Entry: {entry_id}\nStep I tried: {step_text}\nWhat happened:\nMy stack (engine, version, GPU, driver):\n"
        return f"mailto:{settings.report_email}?" + urlencode({"subject": f"[{entry_id}] did this fix it?", "body": body}, quote_via=quote)
    fields = {"template": "fix-report.yml", "entry": entry_id, "title": f"[{entry_id}] {title}"[:200]}
    if step:
        fields["step"] = step_text
    return f"{settings.repo_url.rstrip('/')}/issues/new?{urlencode(fields, quote_via=quote)}"


def url_md(url: str) -> str:
    """A URL that is safe inside Markdown link parentheses."""
    return url.replace("(", "%28").replace(")", "%29").replace(" ", "%20")


def human_date(day: dt.date) -> str:
    return f"{day.day} {day.strftime('%B %Y')}"


class _Linker:
    """Relative links from one page, handed to templates as ``href``."""

    def __init__(self, from_uri: str) -> None:
        self.from_uri = from_uri

    def __call__(self, kind: str, entry_id: str = "index") -> str:
        if kind in ("categories", "tools", "tags"):
            return relative(self.from_uri, f"{kind}/{entry_id}.md")
        if kind == "page":
            return relative(self.from_uri, entry_id)
        return relative(self.from_uri, page_uri(kind, entry_id))


def _common(graph: Graph, settings: Settings, src_uri: str) -> dict:
    tax = graph.loaded.taxonomies
    return {
        "href": _Linker(src_uri),
        "categories": tax["categories"],
        "tools": tax["tools"],
        "platforms": tax["platforms"],
        "authors": tax["authors"],
        "errors": graph.errors,
        "guides": graph.guides,
        "summary_of": summary_of,
        "human_date": human_date,
        "url_md": url_md,
        "settings": settings,
        "verification": VERIFICATION,
    }


def crumbs(graph: Graph, settings: Settings, kind: str, entry_id: str) -> list[tuple[str, str]]:
    """The breadcrumb of an entry page as (name, absolute URL), the entry last (the page shows all but the last)."""
    entry = graph.loaded.entries[kind][entry_id]
    trail = [("Errors" if kind == "errors" else "Guides", f"{settings.site_url}{KIND_DIRS[kind]}/")]
    if kind == "errors":
        trail.append((graph.loaded.taxonomies["categories"][entry.category].name, f"{settings.site_url}categories/{entry.category}/"))
    return trail + [(entry.title, settings.site_url + page_url(kind, entry_id))]


def entry_page(graph: Graph, settings: Settings, kind: str, entry_id: str, snips: dict) -> GeneratedPage:
    entry = graph.loaded.entries[kind][entry_id]
    src_uri = page_uri(kind, entry_id)
    rel = graph.loaded.files[(kind, entry_id)]
    context = _common(graph, settings, src_uri) | {
        "id": entry_id,
        "e": entry,
        "summary": summary_of(entry),
        "stale": is_stale(entry, settings),
        "related_errors": graph.related_errors.get((kind, entry_id), []),
        "related_guides": graph.related_guides.get((kind, entry_id), []),
        "edit_url": edit_url(settings, rel),
        "report_url": report_url(settings, kind, entry_id, entry.title),
        "step_report_url": lambda n: report_url(settings, kind, entry_id, entry.title, n),
        "absolute_url": settings.site_url + page_url(kind, entry_id),
        "snips": snips,
        "search_filters": search.filters(entry, graph.loaded.taxonomies),
        "html_title": structured.html_title(kind, entry),
        "jsonld": structured.jsonld(kind, entry, summary_of(entry), graph.loaded.taxonomies["authors"][entry.author], settings.site_url + page_url(kind, entry_id), crumbs(graph, settings, kind, entry_id)),
    }
    template = "error.md.j2" if kind == "errors" else "guide.md.j2"
    return GeneratedPage(src_uri, render(template, **context))


def listing_key(graph: Graph, refs) -> tuple:
    """What a listing shows of each entry it lists: its address, title and summary, in order."""
    return tuple((r[0], r[1], graph.entry(r).title, summary_of(graph.entry(r))) for r in refs)


def plain_listing(uri: str, refs: list, make) -> GeneratedPage:
    return make()


def index_pages(graph: Graph, settings: Settings, listing=plain_listing) -> list[GeneratedPage]:
    """The errors and guides indexes, one page per category and per tool.

    ``listing(uri, refs, make)`` makes the page of a category or tool listing ``refs``; under ``mkdocs serve``
    the pipeline keeps each page while ``listing_key`` of its entries (and the taxonomies, the templates and
    the settings) stay the same.
    """
    pages = []
    recent = sorted(
        [("errors", i) for i in graph.errors] + [("guides", i) for i in graph.guides],
        key=lambda r: (graph.entry(r).last_verified, r[1]),
        reverse=True,
    )[:10]
    stale = stale_refs(graph, settings)
    home = "errors/index.md"
    pages.append(GeneratedPage(home, render("home.md.j2", **_common(graph, settings, home), by_category=graph.by_category, by_tool=graph.by_tool, recent=[(r, graph.entry(r)) for r in recent], stale_count=len(stale))))
    guides_uri = "guides/index.md"
    pages.append(GeneratedPage(guides_uri, render("guides-index.md.j2", **_common(graph, settings, guides_uri), ids=sorted(graph.guides, key=lambda i: graph.guides[i].title.lower()))))
    for category, term in graph.loaded.taxonomies["categories"].items():
        uri, ids = f"categories/{category}.md", graph.by_category.get(category, [])
        pages.append(listing(uri, [("errors", i) for i in ids], lambda uri=uri, category=category, term=term, ids=ids: GeneratedPage(
            uri, render("category.md.j2", **_common(graph, settings, uri), slug=category, term=term, ids=ids))))
    for tool, term in graph.loaded.taxonomies["tools"].items():
        uri, refs = f"tools/{tool}.md", graph.by_tool.get(tool, [])
        pages.append(listing(uri, refs, lambda uri=uri, tool=tool, term=term, refs=refs: GeneratedPage(
            uri, render("tool.md.j2", **_common(graph, settings, uri), slug=tool, term=term, refs=refs, entry=graph.entry))))
    return pages


def redirect_file(settings: Settings, dest_dir: str, target_path: str) -> GeneratedFile:
    """A redirect page that works without JavaScript and keeps a #step anchor when JavaScript runs."""
    depth = dest_dir.strip("/").count("/") + 1
    rel = "../" * depth + target_path
    absolute = settings.site_url + target_path
    return GeneratedFile(f"{dest_dir.strip('/')}/index.html", _redirect_html(environment().get_template("redirect.html.j2"), rel, absolute))


@lru_cache(maxsize=65536)
def _redirect_html(template, rel: str, absolute: str) -> bytes:
    # One page per entry and per former id, and the same ones at every build of `mkdocs serve`;
    # keyed by the template object too, which Jinja replaces when the file changes.
    return template.render(rel=html.escape(rel, quote=True), absolute=html.escape(absolute, quote=True), rel_js=rel.replace("\\", "\\\\").replace('"', '\\"')).encode("utf-8")


def stale_refs(graph: Graph, settings: Settings) -> list[tuple[str, str]]:
    """Entries past the freshness window, oldest first (``kb stale`` and the review page)."""
    refs = [(k, i) for k in TEXT_KINDS for i in graph.loaded.entries[k]]
    return sorted((r for r in refs if is_stale(graph.entry(r), settings)), key=lambda r: (graph.entry(r).last_verified, r[1]))


def review_page(graph: Graph, settings: Settings) -> GeneratedPage:
    uri = "errors/needs-review.md"
    rows = [(r, graph.entry(r), (settings.today - graph.entry(r).last_verified).days) for r in stale_refs(graph, settings)]
    return GeneratedPage(uri, render("needs-review.md.j2", **_common(graph, settings, uri), rows=rows))


def short_links(graph: Graph, settings: Settings) -> list[GeneratedFile]:
    """``/e/<id>/``: a short, typeable link to every error and guide, former ids included."""
    files = []
    for kind in TEXT_KINDS:
        for entry_id in sorted(graph.loaded.entries[kind]):
            files.append(redirect_file(settings, f"e/{entry_id}", page_url(kind, entry_id)))
    for (kind, old), new in sorted(graph.redirects.items()):
        if kind in TEXT_KINDS:
            files.append(redirect_file(settings, f"e/{old}", page_url(kind, new)))
    return files


def build_pages(graph: Graph, settings: Settings, render_entry, listing=plain_listing) -> tuple[list[GeneratedPage], list[GeneratedFile]]:
    """``render_entry(graph, settings, kind, entry_id)`` makes one entry's page (the pipeline binds the entry's
    snippets to ``entry_page``, and under ``mkdocs serve`` passes a cached one); ``listing``: see ``index_pages``."""
    pages: list[GeneratedPage] = []
    for kind in TEXT_KINDS:
        for entry_id in sorted(graph.loaded.entries[kind]):
            pages.append(render_entry(graph, settings, kind, entry_id))
    pages.extend(index_pages(graph, settings, listing))
    pages.append(review_page(graph, settings))
    files = [redirect_file(settings, f"{KIND_DIRS[kind]}/{old}", page_url(kind, new)) for (kind, old), new in sorted(graph.redirects.items())]
    files.extend(short_links(graph, settings))
    return pages, files
