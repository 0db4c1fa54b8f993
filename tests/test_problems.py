"""Every problem code has a failing fixture, and every fixture fails with its code.

The fixtures in tests/fixtures/invalid/ are placed, one at a time, into a copy
of the valid fixture KB; `kb check` must name the code, the file, the line
and the field, exit 1 and never print a traceback.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, run_kb
from errorkb.build.problems import CODES, Problem

INVALID = FIXTURES / "invalid"
CASES = yaml.safe_load((INVALID / "cases.yaml").read_text(encoding="utf-8"))["cases"]
LINE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?: (?P<field>[^:\n]+):)? (?P<code>KB\d{3}) (?P<message>.+) \((?P<hint>.+)\)$")


def place_case(dest: Path, case: dict) -> Path:
    shutil.copytree(FIXTURES / "valid", dest)
    target = dest / case["place"]
    target.parent.mkdir(parents=True, exist_ok=True)
    data = (INVALID / case["file"]).read_bytes()
    if case.get("symlink"):
        target.symlink_to(data.decode().strip())
        return target
    if "pad_to" in case:
        data += b"# padding\n" * ((case["pad_to"] - len(data)) // 10 + 1)
    target.write_bytes(data)
    return target


def parse(stdout: str) -> list[dict]:
    rows = []
    for line in stdout.splitlines():
        match = LINE.match(line)
        assert match, f"not in the path:line: field: CODE message (hint) form: {line!r}"
        rows.append(match.groupdict())
    return rows


def test_every_code_has_a_fixture_and_every_fixture_a_code():
    used = {c["code"] for c in CASES}
    live = {code for code, c in CODES.items() if not c.retired}
    assert live - used == set(), "codes without a failing fixture"
    assert used - live == set(), "fixtures for unknown or retired codes"
    on_disk = {p.name for p in INVALID.glob("*.yaml")} - {"cases.yaml"}
    assert on_disk == {c["file"] for c in CASES}, "fixture files and cases.yaml disagree"
    for case in CASES:
        assert case["file"].startswith(case["code"] + "-")


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_fixture_fails_with_its_code(tmp_path, case):
    root = tmp_path / "kb"
    place_case(root, case)
    result = run_kb("--root", str(root), "check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    rows = parse(result.stdout)
    mine = [r for r in rows if r["file"] == case["place"] or (case["code"] == "KB014" and r["code"] == "KB014")]
    assert any(r["code"] == case["code"] for r in mine), rows
    hit = next(r for r in mine if r["code"] == case["code"])
    if "field" in case:
        assert hit["field"] == case["field"]
    if "line" in case:
        assert int(hit["line"]) == case["line"]
    # the valid entries around the bad file stay valid: one bad file hides nothing and invents nothing
    assert all(r["file"] == case["place"] or r["code"] in {"KB012", "KB014"} for r in rows), rows


def test_all_problems_reported_not_just_the_first(tmp_path):
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    chosen = [c for c in CASES if c["file"] in {"KB005-duplicate-key.yaml", "KB013-unknown-category.yaml", "KB016-script-tag.yaml"}]
    for index, case in enumerate(chosen):
        target = root / "entries" / "errors" / f"bad-{index}.yaml"
        target.write_bytes((INVALID / case["file"]).read_bytes())
    result = run_kb("--root", str(root), "check")
    codes = {r["code"] for r in parse(result.stdout)}
    assert {"KB005", "KB013", "KB016"} <= codes
    assert result.returncode == 1


@pytest.mark.parametrize("size", [300 * 1024, 50 * 1024 * 1024])
def test_oversized_file_is_refused_without_being_parsed(tmp_path, size):
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    big = root / "entries" / "errors" / "huge.yaml"
    with big.open("wb") as fh:
        fh.write(b"title: x\ncause: |\n")
        line = b"  " + b"x" * 1000 + b"\n"
        fh.write(line * (size // len(line)))
    result = run_kb("--root", str(root), "check")
    assert result.returncode == 1
    assert "KB002" in result.stdout and "huge.yaml:1:" in result.stdout


def test_problem_format_is_stable():
    p = Problem("KB012", "entries/errors/x.yaml", 12, "related_errors[1]", "'vllm-kv' is not an error entry", "did you mean 'vllm-kv-cache'?")
    assert p.format() == "entries/errors/x.yaml:12: related_errors[1]: KB012 'vllm-kv' is not an error entry (did you mean 'vllm-kv-cache'?)"


def test_valid_fixture_kb_has_no_problems():
    result = run_kb("--root", str(FIXTURES / "valid"), "check")
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""
