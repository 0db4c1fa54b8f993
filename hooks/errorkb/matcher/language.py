"""The signature language: which regular expressions an entry may carry, checked once.

Input: a pattern from an entry's ``signatures`` or ``context``. Output: the
reason it is refused (``check``), or, for an accepted one, the literal
strings one of which every match must contain (``factors``).

Signatures run in ``kb check``, ``kb match``, the build and every visitor's
browser, so they are written in one small language that both engines accept
and run in linear time: the RE2 syntax of google-re2 (Python) and re2js (the
browser), minus what either reads differently (inline flags, named groups,
Unicode classes, \\Q...\\E) and minus what would let one entry claim every log
(too few literal characters, unbounded wildcards). The structure is read with
Python's own regex parser, which agrees with RE2 on this subset.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import warnings
from re import _constants as sre
from re import _parser as sre_parse

import re2

MIN_LITERALS = {"signatures": 10, "weak_signatures": 10, "context": 4, "unless": 4, "wrapper_when": 4, "benign_when": 4}  # literal characters every match must contain
PATTERN_FIELDS = tuple(MIN_LITERALS)  # the entry fields that hold patterns, each checked by check()
MIN_FACTOR = 4  # the longest literal run every match must contain, at least
MAX_REPEAT = 200  # the widest gap a signature may bridge
MAX_WEIGHT = 250  # counted repeats, weighted by what they repeat: RE2's automaton grows with it, and so does its time
MAX_LENGTH = 300

_ESCAPE = re.compile(r"\\(.)", re.S)
_ALLOWED_ESCAPES = set("dDwWsSbBntrf") | {c for c in map(chr, range(33, 127)) if not c.isalnum()}
_GROUP = re.compile(r"(?<!\\)\((?!\?:)\?")  # any (?...) other than (?:...)
_SINGLE = {sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY, sre.CATEGORY}
_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT}
_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
_OPTIONS.log_errors = False


def _escapes(pattern: str) -> str | None:
    """Only the escapes both engines read alike: \\d \\w \\s \\b (and negations), \\n \\t \\r \\f, escaped punctuation."""
    index = 0
    while True:
        found = pattern.find("\\", index)
        if found == -1:
            return None
        if found + 1 >= len(pattern):
            return "a trailing backslash"
        char = pattern[found + 1]
        if char not in _ALLOWED_ESCAPES:
            return f"the escape \\{char} (only \\d \\w \\s \\b, their capitals, \\n \\t \\r \\f and escaped punctuation are allowed)"
        index = found + 2


def _is_wide(op, arg) -> bool:
    if op in (sre.ANY, sre.NOT_LITERAL):
        return True
    return op == sre.IN and any(o == sre.NEGATE for o, _ in arg)


def _scan(pattern, inside_repeat: bool) -> str | None:
    for op, arg in pattern:
        if op in _REPEATS:
            low, high, body = arg
            many = high == sre.MAXREPEAT
            if inside_repeat and (many or high > 1):
                return "a repeat inside a repeat (write the inner part out, or drop one of the repeats)"
            if many and len(body) == 1 and _is_wide(*body[0]):
                return "an unbounded wildcard such as .* or [^x]+ (use a bounded repeat like [^\\n]{0,120})"
            if many and not (len(body) == 1 and body[0][0] in _SINGLE):
                return "an unbounded repeat of a group (bound it, e.g. {0,5})"
            if not many and high > MAX_REPEAT:
                return f"a repeat bound over {MAX_REPEAT}"
            problem = _scan(body, inside_repeat or many or high > 1)
        elif op == sre.SUBPATTERN:
            problem = _scan(arg[-1], inside_repeat)
        elif op == sre.BRANCH:
            problem = next((p for p in (_scan(b, inside_repeat) for b in arg[1]) if p), None)
        elif op in (sre.ASSERT, sre.ASSERT_NOT, sre.GROUPREF, sre.GROUPREF_EXISTS, sre.ATOMIC_GROUP, sre.POSSESSIVE_REPEAT):
            return "lookaround, backreferences, atomic groups and possessive repeats are not in the signature language"
        else:
            problem = None
        if problem:
            return problem
    return None


def _size(pattern) -> int:
    """About how many automaton states a pattern needs."""
    total = 0
    for op, arg in pattern:
        if op in _REPEATS:
            high = arg[0] if arg[1] == sre.MAXREPEAT else arg[1]
            total += max(1, high) * max(1, _size(arg[2]))
        elif op == sre.SUBPATTERN:
            total += _size(arg[-1])
        elif op == sre.BRANCH:
            total += sum(_size(b) for b in arg[1])
        else:
            total += 1
    return total


def _weight(pattern) -> int:
    """The states spent on counted repeats: each repeat's bound times the size of what it repeats."""
    total = 0
    for op, arg in pattern:
        if op in _REPEATS and arg[1] != sre.MAXREPEAT:
            total += arg[1] * max(1, _size(arg[2]))
        elif op in _REPEATS:
            total += _weight(arg[2])
        elif op == sre.SUBPATTERN:
            total += _weight(arg[-1])
        elif op == sre.BRANCH:
            total += sum(_weight(b) for b in arg[1])
    return total


def _lower(code: int) -> str | None:
    """The literal as the prefilter compares it: ASCII folded to lower case; None for anything else."""
    return chr(code).lower() if code < 128 else None


def _min_literals(pattern) -> int:
    total = 0
    for op, arg in pattern:
        if op == sre.LITERAL:
            total += 1
        elif op == sre.SUBPATTERN:
            total += _min_literals(arg[-1])
        elif op == sre.BRANCH:
            total += min(_min_literals(b) for b in arg[1])
        elif op in _REPEATS:
            total += arg[0] * _min_literals(arg[2])
    return total


def _best(options: list[list[str]]) -> list[str] | None:
    """Of several sets of required strings, the one whose shortest string is longest."""
    options = [o for o in options if o]
    return max(options, key=lambda o: (min(map(len, o)), -len(o)), default=None)


def _factors(pattern) -> list[str] | None:
    """Strings (lower case) one of which every match of ``pattern`` contains; None when there is none to rely on."""
    options: list[list[str]] = []
    run = ""
    for op, arg in pattern:
        char = _lower(arg) if op == sre.LITERAL else None
        if char is not None:
            run += char
            continue
        if run:
            options.append([run])
            run = ""
        if op == sre.SUBPATTERN:
            options.append(_factors(arg[-1]) or [])
        elif op == sre.BRANCH:
            each = [_factors(b) for b in arg[1]]
            if all(each):
                options.append(sorted({s for f in each for s in f}))
        elif op in _REPEATS and arg[0] >= 1:
            options.append(_factors(arg[2]) or [])
    if run:
        options.append([run])
    return _best(options)


@functools.lru_cache(maxsize=None)
def parse(pattern: str):
    # Cached: the loader's check, the matcher's index and the related index all parse every
    # signature; the parsed tree is only read, never changed.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" and the like: the checks below decide
        return sre_parse.parse(pattern, re.IGNORECASE)


def check(pattern: str, kind: str = "signatures") -> str | None:
    """Why ``pattern`` may not be a signature (or context pattern), or None when it may."""
    if len(pattern) > MAX_LENGTH:
        return f"longer than {MAX_LENGTH} characters"
    reason = _escapes(pattern)
    if reason:
        return f"not in the signature language: {reason}"
    if not pattern.isascii():
        return ("not in the signature language: a character outside ASCII (the two engines fold case alike only for "
                "ASCII; quote the ASCII part of the message, and stand for other text with a class such as [^ -~\\s])")
    if _GROUP.search(pattern):
        return "not in the signature language: only (?:...) groups; no inline flags, named groups or lookaround"
    try:
        parsed = parse(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        return f"not a valid regular expression: {exc}"
    reason = _scan(parsed, False)
    if reason:
        return f"unsafe pattern: {reason}"
    if _weight(parsed) > MAX_WEIGHT:
        return f"unsafe pattern: its counted repeats add up to {_weight(parsed)} (at most {MAX_WEIGHT}; shorten the gaps such as [^\\n]{{0,200}})"
    try:
        compile(pattern)
    except re2.error as exc:
        message = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return f"RE2 does not accept it: {message}"
    compiled = compile(pattern)
    if compiled.search("") is not None or compiled.fullmatch(" ") is not None:
        return "the pattern matches an empty or blank log"
    need = MIN_LITERALS[kind]
    have = _min_literals(parsed)
    if have < need:
        return f"too generic: a match may contain only {have} literal characters, at least {need} are needed (quote more of the message)"
    factors = _factors(parsed)
    if not factors or min(map(len, factors)) < MIN_FACTOR:
        return f"too generic: every match must contain a literal run of at least {MIN_FACTOR} characters"
    return None


def factors(pattern: str) -> list[str]:
    """The prefilter of an accepted pattern: the log (ASCII lower-cased) must contain one of these for it to match."""
    return list(_factors_of(pattern))


@functools.lru_cache(maxsize=None)
def _factors_of(pattern: str) -> tuple[str, ...]:
    # A pure function of the text, asked for by the matcher's index and the related index alike
    # (and again at every save under `mkdocs serve`); parsing is most of its cost.
    return tuple(_factors(parse(pattern)) or [])


@functools.lru_cache(maxsize=4096)
def compile(pattern: str) -> re2._Regexp:  # noqa: A001 - the module's one compiler
    # Cached: the loader's check compiles every signature more than once; a compiled pattern is only read.
    return re2.compile(pattern, _OPTIONS)


_BROWSER_CHECK = """
import { RE2JS } from "re2js";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = {};
for (const p of JSON.parse(input)) {
  try { RE2JS.compile(p, RE2JS.CASE_INSENSITIVE); } catch (e) { out[p] = String(e.message || e); }
}
process.stdout.write(JSON.stringify(out));
"""


def browser_refusals(patterns: list[str], root) -> dict[str, str] | None:
    """The patterns re2js (the browser's engine) refuses, with its reason; None when Node.js or re2js is not installed."""
    node = shutil.which("node")
    if not patterns:
        return {}
    if node is None or not (root / "node_modules" / "re2js").is_dir():
        return None
    result = subprocess.run([node, "--input-type=module", "-e", _BROWSER_CHECK], cwd=root, input=json.dumps(patterns),
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"re2js check failed: {result.stderr.strip()[:500]}")
    return json.loads(result.stdout)
