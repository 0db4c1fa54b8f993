"""JSON text for the API files: what ``json.dumps(..., ensure_ascii=False, sort_keys=True, indent=1)`` writes, faster.

Input: plain data (dicts with string keys, lists, strings, numbers, booleans,
None). Output: the same characters the standard library writes with those
options. The standard encoder drops to pure Python, one generator per level,
whenever ``indent`` is set, and at 10,000 entries the API files were one of
the pipeline's largest costs. Here strings go through the C string encoder
and each level is one ``join``. Anything outside plain data (a key that is
not a string, a float that is not finite, another type) is handed to
``json.dumps`` itself, so the output never differs.

A ``Fragment`` is one value already written at a given depth (under ``mkdocs
serve`` the pipeline keeps each entry's record in a large file as a fragment,
so a save writes again only the records that changed).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the C function when the _json accelerator is present


_INT = {int}


class _Unusual(Exception):
    """A value this encoder does not write itself."""


class Fragment(str):
    """``value`` as this module writes it at depth ``level``; placed at that depth, it is copied as it is."""

    def __new__(cls, text: str, value: object, level: int) -> "Fragment":
        made = super().__new__(cls, text)
        made.value, made.level = value, level
        return made

    def __reduce__(self):  # a forked build process hands fragments back to the parent
        return (Fragment, (str(self), self.value, self.level))


def fragment(value: object, level: int) -> object:
    """``value`` written once for depth ``level``, or ``value`` itself when only ``json.dumps`` can write it."""
    try:
        return Fragment(_encode(value, level), value, level)
    except (_Unusual, RecursionError):
        return value


def _encode(value: object, level: int) -> str:
    if type(value) is Fragment:
        if value.level != level:
            raise _Unusual
        return value
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _Unusual
        return float.__repr__(value)
    inner = "\n" + " " * (level + 1)
    if kind is dict:
        if not value:
            return "{}"
        if not all(type(k) is str for k in value):
            raise _Unusual
        items = [encode_basestring(k) + ": " + _encode(v, level + 1) for k, v in sorted(value.items())]
        return "{" + inner + ("," + inner).join(items) + "\n" + " " * level + "}"
    if kind is list or kind is tuple:
        if not value:
            return "[]"
        if set(map(type, value)) == _INT:  # the related index's weights: long lists of whole numbers
            return "[" + inner + ("," + inner).join(map(int.__repr__, value)) + "\n" + " " * level + "]"
        return "[" + inner + ("," + inner).join([_encode(v, level + 1) for v in value]) + "\n" + " " * level + "]"
    raise _Unusual


def dumps(data: object) -> str:
    """``data`` as indented, key-sorted JSON text that keeps every character as itself."""
    try:
        return _encode(data, 0)
    except (_Unusual, RecursionError):
        return json.dumps(_unwrap(data), ensure_ascii=False, sort_keys=True, indent=1)


def _unwrap(value: object) -> object:
    """``value`` with each fragment replaced by the value it was written from (``json.dumps`` would quote it)."""
    if type(value) is Fragment:
        return value.value
    if type(value) is dict:
        return {k: _unwrap(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return [_unwrap(v) for v in value]
    return value
