"""The KB is not tied to one generator: MkDocs and ProperDocs both build it.

ProperDocs, the maintained continuation of MkDocs 1.x, builds the real site
with its hook, strictly. And `kb pages OUT` writes the generated Markdown
and JSON so that a generator with no hook at all renders the same site:
both MkDocs and ProperDocs build that folder with plain Material.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_kb

GENERATORS = ["mkdocs", "properdocs"]


def generator_build(tool: str, root: Path, config: str, site: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    command = [sys.executable, "-m", tool, "build", "--strict", "-f", config, "--site-dir", str(site)]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600, env=env)


def error_ids() -> list[str]:
    return sorted(p.stem for p in (ROOT / "entries" / "errors").glob("*.yaml"))


def assert_is_the_kb(site: Path) -> None:
    for entry_id in error_ids():
        html = (site / "errors" / entry_id / "index.html").read_text(encoding="utf-8")
        assert 'id="step-1"' in html, entry_id
    entries = json.loads((site / "api" / "v1" / "entries.json").read_text(encoding="utf-8"))["entries"]
    assert {e["id"] for e in entries if e["kind"] == "error"} == set(error_ids())


def test_properdocs_builds_the_real_site_with_its_hook(tmp_path):
    result = generator_build("properdocs", ROOT, "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    assert_is_the_kb(tmp_path / "site")
    assert "ProperDocs" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """`kb pages` output plus a configuration with no hook: plain Material, the same theme settings."""
    root = tmp_path_factory.mktemp("portable")
    result = run_kb("pages", str(root / "docs"), "--with-site-src")
    assert result.returncode == 0, result.stdout + result.stderr
    config = {
        "INHERIT": str(ROOT / "mkdocs.yml"),
        "docs_dir": "docs",
        "hooks": [],
        "watch": [],
        "theme": {"name": "material", "custom_dir": str(ROOT / "templates" / "overrides")},
    }
    (root / "plain.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root


def test_kb_pages_writes_markdown_and_json(exported):
    docs = exported / "docs"
    for entry_id in error_ids():
        text = (docs / "errors" / f"{entry_id}.md").read_text(encoding="utf-8")
        assert text.startswith("---\n") and "\n# " in text and "{ #step-1" in text
    assert json.loads((docs / "api" / "v1" / "entries.json").read_text(encoding="utf-8"))["entries"]


def test_kb_pages_refuses_a_folder_with_files_in_it(exported):
    result = run_kb("pages", str(exported / "docs"))
    assert result.returncode == 2 and "not empty" in result.stderr


@pytest.mark.parametrize("tool", GENERATORS)
def test_the_exported_pages_build_without_the_hook(exported, tool, tmp_path):
    result = generator_build(tool, exported, "plain.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    assert_is_the_kb(tmp_path / "site")
