"""A KB of N error entries for measuring index sizes at scale: the real entries plus generated ones.

Each generated entry copies a real one (so it has the real length and
structure) and gets its own title, its own identifiers and a paragraph of
words drawn from the KB's vocabulary with a Zipf-like skew, so the set of
distinct words grows with N as it would with real content. Not published:
only `make eval` uses it, in a temporary folder.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import yaml

SYLLABLES = ["ka", "ro", "mi", "te", "zu", "lo", "pa", "ne", "shi", "gu", "va", "do", "ri", "xe", "bo"]


def _vocabulary(entries: list[dict]) -> list[str]:
    words: dict[str, int] = {}
    for data in entries:
        for word in re.findall(r"[A-Za-z][A-Za-z_-]{2,}", yaml.safe_dump(data)):
            words[word.lower()] = words.get(word.lower(), 0) + 1
    return sorted(words, key=lambda w: -words[w])


def _identifier(rng: random.Random) -> str:
    name = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
    style = rng.randrange(3)
    if style == 0:
        return f"{name.upper()}_ERROR_{rng.randint(1, 999)}"
    if style == 1:
        return "cudaError" + name.capitalize()
    return f"--{name}-{rng.choice(['size', 'limit', 'mode'])}"


def write_kb(root: Path, dest: Path, count: int, seed: int = 1) -> Path:
    """A KB folder at ``dest`` with every real entry plus generated errors up to ``count`` errors."""
    from conftest import make_kb  # tests/ is on sys.path when eval runs

    entries_dir = dest.parent / "entries-synthetic"
    shutil.rmtree(entries_dir, ignore_errors=True)
    shutil.copytree(root / "entries", entries_dir)
    real = [(p.stem, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in sorted((root / "entries" / "errors").glob("*.yaml"))]
    rng = random.Random(seed)
    vocabulary = _vocabulary([data for _, data in real])
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    for number in range(max(0, count - len(real))):
        source_id, data = real[number % len(real)]
        data = dict(data)
        made = [_identifier(rng) for _ in range(3)]
        new_words = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(4)]
        words = rng.choices(vocabulary, weights=weights, k=120) + new_words
        rng.shuffle(words)
        data["title"] = f"{data['title'][:150]} ({made[0]})"
        data["error"] = f"{data['error']} [{made[0]}]"
        data["cause"] = data["cause"] + "\n\n" + " ".join(words) + ". Also reported as " + ", ".join(f"`{m}`" for m in made) + ".\n"
        data["aliases"] = []
        data.pop("summary", None)
        (entries_dir / "errors" / f"{source_id}-s{number}.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    shutil.rmtree(dest, ignore_errors=True)
    return make_kb(dest, entries_dir)
