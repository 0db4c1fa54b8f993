"""The kb command as editors and support engineers use it."""

from __future__ import annotations

import json
import shutil

import yaml

from conftest import FIXTURES, ROOT, run_kb


def test_check_names_file_line_field_and_exits_1(tmp_path):
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    bad = root / "entries" / "errors" / "cuda-oom-loading-model.yaml"
    bad.write_text(bad.read_text().replace("tools: [pytorch, vllm]", "tools: [pytorch, vlm]"))
    result = run_kb("check", cwd=root)  # root found from the current folder
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "entries/errors/cuda-oom-loading-model.yaml:7: tools[1]: KB013 'vlm' is not in entries/tools.yaml (did you mean 'vllm'? Or add it to entries/tools.yaml)"
    ]


def test_check_limited_to_paths(tmp_path):
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    (root / "entries" / "errors" / "broken.yaml").write_text("title: [unclosed\n")
    assert run_kb("--root", str(root), "check").returncode == 1
    only = run_kb("--root", str(root), "check", str(root / "entries" / "guides"))
    assert only.returncode == 0, only.stdout


def test_check_outside_a_kb_says_so(tmp_path):
    result = run_kb("check", cwd=tmp_path)
    assert result.returncode == 2
    assert "no KB here" in result.stderr and "Traceback" not in result.stderr


def test_new_scaffolds_a_file_that_check_then_guides(tmp_path):
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    (root / "mkdocs.yml").write_text("site_name: t\n")
    result = run_kb("--root", str(root), "new", "error", "my-new-error")
    assert result.returncode == 0, result.stderr
    path = root / "entries" / "errors" / "my-new-error.yaml"
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../schema.json")
    data = yaml.safe_load(text)
    for field in ("title", "error", "signatures", "category", "tools", "platforms", "severity", "verified", "author", "last_verified", "cause", "solution", "sources"):
        assert field in data
    # the scaffold is a valid entry from the start, so every later problem is the editor's change
    check = run_kb("--root", str(root), "check")
    assert check.returncode == 0, check.stdout
    again = run_kb("--root", str(root), "new", "error", "my-new-error")
    assert again.returncode == 1 and "already exists" in again.stderr
    bad = run_kb("--root", str(root), "new", "guide", "Bad_Id")
    assert bad.returncode == 2


def test_schema_check_detects_a_stale_copy(tmp_path):
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    assert run_kb("--root", str(root), "schema", "--check").returncode == 1
    assert run_kb("--root", str(root), "schema").returncode == 0
    assert run_kb("--root", str(root), "schema", "--check").returncode == 0
    doc = json.loads((root / "entries" / "schema.json").read_text())
    assert doc["$defs"]["ErrorEntry"]["additionalProperties"] is False
    (root / "entries" / "schema.json").write_text("{}")
    assert run_kb("--root", str(root), "schema", "--check").returncode == 1


def test_committed_schema_is_current():
    result = run_kb("schema", "--check")
    assert result.returncode == 0, "entries/schema.json is stale: run `kb schema` and commit it"


def test_cite_prints_title_summary_steps_and_absolute_url():
    result = run_kb("--root", str(FIXTURES / "valid"), "cite", "vllm-no-available-kv-cache-blocks")
    assert result.returncode == 0
    title, summary, steps, url = result.stdout.rstrip("\n").split("\n\n")
    assert title == "vLLM: No available memory for the cache blocks"
    assert summary.startswith("vLLM found no memory left")
    assert steps.splitlines() == [
        "Steps:",
        "1. Give vLLM a larger share of the GPU",
        "   https://errorkb.org/errors/vllm-no-available-kv-cache-blocks/#step-1",
        "2. Shorten the maximum context",
        "   https://errorkb.org/errors/vllm-no-available-kv-cache-blocks/#step-2",
    ]
    assert url == "https://errorkb.org/errors/vllm-no-available-kv-cache-blocks/"


def test_cite_a_step_links_its_anchor_and_follows_aliases():
    result = run_kb("--root", str(FIXTURES / "valid"), "cite", "vllm-kv-blocks", "--step", "2")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[1] == "Step 2: Shorten the maximum context"
    assert lines[-1] == "https://errorkb.org/errors/vllm-no-available-kv-cache-blocks/#step-2"
    assert "\"--max-model-len\"" in result.stdout and "`" not in result.stdout  # code spans readable, no Markdown
    missing = run_kb("--root", str(FIXTURES / "valid"), "cite", "vllm-no-available-kv-cache-blocks", "--step", "9")
    assert missing.returncode == 1 and "has 2 steps" in missing.stderr


def test_cite_uses_the_site_url_of_mkdocs_yml():
    entry = next((ROOT / "entries" / "errors").glob("*.yaml")).stem
    result = run_kb("cite", entry)
    assert result.returncode == 0, result.stderr
    site_url = yaml.safe_load((ROOT / "mkdocs.yml").read_text().split("\ntheme:")[0])["site_url"]
    assert result.stdout.splitlines()[-1] == f"{site_url.rstrip('/')}/errors/{entry}/"


def _bare_oom_log(expected: str, n: int) -> str:
    return yaml.safe_dump({
        "expected": expected, "source": f"example/app#{n}", "split": "dev",
        "log": f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB. GPU 0 has a total capacity of 23.55 GiB of which 5.31 MiB is free.\n",
    })


def test_priors_counts_ties_in_a_corpus_and_writes_only_the_prior_lines(tmp_path, kb_copy):
    root = kb_copy(ROOT / "entries")
    errors = root / "entries" / "errors"
    long_context = errors / "cuda-oom-long-context.yaml"
    long_context.write_text("".join(line for line in long_context.read_text().splitlines(True) if not line.startswith("prior:")))
    before = {p.name: p.read_text() for p in errors.glob("*.yaml")}
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    labels = ["cuda-oom-loading-model"] * 3 + ["cuda-oom-training"] * 2 + ["cuda-oom-long-context"] * 10
    for n, expected in enumerate(labels, 1):
        (corpus / f"log-{n}.yaml").write_text(_bare_oom_log(expected, n))
    # logs that must not count: a held-out one and a near-miss
    (corpus / "held.yaml").write_text(_bare_oom_log("cuda-oom-training", 99).replace("split: dev", "split: heldout"))
    (corpus / "none.yaml").write_text(_bare_oom_log("cuda-oom-training", 98).replace("expected: cuda-oom-training", "expected: null"))

    declared = {name: yaml.safe_load(text).get("prior", 0) for name, text in before.items()}
    counted = {"cuda-oom-loading-model.yaml": 3, "cuda-oom-training.yaml": 2, "cuda-oom-long-context.yaml": 10}
    # every other entry that declares a prior wins no tie in this corpus, so its count is 0
    expected = counted | {name: 0 for name, prior in declared.items() if prior and name not in counted}
    assert len(expected) > 3, "the KB's other declared priors should show up as 0 in this small corpus"

    check = run_kb("--root", str(root), "priors", "--corpus", str(corpus))
    assert check.returncode == 1, check.stderr
    assert sorted(check.stdout.splitlines()) == sorted(
        f"entries/errors/{name}: prior {declared[name]} -> {n} (counted)" for name, n in expected.items())
    assert {p.name: p.read_text() for p in errors.glob("*.yaml")} == before, "a check without --write changed a file"

    wrote = run_kb("--root", str(root), "priors", "--corpus", str(corpus), "--write")
    assert wrote.returncode == 0, wrote.stderr
    after = {p.name: p.read_text() for p in errors.glob("*.yaml")}
    changed = {name for name in before if after[name] != before[name]}
    assert changed == set(expected)
    for name in changed:
        old, new = before[name].splitlines(), after[name].splitlines()
        assert [line for line in new if not line.startswith("prior:")] == [line for line in old if not line.startswith("prior:")]
    assert {name: yaml.safe_load(after[name])["prior"] for name in changed} == expected
    new = after["cuda-oom-long-context.yaml"].splitlines()
    assert new[new.index("prior: 10") - 1].startswith("last_verified:"), "an added prior goes after last_verified"
    assert run_kb("--root", str(root), "check").returncode == 0
    again = run_kb("--root", str(root), "priors", "--corpus", str(corpus))
    assert again.returncode == 0 and not again.stdout, again.stdout


def test_priors_without_a_corpus_says_where_it_looked(tmp_path, kb_copy):
    root = kb_copy(ROOT / "entries")
    result = run_kb("--root", str(root), "priors")
    assert result.returncode == 2
    assert "no real-log corpus" in result.stderr and "--corpus" in result.stderr


def test_priors_names_a_corpus_file_that_is_not_a_log(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "good.yaml").write_text(_bare_oom_log("cuda-oom-training", 1))
    (corpus / "broken.yaml").write_text("log: [unclosed\n")
    result = run_kb("priors", "--corpus", str(corpus))
    assert result.returncode == 2 and "broken.yaml: not a readable YAML file" in result.stderr, result.stderr
    (corpus / "broken.yaml").write_text("just a string\n")
    result = run_kb("priors", "--corpus", str(corpus))
    assert result.returncode == 2 and "broken.yaml: not a real log" in result.stderr, result.stderr


def test_a_written_prior_keeps_the_file_as_it_was_around_it():
    from errorkb.matcher.priors import rewrite

    assert rewrite("id: x\nprior: 3   # counted\nwrapper: false\n", 9) == "id: x\nprior: 9   # counted\nwrapper: false\n"
    assert yaml.safe_load(rewrite("a: 1\nprior:\nb: 2\n", 4)) == {"a": 1, "prior": 4, "b": 2}
    crlf = "a: 1\r\nlast_verified: 2026-01-01\r\nb: 2\r\n"
    assert rewrite(crlf, 5) == "a: 1\r\nlast_verified: 2026-01-01\r\nprior: 5\r\nb: 2\r\n"
    assert rewrite(rewrite(crlf, 5), 7) == "a: 1\r\nlast_verified: 2026-01-01\r\nprior: 7\r\nb: 2\r\n"
