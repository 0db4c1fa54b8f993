"""The site settings the commands need, read from mkdocs.yml without MkDocs itself."""

from __future__ import annotations

from pathlib import Path

import yaml

from errorkb.build.pages import Settings
from errorkb.build.pipeline import SettingsError, settings_from


class _Lenient(yaml.SafeLoader):
    """Reads mkdocs.yml, which may hold !!python/name tags, ignoring the tags."""


_Lenient.add_multi_constructor("", lambda loader, suffix, node: None)


def read_settings(root: Path) -> Settings:
    try:
        config = yaml.load((root / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Lenient) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SettingsError(f"mkdocs.yml could not be read: {exc}") from None
    return settings_from(config.get("extra") or {}, config.get("site_url"), config.get("repo_url"))
