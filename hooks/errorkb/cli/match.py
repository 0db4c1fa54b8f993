"""``kb match [FILE|-] [--json] [--top N]``: the "paste your error" matcher on the command line.

Input: a log file, or standard input. Output: the matching entries, best
first, as text for a person or as {"matches": [{"id", "title", "url",
"score"}, ...]} for a script. Exit status 0 when something matches, 1 when
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
from errorkb.matcher.score import Match, compile_index, matcher_index, rank
from errorkb.matcher.normalise import ROUGH_CUT, normalise
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


def format_text(matches: list[Match], flat: str, site_url: str) -> str:
    if not matches:
        return "No entry matches this log. Search the site with the error line, or browse the categories.\n"
    out = []
    for number, m in enumerate(matches, 1):
        out.append(f"{number}. {m.title}  [{m.id}]  {m.score:.2f} {describe(m)}")
        out.append(f"   {site_url}{m.url}")
        for span in [s for s in m.spans if s.kind == "signature"][:1]:
            out.append(f"   matched: {flat[span.start:span.end]}")
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
    normalised = normalise(text)
    matches = rank(compile_index(matcher_index(link(load(root)))), normalised)[: args.top or None]
    site_url = read_settings(root).site_url
    if args.json:
        print(json.dumps({"matches": [m.to_json(site_url) for m in matches]}, ensure_ascii=False, indent=1))
    else:
        sys.stdout.write(terminal(format_text(matches, normalised.flat, site_url)))
    return 0 if matches else 1


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "match",
        help="find the entries that explain a pasted log",
        description="Match a log (a file, or standard input) against every entry's signatures, as the site's "
        "paste box does. Exit status: 0 when an entry matches, 1 when none does.",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="the log; '-' or nothing reads standard input")
    p.add_argument("--json", action="store_true", help='print {"matches": [{"id", "title", "url", "score"}, ...]}')
    p.add_argument("--top", type=int, metavar="N", help="show only the N best matches (0: all, the default)")
    p.set_defaults(func=cmd_match)
