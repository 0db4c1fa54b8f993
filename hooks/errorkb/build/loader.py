"""Stage 1, loading: entries/**/*.yaml → validated models + Problems.

Input: the KB root (the folder with mkdocs.yml and entries/). Output: a
``Loaded`` with every valid entry by kind and id, the taxonomies, the line
numbers of every field (for the linker's messages) and every Problem found.
It never stops at the first bad file: one broken entry must not hide another.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ValidationError

from errorkb.build import schema
from errorkb.build.parallel import fork_map, workers_for
from errorkb.build.problems import CODES, Problem, problem
from errorkb.build.safety import check_markdown
from errorkb.build.text import forbidden
from errorkb.build.yamlfile import YamlDoc, field_path, read_yaml
from errorkb.matcher import language

MARKDOWN_FIELDS = {"cause", "body", "diagnose", "fix", "answer"}
MAX_FILES = 50_000


@dataclass
class Loaded:
    root: Path
    entries: dict[str, dict[str, BaseModel]] = field(default_factory=dict)
    taxonomies: dict[str, dict[str, BaseModel]] = field(default_factory=dict)
    files: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, id) -> path relative to root
    docs: dict[tuple[str, str], YamlDoc] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    invalid: set[tuple[str, str]] = field(default_factory=set)  # files that exist but failed; not "missing" to others
    digests: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, id) -> sha256 of the file's bytes

    def line(self, kind: str, entry_id: str, path: tuple) -> int:
        doc = self.docs.get((kind, entry_id))
        return doc.line_of(path) if doc else 1


def find_root(start: Path | None = None) -> Path | None:
    """The nearest folder, from ``start`` upwards, that holds both mkdocs.yml and entries/."""
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        if (folder / "mkdocs.yml").is_file() and (folder / "entries").is_dir():
            return folder
    return None


def _problems_from_validation(exc: ValidationError, doc: YamlDoc, rel: str) -> list[Problem]:
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        kind = err["type"]
        path = field_path(loc)
        if kind == "missing":
            out.append(problem("KB009", rel, doc.line_of(loc[:-1]), path, f"'{loc[-1]}' is required"))
        elif kind == "extra_forbidden":
            out.append(problem("KB010", rel, doc.line_of(loc), path, f"'{loc[-1]}' is not a field of this kind of entry"))
        else:
            message = err["msg"].removeprefix("Value error, ")
            code = kind if kind in CODES else "KB011"
            if kind == "string_pattern_mismatch" and loc[-1:] != () and isinstance(err.get("input"), str):
                message = f"{err['input'][:60]!r} does not have the expected form ({err['ctx']['pattern']})"
            out.append(problem(code, rel, doc.line_of(loc), path, message))
    return out


def _walk_strings(value: object, path: tuple = ()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk_strings(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk_strings(item, path + (index,))
    elif isinstance(value, str):
        yield path, value


def _content_problems(data: dict, doc: YamlDoc, rel: str, kind: str) -> list[Problem]:
    """Checks on the text itself: characters, raw HTML, unsafe links, unsafe or useless signatures."""
    out = []
    for path, text in _walk_strings(data):
        bad = forbidden(text)
        if bad:
            out.append(problem("KB024", rel, doc.line_of(path), field_path(path), f"the text holds {bad[1]} at character {bad[0] + 1}"))
        if path and path[-1] in MARKDOWN_FIELDS:
            for code, message in check_markdown(text):
                out.append(problem(code, rel, doc.line_of(path), field_path(path), message))
    if kind == "errors":
        out.extend(_signature_problems(data, doc, rel))
    return out


def _signature_problems(data: dict, doc: YamlDoc, rel: str) -> list[Problem]:
    out = []
    safe = []
    lists = {name: data.get(name) if isinstance(data.get(name), list) else [] for name in language.PATTERN_FIELDS}
    for name, patterns in lists.items():
        for index, pattern in enumerate(patterns):
            if not isinstance(pattern, str):
                continue
            reason = language.check(pattern, name)
            if reason:
                code = "KB030" if reason.startswith("too generic") else "KB019"
                out.append(problem(code, rel, doc.line_of((name, index)), field_path((name, index)), reason))
            elif name == "signatures":
                safe.append(pattern)
    error_text = re.sub(r"\s+", " ", str(data.get("error", "")))
    if safe and len(safe) == len(lists["signatures"]) and error_text.strip():
        if not any(language.compile(p).search(error_text) for p in safe):
            out.append(problem("KB022", rel, doc.line_of(("signatures",)), "signatures", "no signature matches the entry's own `error` text"))
    return out


@dataclass(frozen=True)
class FileResult:
    """What one entry file yields, a function of its bytes, path and kind alone (so the serve cache can keep it)."""

    doc: YamlDoc
    entry: BaseModel | None
    problems: tuple[Problem, ...]


def read_entry(raw: bytes, rel: str, kind: str) -> FileResult:
    doc = read_yaml(raw, rel)
    if doc.problems:
        return FileResult(doc, None, tuple(doc.problems))
    content = _content_problems(doc.data, doc, rel, kind)
    try:
        entry = schema.KINDS[kind].model_validate(doc.data)
    except ValidationError as exc:
        return FileResult(doc, None, tuple(_problems_from_validation(exc, doc, rel) + content))
    return FileResult(doc, None if content else entry, tuple(content))


def _read_file(path: str, rel: str, kind: str) -> tuple[str, FileResult]:
    raw = Path(path).read_bytes()
    return hashlib.sha256(raw).hexdigest(), read_entry(raw, rel, kind)


def load_file(path: Path, rel: str, kind: str, loaded: Loaded, cache=None, st: os.stat_result | None = None,
              read_ahead: tuple[str, FileResult] | None = None) -> None:
    entry_id = path.stem
    pattern = schema.HW_ID_PATTERN if kind in schema.HARDWARE_KINDS else schema.ID_PATTERN
    if entry_id in schema.RESERVED_IDS and path.suffix == ".yaml":
        loaded.problems.append(problem("KB028", rel, 1, "", f"'{entry_id}' is the address of a page the site generates"))
        return
    if path.suffix != ".yaml" or not re.fullmatch(pattern, entry_id):
        loaded.problems.append(problem("KB008", rel, 1, "", f"'{path.name}' must be lowercase letters, digits and single hyphens, ending in .yaml"))
        return
    if read_ahead is not None and cache is None:
        digest, result = read_ahead
    elif cache is None:
        digest, result = _read_file(str(path), rel, kind)
    else:
        # Under serve a file is read again only when its inode, size or times changed (any write moves its
        # ctime); the results stay keyed by the digest of its bytes.
        st = st or path.stat()
        read: list[bytes] = []

        def digest_of() -> str:
            read.append(path.read_bytes())
            return hashlib.sha256(read[0]).hexdigest()

        digest = cache.get("digests", rel, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns), digest_of)
        if read_ahead is not None and read_ahead[0] == digest:  # the server's first build, read by forked workers
            result = cache.get("files", rel, (kind, digest), lambda: read_ahead[1])
        else:
            result = cache.get("files", rel, (kind, digest), lambda: read_entry(read[0] if read else path.read_bytes(), rel, kind))
    loaded.docs[(kind, entry_id)] = result.doc
    loaded.files[(kind, entry_id)] = rel
    loaded.digests[(kind, entry_id)] = digest
    loaded.problems.extend(result.problems)
    if result.entry is None:
        loaded.invalid.add((kind, entry_id))
    else:
        loaded.entries[kind][entry_id] = result.entry


def load_taxonomy(path: Path, rel: str, name: str, loaded: Loaded) -> None:
    model = schema.TAXONOMIES[name]
    loaded.taxonomies[name] = {}
    doc = read_yaml(path.read_bytes(), rel)
    if doc.problems:
        loaded.problems.extend(doc.problems)
        return
    for path, text in _walk_strings(doc.data):
        bad = forbidden(text)
        if bad:
            loaded.problems.append(problem("KB024", rel, doc.line_of(path), field_path(path), f"the text holds {bad[1]} at character {bad[0] + 1}"))
    for term_id, value in doc.data.items():
        if not isinstance(term_id, str) or not re.fullmatch(schema.ID_PATTERN, term_id):
            loaded.problems.append(problem("KB011", rel, doc.line_of((term_id,)), str(term_id), "a term id must be lowercase letters, digits and hyphens"))
            continue
        try:
            loaded.taxonomies[name][term_id] = model.model_validate(value)
        except ValidationError as exc:
            for p in _problems_from_validation(exc, doc, rel):
                loaded.problems.append(problem(p.code, rel, doc.line_of((term_id, *p.field.split("."))) if p.field else doc.line_of((term_id,)), f"{term_id}.{p.field}" if p.field else term_id, p.message))


def _walk(folder: Path) -> list[tuple[Path, tuple[str, ...], os.stat_result | None]]:
    """Every file below ``folder``, its path parts below it and its ``lstat`` (None for a linked folder), without
    following links to folders (a link is reported, never entered). One directory scan gives the names, the kinds
    and the ``lstat`` the checks need: asking pathlib for each cost more than reading the files."""
    found: list[tuple[Path, tuple[str, ...], os.stat_result | None]] = []

    def visit(here: str, inner: tuple[str, ...]) -> None:
        with os.scandir(here) as scan:
            items = sorted(scan, key=lambda item: item.name)
        for item in items:
            try:
                is_dir = item.is_dir()  # follows a link, as os.walk sorts names into folders and files
            except OSError:
                is_dir = False
            if is_dir:
                if item.is_symlink():
                    found.append((Path(item.path), inner + (item.name,), None))
                elif not item.name.startswith("."):
                    visit(item.path, inner + (item.name,))
            elif not item.name.startswith("."):
                try:
                    st = item.stat(follow_symlinks=False)
                except OSError:
                    st = None
                found.append((Path(item.path), inner + (item.name,), st))

    visit(str(folder), ())
    return sorted(found, key=lambda f: (f[0], f[1]))


def _not_a_plain_file(path: Path, root: Path, walked: bool = False, st: os.stat_result | None = None) -> str | None:
    """Why ``path`` may not be read: links, devices, pipes and folders that lead outside the KB are never opened.

    ``walked``: found by ``_walk`` below a checked entries/, which never enters a linked folder, so only the
    file itself can lead elsewhere and one ``lstat`` answers (resolving every path was a large share of a save).
    """
    try:
        mode = (st or path.lstat()).st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISLNK(mode):
        return "is a symbolic link; entries must be plain files inside entries/ (copy the file instead)"
    if path.name == "entries" and stat.S_ISDIR(mode):
        return None
    if not stat.S_ISREG(mode):
        return "is not a regular file (a device, pipe or socket); entries must be plain files"
    if not walked and not path.resolve().is_relative_to(root / "entries"):
        return "lies outside entries/"
    return None


def load(root: Path, only: list[Path] | None = None, cache=None, parallel: bool = False) -> Loaded:
    """Load every entry under ``root/entries``. ``only`` limits which entry files report problems.

    ``cache`` (a pipeline ``BuildCache``, under ``mkdocs serve``) keeps each file's result by its bytes.
    ``parallel`` (without a cache, or with one that holds nothing yet): read and validate the files in forked
    workers when there are enough of them (errorkb.build.parallel); the result is the same.
    """
    root = root.resolve()
    entries_dir = root / "entries"
    loaded = Loaded(root=root, entries={kind: {} for kind in schema.KINDS})
    outside = _not_a_plain_file(entries_dir, root)
    if outside:
        loaded.problems.append(problem("KB026", "entries", 1, "", outside))
        return loaded
    for name in schema.TAXONOMIES:
        path = entries_dir / f"{name}.yaml"
        rel = path.relative_to(root).as_posix()
        outside = _not_a_plain_file(path, root) if path.is_symlink() or path.exists() else None
        if outside:
            loaded.taxonomies[name] = {}
            loaded.problems.append(problem("KB026", rel, 1, "", outside))
        elif path.is_file():
            load_taxonomy(path, rel, name, loaded)
        else:
            loaded.taxonomies[name] = {}
            loaded.problems.append(problem("KB009", rel, 1, "", f"the taxonomy file {rel} is missing"))
    walked = _walk(entries_dir)
    ahead: dict = {}
    if parallel and (cache is None or cache.cold):
        wanted = [(str(p), "/".join(("entries",) + parts), parts[0]) for p, parts, st in walked[:MAX_FILES + 1]
                  if len(parts) == 2 and parts[0] in schema.KINDS and st is not None and stat.S_ISREG(st.st_mode)
                  and p.suffix == ".yaml" and p.stem not in schema.RESERVED_IDS]
        count = workers_for(len(wanted))
        if count:  # a file's result is a function of its bytes, path and kind alone
            ahead = dict(zip((rel for _, rel, _ in wanted), fork_map(lambda item: _read_file(*item), wanted, count)))
    count = 0
    for path, parts, st in walked:
        rel = "/".join(("entries",) + parts)
        outside = _not_a_plain_file(path, root, walked=True, st=st)
        if outside:
            loaded.problems.append(problem("KB026", rel, 1, "", outside))
            continue
        if len(parts) == 1:
            if path.stem in schema.TAXONOMIES or path.name in {"schema.json", "README.md"}:
                continue
            loaded.problems.append(problem("KB021", rel, 1, "", "only taxonomies and schema.json live directly in entries/"))
            continue
        if len(parts) != 2 or parts[0] not in schema.KINDS:
            loaded.problems.append(problem("KB021", rel, 1, "", f"'{'/'.join(parts[:-1])}' is not a folder of entries"))
            continue
        count += 1
        if count > MAX_FILES:
            loaded.problems.append(problem("KB002", rel, 1, "", f"more than {MAX_FILES} entry files"))
            break
        load_file(path, rel, parts[0], loaded, cache, st, ahead.get(rel))
    loaded.problems = list(dict.fromkeys(loaded.problems))  # a bad signature is reported by two checks
    if only is not None:
        wanted = {p.resolve().relative_to(root).as_posix() for p in only if p.resolve().is_relative_to(root)}
        loaded.problems = [p for p in loaded.problems if p.file in wanted or any(p.file.startswith(w.rstrip("/") + "/") for w in wanted)]
    return loaded
