"""``kb new``: the text of a new entry, with every field and what to put in it."""

from __future__ import annotations

import datetime as dt

ERROR = """\
# yaml-language-server: $schema=../schema.json
# Fill in every field, then run `kb check`. Markdown is allowed in cause and the step bodies (no raw HTML).
title: "Engine: what the reader searches for"
error: "The literal message, copied from the log"
summary: "One line: what it means and the usual way out."
signatures:
  # Case-insensitive regular expressions that find this error in a pasted log (plain syntax, no .*).
  - 'the literal message'
category: out-of-memory        # an id from entries/categories.yaml
tools: [vllm]                  # ids from entries/tools.yaml
platforms: [nvidia-cuda]       # ids from entries/platforms.yaml
severity: error                # fatal | error | warning
verified: community            # community until an editor reviews it
author: errorkb-editors        # an id from entries/authors.yaml
last_verified: {today}
applies_to:
  vllm: ">=0.6"
cause: |
  Why it happens, in plain words: the mechanism, in a few short paragraphs.
solution:
  - title: The most likely fix, as one action
    body: |
      What to do, the command to run, and how to tell it worked.

      ```bash
      the command
      ```
alternatives: []
related_errors: []
aliases: []
sources:
  - title: "Where you checked the facts"
    url: https://example.com/replace-me
"""

GUIDE = """\
# yaml-language-server: $schema=../schema.json
# Fill in every field, then run `kb check`. Markdown is allowed in diagnose, fix and answer (no raw HTML).
title: "The symptom, as the reader would search it"
summary: "What this guide walks through, in a sentence or two."
severity: error                # fatal | error | warning
tools: [vllm]                  # ids from entries/tools.yaml
author: errorkb-editors        # an id from entries/authors.yaml
last_verified: {today}
verified: community
causes:
  # In the order an operator should check them.
  - title: The first thing to check
    diagnose: |
      What to look for, and the command that shows it.
    fix: |
      What to do about it.
    errors: []                 # ids of error entries this cause produces
faq:
  - question: "A question readers ask"
    answer: |
      The answer.
related_errors: []
related_guides: []
sources:
  - title: "Where you checked the facts"
    url: https://example.com/replace-me
"""


def scaffold(kind: str, today: dt.date) -> str:
    return (ERROR if kind == "error" else GUIDE).replace("{today}", today.isoformat())
