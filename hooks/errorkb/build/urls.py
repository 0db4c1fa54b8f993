"""Permanent links: the URLs the site has published must keep working.

Input: the ``Graph``, the KB root and the committed manifest
``published-urls.txt`` (one site path a line). Output: the URLs this build
serves (pages and redirects) and a Problem for every published URL it would
break. Renaming an entry without listing its old id in ``aliases:`` fails
here, before anything is deployed.
"""

from __future__ import annotations

from pathlib import Path

from errorkb.build.linker import Graph
from errorkb.build.problems import Problem, problem
from errorkb.build import schema
from errorkb.build.schema import TEXT_KINDS

MANIFEST = "published-urls.txt"
KINDS = tuple(schema.KINDS)  # every kind of entry has a page at /<kind>/<id>/
HEADER = "# Every URL the site has published. `kb urls --update` adds new ones; a line is never removed.\n"


def site_src_urls(root: Path) -> set[str]:
    out = set()
    src = root / "site_src"
    for md in src.rglob("*.md") if src.is_dir() else []:
        rel = md.relative_to(src).with_suffix("").as_posix()
        if rel == "index":
            out.add("/")
        elif rel.endswith("/index"):
            out.add("/" + rel[: -len("index")])
        else:
            out.add(f"/{rel}/")
    return out


def served_urls(graph: Graph) -> set[str]:
    """Every path the build answers, as a page or as a redirect."""
    loaded = graph.loaded
    urls = {"/", "/about/", "/errors/", "/guides/", "/errors/needs-review/", "/contributing/"} | site_src_urls(loaded.root)
    for kind in KINDS:
        for entry_id in loaded.entries.get(kind, {}):
            urls.add(f"/{kind}/{entry_id}/")
        if loaded.entries.get(kind) and kind in ("models", "gpus"):
            urls.add(f"/{kind}/")
    for (kind, old), _ in graph.redirects.items():
        urls.add(f"/{kind}/{old}/")
        if kind in TEXT_KINDS:
            urls.add(f"/e/{old}/")
    for kind in TEXT_KINDS:
        for entry_id in loaded.entries[kind]:
            urls.add(f"/e/{entry_id}/")
    for taxonomy in ("categories", "tools"):
        for term in loaded.taxonomies.get(taxonomy, {}):
            urls.add(f"/{taxonomy}/{term}/")
    return urls


def read_manifest(root: Path) -> list[tuple[int, str]]:
    path = root / MANIFEST
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(n, line.strip()) for n, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]


def broken_urls(graph: Graph) -> list[Problem]:
    served = served_urls(graph)
    out = []
    for line, url in read_manifest(graph.loaded.root):
        if url not in served:
            parts = url.strip("/").split("/")
            hint = (
                f"if the entry was renamed, add '{parts[1]}' to `aliases:` of the entry that replaced it; a published URL may not disappear"
                if len(parts) == 2 and parts[0] in KINDS else "restore the page or redirect it; a published URL may not disappear"
            )
            out.append(problem("KB023", MANIFEST, line, "", f"the published URL {url} would no longer resolve", hint))
    return out


def update_manifest(graph: Graph) -> int:
    """Add the URLs served now to the manifest; never remove one. Returns how many were added."""
    root = graph.loaded.root
    known = {url for _, url in read_manifest(root)}
    new = sorted(served_urls(graph) - known)
    path = root / MANIFEST
    text = path.read_text(encoding="utf-8") if path.is_file() else HEADER
    if new:
        path.write_text(text.rstrip("\n") + "\n" + "\n".join(new) + "\n", encoding="utf-8")
    return len(new)
