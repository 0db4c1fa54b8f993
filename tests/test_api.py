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
    assert entry["steps"][0]["url"].endswith("#step-1")
