"""A pasted log, read whole: the confident matches, the possibly related entries, the facts.

Input: a log and a ``Bundle`` (the three indexes the build exports:
matcher.json with its facts table, related.json). Output: an ``Analysis``
that `kb match` prints and that matcher.mjs computes the same way in the
browser (tests/matcher_cases.json holds the cases both must pass).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from errorkb.build.linker import Graph
from errorkb.matcher.facts import Fact, compile_facts, read_facts, version_in
from errorkb.matcher.normalise import Normalised, normalise
from errorkb.matcher.related import Related, compile_related, error_lines, rank_related, related_index
from errorkb.matcher.score import Match, compile_index, matcher_index, rank


@dataclass
class Bundle:
    matcher: dict
    related: dict
    entries: list = field(default_factory=list)
    related_entries: list = field(default_factory=list)
    facts: list = field(default_factory=list)

    @classmethod
    def from_indexes(cls, matcher: dict, related: dict) -> "Bundle":
        return cls(matcher, related, compile_index(matcher), compile_related(related), compile_facts(matcher["facts"]))

    @classmethod
    def from_graph(cls, graph: Graph) -> "Bundle":
        return cls.from_indexes(matcher_index(graph), related_index(graph))


@dataclass
class Analysis:
    normalised: Normalised
    matches: list[Match]
    related: list[Related]
    lines: list[str]
    facts: list[Fact]
    versions: dict[str, bool | None]  # entry id -> does the version in the log fall in the entry's applies_to
    steps: dict[str, list[StepHint]] = field(default_factory=dict)  # entry id -> its versioned steps, this version's first


@dataclass(frozen=True)
class StepHint:
    """A solution step written for some versions only, and whether the version in the log is one of them."""

    number: int
    title: str
    tool: str
    fits: bool


def _found_versions(facts: list[Fact]) -> dict[str, str]:
    return {f.kind: f.value.split(" ")[0].lstrip("b") for f in facts}


def _versions(matches: list[Match], found: dict[str, str], applies: dict[str, dict[str, str]]) -> dict[str, bool | None]:
    out = {}
    for m in matches:
        for tool, spec in sorted(applies.get(m.id, {}).items()):
            if tool in found:
                out[m.id] = version_in(spec, found[tool])
                break
    return out


def _steps(matches: list[Match], found: dict[str, str], versioned: dict[str, list]) -> dict[str, list[StepHint]]:
    """For each match, its versioned steps that the log's version decides: those for this version lead, in step order."""
    out = {}
    for m in matches:
        hints = []
        for number, title, ranges in versioned.get(m.id, []):
            for tool, spec in sorted(ranges.items()):
                fits = version_in(spec, found[tool]) if tool in found else None
                if fits is not None:
                    hints.append(StepHint(number, title, tool, fits))
                    break
        if hints:
            out[m.id] = sorted(hints, key=lambda h: (not h.fits, h.number))
    return out


def analyse(text: str, bundle: Bundle, top: int | None = None) -> Analysis:
    normalised = normalise(text)
    matches = rank(bundle.entries, normalised)
    if top is not None:
        matches = matches[:top]
    lines = error_lines(normalised.lines) if normalised.flat else []
    related = rank_related(bundle.related_entries, lines, {m.id for m in matches}, bundle.related)
    facts = read_facts(normalised.flat, bundle.facts)
    applies = {e["id"]: e["a"] for e in bundle.matcher["entries"] if "a" in e}
    versioned = {e["id"]: e["st"] for e in bundle.matcher["entries"] if "st" in e}
    found = _found_versions(facts)
    return Analysis(normalised, matches, related, lines, facts, _versions(matches, found, applies), _steps(matches, found, versioned))
