"""Synthetic KBs for measuring: N entries that look like real ones and pass `kb check`.

Input: a size and a destination folder. Output: a KB folder (the project's
mkdocs.yml, site_src/ and templates/, a link to hooks/, the real taxonomies,
models and GPUs) whose entries/ holds N generated errors and guides. Every
entry is validated against the real pydantic models before it is written, so
a change to the schema shows up here first. Sizes follow real entries:
300–600 words, 3–6 steps with a code block each, 3–5 related links, sources.
The text is drawn from a fixed seed: the same size always gives the same files.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.build import schema  # noqa: E402

GUIDE_SHARE = 0.03  # about one guide for thirty errors, as in a grown KB

NOUNS = (
    "allocator block cache context device driver engine graph kernel layer memory model process rank request "
    "runtime scheduler sequence server shard stream tensor token weight worker buffer checkpoint batch queue "
    "library toolkit wheel container socket thread adapter prefix window"
).split()
VERBS = (
    "allocates reserves loads frees reports starts stops splits moves checks compiles launches waits copies "
    "maps resolves reads writes retries"
).split()
ADJECTIVES = (
    "free total paged quantised fused sliding pinned shared unified stale partial idle large small default "
    "recent older native remote local cached"
).split()
FILLER = "the a this that each every its your one more less first last other same".split()
EXCEPTIONS = ["RuntimeError", "ValueError", "OSError", "torch.OutOfMemoryError", "AssertionError", "ImportError"]
COMMANDS = [
    ("bash", "nvidia-smi --query-gpu=memory.total,memory.used --format=csv"),
    ("bash", "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len {n} --gpu-memory-utilization 0.{p}"),
    ("bash", "llama-server -m model.gguf -ngl {p} -c {n}"),
    ("bash", "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
    ("python", "import torch\nprint(torch.cuda.mem_get_info())\nprint(torch.cuda.memory_summary())"),
    ("python", "free, total = torch.cuda.mem_get_info()\nprint({{'free_gib': free / 2**30, 'total_gib': total / 2**30}})"),
    ("bash", "curl -s http://127.0.0.1:8000/v1/models | python -m json.tool"),
    ("python", "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(\n    \"Qwen/Qwen2.5-7B-Instruct\", torch_dtype=\"auto\", device_map=\"auto\"\n)"),
]


def _sentence(rng: random.Random, words: int) -> str:
    parts = []
    for i in range(words):
        pool = (NOUNS, VERBS, ADJECTIVES, FILLER)[i % 4]
        parts.append(rng.choice(pool))
    text = " ".join(parts)
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random, words: int) -> str:
    out, left = [], words
    while left > 0:
        n = min(left, rng.randint(9, 18))
        out.append(_sentence(rng, n))
        left -= n
    lines, line = [], ""
    for word in " ".join(out).split():  # wrap like an editor would, so line numbers mean something
        if len(line) + len(word) > 88:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + [line])


def _prose(rng: random.Random, words: int) -> str:
    """A paragraph, sometimes with the inline code and links real entries carry (about one field in seven)."""
    text = _paragraph(rng, words)
    roll = rng.random()
    if roll < 0.08:
        text += f"\nSee [the {rng.choice(NOUNS)} notes](https://docs.example.org/{rng.choice(NOUNS)}/{rng.randint(1, 999)}) for details."
    elif roll < 0.15:
        text += f"\nCheck `{rng.choice(NOUNS)}[{rng.randint(0, 7)}]` and the `{{{rng.choice(NOUNS)}}}` setting | both matter."
    return text


def _code(rng: random.Random) -> str:
    lang, text = rng.choice(COMMANDS)
    return f"```{lang}\n{text.format(n=rng.choice([4096, 8192, 16384, 32768]), p=rng.randint(10, 95))}\n```"


def _ids(size: int) -> list[str]:
    rng = random.Random(size)
    return [f"{rng.choice(NOUNS)}-{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}-{i:05d}" for i in range(size)]


def error_entry(rng: random.Random, index: int, ids: list[str], terms: dict, day: dt.date) -> dict:
    words = [rng.choice(NOUNS), rng.choice(VERBS), rng.choice(ADJECTIVES), rng.choice(NOUNS)]
    phrase = " ".join(words)
    budget = rng.randint(300, 600)
    steps = rng.randint(3, 6)
    cause_words = budget // 3
    step_words = (budget - cause_words) // steps
    others = [i for i in rng.sample(ids, 8) if i != ids[index]][: rng.randint(3, 5)]
    entry = {
        "title": f"{phrase.capitalize()} (case {index})",
        "error": f"{rng.choice(EXCEPTIONS)}: {phrase} failed with code {index} after {rng.randint(1, 99)} attempts",
        "summary": _sentence(rng, 14),
        "signatures": [f"{phrase} failed with code {index}\\b"],
        "category": rng.choice(terms["categories"]),
        "tools": rng.sample(terms["tools"], rng.randint(1, 2)),
        "platforms": rng.sample(terms["platforms"], rng.randint(1, 2)),
        "severity": rng.choice(["fatal", "error", "warning"]),
        "verified": rng.choice(["editorial", "community"]),
        "author": terms["authors"][0],
        "last_verified": day - dt.timedelta(days=rng.randint(0, 500)),
        "tags": sorted(set(rng.sample(["vram", "kv-cache", "drivers", "multi-gpu", "startup", "quantisation"], 2))),
        "cause": _prose(rng, cause_words // 2) + "\n\n" + _prose(rng, cause_words - cause_words // 2) + "\n",
        "solution": [
            {"title": _sentence(rng, 5)[:-1], "body": f"{_prose(rng, step_words)}\n\n{_code(rng)}\n"}
            for _ in range(steps)
        ],
        "related_errors": others,
        "sources": [
            {"title": f"Upstream discussion {index}-{k}", "url": f"https://github.com/example-org/engine/issues/{index * 10 + k}"}
            for k in range(rng.randint(1, 3))
        ],
    }
    schema.ErrorEntry.model_validate(entry)
    return entry


def guide_entry(rng: random.Random, index: int, ids: list[str], terms: dict, day: dt.date) -> dict:
    causes = rng.randint(3, 5)
    entry = {
        "title": f"Troubleshooting {rng.choice(NOUNS)} {rng.choice(NOUNS)} problems (guide {index})",
        "summary": _sentence(rng, 30),
        "severity": "error",
        "tools": rng.sample(terms["tools"], 2),
        "platforms": rng.sample(terms["platforms"], 1),
        "author": terms["authors"][0],
        "last_verified": day - dt.timedelta(days=rng.randint(0, 500)),
        "verified": "editorial",
        "causes": [
            {"title": _sentence(rng, 6)[:-1], "diagnose": f"{_paragraph(rng, 50)}\n\n{_code(rng)}\n", "fix": _paragraph(rng, 40) + "\n", "errors": rng.sample(ids, 2)}
            for _ in range(causes)
        ],
        "sources": [{"title": f"Reference {index}", "url": f"https://docs.example.org/guide/{index}"}],
    }
    schema.GuideEntry.model_validate(entry)
    return entry


class _Dumper(yaml.CSafeDumper):
    pass


def _str(dumper: yaml.CSafeDumper, value: str):
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def write_entries(dest: Path, size: int, day: dt.date | None = None) -> dict[str, int]:
    """Write ``size`` entries (errors and guides) into ``dest``/entries; return the count per kind."""
    day = day or dt.date.today() - dt.timedelta(days=1)
    entries = dest / "entries"
    shutil.rmtree(entries, ignore_errors=True)
    for name in ("errors", "guides"):
        (entries / name).mkdir(parents=True)
    for name in list(schema.TAXONOMIES) + ["schema.json"]:
        shutil.copy(ROOT / "entries" / (name if name.endswith(".json") else f"{name}.yaml"), entries)
    for name in ("models", "gpus"):  # the calculator's data, as on the real site
        shutil.copytree(ROOT / "entries" / name, entries / name)
    terms = {name: sorted(yaml.safe_load((entries / f"{name}.yaml").read_text(encoding="utf-8"))) for name in schema.TAXONOMIES}
    guides = max(1, round(size * GUIDE_SHARE))
    ids = _ids(size - guides)
    rng = random.Random(size * 7919)
    for index, entry_id in enumerate(ids):
        data = error_entry(rng, index, ids, terms, day)
        _dump(entries / "errors" / f"{entry_id}.yaml", data)
    for index in range(guides):
        data = guide_entry(rng, index, ids, terms, day)
        _dump(entries / "guides" / f"troubleshooting-{index:04d}.yaml", data)
    return {"errors": len(ids), "guides": guides}


def _dump(path: Path, data: dict) -> None:
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    path.write_text("# yaml-language-server: $schema=../schema.json\n" + text, encoding="utf-8")


def make_kb(dest: Path, size: int) -> Path:
    """A KB folder at ``dest`` with the project's current configuration and ``size`` synthetic entries.

    The configuration, pages and templates are copied afresh every time; the
    entries are regenerated only when the size, this generator or the date
    (their last_verified dates count back from it) changed.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("mkdocs.yml", "site_src", "templates", "CONTRIBUTING.md"):
        src, target = ROOT / name, dest / name
        if not src.exists():
            continue
        if target.is_dir():
            shutil.rmtree(target)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, target)
    if not (dest / "hooks").is_symlink():
        (dest / "hooks").symlink_to(ROOT / "hooks")
    marker = dest / ".generated"
    stamp = f"{size} {hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]} {dt.date.today()}"
    if not (marker.is_file() and marker.read_text() == stamp):
        write_entries(dest, size)
        marker.write_text(stamp)
    return dest
