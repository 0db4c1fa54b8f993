"""A full build converts the generated pages' Markdown in forked workers before MkDocs reaches them
(errorkb/build/prerender.py). The site must be the one a single process makes, byte for byte, and a warning
raised while a worker converts a page must still stop a --strict build."""

from __future__ import annotations

import filecmp

from conftest import ROOT, make_kb, mkdocs_build

from errorkb.build import parallel, prerender

EPOCH = {"SOURCE_DATE_EPOCH": "1767225600"}


def _differences(one, two) -> list[str]:
    found = []

    def walk(cmp: filecmp.dircmp, where: str) -> None:
        found.extend(f"{where}{name}: only on one side" for name in cmp.left_only + cmp.right_only)
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        found.extend(f"{where}{name}: differs" for name in mismatch + errors)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{where}{name}/")

    walk(filecmp.dircmp(one, two), "")
    return found


def test_the_real_kb_is_converted_by_workers_and_comes_out_the_same(tmp_path):
    generated = len(list((ROOT / "entries" / "errors").glob("*.yaml")))
    assert generated >= prerender.PRERENDER_FROM, "the real KB no longer reaches the threshold: this test would not fork"
    one = mkdocs_build(ROOT, tmp_path / "one", EPOCH | {parallel.WORKERS_ENV: "0"})
    two = mkdocs_build(ROOT, tmp_path / "two", EPOCH | {parallel.WORKERS_ENV: "2"})
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    pages = list((tmp_path / "two" / "errors").glob("*/index.html"))
    assert len(pages) >= generated
    assert _differences(tmp_path / "one", tmp_path / "two") == []


def test_a_warning_in_a_worker_still_stops_a_strict_build(tmp_path):
    # A link to a page that does not exist, in one entry's cause: MkDocs warns while it converts that page, which
    # happens in a worker; --strict must still count the warning and refuse, as it does in one process.
    kb = make_kb(tmp_path / "kb", ROOT / "entries")
    entry = kb / "entries" / "errors" / "cuda-device-side-assert.yaml"
    text = entry.read_text(encoding="utf-8")
    assert "cause: |\n" in text
    entry.write_text(text.replace("cause: |\n", "cause: |\n  See [gone](../no-such-page-anywhere.md) first.\n\n", 1), encoding="utf-8")
    for workers in ("0", "2"):
        result = mkdocs_build(kb, tmp_path / f"site-{workers}", EPOCH | {parallel.WORKERS_ENV: workers})
        assert result.returncode != 0, f"workers={workers}: the broken link did not stop the build"
        assert "no-such-page-anywhere.md" in result.stderr, result.stderr[-2000:]
