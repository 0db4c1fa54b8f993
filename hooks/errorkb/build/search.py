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

import gzip
import hashlib
import html
import os
import subprocess
import sys
from pathlib import Path

import cbor2

from errorkb.build.linker import Graph

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


def configure(config) -> None:
    """With Pagefind, Material's own index is never built (it cost about a third of a large build)."""
    config.extra["kb_search"] = engine()
    if engine() == "pagefind" and "material/search" in config.plugins:
        config.plugins["material/search"].config.enabled = False


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
    stable_filters(site_dir / "pagefind")
    # The header's search box reads Pagefind's index; Material's would only cost bandwidth and disk.
    (site_dir / LUNR_INDEX).unlink(missing_ok=True)
    return None


# --- reproducible builds: Pagefind writes filters in hash-map order, which changes from run
# to run. Rewrite each filter file with its values sorted, name it after its content, and
# update the two files that refer to it (the language's .pf_meta, sorted too, and the entry JSON).

MAGIC = b"pagefind_dcd"


class PagefindFormatChanged(RuntimeError):
    """Pagefind's private filter files no longer look as this stage expects."""


def _read(path: Path):
    data = gzip.decompress(path.read_bytes())
    if not data.startswith(MAGIC):
        raise PagefindFormatChanged(f"{path.name} does not start with {MAGIC!r}: the Pagefind upgrade changed its index format; update stable_filters()")
    try:
        return cbor2.loads(data[len(MAGIC):])
    except cbor2.CBORDecodeError as exc:
        raise PagefindFormatChanged(f"{path.name} is not the CBOR this stage reads ({exc}): the Pagefind upgrade changed its index format") from None


def _write(path: Path, payload: bytes) -> None:
    path.write_bytes(gzip.compress(payload, 9, mtime=0))


def stable_filters(bundle: Path) -> None:
    renamed: dict[str, str] = {}
    for path in sorted((bundle / "filter").glob("*.pf_filter")):
        content = _read(path)
        if not (isinstance(content, list) and len(content) == 2 and isinstance(content[1], list)):
            raise PagefindFormatChanged(f"{path.name} is not a [name, values] pair: the Pagefind upgrade changed its filter files")
        key, values = content
        payload = MAGIC + cbor2.dumps([key, sorted(values, key=lambda pair: pair[0])])
        name = f"{path.stem.split('_')[0]}_{hashlib.sha256(payload).hexdigest()[: len(path.stem.split('_')[1])]}"
        path.unlink()
        _write(path.with_name(name + path.suffix), payload)
        renamed[path.stem] = name
    entry = bundle / "pagefind-entry.json"
    text = entry.read_text(encoding="utf-8")
    for meta in sorted(bundle.glob("pagefind.*.pf_meta")):
        fields = _read(meta)
        if not isinstance(fields, list):
            raise PagefindFormatChanged(f"{meta.name} is not a list of fields: the Pagefind upgrade changed its metadata file")
        for i, field in enumerate(fields):
            if isinstance(field, list) and field and all(isinstance(f, list) and len(f) == 2 and f[1] in renamed for f in field):
                fields[i] = sorted([name, renamed[chunk]] for name, chunk in field)  # the filters: [name, file]
        payload = MAGIC + cbor2.dumps(fields)
        old_hash = meta.name.split(".")[1]
        new_hash = f"{old_hash.split('_')[0]}_{hashlib.sha256(payload).hexdigest()[: len(old_hash.split('_')[1])]}"
        meta.unlink()
        _write(meta.with_name(f"pagefind.{new_hash}.pf_meta"), payload)
        text = text.replace(f'"{old_hash}"', f'"{new_hash}"')
    entry.write_text(text, encoding="utf-8")
