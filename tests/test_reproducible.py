"""Two builds of the same sources give byte-identical site/ trees.

Both builds get the same SOURCE_DATE_EPOCH (the date a reproducible build
stamps everywhere instead of today), and otherwise differ in everything a
careless build would leak: the folder the sources sit in, the hash seed that
orders Python's sets, the time zone and the moment they run.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from conftest import ROOT, mkdocs_build

EPOCH = "1767225600"  # 2026-01-01T00:00:00Z
SOURCES = ("mkdocs.yml", "site_src", "templates", "entries", "CONTRIBUTING.md", "published-urls.txt", "README.md")


def checkout(dest: Path) -> Path:
    """A copy of the sources a build reads, as a second clone of the commit would have them."""
    dest.mkdir(parents=True)
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name)
        elif src.is_file():
            shutil.copy2(src, dest / name)
    shutil.copytree(ROOT / "hooks", dest / "hooks", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    (dest / "node_modules").symlink_to(ROOT / "node_modules")  # the browser's RE2 engine, shipped from here
    return dest


def digests(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(site.rglob("*")) if p.is_file()}


def first_difference(a: bytes, b: bytes) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"byte {at}: {a[max(0, at - 60):at + 60]!r} != {b[max(0, at - 60):at + 60]!r}"


def test_two_builds_are_byte_identical(tmp_path):
    one, two = checkout(tmp_path / "one"), checkout(tmp_path / "elsewhere" / "two")
    first = mkdocs_build(one, tmp_path / "site-1", {"SOURCE_DATE_EPOCH": EPOCH, "PYTHONHASHSEED": "1", "TZ": "UTC", "PYTHONPATH": str(one / "hooks")})
    assert first.returncode == 0, first.stderr
    second = mkdocs_build(two, tmp_path / "site-2", {"SOURCE_DATE_EPOCH": EPOCH, "PYTHONHASHSEED": "2", "TZ": "Asia/Kolkata", "PYTHONPATH": str(two / "hooks")})
    assert second.returncode == 0, second.stderr
    a, b = digests(tmp_path / "site-1"), digests(tmp_path / "site-2")
    assert sorted(a) == sorted(b), f"different files: {sorted(set(a) ^ set(b))[:20]}"
    differ = [name for name in a if a[name] != b[name]]
    details = "\n".join(
        f"{name}: {first_difference((tmp_path / 'site-1' / name).read_bytes(), (tmp_path / 'site-2' / name).read_bytes())}"
        for name in differ[:5]
    )
    assert not differ, f"{len(differ)} of {len(a)} files differ between two builds:\n{details}"
    assert len(a) > 50, "the build produced almost nothing"
