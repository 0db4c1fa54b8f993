"""Errors KB: entries in YAML → validated, cross-linked, rendered pages (see pipeline.build)."""
