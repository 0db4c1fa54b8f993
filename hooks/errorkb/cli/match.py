"""``kb match [FILE|-] [--json] [--top N]``: the "paste your error" matcher on the command line.

Input: a log file, or standard input. Output: the matching entries, best
first, as text for a person or as {"matches": [{"id", "title", "url",
"score"}, ...], ...} for a script; when the log shows an engine version and
an entry has steps written for some versions only, those for this version
are named first. Exit status 0 when something matches, 1 when
nothing does (the JSON then holds an empty list), 2 on a usage error. The
answers are the ones the box on the site gives: the same index, the same
algorithm (matcher.py, matcher.mjs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import BinaryIO

from errorkb.build.linker import link
from errorkb.build.loader import load
from errorkb.matcher.analyse import Analysis, Bundle, analyse
from errorkb.matcher.normalise import ROUGH_CUT
from errorkb.matcher.score import Match
from errorkb.build.text import terminal
from errorkb.cli.settings import read_settings

CHUNK = 1 << 16


def read_bounded(stream: BinaryIO, limit: int = ROUGH_CUT) -> str:
    """The whole stream when it is short; its head and tail otherwise, cut as the matcher would cut them."""
    head = stream.read(limit)
    tail = b""
    while chunk := stream.read(CHUNK):
        tail = (tail + chunk)[-limit:]
    data = head + tail
    if len(data) > limit:
        data = data[: limit // 2] + b"\n" + data[-limit // 2 :]
    return data.decode("utf-8", errors="replace")


def describe(m: Match) -> str:
    if m.confident:
        return "strong match"
    return "reported by an earlier error" if m.wrapper else "possible match"


def _found(result: Analysis, tool: str) -> str:
    return next((f"{f.label} {f.value}" for f in result.facts if f.kind == tool), tool)


def _step_lines(result: Analysis, m: Match, site_url: str) -> list[str]:
    """The entry's steps for the version in the log first, then those written for other versions."""
    hints = result.steps.get(m.id, [])
    out = []
    for fits in (True, False):
        chosen = [h for h in hints if h.fits is fits]
        if chosen:
            tools = ", ".join(dict.fromkeys(_found(result, h.tool) for h in chosen))
            out.append(f"   for {tools} (in this log), start with:" if fits else f"   not for {tools}:")
            out.extend(f"     step {h.number}: {h.title}  {site_url}{m.url}#step-{h.number}" for h in chosen)
    return out


def format_text(result: Analysis, site_url: str) -> str:
    out = []
    if result.facts:
        out.append("From the log: " + "; ".join(f"{f.label} {f.value}" for f in result.facts))
    if not result.matches:
        out.append("No entry's signature matches this log.")
    for number, m in enumerate(result.matches, 1):
        out.append(f"{number}. {m.title}  [{m.id}]  {m.score:.2f} {describe(m)}")
        out.append(f"   {site_url}{m.url}")
        for span in [s for s in m.spans if s.kind == "signature"][:1]:
            out.append(f"   matched: {result.normalised.flat[span.start:span.end]}")
        if result.versions.get(m.id) is False:
            out.append("   note: the version in this log is outside the versions this entry was written for")
        out.extend(_step_lines(result, m, site_url))
    if result.related:
        out.append("Possibly related (words in common with the error lines):")
        for r in result.related:
            out.append(f"   - {r.title}  [{r.id}]  {site_url}{r.url}  ({', '.join(r.words)})")
    if result.lines and not result.matches:
        out.append(f"Error line: {result.lines[0]}")
        out.append("Search the site for it, or browse the categories.")
    return "\n".join(out) + "\n"


def cmd_match(args: argparse.Namespace, root: Path) -> int:

    if args.top is not None and args.top < 0:
        print("--top must be 0 (all) or more", file=sys.stderr)
        return 2
    try:
        if args.file in (None, "-"):
            text = read_bounded(sys.stdin.buffer)
        else:
            with open(args.file, "rb") as handle:
                text = read_bounded(handle)
    except OSError as exc:
        print(f"{args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    result = analyse(text, Bundle.from_graph(link(load(root))), top=args.top or None)
    site_url = read_settings(root).site_url
    if args.json:
        page = {m.id: site_url + m.url for m in result.matches}
        print(json.dumps({
            "matches": [m.to_json(site_url) for m in result.matches],
            "related": [r.to_json(site_url) for r in result.related],
            "facts": [f.to_json() for f in result.facts],
            "lines": result.lines,
            "steps": {entry_id: [{"step": h.number, "title": h.title, "tool": h.tool, "for_this_version": h.fits,
                                  "url": f"{page[entry_id]}#step-{h.number}"}
                                 for h in hints] for entry_id, hints in result.steps.items()},
        }, ensure_ascii=False, indent=1))
    else:
        sys.stdout.write(terminal(format_text(result, site_url)))
    return 0 if result.matches else 1


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "match",
        help="find the entries that explain a pasted log",
        description="Match a log (a file, or standard input) against every entry's signatures, as the site's "
        "paste box does. Exit status: 0 when an entry matches, 1 when none does.",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="the log; '-' or nothing reads standard input")
    p.add_argument("--json", action="store_true", help='print {"matches": [...], "related": [...], "facts": [...], "lines": [...], "steps": {...}}')
    p.add_argument("--top", type=int, metavar="N", help="show only the N best matches (0: all, the default)")
    p.set_defaults(func=cmd_match)
