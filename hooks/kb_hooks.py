"""MkDocs hooks: translate MkDocs events into one errorkb.build.pipeline.build() call.

Nothing else belongs here. ``mkdocs build`` runs the whole pipeline with
nothing kept between builds. Under ``mkdocs serve`` (``make serve``) a
``serve.Preview`` lives as long as the server: the pipeline's cache (keyed by
content), the generated pages as files (so ``--dirty`` re-renders only the
pages whose Markdown changed), and the problems of a broken save, shown over
the last good site instead of stopping the server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markupsafe import Markup  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402
from mkdocs.structure.files import File, InclusionLevel  # noqa: E402

from errorkb.build import pipeline, prerender, safety, search, serve  # noqa: E402

prerender.install()

_build = {}  # this build's result, replaced at every on_config
_preview: list[serve.Preview] = []  # one while `mkdocs serve` runs


def on_startup(command, dirty):
    if command == "serve":
        _preview.append(serve.Preview(dirty=dirty))


def on_serve(server, config, builder):
    if _preview:
        _preview[0].watch_natively(server)
    return server


def on_shutdown():
    while _preview:
        _preview.pop().close()


# Before the plugins' own on_config: with Pagefind, Material's search plugin is switched off here, before it
# loads its translations (a tenth of a small save).
@event_priority(100)
def on_config(config):
    root = Path(config.config_file_path).resolve().parent
    try:
        settings = pipeline.settings_from(config.extra, config.site_url, config.repo_url)
    except pipeline.SettingsError as exc:
        raise PluginError(str(exc)) from None
    preview = _preview[0] if _preview else None
    try:
        site = pipeline.build(root, settings, cache=preview.cache if preview else None)
    except pipeline.MissingVendored as exc:
        raise PluginError(str(exc)) from None
    if site.problems and (preview is None or preview.site is None):
        lines = "\n".join(p.format() for p in site.problems)
        raise PluginError(f"{len(site.problems)} problem(s) in entries/, nothing was published:\n{lines}")
    if preview:
        site = preview.refuse(site.problems) if site.problems else preview.accept(site)
    config.nav = pipeline.expand_nav(config.nav or [], pipeline.nav_sections(site))
    search.configure(config)
    _build.clear()
    _build.update(site=site, generated=set(), outputs=set())
    if preview:
        preview.keep_theme(config.theme)
        _build["clear"] = preview.frame_changed(config.nav, Path(config.config_file_path), config.theme.custom_dir, Path(config.docs_dir))
    return config


def on_pre_build(config):
    if _build.pop("clear", False):
        serve.clear(Path(config.site_dir))


def _generated(config, uri, content):
    preview = _preview[0] if _preview else None
    if preview and preview.dirty:
        path = preview.store(uri, content)
        file = preview.file(uri, (path, config.site_dir, config.use_directory_urls), lambda: File.generated(config, uri, abs_src_path=path))
        file.page, file.inclusion = None, InclusionLevel.UNDEFINED  # what a build sets on it again
    else:
        file = File.generated(config, uri, content=content)
    _build["outputs"].add(file.abs_dest_path)
    return file


def on_files(files, config):
    site = _build["site"]
    for page in site.pages:
        files.append(_generated(config, page.src_uri, page.markdown))
        _build["generated"].add(page.src_uri)
    for item in site.files:
        files.append(_generated(config, item.dest_uri, item.content))
    if _preview:
        files.append(File.generated(config, serve.STATUS_URI, content=_preview[0].status()))
    return files


def on_nav(nav, config, files):
    # A full build converts the generated pages' Markdown in forked workers first (errorkb/build/prerender.py);
    # the preview converts only what a save changed, in its own process. Every build starts prerender's record
    # afresh, so no page is taken as converted by an earlier build of the same process.
    prerender.prerender(config, files, [] if _preview else sorted(_build["generated"]))
    return nav


def on_page_markdown(markdown, page, config, files):
    if prerender.converted(page):
        return markdown  # a worker ran this hook on it already
    return pipeline.fill_page(page.file.src_uri, markdown)


def on_page_content(html, page, config, files):
    if prerender.converted(page):
        return html  # made and sanitised by a worker
    if page.file.src_uri in _build.get("generated", ()):
        return safety.clean_html(html)
    return html


def on_post_page(output, page, config):
    return _preview[0].overlay(output, urlsplit(config.site_url or "/").path) if _preview else output


def on_post_build(config):
    if _preview:
        _preview[0].prune(_build["outputs"])
        _preview[0].settle()
        if not _preview[0].search:
            return  # Pagefind only when asked (`make serve-search`): it would stand in every save's loop
    try:
        problem = search.build_index(Path(config.site_dir))
    except search.PagefindFormatChanged as exc:
        raise PluginError(str(exc)) from None
    if problem:
        raise PluginError(problem)


def on_env(env, config, files):
    # Every value the theme prints is escaped for HTML unless it is markup the
    # build made (the page body below): a title, a category name or a
    # description from an entry is text wherever Material puts it.
    env.autoescape = True
    if _preview:
        pages = [f.page for f in files.documentation_pages()]
        _preview[0].restore(pages)
        if not _preview[0].sitemap_changed(Path(config.site_dir) / "sitemap.xml", [(p.canonical_url, p.abs_url, p.update_date, p.is_link) for p in pages if p is not None]):
            config.theme.static_templates.discard("sitemap.xml")
    return env


def on_page_context(context, page, config, nav):
    if _preview:
        _preview[0].remember(page)
    if page.content is not None:
        page.content = Markup(page.content)  # rendered and sanitised by on_page_content
    return context
