"""``kb priors [--write] [--corpus DIR]``: the priors of entries that share a message, counted from the real logs.

Prints one line per entry whose declared ``prior`` is not what the corpus
counts (or that wins enough ties to need one). Exit status 1 when there is
such an entry and 0 when every prior is right; with ``--write`` the counted
numbers go into the entry files (only their ``prior:`` line changes) and the
exit status is 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from errorkb.build.linker import link
from errorkb.build.loader import load
from errorkb.matcher import priors
from errorkb.matcher.score import compile_index, matcher_index


def cmd_priors(args: argparse.Namespace, root: Path) -> int:
    folder = Path(args.corpus) if args.corpus else root / priors.CORPUS
    if not folder.is_dir():
        print(f"no real-log corpus at {folder}: pass --corpus DIR (a folder of log YAML files)", file=sys.stderr)
        return 2
    try:
        logs = priors.read_corpus(folder)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    graph = link(load(root))
    counts = priors.count(logs, compile_index(matcher_index(graph)))
    declared = {entry_id: entry.prior for entry_id, entry in graph.errors.items()}
    todo = priors.changes(declared, counts)
    for c in todo:
        path = graph.loaded.files[("errors", c.entry_id)]
        if args.write:
            file = root / path
            file.write_text(priors.rewrite(file.read_text(encoding="utf-8"), c.counted), encoding="utf-8")
        print(f"{path}: prior {c.declared} -> {c.counted}" + ("" if args.write else " (counted)"))
    n = len(logs)
    if not todo:
        print(f"every prior is what the {n} logs count", file=sys.stderr)
    elif args.write:
        print(f"wrote {len(todo)} prior(s) counted from {n} logs", file=sys.stderr)
    else:
        print(f"{len(todo)} prior(s) differ from what {n} logs count: run `kb priors --write`", file=sys.stderr)
    return 0 if args.write or not todo else 1


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "priors",
        help="check (or --write) the priors of entries that share a message, counted from the real logs",
        description="For entries that tie on a shared message, count their own train and dev logs in the real-log "
        "corpus that tie, and compare with each entry's declared prior. Exit status 1 when one differs.",
    )
    p.add_argument("--write", action="store_true", help="put the counted priors into the entry files")
    p.add_argument("--corpus", metavar="DIR", help=f"the folder of real-log YAML files (default: {priors.CORPUS})")
    p.set_defaults(func=cmd_priors)
