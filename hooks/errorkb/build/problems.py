"""Problems: what is wrong with the authored entries, in a form an editor can act on.

Every stage returns Problems instead of raising; only the caller (``kb check``
or the build hook) prints them. Each code is stable: it is documented on the
Contribute page, has one failing fixture in tests/fixtures/invalid/, and is
never reused for another meaning. A retired code stays in CODES as a
tombstone with ``retired=True``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    code: str
    title: str
    hint: str
    retired: bool = False


CODES: dict[str, Code] = {
    c.code: c
    for c in [
        Code("KB001", "the file is not valid YAML", "check the indentation and quoting around this line; indent with spaces, never tabs"),
        Code("KB002", "the file is too large", "an entry should be a few KB; split it or remove pasted logs"),
        Code("KB003", "a YAML tag is not allowed", "remove the `!tag`; entries use plain strings, numbers, lists and mappings"),
        Code("KB004", "YAML anchors and aliases are not allowed", "write the value out in full instead of `&anchor` / `*alias`"),
        Code("KB005", "a key is given twice", "keep one of the two; YAML would silently keep only the last"),
        Code("KB006", "the file is not a mapping of fields", "an entry is a mapping such as `title: ...`; run `kb new` for a template"),
        Code("KB007", "the file is not clean UTF-8 text", "save it as UTF-8 without a byte-order mark, with no NUL or control bytes"),
        Code("KB008", "the file name is not a valid id", "rename it to lowercase letters, digits and single hyphens, ending in .yaml"),
        Code("KB009", "a required field is missing", "add the field; `kb new` shows every field"),
        Code("KB010", "unknown field", "remove it or fix its spelling; the allowed fields are in entries/schema.json"),
        Code("KB011", "a field has the wrong type or value", "see the message for what is expected"),
        Code("KB012", "a reference names no entry", "use the id of an existing entry (its file name without .yaml)"),
        Code("KB013", "unknown taxonomy term", "use an id defined in entries/categories.yaml, tools.yaml, platforms.yaml or authors.yaml, or add it there"),
        Code("KB014", "the same id is used twice", "ids and aliases must be unique across all entries; pick another id"),
        Code("KB015", "an entry refers to itself", "remove its own id from the list"),
        Code("KB016", "raw HTML in Markdown", "write Markdown only; put literal `<tags>` inside backticks"),
        Code("KB017", "a link uses a scheme that is not allowed", "links must be https://, http://, mailto: or relative"),
        Code("KB018", "the date is in the future", "use the date you last checked the entry, today or earlier"),
        Code("KB019", "the signature is not a valid or safe regular expression", "use plain literals, classes and bounded repeats; see the Contribute page"),
        Code("KB020", "the YAML is nested too deeply", "entries are at most a few levels deep"),
        Code("KB021", "a file is in an unknown folder", "entries live in entries/errors, guides, models or gpus"),
        Code("KB022", "no signature finds the entry's own error text", "at least one signature must match the literal message in `error`; others may cover other versions' wording"),
        Code("KB023", "a published URL would break", "add the old id to `aliases:` of the entry that replaced it"),
        Code("KB024", "the text holds a control, bidirectional or invisible character", "delete the character; such characters change how text reads in a terminal, a feed or a diff"),
        Code("KB025", "a Markdown field is too costly to render", "keep a field under the limits: fewer brackets, backticks or angle brackets, or split the text"),
        Code("KB026", "a file in entries/ is a link, a device or lies outside entries/", "replace it with a plain file inside entries/"),
        Code("KB027", "the date is not plausible", "use the date you last checked the entry, in YYYY-MM-DD form"),
        Code("KB028", "an id or alias is reserved for a page the site generates", "pick another id; index and review pages own these addresses"),
        Code("KB029", "an image from outside the KB", "images must be files of the KB itself, linked by a relative path"),
        Code("KB030", "the signature is too generic", "quote more of the message: every match must contain enough literal text to identify this error"),
        Code("KB031", "a code block touches a line of text", "leave a blank line before the ``` that opens a code block and after the one that closes it"),
    ]
}


@dataclass(frozen=True)
class Problem:
    code: str
    file: str
    line: int
    field: str
    message: str
    hint: str = ""

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered problem code {self.code}")

    def format(self) -> str:
        """``path:line: field: CODE message (hint)``, the form CI annotations parse."""
        where = f"{self.file}:{self.line}:"
        field = f" {self.field}:" if self.field else ""
        hint = self.hint or CODES[self.code].hint
        return f"{where}{field} {self.code} {self.message} ({hint})"

    def sort_key(self) -> tuple[str, int, str]:
        return (self.file, self.line, self.code)


def problem(code: str, file: str, line: int, field: str, message: str, hint: str = "") -> Problem:
    return Problem(code=code, file=file, line=max(1, line), field=field, message=message, hint=hint)
