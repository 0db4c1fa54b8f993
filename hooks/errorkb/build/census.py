"""The census: which errors people running models locally actually paste, and how many of them the KB covers.

Input: tests/data/census.yaml (sampled public threads, each with the class
of its root error) and the graph. Output: ``Coverage``, the figures the
About page and the census test show. Nothing here is typed by hand.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from errorkb.build.linker import Graph

CENSUS = Path("tests") / "data" / "census.yaml"


@dataclass(frozen=True)
class Coverage:
    threads: int
    covered: int
    repositories: int
    engines: list[tuple[str, int, int]]  # engine, threads, covered
    missing: list[tuple[str, int]]  # classes without an entry, most frequent first (not "other")
    other: int

    @property
    def share(self) -> float:
        return self.covered / self.threads if self.threads else 0.0


def read_census(root: Path) -> list[dict]:
    path = root / CENSUS
    if not path.is_file():
        return []
    return yaml.safe_load(path.read_text(encoding="utf-8")) or []


def coverage(items: list[dict], graph: Graph) -> Coverage:
    known = set(graph.errors) | set(graph.guides) | {old for (kind, old) in graph.redirects if kind == "errors"}
    covered = [i for i in items if i["class"] in known]
    by_engine = Counter(i["engine"] for i in items)
    hit = Counter(i["engine"] for i in covered)
    missing = Counter(i["class"] for i in items if i["class"] not in known and i["class"] != "other")
    return Coverage(
        threads=len(items),
        covered=len(covered),
        repositories=len({i["source"].split("#")[0] for i in items}),
        engines=[(e, n, hit[e]) for e, n in sorted(by_engine.items(), key=lambda kv: (-kv[1], kv[0]))],
        missing=sorted(missing.items(), key=lambda kv: (-kv[1], kv[0])),
        other=sum(1 for i in items if i["class"] == "other"),
    )
