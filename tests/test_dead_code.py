"""Dead code: vulture over hooks/, with the names only a framework or a template uses listed in tests/dead_code_allowlist.py."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

ARGS = ["--min-confidence", "60"]


def vulture(*paths) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vulture", *map(str, paths), *ARGS], capture_output=True, text=True, timeout=300)


def test_no_dead_code_in_the_application():
    result = vulture(ROOT / "hooks", ROOT / "tests" / "dead_code_allowlist.py")
    assert result.returncode == 0 and not result.stdout, "unused code (remove it, or say in the allowlist who uses it):\n" + result.stdout + result.stderr


def test_the_check_finds_an_unused_function(tmp_path):
    module = tmp_path / "stage.py"
    module.write_text("def used():\n    return 1\n\n\ndef forgotten():\n    return 2\n\n\nprint(used())\n", encoding="utf-8")
    result = vulture(module)
    assert result.returncode != 0 and "unused function 'forgotten'" in result.stdout and "'used'" not in result.stdout
