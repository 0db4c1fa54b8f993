"""The matcher ("paste your error"): a pasted log → the entries that explain it, best first.

Input: the matcher index (``matcher_index(graph)``, exported as
api/v1/matcher.json) and a log. Output: ``Match`` records, best first, and
an empty list when no signature matches: the matcher never guesses.

How an entry scores, on the normalised log (normalise.py):

- one of its signatures or weak signatures must match; the longer the matched text, the stronger
  the evidence (a match of STRONG_CHARS characters or more counts fully), and
  a second signature of the same entry corroborates it, when the two matches
  do not overlap (two patterns on the same characters are one piece of evidence);
- an entry with ``context`` patterns gains when one is found in the same log
  and loses when none is (that is how the CUDA OOM entries, which share
  their message, are told apart: weight-loading frames or forward frames);
  an ``unless`` pattern found in the log (a sibling's stronger evidence, such
  as training frames around a forward frame) makes it lose as if no context
  were found; an entry with ``context_required`` loses more without its
  context, enough to fall below the confidence threshold, so a bare shared
  message goes to the general sibling; so does an entry of which only
  ``weak_signatures`` matched (a line that healthy runs print too), unless
  its context is found;
- the earlier the message appears, the likelier it is the root cause;
- a ``wrapper`` entry (a dead engine, a failed worker, an NCCL watchdog) is
  demoted below every root cause found in the same log, so it is listed but
  never ranked first when the error it reports is known; an entry counts as a
  wrapper in a log that holds one of its ``wrapper_when`` patterns (a general
  message reported by an app whose own entry explains the fix there);
- an entry whose ``benign_when`` pattern is in the log (the run went on past
  the message, or an optional probe printed it) loses as a wrapper does,
  whatever else matched, so it is listed but never a confident match.
- entries that still tie (the same score, the message at the same place) are
  ordered by ``prior``, the number of real logs in the corpus that were that
  entry's when the shared message was all they showed (for a bare
  ``CUDA out of memory`` line: which phase such logs most often were), then
  by id.

Patterns run on RE2 (google-re2 here, re2js in the browser), so a match takes
time linear in the log whatever the pattern. Before a pattern runs, the log
(ASCII lower-cased) must contain one of its ``factors`` (language.py), which
spares most patterns on most logs without changing any result.

site_src/javascripts/matcher.mjs computes the same numbers in the browser;
tests/matcher_cases.json holds the cases both implementations must pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from errorkb.build.jsonout import fragment
from errorkb.build.linker import Graph
from errorkb.matcher.normalise import Normalised, normalise
from errorkb.build.pages import page_url
from errorkb.matcher import language
from errorkb.matcher.facts import facts_index

INDEX_VERSION = 1
CONFIDENT = 0.7  # at or above: shown as a confident match
# The scoring weights: their one home. They travel in matcher.json ("weights"), which the browser reads.
WEIGHTS = {"strong_chars": 20, "base": 0.5, "strength": 0.3, "corroboration": 0.04, "context_found": 0.12,
           "context_missing": 0.08, "early": 0.04, "wrapper_factor": 0.5, "context_required": 0.2}
STRONG_CHARS, BASE, STRENGTH, CORROBORATION, CONTEXT_FOUND, CONTEXT_MISSING, EARLY, WRAPPER_FACTOR, CONTEXT_REQUIRED = WEIGHTS.values()


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str  # "signature" or "context"


@dataclass
class Match:
    id: str
    title: str
    url: str
    score: float
    confident: bool
    wrapper: bool
    spans: list[Span] = field(default_factory=list)

    def to_json(self, base_url: str = "") -> dict:
        return {"id": self.id, "title": self.title, "url": base_url + self.url, "score": self.score}


@dataclass(frozen=True)
class Pattern:
    regex: object  # a compiled RE2 pattern
    factors: tuple[str, ...]  # one of them must be in the lower-cased log; empty: always run

    def search(self, flat: str, lower: str):
        if self.factors and not any(f in lower for f in self.factors):
            return None
        return self.regex.search(flat)


@dataclass(frozen=True)
class Compiled:
    id: str
    title: str
    url: str
    wrapper: bool
    signatures: tuple[Pattern, ...]
    context: tuple[Pattern, ...]
    unless: tuple[Pattern, ...] = ()
    context_required: bool = False
    weak_signatures: tuple[Pattern, ...] = ()
    wrapper_when: tuple[Pattern, ...] = ()
    benign_when: tuple[Pattern, ...] = ()
    prior: int = 0


# The entry fields that hold optional patterns, and their keys in matcher.json (each with its factors under key + "f").
OPTIONAL_PATTERNS = {"weak_signatures": "ws", "context": "c", "unless": "u", "wrapper_when": "ww", "benign_when": "bw"}


def matcher_index(graph: Graph, memo=None) -> dict:
    """The compact index the browser downloads: what the matcher needs of every error entry, nothing more.

    ``memo(table, name, key, make)``, under ``mkdocs serve``: each entry's record is a ``jsonout.Fragment``
    kept by the digest of its file (a record reads nothing but its entry); the index is then only for writing.
    """
    entries = []
    for entry_id in sorted(graph.errors):
        if memo is None:
            entries.append(_record(graph, entry_id))
        else:
            entries.append(memo("matcher-records", entry_id, graph.loaded.digests.get(("errors", entry_id)), lambda entry_id=entry_id: record_fragment(graph, entry_id)))
    return {"version": INDEX_VERSION, "confident": CONFIDENT, "weights": WEIGHTS, "entries": entries, "facts": facts_index()}


def record_fragment(graph: Graph, entry_id: str):
    """One error entry's record in matcher.json, written as JSON once (``jsonout.Fragment``)."""
    return fragment(_record(graph, entry_id), 2)


def _record(graph: Graph, entry_id: str) -> dict:
    entry = graph.errors[entry_id]
    record = {"id": entry_id, "title": entry.title, "url": page_url("errors", entry_id), "s": list(entry.signatures),
              "sf": [language.factors(p) for p in entry.signatures]}
    for field, key in OPTIONAL_PATTERNS.items():
        patterns = getattr(entry, field)
        if patterns:
            record[key] = list(patterns)
            record[key + "f"] = [language.factors(p) for p in patterns]
    if entry.context_required:
        record["r"] = 1
    if entry.wrapper:
        record["w"] = 1
    if entry.prior:
        record["p"] = entry.prior
    if entry.applies_to:
        record["a"] = dict(sorted(entry.applies_to.items()))
    versioned = [[n, step.title, dict(sorted(step.applies_to.items()))] for n, step in enumerate(entry.solution, 1) if step.applies_to]
    if versioned:
        record["st"] = versioned  # the steps written for some versions only: number, title, ranges
    return record


def _patterns(patterns: list[str], factors: list[list[str]] | None) -> tuple[Pattern, ...]:
    factors = factors or [[] for _ in patterns]
    return tuple(Pattern(language.compile(p), tuple(f)) for p, f in zip(patterns, factors))


def compile_index(index: dict) -> list[Compiled]:
    return [
        Compiled(
            id=e["id"], title=e["title"], url=e["url"], wrapper=bool(e.get("w")),
            signatures=_patterns(e["s"], e.get("sf")),
            context_required=bool(e.get("r")), prior=int(e.get("p", 0)),
            **{field: _patterns(e.get(key, []), e.get(key + "f")) for field, key in OPTIONAL_PATTERNS.items()},
        )
        for e in index["entries"]
    ]


def ascii_lower(text: str) -> str:
    """A-Z to a-z and nothing else, so Python and JavaScript fold alike."""
    return text.translate(_LOWER)


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def round3(value: float) -> float:
    """Round half up to 3 decimals, exactly as the JavaScript does (Python's round() rounds half to even)."""
    return math.floor(value * 1000 + 0.5) / 1000


def _apart(spans: list[Span]) -> bool:
    """Whether two of the spans share no character: what lets a second signature corroborate the first."""
    return any(a.end <= b.start or b.end <= a.start for i, a in enumerate(spans) for b in spans[i + 1:])


def _first(patterns: tuple[Pattern, ...], flat: str, lower: str):
    """The first match of the first pattern that matches, or None (matcher.mjs's first())."""
    return next((m for m in (rx.search(flat, lower) for rx in patterns) if m), None)


def _score(entry: Compiled, flat: str, lower: str) -> tuple[float, int, list[Span]] | None:
    strong = [m for m in (rx.search(flat, lower) for rx in entry.signatures) if m]
    hits = strong + [m for m in (rx.search(flat, lower) for rx in entry.weak_signatures) if m]
    if not hits:
        return None
    spans = [Span(m.start(), m.end(), "signature") for m in hits]
    strength = max(min(1.0, (m.end() - m.start()) / STRONG_CHARS) for m in hits)
    first = min(m.start() for m in hits)
    score = BASE + STRENGTH * strength
    if _apart(spans):
        score += CORROBORATION
    found = None
    if _first(entry.unless, flat, lower):
        score -= CONTEXT_MISSING
    elif entry.context:
        found = _first(entry.context, flat, lower)
        if found:
            spans.append(Span(found.start(), found.end(), "context"))
            score += CONTEXT_FOUND
        else:
            score -= CONTEXT_MISSING
    if (entry.context_required or not strong) and not found:
        score -= CONTEXT_REQUIRED
    score += EARLY * (1 - first / len(flat))
    return score, first, spans


def rank(entries: list[Compiled], normalised: Normalised) -> list[Match]:
    flat = normalised.flat
    if not flat:
        return []
    lower = ascii_lower(flat)
    found = []
    for entry in entries:
        result = _score(entry, flat, lower)
        if result:
            found.append((entry, *result))
    wrapped = {entry.id: entry.wrapper or bool(_first(entry.wrapper_when, flat, lower)) for entry, *_ in found}
    has_root = any(not wrapped[entry.id] for entry, *_ in found)
    matches = []
    for entry, score, first, spans in found:
        if (wrapped[entry.id] and has_root) or _first(entry.benign_when, flat, lower):
            score *= WRAPPER_FACTOR
        score = round3(score)
        spans.sort(key=lambda s: (s.start, s.end))
        matches.append((first, entry.prior, Match(entry.id, entry.title, entry.url, score, score >= CONFIDENT, wrapped[entry.id], spans)))
    matches.sort(key=lambda fpm: (-fpm[2].score, fpm[0], -fpm[1], fpm[2].id))
    return [m for _, _, m in matches]


def match(text: str, index: dict | list[Compiled], top: int | None = None) -> list[Match]:
    """The entries whose signatures match ``text``, best first (all of them unless ``top`` is given)."""
    entries = compile_index(index) if isinstance(index, dict) else index
    found = rank(entries, normalise(text))
    return found if top is None else found[:top]
