"""The files that automate the repository: the issue form, the annotation matcher, pre-commit."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import yaml

from conftest import FIXTURES, ROOT, run_kb
from errorkb.build.problems import CODES


def test_issue_form_is_valid_for_github():
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-issue-forms", str(ROOT / ".github/ISSUE_TEMPLATE/fix-report.yml")],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_issue_form_fields_match_the_prefilled_link():
    form = yaml.safe_load((ROOT / ".github/ISSUE_TEMPLATE/fix-report.yml").read_text())
    ids = {item.get("id") for item in form["body"]}
    assert {"entry", "step", "stack", "tried", "happened"} <= ids
    result = run_kb("--root", str(FIXTURES / "valid"), "cite", "cuda-oom-loading-model")
    assert result.returncode == 0
    page = (ROOT / "templates/pages/error.md.j2").read_text()
    assert "step_report_url(loop.index)" in page


def test_problem_matcher_reads_kb_check_output(tmp_path):
    """The pull-request annotations come from this regex: it must parse real `kb check` lines."""
    matcher = json.loads((ROOT / ".github/kb-problems.json").read_text())["problemMatcher"][0]["pattern"][0]
    regex = re.compile(matcher["regexp"])
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    bad = root / "entries" / "errors" / "cuda-oom-loading-model.yaml"
    bad.write_text(bad.read_text().replace("category: out-of-memory", "category: oom").replace("severity: fatal", "severity: fatal\nseverity: error"))
    result = run_kb("--root", str(root), "check")
    lines = result.stdout.splitlines()
    assert len(lines) >= 1
    for line in lines:
        m = regex.match(line)
        assert m, line
        assert m.group(matcher["file"]) == "entries/errors/cuda-oom-loading-model.yaml"
        assert int(m.group(matcher["line"])) > 0
        assert m.group(matcher["code"]) in CODES


def test_pre_commit_runs_the_checks():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    entries = {hook["id"]: hook["entry"] for repo in config["repos"] for hook in repo["hooks"]}
    assert entries["kb-check"].endswith("kb check")
    assert entries["kb-schema"].endswith("kb schema --check")


def test_contributing_lists_every_problem_code_with_its_hint():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    rows = {code: (title.strip(), hint.strip()) for code, title, hint in re.findall(r"^\| `(KB\d{3})` \| ([^|]+) \| ([^|]+) \|$", text, re.M)}
    live = {c.code: (c.title, c.hint) for c in CODES.values() if not c.retired}
    assert rows == live


def test_contribute_page_is_built_from_contributing_md(built_site):
    html = (built_site / "contributing" / "index.html").read_text()
    assert "Problem codes" in html and "KB023" in html
