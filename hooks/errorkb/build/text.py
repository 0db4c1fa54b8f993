"""What text may contain, whatever the field: no characters that change how other text reads.

Input: any string from an entry. Output: the first forbidden character found
(``forbidden``), or text made safe to print on a terminal (``terminal``).

Every field is checked: plain-text fields (titles, names, summaries) reach
<title>, attributes, feeds, JSON and terminals, and Markdown fields reach
e-mail snippets. Control characters break XML and YAML front matter and
drive terminals; bidirectional controls make text read differently from what
a reviewer saw; line and paragraph separators and the byte-order mark are
line breaks or invisible in some readers and not in others. Emoji and every
other printable character (the zero-width joiner of emoji sequences
included) are fine.
"""

from __future__ import annotations

import re
import unicodedata

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_OTHER = "\u2028\u2029\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff"
FORBIDDEN = re.compile(f"[{_CONTROLS}{_BIDI}{_OTHER}]")


def describe(char: str) -> str:
    name = unicodedata.name(char, "") or "a control character"
    return f"U+{ord(char):04X} ({name})"


def forbidden(value: str) -> tuple[int, str] | None:
    """(offset, description) of the first character a field may not hold, or None."""
    found = FORBIDDEN.search(value)
    return (found.start(), describe(found.group(0))) if found else None


def terminal(value: str) -> str:
    """Text to print on a terminal: escape sequences, controls and bidi overrides shown as U+XXXX, never obeyed."""
    return FORBIDDEN.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", value)
