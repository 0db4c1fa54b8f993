"""Site search, the last stage: built HTML pages → a Pagefind index under site/pagefind/.

Material's built-in search sends its whole index (every word of every page) to
a visitor's browser on the first search, and its tokeniser was not written
for identifiers such as ``cudaErrorIllegalAddress`` or
``expandable_segments:True``. Pagefind splits the index into chunks by word,
so a search downloads only the chunks its words need, and it indexes
compound identifiers whole and by part.

Input: each page's final HTML and front matter (``annotate``), then the
built site folder (``build_index``). Output: pages marked with the parts
Pagefind indexes and the facets it filters on (tool, platform, category,
severity), then the index. site_src/javascripts/search.mjs drives it from
the header's search box (templates/overrides/partials/search.html).
"""

from __future__ import annotations

import html
import os
import subprocess
import sys
from pathlib import Path

from .linker import Graph

INDEXED_KINDS = {"error", "guide", "model", "gpu", None}  # None: the hand-written pages; listings are left out
ARTICLE = '<article class="md-content__inner md-typeset">'
ERROR_BLOCK = '<div class="kb-error-text">'
# Page furniture that would only add noise to result excerpts: the permalink sign
# after every heading, the printed URL and the breadcrumbs.
NOT_INDEXED = ('<a class="headerlink"', '<div class="kb-cite"', '<nav aria-label="Breadcrumb" class="kb-crumbs"')
ERROR_WEIGHT = 5  # the literal message counts like a heading (Pagefind's default weight is 1)
LUNR_INDEX = Path("search") / "search_index.json"
ENGINE_ENV = "KB_SEARCH"  # "lunr" keeps Material's own search, for comparisons (make eval)


def engine() -> str:
    return "lunr" if os.environ.get(ENGINE_ENV, "").lower() == "lunr" else "pagefind"


def facets(graph: Graph, kind: str | None, entry_id: str) -> dict[str, list[str]]:
    """The filter values of one page, as visitors read them ("vLLM", "Out of memory")."""
    entries = {"error": graph.errors, "guide": graph.guides}.get(kind or "", {})
    entry = entries.get(entry_id)
    if entry is None:
        return {}
    tax = graph.loaded.taxonomies

    def names(taxonomy: str, ids: list[str]) -> list[str]:
        return [tax[taxonomy][i].name for i in ids if i in tax[taxonomy]]

    out = {
        "tool": names("tools", entry.tools),
        "platform": names("platforms", getattr(entry, "platforms", [])),
        "severity": [entry.severity.capitalize()],
    }
    if getattr(entry, "category", None):
        out["category"] = names("categories", [entry.category])
    return {key: values for key, values in out.items() if values}


def annotate(page_html: str, kind: str | None, src_uri: str, graph: Graph) -> str:
    """Mark the article of an indexed page for Pagefind, with its facets; leave other pages unindexed."""
    if engine() != "pagefind" or kind not in INDEXED_KINDS or ARTICLE not in page_html:
        return page_html
    entry_id = Path(src_uri).stem
    markers = "".join(
        f'<span hidden data-pagefind-filter="{html.escape(key)}:{html.escape(value, quote=True)}"></span>'
        for key, values in facets(graph, kind, entry_id).items()
        for value in values
        if "," not in value  # Pagefind reads a comma in this attribute as the start of another filter
    )
    opened = ARTICLE[:-1] + " data-pagefind-body>" + markers
    page_html = page_html.replace(ARTICLE, opened, 1)
    for opening in NOT_INDEXED:
        page_html = page_html.replace(opening, opening + " data-pagefind-ignore")
    return page_html.replace(ERROR_BLOCK, f'<div class="kb-error-text" data-pagefind-weight="{ERROR_WEIGHT}">', 1)


def build_index(site_dir: Path) -> str | None:
    """Run the Pagefind indexer over the built site; the problem as text, or None when it worked."""
    if engine() != "pagefind":
        return None
    result = subprocess.run(
        [sys.executable, "-m", "pagefind", "--site", str(site_dir), "--quiet"],
        capture_output=True, text=True, timeout=900,
    )
    if result.returncode != 0:
        return f"pagefind failed ({result.returncode}): {(result.stderr or result.stdout).strip()[-2000:]}"
    # The header's search box reads Pagefind's index; Material's would only cost bandwidth and disk.
    (site_dir / LUNR_INDEX).unlink(missing_ok=True)
    return None
