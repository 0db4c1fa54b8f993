"""The preview under ``mkdocs serve``: what a save must redo, and what the editor sees when it is broken.

Input: each build's ``Site`` (or its problems), the generated pages and
files as text, the served folder. Output: generated pages kept as files in a
folder of the preview's own (outside site_src/), rewritten only when their
text changed, so MkDocs' ``--dirty`` rebuild renders only those (with the
site generator's object for each file kept too, and the sitemap written only
when a page's address or date changed); a status file and a small script
that puts the problems over every page of the browser; the problems in the
terminal, as ``kb check`` prints them. Saves in entries/, templates/ and
hooks/ are reported by the operating system rather than found by polling.

Why files: in a dirty build MkDocs skips a page whose output is newer than
its source file, and an in-memory page (``File.generated(content=...)``)
always counts as changed. Why a status file and not a failed build: a build
that raises leaves the browser as it was, with no word of what went wrong;
a build that keeps the last good site and publishes the problems reloads
the browser, which then shows them.

No mkdocs import: kb_hooks.py hands over paths and text.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import jinja2
from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from errorkb.build.cache import BuildCache, digest_folder
from errorkb.build.problems import Problem
from errorkb.build.text import terminal

STATUS_URI = "kb-preview/status.json"
SEARCH_ENV = "KB_SERVE_SEARCH"  # "1": run the Pagefind indexer after every preview build (slow on a large KB)
POLL_ENV = "KB_SERVE_POLL"  # "1": notice saves in entries/ by polling, as MkDocs does (for folders the OS does not report on)

# Fetched on every page load of the preview; the problems are set as text, never as markup.
_OVERLAY = """<script>
(function () {
  fetch("%(url)s", {cache: "no-store"}).then(function (r) { return r.ok ? r.json() : null; }).then(function (s) {
    if (!s || !s.problems || !s.problems.length) return;
    var box = document.createElement("div");
    box.id = "kb-preview-problems";
    box.setAttribute("role", "alert");
    box.style.cssText = "position:fixed;z-index:10000;left:0;right:0;top:0;max-height:60vh;overflow:auto;" +
      "background:#fff3f3;color:#5c0000;border-bottom:3px solid #c00;padding:1em;font:14px/1.4 monospace";
    var head = document.createElement("strong");
    head.textContent = s.problems.length + " problem(s) in entries/: this preview still shows the last good build.";
    var list = document.createElement("pre");
    list.style.cssText = "white-space:pre-wrap;margin:.5em 0 0";
    list.textContent = s.problems.join("\\n");
    box.appendChild(head);
    box.appendChild(list);
    document.body.appendChild(box);
  }).catch(function () {});
})();
</script>"""


class CompiledTemplates(jinja2.BytecodeCache):
    """The theme's compiled templates, kept in memory for the life of the server.

    MkDocs makes a new Jinja environment for every build, and compiling
    Material's templates again cost more than the rest of a small save. Jinja
    checks each entry against the template's source, so an edited override is
    compiled afresh.
    """

    def __init__(self) -> None:
        self._held: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self._held.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._held[bucket.key] = bucket.bytecode_to_string()


class _ChangesOnly(FileSystemEventHandler):
    """Pass on what changes a file, not that it was read: inotify also reports opening and closing a file
    unchanged, and MkDocs rebuilds on any event, so the templates a build reads would start the next build."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def dispatch(self, event) -> None:
        if event.event_type not in ("opened", "closed_no_write"):
            self.inner.dispatch(event)


class Preview:
    """The state one ``mkdocs serve`` keeps between its builds."""

    def __init__(self, dirty: bool) -> None:
        self.dirty = dirty
        self.cache = BuildCache()
        self.templates = CompiledTemplates()
        self.site = None  # the last build without problems: what stays served while a save is broken
        self.problems: list[Problem] = []
        self.search = os.environ.get(SEARCH_ENV, "") == "1"
        self._store = Path(tempfile.mkdtemp(prefix="kb-preview-"))
        self._written: dict[str, str] = {}  # uri -> digest of what the store holds
        self._frame: str | None = None
        self._outputs: set[str] = set()
        self._listed: dict[tuple, list[str]] = {}
        self._pages: dict[str, tuple] = {}  # src_uri -> (title, front matter) when last rendered
        self._held: dict[str, str | bytes] = {}  # uri -> the object last stored (a cached page comes back as itself)
        self._paths: dict[str, str] = {}  # uri -> where it is stored
        self._observers: list = []
        self._files: dict[str, tuple] = {}  # uri -> (key, the site generator's object for that file)
        self._files_used: set[str] = set()
        self._sitemap: str | None = None  # of the sitemap in the served folder (recorded once its build finished)
        self._sitemap_next: str | None = None
        self._settled = False  # whether the first build's state was exempted from garbage collection (settle)

    def settle(self) -> None:
        """After the first build: collect once, then exempt everything alive (the cache, the theme, MkDocs' state)
        from later garbage collections. A save allocates little next to what the first build keeps, but each
        full collection walked all of it: at 10,000 entries the pipeline's rebuild after a typo took 3.15 s
        (median of four, in one process) instead of 2.64 s frozen; bench/serve_refresh.py, which times the
        whole loop, showed no gain clear of its noise. Objects are still freed by reference counting; only
        cycles among the frozen ones are never collected."""
        if not self._settled:
            self._settled = True
            gc.collect()
            gc.freeze()

    def close(self) -> None:
        for observer in self._observers:
            observer.stop()
        shutil.rmtree(self._store, ignore_errors=True)

    def watch_natively(self, server) -> None:
        """Let the operating system report saves in the folders mkdocs.yml's ``watch`` lists (entries/, templates/, hooks/).

        MkDocs polls every watched file every half second: a save waits a quarter of a second on average
        before the build starts, and at 10,000 entries each poll stats every file, competing with the
        build for the interpreter. Called from ``on_serve``, before MkDocs schedules the ``watch`` folders
        on ``server.observer``: those go to the native observer (inotify, FSEvents, ...), while the docs
        folder and mkdocs.yml, already scheduled, stay polled by MkDocs' observer, started here.
        """
        if os.environ.get(POLL_ENV, "") == "1":
            return
        try:
            native = Observer()
        except OSError:  # the system's limit of watchers is reached: MkDocs' polling still works
            return
        if isinstance(native, PollingObserver):
            return
        schedule = native.schedule
        native.schedule = lambda handler, path, **kwargs: schedule(_ChangesOnly(handler), path, **kwargs)
        polled = server.observer
        polled.start()
        self._observers.append(polled)
        server.observer = native

    # --- a build's outcome

    def accept(self, site):
        self.site, self.problems = site, []
        return site

    def refuse(self, problems: list[Problem]):
        """Keep serving the last good site and say why the new one is not shown; None when there is none yet."""
        self.problems = list(problems)
        lines = [terminal(p.format()) for p in self.problems]
        print(f"{len(lines)} problem(s) in entries/; still serving the last good build:\n" + "\n".join(lines), file=sys.stderr, flush=True)
        return self.site

    def status(self) -> str:
        return json.dumps({"problems": [p.format() for p in self.problems]}, ensure_ascii=False, sort_keys=True)

    def overlay(self, page_html: str, base_path: str) -> str:
        """A page of the preview with the script that shows the current problems, if any."""
        script = _OVERLAY % {"url": json.dumps(base_path.rstrip("/") + "/" + STATUS_URI)[1:-1]}
        at = page_html.rfind("</body>")
        return page_html + script if at < 0 else page_html[:at] + script + page_html[at:]

    # --- what MkDocs re-renders

    def keep_theme(self, theme) -> None:
        """Let ``theme.get_env()`` reuse, across builds, the compiled templates and the list of the theme's files.

        MkDocs makes a new Jinja environment for every build: it compiles the theme's
        templates again, and it lists every file of the theme (Material ships thousands
        of icons) through a name filter to find its static files. Compiled templates are
        checked against their source by Jinja. The list is kept while the theme folders
        hold the same files and the theme's ``static_templates`` (the filter's one
        input besides the name) are the same.
        """
        make = theme.get_env
        key = tuple((d, digest_folder(Path(d)) if d == theme.custom_dir else "") for d in theme.dirs)
        key += (tuple(theme.static_templates),)
        listed = self._listed

        def get_env():
            env = make()
            env.bytecode_cache = self.templates
            plain = env.list_templates

            def list_templates(extensions=None, filter_func=None):
                wanted = (key, tuple(extensions or ()), filter_func is None)
                if wanted not in listed:
                    listed.clear()
                    listed[wanted] = plain(extensions, filter_func)
                return list(listed[wanted])

            env.list_templates = list_templates
            return env

        theme.get_env = get_env

    def store(self, uri: str, content: str | bytes) -> str:
        """The path of a stable file holding ``content``; rewritten (newer mtime) only when the content changed."""
        if self._held.get(uri) is content:
            return self._paths[uri]  # the very object stored last time (a cached page): nothing to hash
        path = self._store / uri
        data = content.encode("utf-8") if isinstance(content, str) else content
        digest = hashlib.sha256(data).hexdigest()
        if self._written.get(uri) != digest:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            self._written[uri] = digest
        self._held[uri] = content
        self._paths[uri] = str(path)
        return self._paths[uri]

    def file(self, uri: str, key: tuple, make):
        """The site generator's object for a stored file, made again only when ``key`` (its path and the
        settings it was made with) changed: MkDocs' File works out paths and URLs once per object, and
        making one for every page and file of a large KB took longer than the rest of a save."""
        held = self._files.get(uri)
        if held is None or held[0] != key:
            held = self._files[uri] = (key, make())
        self._files_used.add(uri)
        return held[1]

    def sitemap_changed(self, path: Path, rows: list[tuple]) -> bool:
        """Whether the sitemap (each page's address and date, what the theme writes there) would differ
        from the one in the served folder; writing it again went through every page of the site."""
        self._sitemap_next = hashlib.sha256(json.dumps(rows, default=str).encode("utf-8")).hexdigest()
        return self._sitemap_next != self._sitemap or not path.is_file()

    def frame_changed(self, nav: list, config_file: Path, theme_dir: str | None, docs_dir: Path) -> bool:
        """Whether what every page shows around its content changed since the last build.

        That is the navigation, mkdocs.yml, the theme overrides and the hand-written
        pages (their titles are in every page's navigation).
        """
        pages = hashlib.sha256(b"".join(p.as_posix().encode() + p.read_bytes() for p in sorted(docs_dir.rglob("*.md"))))
        parts = [json.dumps(nav, sort_keys=True), config_file.read_text(encoding="utf-8"), digest_folder(Path(theme_dir)) if theme_dir else "", pages.hexdigest()]
        frame = hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()
        changed, self._frame = frame != self._frame, frame
        return changed

    def remember(self, page) -> None:
        """The title and front matter of a page MkDocs has just rendered."""
        self._pages[page.file.src_uri] = (page.title, dict(page.meta))

    def restore(self, pages) -> None:
        """Give the pages a dirty build did not read the title and front matter they had.

        The navigation of every rendered page prints other pages' titles, and the
        sitemap reads each page's front matter; an unread page has neither.
        """
        for page in pages:
            if page is not None and page.markdown is None and page.file.src_uri in self._pages:
                page.title, meta = self._pages[page.file.src_uri]
                page.meta = dict(meta)

    def prune(self, outputs: set[str]) -> None:
        """A build finished: delete the outputs of pages and files the previous build had and this one has not (a
        removed entry), and remember what the served folder now holds."""
        for path in self._outputs - outputs:
            Path(path).unlink(missing_ok=True)
        self._outputs = outputs
        self._sitemap = self._sitemap_next
        for uri in [u for u in self._files if u not in self._files_used]:
            del self._files[uri]
        self._files_used = set()


def clear(site_dir: Path) -> None:
    """Empty the served folder, so the next dirty build renders every page (the frame of every page changed)."""
    if site_dir.is_dir():
        for child in site_dir.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
