"""Log normalisation, the first half of the matcher: a pasted log → one flat line.

Input: whatever a visitor pastes (a terminal copy with colour codes, a Docker
or Kubernetes log, a traceback quoted in an issue, a JSON error body, an
HTML-escaped snippet). Output: ``Normalised(lines, flat)``: the cleaned lines
and the same text with every whitespace run collapsed to one space, which is
what signatures run on.

``site_src/javascripts/matcher.mjs`` implements the same steps with the same
regular expressions; tests/matcher_cases.json holds the cases both must pass.
Every pattern here is written so that Python (with re.ASCII) and JavaScript
(without the u flag) read it the same way: ASCII \\w and \\d, no \\s.

Numbers are kept: signatures read sizes, compute capabilities and exit codes.
The volatile numbers that carry no meaning (timestamps, pids, ranks, source
line numbers of log prefixes, addresses, hashes) go with the prefixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_INPUT = 262_144  # characters kept from a paste: the head and the tail, where errors live
ROUGH_CUT = 4 * MAX_INPUT  # first, cheap cut, before any regular expression runs
WRAP_MIN = 60  # shorter lines are never treated as hard-wrapped

_A = re.ASCII
ASTRAL = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")
CONTROL = re.compile("[\x00-\x06\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
ENTITY = re.compile(r"&(lt|gt|quot|apos|amp|nbsp|#39|#x27|#34|#x22|#47|#x2f|#92|#x5c);", re.I | _A)
ENTITIES = {"lt": "<", "gt": ">", "quot": '"', "apos": "'", "amp": "&", "nbsp": " ", "#39": "'", "#x27": "'",
            "#34": '"', "#x22": '"', "#47": "/", "#x2f": "/", "#92": "\\", "#x5c": "\\"}
# Escapes of a Python repr or a JSON string, and Markdown's \_ and \* (kept in forum pastes). \n, \r and \t count only when a
# lowercase letter or digit does not follow, so C:\new\table stays a path.
ESCAPE = re.compile(r"""\\(?:u([0-9a-fA-F]{4})|(x1[bB]|033|e(?=\[))|([nrt])(?![a-z0-9_])|(["'\\/_*]))""", _A)
# A Windows path from its drive letter: there "\_" is a folder separator before a name such as _run.py or
# __init__.py, not Markdown's escaped underscore, so it becomes "/_" before the escapes are undone.
WINDOWS_PATH = re.compile(r"""(?<![A-Za-z0-9])[A-Za-z]:\\[^\s"'<>|]{1,400}""", _A)
PATH_UNDERSCORE = re.compile(r"(?<!\\)\\_")
ANSI = re.compile(r"(?:\x1b|\^\[)\[[0-9;?]{0,32}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,256}(?:\x07|\x1b\\)?|[\x07\x1b]|\[(?:[0-9]{1,3};){0,8}[0-9]{1,3}m", _A)
NEWLINE = re.compile(r"\r\n|\r|\n")
WORD_END = re.compile(r"[A-Za-z0-9_]$", _A)
WORD_START = re.compile(r"^[A-Za-z0-9_]", _A)
PREFIX = re.compile(
    "^(?:"
    + "|".join([
        r"[ \t]{0,8}(?:> ?){1,5}",  # quoted in an issue or e-mail
        r"(?:[A-Za-z0-9][\w.-]{0,62})?[ \t]{1,24}\|[ \t]?",  # docker compose: "vllm-1  | "
        r"\[pod/[\w./-]{1,120}\][ \t]?",  # kubectl logs --prefix
        r"\((?:[A-Za-z_][\w.-]{0,40} )?pid=\d{1,10}(?:, ip=[0-9a-fA-F.:]{3,45})?\)[ \t]?",  # vLLM / Ray process
        r"\[(?:rank|RANK|Rank) ?\d{1,5}\]:?[ \t]?",  # torch.distributed
        r"\[?\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?(?: [A-Z]{2}\d{1,3}){0,3}\]?:?[ \t]?",
        r"\[\d{2}/\d{2}/\d{4}-\d{2}:\d{2}:\d{2}\][ \t]?",
        r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})? (?:\[[\w.-]{1,60}:\d{1,6}\[?\]\]?|[\w.-]{1,60}:\d{1,6}\])[ \t]?",
        r"[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{6}[ \t]{1,8}\d{1,10} [\w.-]{1,60}:\d{1,6}\][ \t]?",  # glog
        r"\[ {0,8}\d{1,8}\.\d{3,9}\][ \t]?",  # dmesg
        r"\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d{2}:\d{2}:\d{2} \d{4}\][ \t]?",  # dmesg -T
        r"[A-Z][a-z]{2} [ 0-9]\d \d{2}:\d{2}:\d{2} [\w.-]{1,64} [\w./-]{1,64}(?:\[\d{1,10}\])?:[ \t]?",  # syslog
        r"time=[^ \t]{10,40} level=[A-Z]{3,8} source=[\w./-]{1,60}:\d{1,6}[ \t]",  # ollama server
        "[\u2502\u2503][ \t]?",  # rich tracebacks: the left border
    ])
    + ")",
    _A,
)
BOX_END = re.compile("[ \t]{0,80}[\u2502\u2503][ \t]*$")
# Rich's log handler prints the record's source file in a right-hand column ("...ERROR: CUDA   batch_handler.py:574")
# and wraps the message below it: without the column, the wrapped message reads as one again.
RICH_SOURCE = re.compile(r"[ \t]{2,80}[A-Za-z_][\w.-]{0,60}\.py:\d{1,6}[ \t]*$", _A)
# A path of at least three parts, where a path can start (not inside a URL).
PATH = re.compile(r"""(?<![^ \t"'(=\[,])(?:[A-Za-z]:)?(?:[\\/][\w.@+~-]{1,128}){3,64}""", _A)
PACKAGES = re.compile(r"^.{0,4000}?[\\/](?:site|dist)-packages[\\/]", _A)
ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{9,16}\b", _A)  # 64-bit addresses; 8-digit codes (Windows NTSTATUS exit codes) stay
HASH = re.compile(r"\b[0-9a-fA-F]{32,128}\b", _A)
# Lines that carry no words of the log: Python 3.11+ caret and tilde markers, Markdown
# fences and the <details> wrapping of an issue form.
NOISE = re.compile(r"^[ \t]*(?:[~^]{3,}[ \t~^]*|`{3,}[\w-]{0,20}|</?(?:details|pre|code)>|<summary>.{0,200}</summary>)[ \t]*$", re.I | _A)
# The line a shell prints when a child dies of a signal ("Killed", "Segmentation fault (core dumped)",
# "zsh: killed     python app.py", "./run.sh: line 3:  4242 Killed  python app.py", or localised, as
# "\u975e\u6cd5\u6307\u4ee4 (\u6838\u5fc3\u5df2\u8f6c\u50a8)") has too few words for a signature to name safely;
# normalisation names the signal after it, and signatures match that. Markdown bold around the line
# ("**Killed**", as pasted into an issue) does not hide it.
JOB = re.compile(
    "^[ \t]{0,8}(?:\\*\\*|__)?(?:(?:zsh|bash|sh): |.{0,80}line \\d{1,6}: {1,4}\\d{1,10} )?"
    "(killed|illegal instruction|segmentation fault|bus error|\u975e\u6cd5\u6307\u4ee4|\u6bb5\u9519\u8bef|\u5df2\u6740\u6b7b)"
    "(?: \\((?:core dumped|\u6838\u5fc3\u5df2\u8f6c\u50a8)\\))?(?:\\*\\*|__)?(?:[ \t]{2,}[^ \t].{0,200})?[ \t]*$",
    re.I | _A,
)
SIGNALS = {"killed": "SIGKILL", "illegal instruction": "SIGILL", "segmentation fault": "SIGSEGV", "bus error": "SIGBUS",
           "\u975e\u6cd5\u6307\u4ee4": "SIGILL", "\u6bb5\u9519\u8bef": "SIGSEGV", "\u5df2\u6740\u6b7b": "SIGKILL"}
SPACE = re.compile("[ \t\n\r\f\v\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")


@dataclass(frozen=True)
class Normalised:
    lines: list[str]
    flat: str


def bound(text: str) -> str:
    """At most MAX_INPUT characters: the head and the tail of a long paste."""
    if len(text) > ROUGH_CUT:
        text = text[: ROUGH_CUT // 2] + "\n" + text[-ROUGH_CUT // 2 :]
    text = ASTRAL.sub("", text)  # emoji and other astral characters: also keeps offsets equal in JavaScript
    if len(text) > MAX_INPUT:
        text = text[: MAX_INPUT // 2] + "\n" + text[-MAX_INPUT // 2 :]
    return text


def _escape(match: re.Match) -> str:
    code, esc, letter, char = match.groups()
    if code is not None:
        value = int(code, 16)
        if value == 0x1B:
            return "\x1b"
        if value == 0x0A:
            return "\n"
        return chr(value) if value >= 0x20 and not 0xD800 <= value <= 0xDFFF and value != 0xFFFD else " "
    if esc is not None:
        return "\x1b"
    if letter is not None:
        return " " if letter == "t" else "\n"
    return char


def decode(text: str) -> str:
    """Undo what HTML pages, Python reprs, JSON bodies and terminals add to a message."""
    text = CONTROL.sub(" ", text)
    text = ENTITY.sub(lambda m: ENTITIES[m.group(1).lower()], text)
    text = WINDOWS_PATH.sub(lambda m: PATH_UNDERSCORE.sub("/_", m.group(0)), text)
    text = ESCAPE.sub(_escape, text)
    return ANSI.sub("", text)


def unwrap(lines: list[str]) -> list[str]:
    """Join lines a terminal hard-wrapped at a fixed width, mid-word."""
    width = max((len(line) for line in lines), default=0)
    if width < WRAP_MIN:
        return lines
    # a break inside a word, before a line that does not start a new log record (with a prefix)
    cut = [
        len(line) == width and bool(WORD_END.search(line)) and bool(WORD_START.search(after)) and not PREFIX.search(after)
        for line, after in zip(lines, lines[1:])
    ]
    if sum(cut) < 2 or len({line for line, c in zip(lines, cut) if c}) < 2:
        return lines
    out = [lines[0]]
    for i, line in enumerate(lines[1:]):
        if cut[i]:
            out[-1] += line
        else:
            out.append(line)
    return out


def strip_prefixes(line: str) -> str:
    for _ in range(4):
        shorter = PREFIX.sub("", line, count=1)
        if shorter == line:
            break
        line = shorter
    return RICH_SOURCE.sub("", BOX_END.sub("", line))


def _short_path(match: re.Match) -> str:
    path = match.group(0).replace("\\", "/")
    inside = PACKAGES.sub("", path, count=1)
    if inside != path:
        return "\u2026/" + inside
    parts = path.split("/")
    return "\u2026/" + "/".join(parts[-3:]) if len(parts) > 4 else path


def name_signal(line: str) -> str:
    """A shell's report of a child killed by a signal gets the signal's name: "Killed (signal SIGKILL)"."""
    found = JOB.match(line)
    if not found:
        return line
    return line.rstrip(" \t") + " (signal " + SIGNALS[found.group(1).lower()] + ")"


def tidy(line: str) -> str:
    """Shorten paths to the part that names the package and module; hide addresses and hashes."""
    line = PATH.sub(_short_path, line)
    line = ADDRESS.sub("0x\u2026", line)
    return HASH.sub("\u2026", line)


def normalise(text: str) -> Normalised:
    text = decode(bound(text))
    lines = [tidy(name_signal(strip_prefixes(line))) for line in unwrap(NEWLINE.split(text))]
    lines = [line for line in lines if line.strip(" \t") and not NOISE.match(line)]
    flat = SPACE.sub(" ", " ".join(lines)).strip(" ")
    return Normalised(lines, flat)
