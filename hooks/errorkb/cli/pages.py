"""`kb pages OUT`: the generated site as plain files, for any Markdown site generator.

Input: the KB root. Output: in OUT, every generated page as a Markdown file
(front matter and Python-Markdown syntax: attribute lists, admonitions,
fenced code) at the path MkDocs would give it, and every generated file (the
JSON API, feeds, redirect pages) as it is. With ``--with-site-src`` the
hand-written pages and assets of site_src/ are copied too, so OUT is a
complete docs folder. Nothing is written when an entry has a problem: the
problems are printed as `kb check` prints them and the exit status is 1.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from errorkb.build.pipeline import build, fill_page
from errorkb.cli.settings import read_settings

KEEP = {".gitkeep"}


def _target(out: Path, rel: str) -> Path:
    """``out / rel``, refusing any path that would land outside ``out``."""
    target = (out / rel).resolve()
    if not target.is_relative_to(out):
        raise ValueError(f"refusing to write outside {out}: {rel}")
    return target


def write_pages(root: Path, out: Path, with_site_src: bool = False) -> tuple[int, int]:
    """Write the generated pages and files of the KB at ``root`` into ``out``; (pages, files) written."""
    site = build(root, read_settings(root))
    if site.problems:
        raise LookupError("\n".join(p.format() for p in site.problems))
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if with_site_src:
        shutil.copytree(root / "site_src", out, dirs_exist_ok=True)
        for page in (root / "site_src").rglob("*.md"):  # the sections the build writes into hand-written pages
            uri = page.relative_to(root / "site_src").as_posix()
            (out / uri).write_text(fill_page(uri, page.read_text(encoding="utf-8")), encoding="utf-8", newline="\n")
    for page in site.pages:
        target = _target(out, page.src_uri)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.markdown, encoding="utf-8", newline="\n")
    for item in site.files:
        target = _target(out, item.dest_uri)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.content)
    return len(site.pages), len(site.files)


def cmd_pages(args: argparse.Namespace, root: Path) -> int:
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"{out}: exists and is not a folder", file=sys.stderr)
        return 2
    if out.is_dir() and any(p.name not in KEEP for p in out.iterdir()) and not args.force:
        print(f"{out}: the folder is not empty; pass --force to write into it anyway", file=sys.stderr)
        return 2
    try:
        pages, files = write_pages(root, out, args.with_site_src)
    except LookupError as exc:
        print(str(exc))
        print("nothing was written; fix the problems and run `kb pages` again.", file=sys.stderr)
        return 1
    print(f"wrote {pages} pages and {files} files to {out}", file=sys.stderr)
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "pages",
        help="write the generated Markdown pages and JSON files to a folder",
        description="Write every generated page (Markdown with front matter) and file (JSON API, feeds, redirects) "
        "to OUT, so another Markdown site generator can render the KB. Exit status 1 when an entry has a problem.",
    )
    p.add_argument("out", metavar="OUT", help="the folder to write into")
    p.add_argument("--with-site-src", action="store_true", help="also copy the hand-written pages and assets of site_src/")
    p.add_argument("--force", action="store_true", help="write into OUT even when it is not empty")
    p.set_defaults(func=cmd_pages)
