"""Reading one YAML file safely, with the line of every field.

Input: the bytes of one file. Output: plain Python data (dicts, lists,
strings, numbers, dates), a map from field path to line number, and the
Problems that stopped it. Refuses what PyYAML would otherwise accept quietly:
tags (``!!python/object``), anchors and aliases (billion laughs), duplicate
keys (YAML keeps the last one), BOMs, NUL bytes, non-UTF-8 text, deep nesting
and oversized files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from errorkb.build.problems import Problem, problem

MAX_BYTES = 256 * 1024
MAX_DEPTH = 12
_PLAIN_TAGS = {
    "tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")
}

Path_ = tuple  # a field path: ("solution", 1, "body")


@dataclass
class YamlDoc:
    data: object = None
    lines: dict[Path_, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def line_of(self, path: Path_) -> int:
        """The line of ``path``, or of its nearest parent that has one."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)


class _Refused(Exception):
    def __init__(self, code: str, line: int, message: str) -> None:
        super().__init__(message)
        self.code, self.line, self.message = code, line, message


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when the wheel has it: several times faster


def _refuse_unsafe_events(text: str) -> None:
    """One pass over the parser's events, before anything is built: no anchors, aliases or deep nesting.

    Checking here, not while composing, keeps a billion-laughs file from ever being expanded and a
    deeply nested one from exhausting the recursion of the composer.
    """
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise _Refused("KB004", event.start_mark.line + 1, "anchors (&name) and aliases (*name) are not allowed")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused("KB020", event.start_mark.line + 1, f"nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def field_path(path: Path_) -> str:
    """("solution", 1, "body") -> "solution[1].body"."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _check_bytes(raw: bytes, rel: str) -> tuple[str | None, list[Problem]]:
    if len(raw) > MAX_BYTES:
        return None, [problem("KB002", rel, 1, "", f"the file is {len(raw):,} bytes; the limit is {MAX_BYTES:,}")]
    if raw.startswith(b"\xef\xbb\xbf"):
        return None, [problem("KB007", rel, 1, "", "the file starts with a UTF-8 byte-order mark")]
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        return None, [problem("KB007", rel, line, "", "the file contains a NUL byte")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [problem("KB007", rel, line, "", f"byte 0x{raw[exc.start]:02x} is not UTF-8 (was it saved as Latin-1?)")]
    if not text.strip() or all(not l.strip() or l.lstrip().startswith("#") for l in text.splitlines()):
        return None, [problem("KB006", rel, 1, "", "the file is empty")]
    for number, line in enumerate(text.splitlines() if "\t" in text else (), 1):
        if line.startswith("\t") or line[: len(line) - len(line.lstrip(" \t"))].count("\t"):
            return None, [problem("KB001", rel, number, "", "a tab is used for indentation", "indent with spaces; YAML does not allow tabs there")]
    return text, []


def _walk(node: yaml.Node, path: Path_, doc: YamlDoc, rel: str) -> None:
    if node.tag not in _PLAIN_TAGS:
        raise _Refused("KB003", node.start_mark.line + 1, f"the tag {node.tag!r} is not allowed")
    doc.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[object, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Refused("KB001", key_node.start_mark.line + 1, "a key must be a plain word")
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _Refused("KB005", line, f"the key {key!r} is given again (first on line {seen[key]})")
            seen[key] = line
            doc.lines[path + (key,)] = line
            _walk(value_node, path + (key,), doc, rel)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, path + (index,), doc, rel)


def read_yaml(raw: bytes, rel: str) -> YamlDoc:
    """Parse ``raw`` (the bytes of file ``rel``) into data and line numbers, or Problems."""
    doc = YamlDoc()
    text, doc.problems = _check_bytes(raw, rel)
    if text is None:
        return doc
    loader = _Loader(text)
    try:
        _refuse_unsafe_events(text)
        node = loader.get_single_node()
        if node is None:
            doc.problems.append(problem("KB006", rel, 1, "", "the file is empty"))
            return doc
        _walk(node, (), doc, rel)
        doc.data = loader.construct_document(node)
    except _Refused as exc:
        doc.problems.append(problem(exc.code, rel, exc.line, "", exc.message))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(filter(None, [exc.context, exc.problem])) or "cannot be parsed"
        doc.problems.append(problem("KB001", rel, line, "", what))
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as exc:
        doc.problems.append(problem("KB001", rel, 1, "", f"cannot be parsed: {type(exc).__name__}"))
    finally:
        loader.dispose()
    if not doc.problems and not isinstance(doc.data, dict):
        kind = type(doc.data).__name__
        doc.problems.append(problem("KB006", rel, 1, "", f"the top level is a {kind}, not a mapping of fields"))
        doc.data = None
    return doc
