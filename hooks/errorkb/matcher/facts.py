"""What a log says about the setup it came from: engine and version, GPU, memory figures.

Input: the flat text of a normalised log. Output: ``Fact`` records (kind,
label, value, span), the first of each kind, in the order of FACTS.

The table is the one copy: it travels to the browser in api/v1/matcher.json
and matcher.mjs runs the same patterns with the same engine (RE2), so the
paste box and `kb match` report the same facts. A value is a template:
``{1}`` is the pattern's first group.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from errorkb.matcher import language

# (kind, label, pattern, value); a kind is reported once, from the first pattern that finds it.
FACTS: list[tuple[str, str, str, str]] = [
    # "vLLM API server version" up to 0.14, "vLLM server version X, serving model Y" or a logo from 0.15
    ("vllm", "vLLM", r"vllm (?:api )?server version ([0-9]+\.[0-9]+[\w.+-]{0,24})", "{1}"),
    ("vllm", "vLLM", r"initializing a v1 llm engine \(v([0-9]+\.[0-9]+[\w.+-]{0,24})\)", "{1}"),
    ("vllm", "vLLM", r"\bvllm(?:==| version:? |: )([0-9]+\.[0-9]+[\w.+-]{0,24})", "{1}"),
    ("vllm", "vLLM", r"\x{2580}\x{2584}\x{2580} \x{2588} version ([0-9]+\.[0-9]+[\w.+-]{0,24})", "{1}"),
    ("llamacpp", "llama.cpp", r"\bbuild: ([0-9]{3,6}) \(([0-9a-f]{6,12})\)", "b{1} ({2})"),
    ("llamacpp", "llama.cpp", r"\bversion: ([0-9]{3,6}) \(([0-9a-f]{6,12})\)", "b{1} ({2})"),
    ("ollama", "Ollama", r"\bollama version (?:is )?([0-9]+\.[0-9]+\.[0-9]+[\w.+-]{0,16})", "{1}"),
    ("ollama", "Ollama", r"listening on \S{1,80} \(version ([0-9]+\.[0-9]+\.[0-9]+[\w.+-]{0,16})\)", "{1}"),
    ("sglang", "SGLang", r"\bsglang(?:==| version:? |: )([0-9]+\.[0-9]+[\w.+-]{0,24})", "{1}"),
    ("pytorch", "PyTorch", r"\b(?:pytorch version|torch(?:==| version)):? ([0-9]+\.[0-9]+\.[0-9]+[\w.+-]{0,24})", "{1}"),
    ("transformers", "Transformers", r"\btransformers(?:==| version:? )([0-9]+\.[0-9]+\.[0-9]+[\w.+-]{0,16})", "{1}"),
    ("gpu", "GPU", r"device [0-9]{1,2}: ((?:nvidia|amd|radeon|intel)[^,]{2,48}), compute capability ([0-9]{1,2}\.[0-9])", "{1} (compute capability {2})"),
    # Ollama 0.12.4 and later: name=CUDA0 description="NVIDIA GeForce RTX 4090" ... total="24.0 GiB"
    ("gpu", "GPU", r"\bdescription=\"((?:nvidia|amd|radeon|intel)[^\"]{2,48})\"[^\n]{0,200}? total=\"([0-9.]{1,8} ?[gmt]ib)\"", "{1}, {2}"),
    ("gpu", "GPU", r"\bname=\"?((?:nvidia|amd|radeon)[^\"=]{2,48}?)\"? total=\"?([0-9.]{1,8} ?[gm]ib)", "{1}, {2}"),
    ("gpu", "GPU", r"\b(nvidia (?:geforce |rtx |quadro |tesla )?[a-z]{0,4} ?[0-9]{2,4}[a-z0-9 -]{0,16}?)(?: with | \(|, | has |$)", "{1}"),
    ("gfx", "AMD target", r"\b(gfx[0-9]{3,4}[a-f0-9]?)\b", "{1}"),
    ("capacity", "GPU memory", r"gpu [0-9]{1,2} has a total capac?ity of ([0-9.]{1,8} [gmk]ib) of which ([0-9.]{1,8} [gmk]ib) is free", "{1} in all, {2} free"),
    ("capacity", "GPU memory", r"free memory on device (?:[a-z]{2,8}:[0-9]{1,2} )?\(([0-9.]{1,8})/([0-9.]{1,8}) gib\)", "{2} GiB in all, {1} GiB free"),
    ("request", "Allocation that failed", r"tried to allocate ([0-9.]{1,8} [gmk]ib)", "{1}"),
    ("driver", "Driver", r"\bdriver version:? ?([0-9]{3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?)", "{1}"),
    ("cuda", "CUDA", r"\bcuda version:? ?([0-9]{1,2}\.[0-9])", "{1}"),
    ("weights", "Weights loaded", r"model (?:weights took|loading took) ([0-9.]{1,8} gi?b)", "{1}"),
    ("kv", "KV cache available", r"available kv cache memory: ([0-9.]{1,8} gib)", "{1}"),
    ("kv", "KV cache", r"\bkv (?:self )?(?:buffer|cache) size = +([0-9.]{1,10} mib)", "{1}"),
    ("blocks", "GPU blocks", r"# gpu blocks: ([0-9]{1,9})", "{1}"),
    ("context", "Context", r"\bn_ctx(?:_per_seq)? += ([0-9]{3,8})", "{1} tokens"),
    ("context", "Context", r"max_model_len[=:] ?([0-9]{3,8})", "{1} tokens"),
]


@dataclass(frozen=True)
class Fact:
    kind: str
    label: str
    value: str
    start: int
    end: int

    def to_json(self) -> dict:
        return {"kind": self.kind, "label": self.label, "value": self.value, "start": self.start, "end": self.end}


def facts_index() -> list[list[str]]:
    return [list(row) for row in FACTS]


def _fill(template: str, match) -> str:
    return re.sub(r"\{(\d)\}", lambda m: match.group(int(m.group(1))) or "", template)


def compile_facts(table: list[list[str]]) -> list[tuple[str, str, object, str]]:
    return [(kind, label, language.compile(pattern), value) for kind, label, pattern, value in table]


def read_facts(flat: str, compiled) -> list[Fact]:
    found: dict[str, Fact] = {}
    for kind, label, regex, value in compiled:
        if kind in found:
            continue
        match = regex.search(flat)
        if match:
            found[kind] = Fact(kind, label, _fill(value, match), match.start(), match.end())
    return list(found.values())


_SPEC = re.compile(r"^\s*(>=|<=|==|!=|~=|>|<|=)?\s*([0-9][0-9A-Za-z.*+-]*)\s*$")


def _numbers(version: str) -> list[int]:
    return [int(p) for p in re.findall(r"[0-9]+", version.split("+")[0])[:4]]


def version_in(spec: str, version: str) -> bool | None:
    """Whether ``version`` satisfies every comma-separated clause of ``spec`` (">=0.6,<0.30"); None when unreadable."""
    have = _numbers(version)
    if not have:
        return None
    for clause in spec.split(","):
        match = _SPEC.match(clause)
        want = _numbers(match.group(2)) if match else []
        if not want:
            return None
        a = have[: len(want)] if "*" in match.group(2) else have + [0] * (len(want) - len(have))
        b = want + [0] * (len(a) - len(want))
        cmp = (a > b) - (a < b)
        op = match.group(1) or "=="
        ok = {">=": cmp >= 0, "~=": cmp >= 0, "<=": cmp <= 0, ">": cmp > 0, "<": cmp < 0, "==": cmp == 0, "=": cmp == 0, "!=": cmp != 0}[op]
        if not ok:
            return False
    return True
