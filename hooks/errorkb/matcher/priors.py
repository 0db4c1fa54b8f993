"""Priors counted from the real-log corpus: which sibling a bare shared message most often belongs to.

Entries that share a message (the CUDA OOM entries, say) tie when a log shows
nothing else. The matcher orders tied entries by their declared ``prior``;
this module counts what that number should be: for each entry, the train and
dev logs of the corpus (tests/data/real-logs) that are its own and in which it
ties at the top with a sibling. ``kb priors`` prints the counts and, with
``--write``, puts them into the entry files; the real-log tests check that the
declared numbers are the counted ones.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from errorkb.matcher.normalise import normalise
from errorkb.matcher.score import Compiled, Match, rank

CORPUS = Path("tests") / "data" / "real-logs"
DECLARE_FROM = 10  # an entry that wins this many ties must declare its prior
PRIOR_LINE = re.compile(r"^(prior:[ \t]*)[^\s#]*", re.M)  # the value only: a comment after it stays
AFTER_LINE = re.compile(r"^last_verified:[^\r\n]*", re.M)


def at(m: Match) -> tuple:
    """What a tie is: the same score, with the message at the same place."""
    return m.score, min(s.start for s in m.spans if s.kind == "signature")


def read_corpus(folder: Path) -> dict[str, dict]:
    """The corpus's logs by file name (without .yaml); ValueError naming the file when one is not a log."""
    logs = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            log = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a readable YAML file ({str(exc).splitlines()[0]})") from None
        if not isinstance(log, dict) or not isinstance(log.get("log"), str) or "expected" not in log:
            raise ValueError(f"{path}: not a real log (a mapping with expected:, split: and log: is needed)")
        logs[path.stem] = log
    return logs


def tie_counts(logs: dict[str, dict], ranked) -> Counter:
    """Per entry, its own train and dev logs in which it ties at the top with a sibling.

    ``ranked(name)`` gives a log's matches, best first; near-misses and held-out logs are not counted.
    """
    counts: Counter = Counter()
    for name, log in logs.items():
        if log.get("split") == "heldout" or not log.get("expected"):
            continue
        found = ranked(name)
        tied = {m.id for m in found if at(m) == at(found[0])} if found else set()
        if len(tied) > 1 and log["expected"] in tied:
            counts[log["expected"]] += 1
    return counts


def count(logs: dict[str, dict], entries: list[Compiled]) -> Counter:
    return tie_counts(logs, lambda name: rank(entries, normalise(logs[name]["log"])))


@dataclass(frozen=True)
class Change:
    entry_id: str
    declared: int
    counted: int


def changes(declared: dict[str, int], counts: Counter) -> list[Change]:
    """The entries whose declared prior is not the count, and those that win DECLARE_FROM ties or more and declare none."""
    out = [Change(e, d, counts[e]) for e, d in declared.items() if d and d != counts[e]]
    out += [Change(e, 0, n) for e, n in counts.items() if n >= DECLARE_FROM and not declared.get(e)]
    return sorted(out, key=lambda c: c.entry_id)


def rewrite(text: str, prior: int) -> str:
    """The entry file's text with its top-level ``prior:`` line set to ``prior`` (added after ``last_verified:``)."""
    line = f"prior: {prior}"
    newline = "\r\n" if "\r\n" in text else "\n"  # keep the file's own line endings
    if PRIOR_LINE.search(text):
        return PRIOR_LINE.sub(lambda m: m.group(1).rstrip() + " " + str(prior), text, count=1)
    anchor = AFTER_LINE.search(text)
    if anchor:
        return text[: anchor.end()] + newline + line + text[anchor.end():]
    return text + ("" if text.endswith("\n") else newline) + line + newline
