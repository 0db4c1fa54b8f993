"""The plain-prose path of markup.parse and of the safety check against Python-Markdown itself.

``markup.plain_tree`` builds the tree of a field made only of paragraphs, code
spans, simple links and fenced code, without Python-Markdown; everything else
goes to Python-Markdown. Whenever it answers, the answer must be the tree
Python-Markdown gives: checked on every Markdown field of the real KB and of a
generated one, and on random text built from the characters Markdown treats
specially. The safety check takes the links of such a field from the same
tree; they must be the links the full renderer finds.
"""

from __future__ import annotations

import random
import sys

import markdown
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from errorkb.build import markup, safety

sys.path.insert(0, str(ROOT / "bench"))
import synth  # noqa: E402

_SLOW = markdown.Markdown(
    extensions=["tables", "pymdownx.highlight", "pymdownx.superfences"],
    extension_configs={"pymdownx.highlight": {"use_pygments": False}},
)


def slow_html(text: str) -> str:
    return _SLOW.reset().convert(text)


def slow_tree(text: str) -> markup.Node:
    return markup.tree_of_html(slow_html(text))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _fields(folder) -> list[str]:
    out = []
    for path in sorted(folder.glob("*/*.yaml")):
        out += list(_strings(yaml.safe_load(path.read_text(encoding="utf-8"))))
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> list[str]:
    kb = tmp_path_factory.mktemp("synth") / "entries"
    synth.write_entries(kb, 150)
    return _fields(kb)


def _check(fields: list[str]) -> int:
    taken = 0
    for text in fields:
        tree = markup.plain_tree(text)
        if tree is None:
            continue
        taken += 1
        assert tree == slow_tree(text), text
        assert safety._rendered(text).urls == safety._rendered(text, plain=False).urls, text
    return taken


def test_the_real_kb_reads_the_same_either_way():
    fields = _fields(ROOT / "entries")
    taken = _check(fields)
    assert len(fields) > 2000 and taken > len(fields) // 2  # the path is taken for most fields, so this checks something


def test_generated_entries_read_the_same_either_way(generated):
    taken = _check(generated)
    assert taken > len(generated) // 2


_PIECES = [
    "word", "Words here", "x", "(see", "note)", "'quoted'", '"q"', "`code`", "`a|b{c}`", "` spaced `", "``double``",
    "[link](https://example.org/a)", "[two words](https://example.org/a_b#c)", "![img](https://example.org/i.png)",
    "[ref][r]", "[r]: https://example.org", "[x](javascript:alert)", "[x](<https://a.b>)", '[t](https://a.b "title")',
    "*em*", "_em_", "snake_case", "**b**", "a|b", "x | y", "| edge |", ":-|-:", "<b>", "&amp;", "&", "#", "# Head", "- item", "1. item", "2) x",
    "> quote", "    indented", "\t", "  ", "---", "===", "~~~", "```", "```bash", "```python title=x", "{: .c}", "{x}",
    "\\", "\\*", "!", "^", "1", "café", "\u00a0", "\u2028", ":",
]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from([" ", "", "\n", "\n\n", " \n"])), max_size=14))
def test_random_markdown_reads_the_same_either_way(parts):
    text = "".join(piece + sep for piece, sep in parts)
    tree = markup.plain_tree(text)
    if tree is not None:
        assert tree == slow_tree(text)
        assert safety._rendered(text).urls == safety._rendered(text, plain=False).urls


def test_random_fields_with_fences_read_the_same_either_way():
    rng = random.Random(7)
    taken = 0
    for _ in range(1000):
        blocks = []
        for _ in range(rng.randint(1, 4)):
            roll = rng.random()
            if roll < 0.3:
                body = "\n".join(rng.choice(["nvidia-smi", "  indented <a> & b", "x = {'k': 1}", "", "``` inner", "  "])
                                 for _ in range(rng.randint(1, 4)))
                blocks.append(f"```{rng.choice(['', 'bash', 'text', 'c++'])}\n{body}\n```")
            else:
                blocks.append("\n".join(" ".join(rng.choice(_PIECES[:12]) for _ in range(rng.randint(1, 6)))
                                        for _ in range(rng.randint(1, 3))))
        text = rng.choice(["\n\n", "\n", "\n\n\n"]).join(blocks) + rng.choice(["", "\n"])
        tree = markup.plain_tree(text)
        if tree is not None:
            taken += 1
            assert tree == slow_tree(text), text
    assert taken > 80


@pytest.mark.parametrize("text", [
    "- a list item", "1. first", "# A heading", "Some *emphasis*", "Some __strong__", "A | table\n--- | ---",
    "Raw <b>html</b>", "An &amp; entity", "Hard  \nbreak", '[t](https://a.b "title")', "![alt](https://a.b/i.png)",
    "Para\n```bash\nx\n```", "```bash\nx\n```\nPara", "```bash\n\nx\n```", "```bash title=x\nx\n```", "Back\\slash",
    "    indented code", "> quoted", "Setext\n===", "Tab\there", "[ref][r]\n\n[r]: https://a.b", "`unclosed code",
])
def test_anything_else_goes_to_python_markdown(text):
    assert markup.plain_tree(text) is None
    assert markup.parse(text) == slow_tree(text)


def test_a_hostile_link_is_refused_on_either_path():
    for text in ["Click [here](javascript:alert) now.", "Click [here](javascript:alert(1)) now.", "Click [here](data:text/html,x) now."]:
        codes = [code for code, _ in safety.check_markdown(text)]
        assert "KB017" in codes, text


@pytest.mark.parametrize("text, flagged", [
    ("Run this:\n```bash\nx\n```", True),  # opened against a paragraph: the block lands inside the <p>
    ("Run this:\n\n```bash\nx\n```\nThen that.", True),  # closed against a paragraph
    ("Run this:\n\n```bash\nx\n```\n\nThen that.", False),
    ("```bash\nx\n```", False),  # the field's own start and end count as blank
    ("````md\n```bash\nx\n```\n````", False),  # a shorter fence inside a longer one is code, not a fence
    ("- a step:\n  ```bash\n  x\n  ```\n- the next", False),  # blocks under list items are rendered inside the <li>
])
def test_a_code_block_must_be_set_off_by_blank_lines(text, flagged):
    codes = [code for code, _ in safety.check_markdown(text)]
    assert ("KB031" in codes) == flagged, text
    if flagged:  # the reason, shown by Python-Markdown itself: the block is rendered inside a paragraph
        assert "<p>" in slow_html(text).split("<pre")[0].rsplit("</p>", 1)[-1]
