"""What one build computed, kept for the next build of the same process (``mkdocs serve``).

Input: a table name, an item name, the key of everything the item depends
on, and how to make the item. Output: the item, made again only when its key
changed. Keys are content (the sha256 of an entry file's bytes, the text of
the templates, the ids and digests of the entries a page shows), never
modification times, so a cached build and a clean one cannot differ; a test
builds both after edits and compares them byte for byte.

The pipeline owns the keys (it is the one place that knows what each stage
reads); this module only stores. One slot per item: an entry that was
edited replaces its old result, and ``keep`` drops the results of items
that are gone, so the cache stays the size of the KB.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Hashable, TypeVar

T = TypeVar("T")


class BuildCache:
    def __init__(self) -> None:
        self._tables: dict[str, dict[Hashable, tuple[Hashable, object]]] = {}
        self._made: dict[str, set] = {}  # per table, the items made in this build (the others were reused)

    def get(self, table: str, name: Hashable, key: Hashable, make: Callable[[], T]) -> T:
        slot = self._tables.setdefault(table, {})
        held = slot.get(name)
        if held is not None and held[0] == key:
            return held[1]  # type: ignore[return-value]
        value = make()
        slot[name] = (key, value)
        self._made.setdefault(table, set()).add(name)
        return value

    def keep(self, table: str, names: set) -> None:
        """Forget the items of ``table`` that this build did not ask for (deleted or renamed entries)."""
        slot = self._tables.get(table, {})
        for name in [n for n in slot if n not in names]:
            del slot[name]

    @property
    def cold(self) -> bool:
        """Nothing kept yet: the first build of the server, which may share its work among forked processes."""
        return not any(self._tables.values())

    def start(self) -> None:
        """A new build begins: forget which items the last one made."""
        self._made = {}

    def made_in(self, table: str) -> set:
        """The items of ``table`` this build made rather than reused (tests and the bench read it)."""
        return set(self._made.get(table, ()))


def digest_folder(folder: Path) -> str:
    """One digest of every file below ``folder`` (names and bytes): templates are read per build, not per page."""
    h = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
