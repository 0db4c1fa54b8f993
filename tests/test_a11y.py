"""Accessibility in a real browser: axe-core on the pages a visitor meets first.

Each page of PAGES is opened from the served real site in Debian's chromium,
brought into the state a visitor sees (the paste box with a log pasted and
its results shown), then checked by axe-core. A serious or critical
violation fails the test with the rule, the elements and axe's advice.
Moderate and minor findings are printed, not failed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import ROOT

FAILING_IMPACTS = {"serious", "critical"}


def _first(kind: str) -> str:
    ids = sorted(p.stem for p in (ROOT / "entries" / kind).glob("*.yaml"))
    assert ids, f"entries/{kind}/ is empty: there is no page of that kind to check"
    return ids[0]


def _paste_a_log(page) -> None:
    entry = yaml.safe_load((ROOT / "entries" / "errors" / f"{_first('errors')}.yaml").read_text(encoding="utf-8"))
    box = page.locator("#kb-paste textarea")
    box.wait_for(state="visible", timeout=10_000)
    box.fill(f"INFO starting\n{entry['error']}\n")
    page.locator("#kb-paste .kb-paste__results li").first.wait_for(state="visible", timeout=15_000)


# (name, path, what to do before checking). Every page here must exist: a missing one fails loudly.
PAGES = [
    ("home", "", None),
    ("errors index", "errors/", None),
    ("error page", f"errors/{_first('errors')}/", None),
    ("guide page", f"guides/{_first('guides')}/", None),
    ("calculator", "will-it-run/", None),
    ("paste box", "errors/", _paste_a_log),
]


def test_the_audited_pages_are_the_ones_a_visitor_meets_first():
    assert [name for name, _, _ in PAGES] == ["home", "errors index", "error page", "guide page", "calculator", "paste box"]


def _describe(violation: dict) -> str:
    targets = [" ".join(map(str, node["target"])) for node in violation["nodes"][:5]]
    more = len(violation["nodes"]) - len(targets)
    return (
        f"{violation['impact']}: {violation['id']} ({violation['help']})\n"
        + "".join(f"    {t}\n" for t in targets)
        + (f"    ... and {more} more\n" if more > 0 else "")
        + f"    {violation['helpUrl']}"
    )


@pytest.mark.parametrize("name,path,prepare", PAGES, ids=[p[0] for p in PAGES])
def test_no_serious_accessibility_violation(page, site_server, built_site, name, path, prepare):
    from axe_playwright_python.sync_playwright import Axe

    assert (Path(built_site) / path / "index.html").is_file(), f"the {name} page /{path} is not in the built site"
    response = page.goto(site_server + path)
    assert response is not None and response.ok, f"/{path} answered {response.status if response else 'nothing'}"
    page.wait_for_load_state("networkidle")
    if prepare:
        prepare(page)
    results = Axe().run(page).response
    violations = results["violations"]
    serious = [v for v in violations if v["impact"] in FAILING_IMPACTS]
    for v in violations:
        if v["impact"] not in FAILING_IMPACTS:
            print(f"/{path} ({name}) {_describe(v)}")
    assert results["passes"] and results["testEngine"]["name"] == "axe-core", "axe checked nothing: did the page load?"
    assert not serious, f"/{path} ({name}):\n" + "\n".join(_describe(v) for v in serious)

