"""The real thing: strict MkDocs builds of the real entries and of broken KBs."""

from __future__ import annotations

import json
import re
import shutil

from conftest import FIXTURES, ROOT, make_kb, mkdocs_build, run_kb


def test_real_entries_build_strict(built_site):
    assert (built_site / "index.html").exists()
    assert (built_site / "errors" / "index.html").exists()
    entries = sorted(p.stem for p in (ROOT / "entries" / "errors").glob("*.yaml"))
    assert entries, "the KB has no error entries"
    for entry_id in entries:
        html = (built_site / "errors" / entry_id / "index.html").read_text(encoding="utf-8")
        assert 'id="step-1"' in html
        assert re.search(r'<time datetime="\d{4}-\d{2}-\d{2}">', html)
    index = json.loads((built_site / "api" / "v1" / "entries.json").read_text())
    assert {e["id"] for e in index["entries"] if e["kind"] == "error"} == set(entries)


def test_real_entries_pass_kb_check():
    result = run_kb("check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_broken_entry_stops_the_build_and_names_it(tmp_path):
    kb = make_kb(tmp_path / "kb", FIXTURES / "valid" / "entries")
    bad = kb / "entries" / "errors" / "cuda-oom-loading-model.yaml"
    bad.write_text(bad.read_text().replace("category: out-of-memory", "category: oom"))
    result = mkdocs_build(kb, tmp_path / "out")
    assert result.returncode != 0
    assert "entries/errors/cuda-oom-loading-model.yaml:6: category: KB013" in result.stderr
    assert not (tmp_path / "out" / "errors").exists()


def test_hostile_markdown_never_reaches_html(tmp_path):
    """Even if an entry bypassed `kb check`, the rendered body is sanitised."""
    kb = make_kb(tmp_path / "kb", FIXTURES / "valid" / "entries")
    entry = kb / "entries" / "errors" / "cuda-oom-loading-model.yaml"
    entry.write_text(entry.read_text().replace(
        "Pick a model whose weights fit with room to spare.",
        'Pick a model. <script>alert("x")</script> <img src=x onerror=alert(1)> [a](javascript:alert(2)) <svg onload=alert(3)>',
    ))
    result = mkdocs_build(kb, tmp_path / "out")
    assert result.returncode != 0 and "KB016" in result.stderr  # refused first
    # now turn the check off in a copy of the hook environment and build anyway
    (kb / "hooks").unlink()
    shutil.copytree(ROOT / "hooks", kb / "hooks")
    (kb / "node_modules").symlink_to(ROOT / "node_modules")
    loader = kb / "hooks" / "errorkb" / "build" / "loader.py"
    loader.write_text(loader.read_text().replace("for code, message in check_markdown(text):", "for code, message in []:"))
    result = mkdocs_build(kb, tmp_path / "out2", {"PYTHONPATH": str(kb / "hooks")})
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "out2" / "errors" / "cuda-oom-loading-model" / "index.html").read_text()
    body = html[html.index('<article'):html.index('</article>')].lower()
    for bad in ("<script", "onerror", "onload", "javascript:", "<svg"):
        assert bad not in body, bad
    assert "pick a model." in body  # the harmless text is kept


def test_every_published_url_still_resolves(built_site):
    """The committed manifest: every URL ever published is a page or a redirect in this build."""
    from errorkb.build.urls import read_manifest

    manifest = read_manifest(ROOT)
    assert len(manifest) > 50
    missing = [url for _, url in manifest if not (built_site / url.strip("/") / "index.html").is_file()]
    assert missing == []


def test_renaming_without_alias_fails_and_with_alias_redirects(tmp_path):
    kb = make_kb(tmp_path / "kb", FIXTURES / "valid" / "entries")
    (kb / "published-urls.txt").write_text("/errors/cuda-oom-loading-model/\n/e/cuda-oom-loading-model/\n")
    old = kb / "entries" / "errors" / "cuda-oom-loading-model.yaml"
    new = kb / "entries" / "errors" / "cuda-oom-while-loading.yaml"
    old.rename(new)
    other = kb / "entries" / "errors" / "vllm-no-available-kv-cache-blocks.yaml"
    other.write_text(other.read_text().replace("related_errors: [cuda-oom-loading-model]", "related_errors: [cuda-oom-while-loading]"))
    result = mkdocs_build(kb, tmp_path / "out")
    assert result.returncode != 0
    assert "published-urls.txt:1: KB023 the published URL /errors/cuda-oom-loading-model/ would no longer resolve" in result.stderr
    new.write_text(new.read_text().replace("severity: fatal", "severity: fatal\naliases: [cuda-oom-loading-model]"))
    result = mkdocs_build(kb, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    redirect = (tmp_path / "out" / "errors" / "cuda-oom-loading-model" / "index.html").read_text()
    assert "url=../../errors/cuda-oom-while-loading/" in redirect
    assert (tmp_path / "out" / "e" / "cuda-oom-loading-model" / "index.html").is_file()


def test_the_home_page_lists_real_entries_first(built_site):
    from errorkb.cli.settings import read_settings

    start_here = read_settings(ROOT).start_here
    assert len(start_here) >= 8
    missing = [i for i in start_here if not (ROOT / "entries" / "errors" / f"{i}.yaml").is_file()]
    assert missing == [], "extra.kb.start_here in mkdocs.yml names ids that are not error entries"
    home = (built_site / "index.html").read_text(encoding="utf-8")
    assert home.index('id="kb-paste"') < home.index('<h2 id="start-here')
    for entry_id in start_here:
        assert f'href="errors/{entry_id}/"' in home


def test_every_absolute_url_comes_from_the_site_url_of_mkdocs_yml(tmp_path):
    kb = make_kb(tmp_path / "kb", FIXTURES / "valid" / "entries")
    config = kb / "mkdocs.yml"
    original = re.search(r"^site_url: (\S+)$", config.read_text(), re.M).group(1)
    config.write_text(config.read_text().replace(f"site_url: {original}", "site_url: https://kb.example.test/help", 1))
    out = tmp_path / "out"
    result = mkdocs_build(kb, out)
    assert result.returncode == 0, result.stderr
    new = "https://kb.example.test/help/"
    entry = "errors/vllm-no-available-kv-cache-blocks/"
    page = (out / entry / "index.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{new}{entry}">' in page and f'"@id": "{new}{entry}' in page
    api = json.loads((out / "api" / "v1" / "entries" / "vllm-no-available-kv-cache-blocks.json").read_text())
    assert api["url"] == new + entry and api["short_url"] == f"{new}e/vllm-no-available-kv-cache-blocks/"
    assert f"<id>{new}</id>" in (out / "feed.xml").read_text() and f"Sitemap: {new}sitemap.xml" in (out / "robots.txt").read_text()
    written = [p for p in out.rglob("*") if p.suffix in (".html", ".xml", ".json", ".txt", ".yaml") and p.is_file()]
    leftovers = [p.relative_to(out).as_posix() for p in written if original.rstrip("/") in p.read_text(encoding="utf-8", errors="replace")]
    assert written and leftovers == []
    assert run_kb("--root", str(kb), "schema").returncode == 0
    assert json.loads((kb / "entries" / "schema.json").read_text())["$id"] == f"{new}schema/entry.json"
    cited = run_kb("--root", str(kb), "cite", "vllm-no-available-kv-cache-blocks")
    assert cited.returncode == 0 and cited.stdout.splitlines()[-1] == new + entry


def test_without_a_site_url_neither_the_build_nor_the_commands_guess_one(tmp_path):
    kb = make_kb(tmp_path / "kb", FIXTURES / "valid" / "entries")
    config = kb / "mkdocs.yml"
    config.write_text(re.sub(r"^site_url: .*\n", "", config.read_text(), count=1, flags=re.M))
    result = mkdocs_build(kb, tmp_path / "out")
    assert result.returncode != 0 and "mkdocs.yml has no site_url" in result.stderr
    assert not (tmp_path / "out" / "errors").exists()
    for command in (["cite", "vllm-no-available-kv-cache-blocks"], ["schema"]):
        ran = run_kb("--root", str(kb), *command)
        assert ran.returncode == 2 and "mkdocs.yml has no site_url" in ran.stderr, command
