"""The static JSON API: the OpenAPI description is valid and the generated files follow it."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml
from openapi_spec_validator import validate

from conftest import ROOT, run_kb

SPEC = yaml.safe_load((ROOT / "site_src" / "api" / "openapi.yaml").read_text())


def schema_for(name: str) -> dict:
    """A component schema with its references resolvable, as a standalone JSON Schema."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": f"#/components/schemas/{name}", "components": SPEC["components"]}


def check(data: object, name: str) -> None:
    jsonschema.Draft202012Validator(schema_for(name), format_checker=jsonschema.FormatChecker()).validate(data)


def test_openapi_description_is_valid():
    validate(SPEC)


def test_every_path_is_a_generated_file(built_site):
    for path in SPEC["paths"]:
        if "{id}" in path:
            continue
        assert (built_site / path.lstrip("/")).is_file(), path


def test_index_follows_the_description(built_site):
    index = json.loads((built_site / "api/v1/entries.json").read_text())
    check(index, "EntryIndex")
    assert index["count"] == len(index["entries"]) > 0


def test_every_entry_file_follows_the_description(built_site):
    index = json.loads((built_site / "api/v1/entries.json").read_text())
    for record in index["entries"]:
        entry = json.loads((built_site / "api/v1/entries" / f"{record['id']}.json").read_text())
        check(entry, "Entry")
        assert {k: entry[k] for k in record} == record


def test_models_and_gpus_follow_the_description(built_site):
    check(json.loads((built_site / "api/v1/models.json").read_text()), "ModelList")
    check(json.loads((built_site / "api/v1/gpus.json").read_text()), "GpuList")


def test_description_catches_a_wrong_file(built_site):
    index = json.loads((built_site / "api/v1/entries.json").read_text())
    index["entries"][0]["severity"] = "catastrophic"
    with pytest.raises(jsonschema.ValidationError):
        check(index, "EntryIndex")
    entry = json.loads((built_site / "api/v1/entries" / f"{index['entries'][0]['id']}.json").read_text())
    entry["unexpected"] = 1
    with pytest.raises(jsonschema.ValidationError):
        check(entry, "Entry")


def test_email_snippets_are_what_kb_cite_prints(built_site):
    index = json.loads((built_site / "api/v1/entries.json").read_text())
    first = next(r for r in index["entries"] if r["kind"] == "error")
    entry = json.loads((built_site / "api/v1/entries" / f"{first['id']}.json").read_text())
    assert run_kb("cite", first["id"]).stdout == entry["email"]
    assert run_kb("cite", first["id"], "--step", "1").stdout == entry["steps"][0]["email"]
    assert run_kb("cite", first["id"], "--step", "1", "--format", "markdown").stdout == entry["steps"][0]["snippet"]["markdown"]
    assert entry["steps"][0]["url"].endswith("#step-1")


def test_every_snippet_in_the_api_is_kb_cite(built_site):
    """Three forms for every entry and every step, equal to what `kb cite --format` gives (its function, one graph)."""
    from errorkb.build.linker import link
    from errorkb.build.loader import load
    from errorkb.build.pages import snippets_of
    from errorkb.cli.main import cite
    from errorkb.cli.settings import read_settings

    graph, settings = link(load(ROOT)), read_settings(ROOT)
    index = json.loads((built_site / "api/v1/entries.json").read_text())
    checked = 0
    for record in index["entries"]:
        entry = json.loads((built_site / "api/v1/entries" / f"{record['id']}.json").read_text())
        snips = snippets_of(graph, settings, record["kind"] + "s", record["id"])  # what `kb cite` prints, below
        assert entry["snippet"] == snips["entry"] and entry["email"] == cite(graph, settings, record["id"], None)
        for step, holder in enumerate(entry["steps"], 1):
            assert holder["email"] == holder["snippet"]["text"]
            for form in ("text", "markdown", "html"):
                assert holder["snippet"][form] == snips["steps"][step - 1][form], (record["id"], step, form)
                checked += 1
    assert checked >= 3 * len(index["entries"]) * 4
