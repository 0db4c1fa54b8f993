"""Stage 5, the JSON API: the graph → versioned static JSON files under api/v1/.

Input: a ``Graph`` and ``Settings``. Output: ``GeneratedFile``s with stable,
sorted JSON (byte-identical across builds of the same commit).
"""

from __future__ import annotations

import json

from .linker import Graph
from .pages import GeneratedFile, Settings, page_url, summary_of

API = "api/v1"


def dump(data: object) -> bytes:
    return (json.dumps(data, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")


def index_record(graph: Graph, settings: Settings, kind: str, entry_id: str) -> dict:
    entry = graph.loaded.entries[kind][entry_id]
    return {
        "id": entry_id,
        "kind": kind[:-1],
        "title": entry.title,
        "summary": summary_of(entry),
        "error": getattr(entry, "error", None),
        "category": getattr(entry, "category", None),
        "tools": list(entry.tools),
        "severity": entry.severity,
        "last_verified": entry.last_verified.isoformat(),
        "url": settings.site_url + page_url(kind, entry_id),
    }


def export_api(graph: Graph, settings: Settings) -> list[GeneratedFile]:
    records = [index_record(graph, settings, kind, i) for kind in ("errors", "guides") for i in sorted(graph.loaded.entries[kind])]
    return [GeneratedFile(f"{API}/entries.json", dump({"version": 1, "entries": records}))]
