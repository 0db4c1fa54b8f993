"""The census of real threads (tests/data/census.yaml): its form, and the coverage it gives, shown on the About page."""

from __future__ import annotations

import re
import warnings

import pytest

from conftest import ROOT
from errorkb.build.census import coverage, read_census
from errorkb.build.linker import link
from errorkb.build.loader import load

ITEMS = read_census(ROOT)
SOURCE = re.compile(r"^[\w.-]+/[\w.-]+#\d+$")
ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@pytest.fixture(scope="module")
def graph():
    return link(load(ROOT))


def test_every_item_names_a_thread_an_engine_a_class_and_its_line():
    assert len(ITEMS) >= 300
    for item in ITEMS:
        assert set(item) == {"source", "engine", "class", "line"}, item
        assert SOURCE.match(item["source"]), item["source"]
        assert ID.match(item["engine"]) and ID.match(item["class"]), item
        assert isinstance(item["line"], str) and 0 < len(item["line"]) <= 200, item["source"]
    sources = [i["source"] for i in ITEMS]
    assert len(sources) == len(set(sources)), "a thread is counted once"


def test_coverage_is_reported_and_does_not_fall(graph):
    cov = coverage(ITEMS, graph)
    warnings.warn(f"census coverage: {cov.covered}/{cov.threads} = {cov.share:.1%}; next classes: {cov.missing[:8]}", stacklevel=1)
    assert cov.covered == sum(1 for i in ITEMS if i["class"] in graph.errors or i["class"] in graph.guides)
    assert cov.share >= 0.80, "entries that the census counts on were removed, or classes were lost"


def test_the_about_page_shows_the_census_figure(built_site, graph):
    cov = coverage(ITEMS, graph)
    about = (built_site / "about" / "index.html").read_text(encoding="utf-8")
    assert f"{cov.covered} ({cov.share * 100:.1f}%)" in about
    assert f"Of the {cov.threads} threads" in about
