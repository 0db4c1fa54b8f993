"""Site search, the last stage: built HTML pages → a Pagefind index under site/pagefind/.

Material's built-in search sends its whole index (every word of every page) to
a visitor's browser on the first search, and its tokeniser was not written
for identifiers such as ``cudaErrorIllegalAddress`` or
``expandable_segments:True``. Pagefind splits the index into chunks by word,
so a search downloads only the chunks its words need, and it indexes
compound identifiers whole and by part.

Input: an entry and the taxonomies (``filters``), then the built site folder
(``build_index``). Output: the facets an entry page is filtered on (tool,
platform, category, severity), which the page's front matter carries, then the
index. The pages mark what Pagefind reads themselves: templates/overrides/main.html
opens the article of an indexed kind with ``data-pagefind-body`` and the
hidden filter spans, the entry templates (templates/pages/error.md.j2 and
guide.md.j2) mark the breadcrumbs and the printed URL ``data-pagefind-ignore``
and weight the error message; the permalink sign the toc extension writes
after every heading is left out by a Pagefind option (``EXCLUDE``), the one
part no template writes. site_src/javascripts/search.mjs drives the index
from the header's search box (templates/overrides/partials/search.html).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import cbor2


# The permalink sign after every heading, written by Markdown's toc extension, not by a template:
# it would only add a "¶" to every result excerpt.
EXCLUDE = (".headerlink",)
LUNR_INDEX = Path("search") / "search_index.json"
ENGINE_ENV = "KB_SEARCH"  # "lunr" keeps Material's own search, for comparisons (make eval)


def engine() -> str:
    return "lunr" if os.environ.get(ENGINE_ENV, "").lower() == "lunr" else "pagefind"


def configure(config) -> None:
    """With Pagefind, Material's own index is never built (it cost about a third of a large build)."""
    config.extra["kb_search"] = engine()
    if engine() == "pagefind" and "material/search" in config.plugins:
        config.plugins["material/search"].config.enabled = False


def filters(entry, taxonomies: dict) -> list[list[str]]:
    """The [facet, value] pairs of an error or guide, as visitors read them (["tool", "vLLM"], ["category", "Out of memory"])."""

    def names(taxonomy: str, ids: list[str]) -> list[str]:
        return [taxonomies[taxonomy][i].name for i in ids if i in taxonomies[taxonomy]]

    out = {
        "tool": names("tools", entry.tools),
        "platform": names("platforms", getattr(entry, "platforms", [])),
        "severity": [entry.severity.capitalize()],
    }
    if getattr(entry, "category", None):
        out["category"] = names("categories", [entry.category])
    # Pagefind reads a comma in data-pagefind-filter as the start of another filter: such a value is left out.
    return [[key, value] for key, values in out.items() for value in values if "," not in value]


def build_index(site_dir: Path) -> str | None:
    """Run the Pagefind indexer over the built site; the problem as text, or None when it worked."""
    if engine() != "pagefind":
        return None
    result = subprocess.run(
        [sys.executable, "-m", "pagefind", "--site", str(site_dir), "--quiet", *(f"--exclude-selectors={s}" for s in EXCLUDE)],
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
