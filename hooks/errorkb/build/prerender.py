"""Markdown → HTML for the generated pages of a full build, shared out among forked workers.

MkDocs turns each page's Markdown into HTML one page after another, and that
conversion is about half of a large build. The pages the build writes (entry
pages, indexes, model and GPU pages) are converted here instead, before MkDocs
reaches them: after ``on_nav``, when the files and their URLs are final,
``fork_map`` hands them to forked copies of the build, and each copy runs on
its page exactly what MkDocs' own ``_populate_page`` runs (the plugins'
``on_pre_page``, ``read_source``, ``on_page_markdown``, ``render``,
``on_page_content``). When MkDocs then comes to such a page, its ``render``
and ``read_source`` hand back what the worker made, so the page, its table of
contents, its anchors and the links it checks are the same objects a single
process would have made, and the site is the same byte for byte.

A worker's warnings (a broken link in a page) are kept and logged again by
the build's own process when MkDocs reaches the page, so ``--strict`` counts
them as before. Under ``mkdocs serve`` nothing is forked: the preview renders
only the pages a save changed.
"""

from __future__ import annotations

import logging

from mkdocs.commands import build as mkdocs_build
from mkdocs.structure.pages import Page

from .parallel import fork_map, workers_for

PRERENDER_FROM = 150  # pages: below this, forking costs about what it saves
_made: dict[str, dict] = {}  # src_uri -> what a worker made of the page, for this build
_ORIGINAL = {"read_source": Page.read_source, "render": Page.render}


class _Kept(logging.Handler):
    """A worker's log records, kept to be logged again by the build's own process."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, int, str]] = []  # logger name, level, message: what crosses back whole

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


def _convert(config, files, uri: str) -> dict:
    file = files.get_file_from_path(uri)
    page = file.page if file.page is not None else Page(None, file, config)
    logger = logging.getLogger("mkdocs")
    kept, handlers, propagate = _Kept(), logger.handlers[:], logger.propagate
    logger.handlers[:] = [kept]
    logger.propagate = False
    try:
        mkdocs_build._populate_page(page, config, files)
    finally:
        logger.handlers[:] = handlers
        logger.propagate = propagate
    links = page.links_to_anchors
    return {
        "markdown": page.markdown,
        "meta": page.meta,
        "content": page.content,
        "toc": page.toc,
        "title": page._title_from_render,
        "anchors": page.present_anchor_ids,
        "links": None if links is None else {target.src_uri: found for target, found in links.items()},
        "records": kept.records,
    }


def prerender(config, files, uris: list[str]) -> int:
    """Convert the pages ``uris`` in forked workers, ahead of MkDocs; how many were converted (0: the machine or
    the count did not call for workers, and MkDocs converts them itself as usual)."""
    _made.clear()
    uris = [u for u in uris if (f := files.get_file_from_path(u)) is not None and f.is_documentation_page()]
    workers = workers_for(len(uris), PRERENDER_FROM)
    if not workers:
        return 0
    # The first page in this process: the imports and compiled patterns a conversion needs on first use are then
    # inherited by every worker instead of being made again in each.
    first, rest = uris[0], uris[1:]
    made = [_convert(config, files, first)] + fork_map(lambda uri: _convert(config, files, uri), rest, workers)
    _made.update(zip([first, *rest], made))
    return len(_made)


def converted(page) -> bool:
    """Whether a worker already ran this page's hooks and conversion, so on_page_markdown and on_page_content
    (the sanitiser) must not run on it again."""
    return page.file.src_uri in _made


def _read_source(page, config) -> None:
    made = _made.get(page.file.src_uri)
    if made is None:
        return _ORIGINAL["read_source"](page, config)
    page.markdown, page.meta = made["markdown"], made["meta"]


def _render(page, config, files) -> None:
    made = _made.get(page.file.src_uri)
    if made is None:
        return _ORIGINAL["render"](page, config, files)
    for name, level, message in made["records"]:
        logging.getLogger(name).log(level, message)
    page.content = made["content"]
    page.toc = made["toc"]
    page._title_from_render = made["title"]
    page.present_anchor_ids = made["anchors"]
    if made["links"] is not None:
        page.links_to_anchors = {files.get_file_from_path(uri): found for uri, found in made["links"].items()}


def install() -> None:
    """Route Page.read_source and Page.render through the workers' results (a page with none is read and
    converted by MkDocs as before)."""
    Page.read_source = _read_source
    Page.render = _render
