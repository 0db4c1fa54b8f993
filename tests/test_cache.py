"""The serve cache: after any edit, a cached pipeline build equals a clean one, byte for byte, and redoes little.

Each case edits a copy of the real entries the way an editor would, builds
once with the cache that saw the previous state (as ``mkdocs serve`` does)
and once without any cache, and compares every generated page and file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.build import jsonout, pipeline  # noqa: E402
from errorkb.build import loader as loader_module  # noqa: E402
from errorkb.build.cache import BuildCache  # noqa: E402
from errorkb.build.pages import Settings  # noqa: E402
from conftest import make_kb  # noqa: E402

SETTINGS = Settings(site_url="https://errorkb.org/", today=pipeline.build_date())


def assert_same(cached: pipeline.Site, clean: pipeline.Site) -> None:
    assert not clean.problems, [p.format() for p in clean.problems]
    assert [p.src_uri for p in cached.pages] == [p.src_uri for p in clean.pages]
    for a, b in zip(cached.pages, clean.pages):
        assert a.markdown == b.markdown, a.src_uri
    assert [f.dest_uri for f in cached.files] == [f.dest_uri for f in clean.files]
    for a, b in zip(cached.files, clean.files):
        assert a.content == b.content, a.dest_uri


def unreferenced_error(root: Path) -> str:
    """An error no other entry names and the home page does not list (so removing it breaks nothing)."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in (root / "entries").rglob("*.yaml"))
    start = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for path in sorted((root / "entries" / "errors").glob("*.yaml")):
        if len(re.findall(rf"\b{re.escape(path.stem)}\b", text)) == 0 and path.stem not in start:
            return path.stem
    pytest.fail("every error is referenced somewhere")


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = make_kb(tmp_path_factory.mktemp("cache") / "kb", ROOT / "entries")
    cache = BuildCache()
    assert_same(pipeline.build(root, SETTINGS, cache), pipeline.build(root, SETTINGS))
    return root, cache


def edit(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def test_a_typo_in_one_cause_remakes_one_page_and_one_api_file(kb):
    root, cache = kb
    path = root / "entries" / "errors" / "cuda-oom-loading-model.yaml"
    edit(path, lambda d: d.update(cause=d["cause"].replace(" the ", " teh ", 1)))
    cached = pipeline.build(root, SETTINGS, cache)
    assert cache.made_in("files") == {"entries/errors/cuda-oom-loading-model.yaml"}
    assert ("errors", "cuda-oom-loading-model") in cache.made_in("pages")
    assert len(cache.made_in("pages")) < 30, "only the entry and the pages that show it are rendered again"
    assert_same(cached, pipeline.build(root, SETTINGS))


def test_a_new_related_link_shows_on_both_pages(kb):
    root, cache = kb
    path = root / "entries" / "errors" / "nccl-error.yaml"
    other = root / "entries" / "errors" / "port-already-in-use.yaml"
    assert "nccl-error" not in other.read_text(encoding="utf-8"), "the other entry must not link back already"
    edit(path, lambda d: d.update(related_errors=[*d.get("related_errors", []), "port-already-in-use"]))
    cached = pipeline.build(root, SETTINGS, cache)
    assert {("errors", "nccl-error"), ("errors", "port-already-in-use")} <= cache.made_in("pages")
    target = next(p for p in cached.pages if p.src_uri == "errors/port-already-in-use.md")
    assert "nccl-error.md" in target.markdown
    assert_same(cached, pipeline.build(root, SETTINGS))


def test_a_renamed_title_shows_on_related_pages_and_indexes(kb):
    root, cache = kb
    edit(root / "entries" / "errors" / "docker-shm-too-small.yaml", lambda d: d.update(title="Shared memory of the container is too small, renamedtitle"))
    cached = pipeline.build(root, SETTINGS, cache)
    shown = [p.src_uri for p in cached.pages if "renamedtitle" in p.markdown]
    assert "errors/nccl-error.md" in shown
    assert any(u.startswith("categories/") for u in shown) and any(u.startswith("tools/") for u in shown)
    assert_same(cached, pipeline.build(root, SETTINGS))


def test_a_new_entry_and_its_removal(kb):
    root, cache = kb
    source = root / "entries" / "errors" / "port-already-in-use.yaml"
    new = root / "entries" / "errors" / "port-already-taken-by-a-test.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data.update(title="Port already taken (a test entry)", aliases=[], related_errors=["port-already-in-use"])
    data.pop("summary", None)
    new.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    cached = pipeline.build(root, SETTINGS, cache)
    assert cache.made_in("files") == {"entries/errors/port-already-taken-by-a-test.yaml"}
    assert any("a test entry" in p.markdown for p in cached.pages if p.src_uri == "errors/port-already-in-use.md")
    assert_same(cached, pipeline.build(root, SETTINGS))
    assert any(u.startswith("categories/") for u, p in ((p.src_uri, p) for p in cached.pages) if "a test entry" in p.markdown)
    new.unlink()
    gone = unreferenced_error(root)
    (root / "entries" / "errors" / f"{gone}.yaml").unlink()
    cached = pipeline.build(root, SETTINGS, cache)
    assert not any("a test entry" in p.markdown for p in cached.pages)
    assert f"errors/{gone}.md" not in {p.src_uri for p in cached.pages}
    assert_same(cached, pipeline.build(root, SETTINGS))


def test_a_broken_save_reports_the_same_problems_as_a_clean_build(kb):
    root, cache = kb
    path = root / "entries" / "errors" / "nccl-error.yaml"
    before = path.read_text(encoding="utf-8")
    path.write_text(before.replace("related_errors:", "related_errors:\n- no-such-entry-here", 1), encoding="utf-8")
    cached, clean = pipeline.build(root, SETTINGS, cache), pipeline.build(root, SETTINGS)
    assert [p.format() for p in cached.problems] == [p.format() for p in clean.problems]
    assert any(p.code == "KB012" and p.file == "entries/errors/nccl-error.yaml" for p in cached.problems)
    path.write_text(before, encoding="utf-8")
    assert_same(pipeline.build(root, SETTINGS, cache), pipeline.build(root, SETTINGS))


@pytest.mark.parametrize("value", [
    {"b": [1, 2.5, -0.0, 1e300, True, None, "é\u2028\"\\\n"], "a": {}, "c": [], "d": {"z": {"y": [[]]}}},
    [],
    "plain",
    {"n": float("nan")},  # not plain JSON: handed to json.dumps
    {1: "int key"},
])
def test_the_fast_json_writer_writes_what_json_dumps_writes(value):
    import json

    assert jsonout.dumps(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1)


def test_the_first_build_of_the_server_may_share_its_work_and_later_saves_do_not(tmp_path, monkeypatch):
    """Under serve the first build reads and renders in forked workers (as a full build does); the cache it fills
    must serve the next save exactly as a one-process cache would."""
    from errorkb.build import parallel

    root = make_kb(tmp_path / "kb", ROOT / "entries")
    monkeypatch.setenv(parallel.WORKERS_ENV, "2")
    forks = []
    real_fork_map = parallel.fork_map
    monkeypatch.setattr(pipeline, "fork_map", lambda *a: forks.append("products") or real_fork_map(*a))
    monkeypatch.setattr(loader_module, "fork_map", lambda *a: forks.append("load") or real_fork_map(*a))
    cache = BuildCache()
    assert cache.cold
    first = pipeline.build(root, SETTINGS, cache)
    assert forks == ["load", "products"] and not cache.cold
    monkeypatch.setenv(parallel.WORKERS_ENV, "0")
    assert_same(first, pipeline.build(root, SETTINGS))
    path = root / "entries" / "errors" / "cuda-oom-loading-model.yaml"
    edit(path, lambda d: d.update(cause=d["cause"].replace(" the ", " teh ", 1)))
    monkeypatch.setenv(parallel.WORKERS_ENV, "2")
    cached = pipeline.build(root, SETTINGS, cache)
    assert forks == ["load", "products"], "a save is made in the server's own process"
    assert cache.made_in("files") == {"entries/errors/cuda-oom-loading-model.yaml"}
    monkeypatch.setenv(parallel.WORKERS_ENV, "0")
    assert_same(cached, pipeline.build(root, SETTINGS))
