"""entries/schema.json, generated from the pydantic models (the one source of truth).

Input: the models in schema.py and the site's URL (mkdocs.yml's site_url), under
which the schema's ``$id`` lives. Output: the JSON Schema text that editors'
YAML language servers use for completion and inline errors (every entry file
names it on its first line). ``kb schema --check`` refuses a stale copy.
"""

from __future__ import annotations

import json

from pydantic.json_schema import models_json_schema

from errorkb.build import schema


def schema_document(site_url: str) -> dict:
    models = list(schema.KINDS.values())
    _, top = models_json_schema([(m, "validation") for m in models], ref_template="#/$defs/{model}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{site_url.rstrip('/')}/schema/entry.json",
        "title": "Errors KB entry",
        "description": "One entry of the Errors KB. Generated from hooks/errorkb/schema.py by `kb schema`; do not edit.",
        "anyOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in models],
        "$defs": top["$defs"],
    }


def schema_text(site_url: str) -> str:
    return json.dumps(schema_document(site_url), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
