"""MkDocs hooks: translate MkDocs events into one errorkb.build.pipeline.build() call.

Nothing else belongs here. Data is re-read on every build (no module-level
cache survives between builds), so `mkdocs serve` shows every edit.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markupsafe import Markup  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402

from errorkb.build import pipeline, safety, search  # noqa: E402

_build = {}  # this build's result, replaced at every on_config


def on_config(config):
    root = Path(config.config_file_path).resolve().parent
    settings = pipeline.settings_from(config.extra, config.site_url, config.repo_url)
    try:
        site = pipeline.build(root, settings)
    except pipeline.MissingVendored as exc:
        raise PluginError(str(exc)) from None
    if site.problems:
        lines = "\n".join(p.format() for p in site.problems)
        raise PluginError(f"{len(site.problems)} problem(s) in entries/, nothing was published:\n{lines}")
    config.nav = pipeline.expand_nav(config.nav or [], pipeline.nav_sections(site))
    search.configure(config)
    _build.clear()
    _build.update(site=site, generated=set())
    return config


def on_files(files, config):
    site = _build["site"]
    for page in site.pages:
        files.append(File.generated(config, page.src_uri, content=page.markdown))
        _build["generated"].add(page.src_uri)
    for item in site.files:
        files.append(File.generated(config, item.dest_uri, content=item.content))
    return files


def on_page_markdown(markdown, page, config, files):
    return pipeline.fill_page(page.file.src_uri, markdown)


def on_page_content(html, page, config, files):
    if page.file.src_uri in _build.get("generated", ()):
        return safety.clean_html(html)
    return html


def on_post_page(output, page, config):
    return search.annotate(output, page.meta.get("kb_kind"), page.file.src_uri, _build["site"].graph)


def on_post_build(config):
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
    return env


def on_page_context(context, page, config, nav):
    if page.content is not None:
        page.content = Markup(page.content)  # rendered and sanitised by on_page_content
    return context
