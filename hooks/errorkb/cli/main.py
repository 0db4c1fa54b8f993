"""The ``kb`` command: the pipeline's stages for editors, support engineers and scripts.

kb check [PATHS]            every problem as path:line: field: CODE message (hint); exit 1 if any
kb new error|guide ID       scaffold an entry with every field to fill
kb schema [--check]         write or verify entries/schema.json
kb cite ID [--step N] [--format text|markdown|html]
                            the entry (or one whole step) to paste into a reply
kb priors [--write]         the priors of entries that share a message, counted from the real logs
Each acts on the KB root found from the current directory, or --root.
"""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import replace
import json
import sys
from pathlib import Path

from errorkb.build import schema
from errorkb.build.linker import link
from errorkb.build.loader import find_root, load
from errorkb.build.linker import Graph
from errorkb.build.pages import Settings, snippets_of
from errorkb.build.pipeline import SettingsError
from errorkb.build.snippet import FORMATS
from errorkb.cli import calc, match, pages, priors
from errorkb.cli.scaffold import scaffold
from errorkb.cli.settings import read_settings
from errorkb.build.schemajson import schema_text
from errorkb.build.problems import Problem, problem
from errorkb.build.text import terminal
from errorkb.build.urls import broken_urls, update_manifest
from errorkb.build.yamlfile import field_path
from errorkb.matcher import language
from errorkb.build.pages import stale_refs


def _browser_problems(loaded, root: Path) -> list[Problem]:
    """KB019 for every signature that the browser's engine (re2js) would refuse, though RE2 in Python took it."""
    where = {}
    for entry_id, entry in loaded.entries["errors"].items():
        for name in language.PATTERN_FIELDS:
            for index, pattern in enumerate(getattr(entry, name)):
                where.setdefault(pattern, []).append((entry_id, name, index))
    refused = language.browser_refusals(sorted(where), root)
    if refused is None:
        print("note: Node.js or node_modules/re2js is missing, so signatures were not compiled by the browser's engine (run `npm ci`)", file=sys.stderr)
        return []
    out = []
    for pattern, reason in refused.items():
        for entry_id, name, index in where[pattern]:
            path = (name, index)
            out.append(problem("KB019", loaded.files[("errors", entry_id)], loaded.line("errors", entry_id, path), field_path(path), f"the browser's engine (re2js) refuses it: {reason[:120]}"))
    return out


def cmd_check(args: argparse.Namespace, root: Path) -> int:
    paths = [Path(p) for p in args.paths] or None
    for p in paths or []:
        if not p.exists():
            print(f"{p}: no such file or folder", file=sys.stderr)
            return 2
    loaded = load(root, only=paths)
    graph = link(loaded)
    problems = loaded.problems + graph.problems + broken_urls(graph) + _browser_problems(loaded, root)
    if paths is not None:
        wanted = {q.resolve().relative_to(root).as_posix() for q in paths if q.resolve().is_relative_to(root)}
        problems = [p for p in problems if p.file in wanted or any(p.file.startswith(w.rstrip("/") + "/") for w in wanted)]
    problems.sort(key=lambda p: p.sort_key())
    for p in problems:
        print(p.format())
    count = sum(len(v) for v in loaded.entries.values())
    if problems:
        print(f"{len(problems)} problem(s); fix them and run `kb check` again.", file=sys.stderr)
        return 1
    print(f"ok: {count} entries, no problems.", file=sys.stderr)
    return 0


def cmd_new(args: argparse.Namespace, root: Path) -> int:
    if not schema.ID_RE.fullmatch(args.id):
        print(f"'{args.id}' is not a valid id: use lowercase letters, digits and single hyphens", file=sys.stderr)
        return 2
    path = root / "entries" / f"{args.kind}s" / f"{args.id}.yaml"
    existing = [k for k in schema.TEXT_KINDS if (root / "entries" / k / f"{args.id}.yaml").exists()]
    if existing:
        print(f"entries/{existing[0]}/{args.id}.yaml already exists", file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scaffold(args.kind, dt.date.today()), encoding="utf-8")
    print(path.relative_to(root).as_posix())
    print("Fill in every field, then run `kb check`.", file=sys.stderr)
    return 0


def cmd_schema(args: argparse.Namespace, root: Path) -> int:
    path = root / "entries" / "schema.json"
    text = schema_text(read_settings(root).site_url)
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print("entries/schema.json is out of date with the pydantic models: run `kb schema`", file=sys.stderr)
            return 1
        print("entries/schema.json is up to date", file=sys.stderr)
        return 0
    path.write_text(text, encoding="utf-8")
    print(path.relative_to(root).as_posix())
    return 0


def cite(graph: Graph, settings: Settings, entry_id: str, step: int | None, form: str = "text") -> str:
    """The same text as the API's snippets and the page's "Copy for email" buttons (snippet.py)."""
    for kind in schema.TEXT_KINDS:
        entries = graph.loaded.entries[kind]
        entry_id = graph.redirects.get((kind, entry_id), entry_id)
        if entry_id not in entries:
            continue
        snips = snippets_of(graph, settings, kind, entry_id)
        if step is None:
            return snips["entry"][form]
        steps = snips["steps"]
        if not 1 <= step <= len(steps):
            raise LookupError(f"'{entry_id}' has {len(steps)} {'steps' if kind == 'errors' else 'causes'}; there is no {step}")
        return steps[step - 1][form]
    raise LookupError(f"no entry with the id '{entry_id}'")


def cmd_cite(args: argparse.Namespace, root: Path) -> int:
    try:
        sys.stdout.write(terminal(cite(link(load(root)), read_settings(root), args.id, args.step, args.format)))
    except LookupError as exc:
        print(str(exc).strip("'\""), file=sys.stderr)
        return 1
    return 0


def cmd_stale(args: argparse.Namespace, root: Path) -> int:
    settings = read_settings(root)
    if args.days is not None:
        if args.days < 0:
            print("--days must be zero or more", file=sys.stderr)
            return 2
        settings = replace(settings, freshness_days=args.days)
    graph = link(load(root))
    refs = stale_refs(graph, settings)
    for kind, entry_id in refs:
        entry = graph.entry((kind, entry_id))
        age = (settings.today - entry.last_verified).days
        print(f"{entry.last_verified.isoformat()}  {age:>5} days  {graph.loaded.files[(kind, entry_id)]}  {terminal(entry.title)}")
    print(f"{len(refs)} entries last verified more than {settings.freshness_days} days ago.", file=sys.stderr)
    return 0


def cmd_urls(args: argparse.Namespace, root: Path) -> int:
    graph = link(load(root))
    if args.update:
        print(f"added {update_manifest(graph)} URL(s) to published-urls.txt", file=sys.stderr)
        return 0
    problems = broken_urls(graph)
    for p in problems:
        print(p.format())
    return 1 if problems else 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="kb", description="The Errors KB: check, scaffold and cite entries.")
    top.add_argument("--root", type=Path, help="the KB folder (with mkdocs.yml and entries/); default: found from the current folder")
    sub = top.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate entries and print every problem")
    p.add_argument("paths", nargs="*", help="only report problems in these files or folders")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("new", help="scaffold a new entry")
    p.add_argument("kind", choices=["error", "guide"])
    p.add_argument("id")
    p.set_defaults(func=cmd_new)
    p = sub.add_parser("schema", help="write or verify entries/schema.json")
    p.add_argument("--check", action="store_true", help="fail when schema.json is out of date")
    p.set_defaults(func=cmd_schema)
    p = sub.add_parser("cite", help="an entry or one whole step, to paste into a reply")
    p.add_argument("id")
    p.add_argument("--step", type=int, help="one solution step (or guide cause), whole, with its link")
    p.add_argument("--format", choices=FORMATS, default="text", help="text for email (default), markdown for helpdesks that render it, html for rich-text editors")
    p.set_defaults(func=cmd_cite)
    p = sub.add_parser("stale", help="entries past the freshness window, oldest first")
    p.add_argument("--days", type=int, help="the window in days (default: extra.kb.freshness_days in mkdocs.yml)")
    p.set_defaults(func=cmd_stale)
    p = sub.add_parser("urls", help="check (or --update) the manifest of published URLs")
    p.add_argument("--update", action="store_true", help="add the URLs served now to published-urls.txt")
    p.set_defaults(func=cmd_urls)
    for module in (calc, match, pages, priors):
        module.register(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    root = (args.root.resolve() if args.root else find_root())
    if root is None or not (root / "entries").is_dir():
        print("no KB here: run kb inside the repository (a folder with mkdocs.yml and entries/), or pass --root", file=sys.stderr)
        return 2
    try:
        return args.func(args, root)
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
