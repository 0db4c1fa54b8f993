"""A full build may share its per-entry work (reading and validating files, snippets, entry pages and API files)
among forked processes (errorkb.build.parallel: KB_BUILD_WORKERS, or every CPU from PARALLEL_FROM entries): it must give exactly what one
process gives, pages, files and problems alike."""

from __future__ import annotations

import gc
import pickle
import shutil

from conftest import ROOT

from errorkb.build import jsonout, loader, parallel, pipeline


def _site(root, monkeypatch, workers: str):
    monkeypatch.setenv(parallel.WORKERS_ENV, workers)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    site = pipeline.build(root, pipeline.settings_from({}, "https://errorkb.example/", None))
    return ([(p.src_uri, p.markdown) for p in site.pages], [(f.dest_uri, f.content) for f in site.files],
            [p.format() for p in site.problems])


def test_workers_are_used_from_the_threshold(monkeypatch):
    monkeypatch.delenv(parallel.WORKERS_ENV, raising=False)
    assert parallel.workers_for(parallel.PARALLEL_FROM - 1) == 0
    monkeypatch.setenv(parallel.WORKERS_ENV, "3")
    assert parallel.workers_for(5) == 3
    monkeypatch.setenv(parallel.WORKERS_ENV, "1")
    assert parallel.workers_for(10_000) == 0


def test_the_real_kb_builds_the_same_in_two_processes(monkeypatch):
    one = _site(ROOT, monkeypatch, "0")
    two = _site(ROOT, monkeypatch, "2")
    assert one[2] == [] and len(one[0]) > 200
    assert one == two


def test_broken_files_give_the_same_problems_in_two_processes(tmp_path, monkeypatch):
    entries = tmp_path / "entries"
    shutil.copytree(ROOT / "entries", entries)
    for bad in sorted((ROOT / "tests" / "fixtures" / "invalid").glob("KB*.yaml")):
        name = bad.stem.split("-", 1)[1]
        shutil.copy(bad, entries / "errors" / f"{name}.yaml")
    one = loader.load(tmp_path)
    monkeypatch.setenv(parallel.WORKERS_ENV, "2")
    two = loader.load(tmp_path, parallel=True)
    assert len(one.problems) >= 40
    assert [p.format() for p in one.problems] == [p.format() for p in two.problems]
    assert one.digests == two.digests and one.files == two.files
    assert {k: {i: e.model_dump() for i, e in v.items()} for k, v in one.entries.items()} == \
        {k: {i: e.model_dump() for i, e in v.items()} for k, v in two.entries.items()}


def test_a_written_record_crosses_between_processes_whole():
    # The forked workers hand each entry's index records back as jsonout fragments: a fragment that lost its value
    # or depth on the way would make the parent write a different file (or, unpicklable, stop the pool).
    record = {"id": "x", "title": "a \"quoted\" <title>", "tools": ["vllm", "ollama"], "n": 3}
    sent = jsonout.fragment(record, 2)
    back = pickle.loads(pickle.dumps(sent))
    assert type(back) is jsonout.Fragment and (back.value, back.level) == (record, 2)
    assert str(back) == str(sent) and jsonout.dumps({"entries": [back]}) == jsonout.dumps({"entries": [record]})


def test_the_build_gives_back_the_cycle_collector_as_it_found_it(monkeypatch):
    # The build pauses Python's cycle collector for speed; a server that builds again and again must get it back.
    seen = []
    real = pipeline._build
    monkeypatch.setattr(pipeline, "_build", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    settings = pipeline.settings_from({}, "https://errorkb.example/", None)
    assert gc.isenabled()
    pipeline.build(ROOT, settings)
    assert gc.isenabled() and seen == [False]
    gc.disable()
    try:
        pipeline.build(ROOT, settings)
        assert not gc.isenabled()
    finally:
        gc.enable()
