"""The site's home and About pages: the paste box first, then the ways in; what the KB covers.

Input: the graph and the settings (``extra.kb.start_here`` in mkdocs.yml
names the errors listed first; an id that is not an entry of this KB is left
out, and a test holds the real KB's list to its entries). Output: the
generated ``index.md``.
"""

from __future__ import annotations

from errorkb.build.linker import Graph
from errorkb.build.pages import GeneratedPage, Settings, _common
from errorkb.build.render import render

RECENT = 8


def site_home(graph: Graph, settings: Settings) -> GeneratedPage:
    uri = "index.md"
    refs = [("errors", i) for i in graph.errors] + [("guides", i) for i in graph.guides]
    recent = sorted(refs, key=lambda r: (graph.entry(r).last_verified, r[1]), reverse=True)[:RECENT]
    return GeneratedPage(uri, render(
        "site-home.md.j2", **_common(graph, settings, uri),
        start_here=[i for i in settings.start_here if i in graph.errors],
        by_category=graph.by_category, by_tool=graph.by_tool,
        recent=[(r, graph.entry(r)) for r in recent],
        error_count=len(graph.errors), guide_count=len(graph.guides),
    ))


def about_page(graph: Graph, settings: Settings, census) -> GeneratedPage:
    """The About page, with the census figures computed from tests/data/census.yaml."""
    return GeneratedPage("about.md", render("about.md.j2", **_common(graph, settings, "about.md"), census=census))
