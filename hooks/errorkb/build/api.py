"""Stage 5, the JSON API: the graph → versioned static JSON files under api/v1/.

Input: a ``Graph`` and ``Settings``. Output: ``GeneratedFile``s with stable,
sorted JSON (byte-identical across builds of the same commit), described by
site_src/api/openapi.yaml:

- api/v1/entries.json         index of every error and guide
- api/v1/entries/<id>.json    one entry: authored fields, derived links, the snippets of
                              the entry and of each step in three forms (snippet.py)
- api/v1/models.json, gpus.json   the calculator's data entries
"""

from __future__ import annotations

from errorkb.build.jsonout import dumps, fragment
from errorkb.build.schema import TEXT_KINDS
from errorkb.build.linker import Graph
from errorkb.matcher.related import related_index
from errorkb.matcher.score import matcher_index
from errorkb.build.pages import GeneratedFile, Settings, edit_url, page_url, summary_of
from errorkb.build.snippet import FORMATS

API = "api/v1"
VERSION = 1


def dump(data: object) -> bytes:
    return (dumps(data) + "\n").encode("utf-8")  # json.dumps(ensure_ascii=False, sort_keys=True, indent=1), faster


def url_of(settings: Settings, kind: str, entry_id: str) -> str:
    return settings.site_url + page_url(kind, entry_id)


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
        "url": url_of(settings, kind, entry_id),
    }


def index_fragment(graph: Graph, settings: Settings, kind: str, entry_id: str):
    """One entry's record in entries.json, written as JSON once (``jsonout.Fragment``)."""
    return fragment(index_record(graph, settings, kind, entry_id), 2)


def _forms(snip: dict) -> dict:
    """``email`` (the plain text, as since version 1) and ``snippet`` with every form."""
    return {"email": snip["text"], "snippet": {f: snip[f] for f in FORMATS}}


def steps_record(snips: dict) -> list[dict]:
    return [{"anchor": s["anchor"], "title": s["title"], "url": s["url"]} | _forms(s) for s in snips["steps"]]


def entry_record(graph: Graph, settings: Settings, kind: str, entry_id: str, links_to: dict[str, set[str]], snips: dict) -> dict:
    entry = graph.loaded.entries[kind][entry_id]
    ref = (kind, entry_id)
    linked_from = sorted(links_to.get(entry_id, ()))
    return index_record(graph, settings, kind, entry_id) | {
        "version": VERSION,
        "authored": entry.model_dump(mode="json"),
        "short_url": f"{settings.site_url}e/{entry_id}/",
        "edit_url": edit_url(settings, graph.loaded.files[ref]),
        "source_file": graph.loaded.files[ref],
        "related_errors": graph.related_errors.get(ref, []),
        "related_guides": graph.related_guides.get(ref, []),
        "linked_from": linked_from,
        "former_ids": list(entry.aliases),
        **_forms(snips["entry"]),
        "steps": steps_record(snips),
    }


def entry_file(graph: Graph, settings: Settings, kind: str, entry_id: str, links_to: dict[str, set[str]], snips: dict) -> GeneratedFile:
    return GeneratedFile(f"{API}/entries/{entry_id}.json", dump(entry_record(graph, settings, kind, entry_id, links_to, snips)))


def export_api(graph: Graph, settings: Settings, make_entry_file, memo=None) -> list[GeneratedFile]:
    """``make_entry_file(graph, settings, kind, entry_id, links_to)`` writes one entry's file (the pipeline binds the
    entry's snippets to ``entry_file``, and under ``mkdocs serve`` passes a cached one).

    ``memo(table, name, key, make)``, under ``mkdocs serve``: the records of entries.json, matcher.json and
    related.json are kept as written text (``jsonout.Fragment``), each by what it is made from.
    """
    kinds = TEXT_KINDS
    if memo is None:
        records = [index_record(graph, settings, kind, i) for kind in kinds for i in sorted(graph.loaded.entries[kind])]
    else:
        records = [memo("index-records", (kind, i), (settings, graph.loaded.digests[(kind, i)]), lambda kind=kind, i=i: index_fragment(graph, settings, kind, i))
                   for kind in kinds for i in sorted(graph.loaded.entries[kind])]
    files = [GeneratedFile(f"{API}/entries.json", dump({"version": VERSION, "count": len(records), "entries": records}))]
    links_to = graph.linked_from  # built once, by the linker
    for kind in kinds:
        for entry_id in sorted(graph.loaded.entries[kind]):
            files.append(make_entry_file(graph, settings, kind, entry_id, links_to))
    for kind in ("models", "gpus"):
        items = [{"id": i, "url": url_of(settings, kind, i)} | e.model_dump(mode="json") for i, e in sorted(graph.loaded.entries.get(kind, {}).items())]
        files.append(GeneratedFile(f"{API}/{kind}.json", dump({"version": VERSION, "count": len(items), kind: items})))
    files.append(GeneratedFile(f"{API}/matcher.json", dump(matcher_index(graph, memo))))
    files.append(GeneratedFile(f"{API}/related.json", dump(related_index(graph, memo))))
    return files
