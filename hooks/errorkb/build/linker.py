"""Stage 2, linking: validated entries → the graph the pages are rendered from.

Input: a ``Loaded``. Output: a ``Graph`` with related links in both
directions, the guides that cover each error, indexes per category, tool and
tag, the redirects from aliases, and Problems for dangling references, unknown
taxonomy terms, duplicate ids and aliases that collide.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from pydantic import BaseModel

from errorkb.build.loader import Loaded
from errorkb.build.schema import RESERVED_IDS, TEXT_KINDS
from errorkb.build.problems import Problem, problem
from errorkb.build.yamlfile import field_path

Ref = tuple[str, str]  # (kind, id)


@dataclass
class Graph:
    loaded: Loaded
    related_errors: dict[Ref, list[str]] = field(default_factory=dict)  # both directions
    related_guides: dict[Ref, list[str]] = field(default_factory=dict)  # both directions
    by_category: dict[str, list[str]] = field(default_factory=dict)  # category -> error ids
    by_tool: dict[str, list[Ref]] = field(default_factory=dict)
    by_tag: dict[str, list[Ref]] = field(default_factory=dict)
    redirects: dict[Ref, str] = field(default_factory=dict)  # (kind, old id) -> current id
    linked_from: dict[str, set[str]] = field(default_factory=dict)  # id -> ids of the entries whose fields link to it
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> dict[str, BaseModel]:
        return self.loaded.entries["errors"]

    @property
    def guides(self) -> dict[str, BaseModel]:
        return self.loaded.entries["guides"]

    def entry(self, ref: Ref) -> BaseModel:
        return self.loaded.entries[ref[0]][ref[1]]


def _suggest(wanted: str, known: list[str], renamed: dict[str, str]) -> str:
    if wanted in renamed:
        return f"'{wanted}' was renamed; use '{renamed[wanted]}'"
    close = difflib.get_close_matches(wanted, known, n=1, cutoff=0.5)
    if not close:
        close = [k for k in known if wanted in k or k in wanted][:1]
    return f"did you mean '{close[0]}'?" if close else "run `ls entries/*/` for the ids that exist"


def _check_terms(graph: Graph, kind: str, entry_id: str, entry: BaseModel | dict) -> None:
    """Taxonomy terms must exist. Also run on entries that failed validation, so one round shows every problem."""
    loaded = graph.loaded
    rel = loaded.files[(kind, entry_id)]
    get = entry.get if isinstance(entry, dict) else lambda name, default=None: getattr(entry, name, default)
    fields = [("author", "authors"), ("category", "categories"), ("tools", "tools"), ("platforms", "platforms")]
    for name, taxonomy in fields:
        value = get(name, None)
        if value is None:
            continue
        values = [((name,), value)] if isinstance(value, str) else [((name, i), v) for i, v in enumerate(value) if isinstance(v, str)] if isinstance(value, list) else []
        for path, term in values:
            known = loaded.taxonomies.get(taxonomy, {})
            if term not in known:
                hint = _suggest(term, sorted(known), {}) + f" Or add it to entries/{taxonomy}.yaml"
                graph.problems.append(problem("KB013", rel, loaded.line(kind, entry_id, path), field_path(path), f"'{term}' is not in entries/{taxonomy}.yaml", hint))
    ranges = [(("applies_to",), get("applies_to", {}) or {})]
    steps = get("solution", []) or []
    for index, step in enumerate(steps if isinstance(steps, list) else []):
        step_applies = step.get("applies_to") if isinstance(step, dict) else getattr(step, "applies_to", None)
        ranges.append((("solution", index, "applies_to"), step_applies or {}))
    tools = loaded.taxonomies.get("tools", {})
    for prefix, applies in ranges:
        for tool in applies if isinstance(applies, dict) else []:
            if tool not in tools:
                path = (*prefix, tool)
                graph.problems.append(problem("KB013", rel, loaded.line(kind, entry_id, path), field_path(path), f"'{tool}' is not in entries/tools.yaml", _suggest(tool, sorted(tools), {})))


def _check_ids(graph: Graph) -> None:
    """Ids and aliases are one namespace per kind; error and guide ids are one namespace too (``kb cite ID``)."""
    loaded = graph.loaded
    owner: dict[tuple[str, str], Ref] = {}
    for kind, entries in loaded.entries.items():
        space = "text" if kind in TEXT_KINDS else kind
        for entry_id in sorted(entries):
            key = (space, entry_id)
            if key in owner:
                other = loaded.files[owner[key]]
                rel = loaded.files[(kind, entry_id)]
                graph.problems.append(problem("KB014", rel, 1, "", f"the id '{entry_id}' is also used by {other}"))
            owner[key] = (kind, entry_id)
    for kind, entries in loaded.entries.items():
        space = "text" if kind in TEXT_KINDS else kind
        for entry_id, entry in sorted(entries.items()):
            for index, alias in enumerate(getattr(entry, "aliases", [])):
                rel = loaded.files[(kind, entry_id)]
                path = ("aliases", index)
                key = (space, alias)
                if alias == entry_id:
                    graph.problems.append(problem("KB015", rel, loaded.line(kind, entry_id, path), field_path(path), "an entry cannot be an alias of itself"))
                elif alias in RESERVED_IDS:
                    graph.problems.append(problem("KB028", rel, loaded.line(kind, entry_id, path), field_path(path), f"the alias '{alias}' is the address of a page the site generates"))
                elif key in owner:
                    clash = owner[key]
                    what = "the id of" if clash[1] == alias else "already an alias of"
                    graph.problems.append(problem("KB014", rel, loaded.line(kind, entry_id, path), field_path(path), f"the alias '{alias}' is {what} {loaded.files[clash]}"))
                else:
                    owner[key] = (kind, entry_id)
                    graph.redirects[(kind, alias)] = entry_id


def _resolve(graph: Graph, kind: str, entry_id: str, path: tuple, target_kind: str, target: str) -> bool:
    loaded = graph.loaded
    rel = loaded.files[(kind, entry_id)]
    if target == entry_id and target_kind == kind:
        line = loaded.line(kind, entry_id, path)  # found only for a problem: most references resolve
        graph.problems.append(problem("KB015", rel, line, field_path(path), f"'{target}' is this entry itself"))
        return False
    if target not in loaded.entries[target_kind]:
        if (target_kind, target) in loaded.invalid:
            return False  # that entry has its own problems; reporting it here too would mislead
        renamed = {old: new for (k, old), new in graph.redirects.items() if k == target_kind}
        hint = _suggest(target, sorted(loaded.entries[target_kind]), renamed)
        line = loaded.line(kind, entry_id, path)
        noun = target_kind[:-1]
        graph.problems.append(problem("KB012", rel, line, field_path(path), f"'{target}' is not an {noun} entry" if noun == "error" else f"'{target}' is not a {noun} entry", hint))
        return False
    return True


def _add(mapping: dict, key, value) -> None:
    bucket = mapping.setdefault(key, [])
    if value not in bucket:
        bucket.append(value)


def _link_references(graph: Graph) -> None:
    for kind in TEXT_KINDS:
        for entry_id, entry in graph.loaded.entries[kind].items():
            me = (kind, entry_id)
            graph.related_errors.setdefault(me, [])
            graph.related_guides.setdefault(me, [])
            for index, target in enumerate(entry.related_errors):
                if _resolve(graph, kind, entry_id, ("related_errors", index), "errors", target):
                    graph.linked_from.setdefault(target, set()).add(entry_id)
                    _add(graph.related_errors, me, target)
                    (_add(graph.related_errors, ("errors", target), entry_id) if kind == "errors" else _add(graph.related_guides, ("errors", target), entry_id))
            if kind == "guides":
                for index, target in enumerate(entry.related_guides):
                    if _resolve(graph, kind, entry_id, ("related_guides", index), "guides", target):
                        graph.linked_from.setdefault(target, set()).add(entry_id)
                        _add(graph.related_guides, me, target)
                        _add(graph.related_guides, ("guides", target), entry_id)
                for c_index, cause in enumerate(entry.causes):
                    for index, target in enumerate(cause.errors):
                        if _resolve(graph, kind, entry_id, ("causes", c_index, "errors", index), "errors", target):
                            graph.linked_from.setdefault(target, set()).add(entry_id)
                            _add(graph.related_errors, me, target)
                            _add(graph.related_guides, ("errors", target), entry_id)


def _build_indexes(graph: Graph) -> None:
    # Ordered sets (dict keys) while collecting: a category holds thousands of ids in a large KB,
    # and checking a list for each new one made this step quadratic.
    indexes: dict[str, dict] = {"by_category": {}, "by_tool": {}, "by_tag": {}}
    for kind in TEXT_KINDS:
        for entry_id, entry in graph.loaded.entries[kind].items():
            ref = (kind, entry_id)
            if kind == "errors":
                indexes["by_category"].setdefault(entry.category, {})[entry_id] = None
            for tool in entry.tools:
                indexes["by_tool"].setdefault(tool, {})[ref] = None
            for tag in entry.tags:
                indexes["by_tag"].setdefault(tag, {})[ref] = None
    for name, index in indexes.items():
        getattr(graph, name).update((key, list(members)) for key, members in index.items())  # filled here only
    # Each title lowered once: the sorts below compare tens of thousands of keys in a large KB.
    titles = {(kind, entry_id): entry.title.lower() for kind in TEXT_KINDS for entry_id, entry in graph.loaded.entries[kind].items()}
    for ids in graph.by_category.values():
        ids.sort(key=lambda i: (titles[("errors", i)], i))
    for index in (graph.by_tool, graph.by_tag):
        for refs in index.values():
            refs.sort(key=lambda r: (titles[r], r))
    for ref, ids in graph.related_errors.items():
        authored = graph.entry(ref).related_errors if ref[0] == "errors" else []
        order: dict[str, int] = {}  # the author's order first (first mention), then the others by title
        for n, target in enumerate(authored):
            order.setdefault(target, n)
        ids.sort(key=lambda i: (i not in order, order.get(i, 0), titles[("errors", i)]))


def link(loaded: Loaded) -> Graph:
    graph = Graph(loaded=loaded)
    _check_ids(graph)
    for kind in TEXT_KINDS:
        for entry_id, entry in sorted(loaded.entries[kind].items()):
            _check_terms(graph, kind, entry_id, entry)
        for k, entry_id in sorted(loaded.invalid):
            doc = loaded.docs.get((k, entry_id))
            if k == kind and doc is not None and isinstance(doc.data, dict):
                _check_terms(graph, kind, entry_id, doc.data)
    _link_references(graph)
    _build_indexes(graph)
    return graph
