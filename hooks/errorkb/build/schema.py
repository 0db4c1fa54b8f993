"""Stage 0, the schema: pydantic models of the fields editors AUTHOR.

Input: a mapping parsed from one YAML file. Output: a validated model, or a
pydantic ValidationError that loader.py turns into Problems. Nothing computed
(backlinks, URLs, counts) lives here; that is linker.py's job. The same models
generate entries/schema.json (``kb schema``), so editors get completion from
the one source of truth.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Literal

from pydantic_core import PydanticCustomError

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

from errorkb.calculator.facts import ARCH_BOUNDS as _B  # the calculator's bounds are the schema's

ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
HW_ID_PATTERN = r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$"  # models and GPUs: "llama-3.1-8b"
ID_RE = re.compile(ID_PATTERN)
HARDWARE_KINDS = {"models", "gpus"}
TEXT_KINDS = ("errors", "guides")  # the kinds that are pages of text: cited, linked, fed, with short links
RESERVED_IDS = {"index", "search", "api", "assets", "needs-review"}  # names the site itself uses under a kind's folder

EntryId = Annotated[
    str,
    StringConstraints(pattern=ID_PATTERN, min_length=2, max_length=80),
    Field(description="A stable id: lowercase letters, digits and single hyphens."),
]
OneLine = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=200, pattern=r"^[^\n]*$")]
Markdown = Annotated[str, StringConstraints(min_length=1, max_length=8_000)]
Severity = Literal["fatal", "error", "warning"]
Verified = Literal["owner", "editorial", "community"]

MAX_LIST = 50  # a related list longer than this is a mistake, not a KB


EARLIEST_DATE = dt.date(2020, 1, 1)  # before local model serving existed: a typo, not a check


def _plausible_date(value: dt.date) -> dt.date:
    # the code is chosen here, where the problem is known; the loader only reports it
    if value > dt.date.today():
        raise PydanticCustomError("KB018", "date {date} is in the future", {"date": value.isoformat()})
    if value < EARLIEST_DATE:
        raise PydanticCustomError("KB027", "date {date} is before {earliest}", {"date": value.isoformat(), "earliest": EARLIEST_DATE.isoformat()})
    return value


PastDate = Annotated[dt.date, AfterValidator(_plausible_date), Field(description=f"ISO date, YYYY-MM-DD, not in the future and not before {EARLIEST_DATE.isoformat()}.")]

# Checked once, by the loader, with the signature language (errorkb.matcher.language).
Signature = Annotated[str, StringConstraints(min_length=4, max_length=300)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False, frozen=True)


class Source(Strict):
    """Where a fact was checked."""

    title: OneLine
    url: Annotated[str, StringConstraints(pattern=r"^https://[^\s<>\"']+$", max_length=500)]


VersionRange = Annotated[str, StringConstraints(pattern=r"^[<>=!~^0-9A-Za-z.,*+ -]{1,60}$")]


class Step(Strict):
    """One single action, with the command to run and how to tell it worked."""

    title: OneLine
    body: Markdown
    applies_to: dict[EntryId, VersionRange] = Field(
        default={}, description='Only for these versions, e.g. {ollama: ">=0.12"}: the paste box leads with the steps for the version a log shows.'
    )


class Alternative(Strict):
    title: OneLine
    body: Markdown


class EntryBase(Strict):
    title: OneLine = Field(description="What a person would search for.")
    severity: Severity
    tools: Annotated[list[EntryId], Field(min_length=1, max_length=10)]
    author: EntryId
    last_verified: PastDate
    verified: Verified = Field(description="owner: reproduced by the maintainer; editorial: reviewed against sources; community: not yet reviewed.")
    related_errors: Annotated[list[EntryId], Field(max_length=MAX_LIST)] = []
    aliases: Annotated[list[EntryId], Field(max_length=MAX_LIST, description="Former ids; each becomes a redirect.")] = []
    tags: Annotated[list[EntryId], Field(max_length=20)] = []
    sources: Annotated[list[Source], Field(min_length=1, max_length=MAX_LIST)]


class ErrorEntry(EntryBase):
    """One error message: what you see, why, the fix in order."""

    error: Annotated[str, StringConstraints(min_length=3, max_length=2000)] = Field(
        description="The literal message as it appears in a log."
    )
    summary: OneLine | None = Field(
        default=None, description="One line for indexes, search results and email snippets; defaults to the first sentence of cause."
    )
    signatures: Annotated[list[Signature], Field(min_length=1, max_length=20)] = Field(
        description="Case-insensitive regular expressions that recognise this error in a pasted log."
    )
    weak_signatures: Annotated[list[Signature], Field(max_length=20)] = Field(
        default=[],
        description="Optional patterns of a line that alone does not prove this error (healthy runs print it too, or a more specific entry also claims it): a log in which only these match lists the entry, but not as a confident match unless one of its `context` patterns is found as well (e.g. Ollama's CPU-only start-up line, which a machine with no GPU prints on every start).",
    )
    context: Annotated[list[Signature], Field(max_length=20)] = Field(
        default=[],
        description="Optional patterns that, found in the same log, show that this entry rather than a sibling with the same message is the one (e.g. weight-loading frames for an OOM at load time).",
    )
    unless: Annotated[list[Signature], Field(max_length=20)] = Field(
        default=[],
        description="Optional patterns that, found in the same log, show that a sibling with the same message is the one (e.g. training frames for an OOM that a serving entry would otherwise claim): the entry then scores as if none of its context were found.",
    )
    wrapper_when: Annotated[list[Signature], Field(max_length=20)] = Field(
        default=[],
        description="Optional patterns that, found in the same log, make this entry rank as a wrapper would: listed, but below the entries that are not wrappers (e.g. a missing Python module reported by ComfyUI's custom-node loader, whose own entry explains the fix there).",
    )
    benign_when: Annotated[list[Signature], Field(max_length=20)] = Field(
        default=[],
        description="Optional patterns that, found in the same log, show that the message did no harm there (the run went on past it, or it came from an optional probe): the entry is then listed but never a confident match (e.g. a CUDA driver warning in a vLLM log that went on to size its KV cache).",
    )
    context_required: bool = Field(
        default=False,
        description="True when the message alone belongs to a more general sibling: without one of this entry's context patterns in the log, it is not shown as a confident match (e.g. the training OOM entry needs training frames).",
    )
    prior: int = Field(
        default=0, ge=0, le=10000,
        description="Optional, for entries that share a message: how many real logs of the corpus (tests/data/real-logs) are this entry's when the message is all a log shows and the siblings tie. Higher first; it breaks only exact ties (same score, same position), and a test checks it against the corpus (e.g. the CUDA OOM entries for a bare `CUDA out of memory` line).",
    )
    wrapper: bool = Field(
        default=False,
        description="True when this error usually reports an earlier one (e.g. a dead engine): the matcher ranks root causes above it.",
    )
    category: EntryId
    platforms: Annotated[list[EntryId], Field(min_length=1, max_length=10)]
    applies_to: dict[EntryId, VersionRange] = Field(
        default={}, description='Version ranges per tool, e.g. {vllm: ">=0.6"}.'
    )
    cause: Markdown
    solution: Annotated[list[Step], Field(min_length=1, max_length=15)]
    alternatives: Annotated[list[Alternative], Field(max_length=15)] = []

    @field_validator("signatures", "weak_signatures")
    @classmethod
    def _unique_signatures(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("the same signature is listed twice")
        return value

    @field_validator("weak_signatures")
    @classmethod
    def _weak_not_strong(cls, value: list[str], info) -> list[str]:
        both = sorted(set(value) & set(info.data.get("signatures") or []))
        if both:
            raise ValueError(f"listed both as a signature and as a weak signature: {both[0]!r}; keep it in one list")
        return value

    @field_validator("context_required")
    @classmethod
    def _context_to_require(cls, value: bool, info) -> bool:
        if value and not info.data.get("context"):
            raise ValueError("context_required is true but the entry lists no `context` patterns; add them or remove context_required")
        return value


class Cause(Strict):
    """One possible cause of a symptom, in the order an operator should check."""

    title: OneLine
    diagnose: Markdown
    fix: Markdown
    errors: Annotated[list[EntryId], Field(max_length=MAX_LIST)] = []


class Faq(Strict):
    question: OneLine
    answer: Markdown


class GuideEntry(EntryBase):
    """A troubleshooting guide: a symptom with several causes in diagnostic order."""

    summary: Annotated[str, StringConstraints(min_length=3, max_length=400)]
    platforms: Annotated[list[EntryId], Field(max_length=10)] = []
    causes: Annotated[list[Cause], Field(min_length=1, max_length=20)]
    faq: Annotated[list[Faq], Field(max_length=30)] = []
    related_guides: Annotated[list[EntryId], Field(max_length=MAX_LIST)] = []


class Term(Strict):
    """One item of a taxonomy (category, tool, platform)."""

    name: OneLine
    description: Annotated[str, StringConstraints(min_length=3, max_length=600)]


class Author(Strict):
    name: OneLine
    url: Annotated[str, StringConstraints(pattern=r"^https://[^\s<>\"']+$")] | None = None


# --- hardware (models, gpus): the calculator's data, validated like the rest ---
# (kept in one file so entries/schema.json has a single source)

from pydantic import model_validator  # noqa: E402  (only this section needs it)

AttentionKind = Literal["full", "sliding"]
HfRepo = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")]


class Mla(Strict):
    """DeepSeek-style multi-head latent attention: the cache holds one compressed vector per token and layer."""

    kv_lora_rank: Annotated[int, Field(ge=16, le=8192, description="config kv_lora_rank (512 for DeepSeek V3).")]
    qk_rope_head_dim: Annotated[int, Field(ge=0, le=1024, description="config qk_rope_head_dim (64 for DeepSeek V3).")]
    qk_nope_head_dim: Annotated[int, Field(ge=0, le=1024, description="config qk_nope_head_dim; only engines that expand the cache use it.")] | None = None
    v_head_dim: Annotated[int, Field(ge=1, le=1024, description="config v_head_dim; only engines that expand the cache use it.")] | None = None


class Experts(Strict):
    """Mixture of experts: every expert must be resident, only `active` run per token."""

    total: Annotated[int, Field(ge=2, le=4096)]
    active: Annotated[int, Field(ge=1, le=256)]
    shared: Annotated[int, Field(ge=0, le=64)] = 0
    intermediate_size: Annotated[int, Field(ge=16, le=65536, description="config intermediate_size of one expert (moe_intermediate_size when the config has both); engines that pad expert tensors read it.")] | None = None

    @model_validator(mode="after")
    def _active_within_total(self) -> "Experts":
        if self.active > self.total:
            raise ValueError(f"experts.active ({self.active}) is larger than experts.total ({self.total})")
        return self


class ModelEntry(Strict):
    """One model architecture, the numbers of its config.json that decide memory use."""

    title: OneLine
    hf_repo: HfRepo = Field(description="The repository whose config.json the numbers come from.")
    params_total: Annotated[int, Field(ge=_B["params_total"][0], le=_B["params_total"][1], description="All parameters, embeddings included.")]
    params_active: Annotated[int, Field(ge=_B["params_total"][0], le=_B["params_total"][1], description="Parameters used per token (equal to total for dense models).")]
    layers: Annotated[int, Field(ge=_B["layers"][0], le=_B["layers"][1], description="num_hidden_layers")]
    hidden_size: Annotated[int, Field(ge=_B["hidden_size"][0], le=_B["hidden_size"][1])]
    attention_heads: Annotated[int, Field(ge=_B["attention_heads"][0], le=_B["attention_heads"][1], description="num_attention_heads")]
    kv_heads: Annotated[int, Field(ge=_B["kv_heads"][0], le=_B["kv_heads"][1], description="num_key_value_heads (equal to attention_heads without grouped-query attention)")]
    head_dim: Annotated[int, Field(ge=_B["head_dim"][0], le=_B["head_dim"][1], description="config head_dim, or hidden_size / attention_heads when absent")]
    vocab_size: Annotated[int, Field(ge=_B["vocab_size"][0], le=_B["vocab_size"][1])]
    native_context: Annotated[int, Field(ge=_B["native_context"][0], le=_B["native_context"][1], description="max_position_embeddings or the documented context length")]
    native_dtype: Literal["bf16", "f16", "fp8", "mxfp4", "f32"]
    sliding_window: Annotated[int, Field(ge=16, le=1_048_576)] | None = Field(
        default=None, description="Tokens seen by sliding-window layers, when they exist and are enabled."
    )
    layer_pattern: Annotated[list[AttentionKind], Field(min_length=1, max_length=64)] | None = Field(
        default=None, description="Repeating per-layer attention kinds, e.g. [sliding, full]; null means every layer is full attention."
    )
    mla: Mla | None = None
    experts: Experts | None = None
    tie_word_embeddings: bool = Field(default=False, description="config tie_word_embeddings: the output layer reuses the embedding matrix.")
    sources: Annotated[list[Source], Field(min_length=1, max_length=MAX_LIST)]

    @model_validator(mode="after")
    def _consistent(self) -> "ModelEntry":
        if self.params_active > self.params_total:
            raise ValueError(f"params_active ({self.params_active}) is larger than params_total ({self.params_total})")
        if self.experts is None and self.params_active != self.params_total:
            raise ValueError("params_active differs from params_total but `experts` is not set; a dense model uses every parameter")
        if self.kv_heads > self.attention_heads or self.attention_heads % self.kv_heads:
            raise ValueError(
                f"kv_heads ({self.kv_heads}) must divide attention_heads ({self.attention_heads}): each key/value head serves a whole group of query heads"
            )
        if self.layer_pattern is not None and "sliding" in self.layer_pattern and self.sliding_window is None:
            raise ValueError("layer_pattern has sliding layers but sliding_window is not set")
        if self.sliding_window is not None and self.layer_pattern is None:
            raise ValueError("sliding_window is set but layer_pattern is null (null means every layer is full attention); use [sliding] if every layer slides")
        if self.layer_pattern is not None and len(self.layer_pattern) > self.layers:
            raise ValueError(f"layer_pattern has {len(self.layer_pattern)} items but the model has only {self.layers} layers")
        if self.sliding_window is not None and self.sliding_window >= self.native_context:
            raise ValueError(f"sliding_window ({self.sliding_window}) is not smaller than native_context ({self.native_context}); such layers are full attention")
        if self.mla is not None and self.layer_pattern is not None and "sliding" in self.layer_pattern:
            raise ValueError("an MLA model with sliding-window layers is not supported by the calculator")
        return self


class GpuEntry(Strict):
    """One accelerator: how much memory the driver reports, and what it can compute."""

    title: OneLine
    vendor: Literal["nvidia", "amd", "apple"]
    architecture: OneLine
    compute_capability: Annotated[str, StringConstraints(pattern=r"^(?:\d{1,2}\.\d{1,2}|gfx[0-9a-f]{3,5})$")] | None = Field(
        default=None, description='NVIDIA compute capability ("8.9"), AMD gfx target ("gfx1100"), null for Apple.'
    )
    memory_gb: Annotated[float, Field(gt=0, le=2048, description="Memory as marketed, in GB.")]
    memory_mib: Annotated[int, Field(ge=512, le=2_097_152, description="Total memory as the driver reports it, in MiB.")]
    memory_mib_reported: bool = Field(description="True when memory_mib comes from a real nvidia-smi / rocm-smi / driver output.")
    memory_type: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9 +-]{2,20}$")]
    bandwidth_gbs: Annotated[float, Field(gt=0, le=100_000)]
    unified_memory: bool = False
    gpu_share_default: Annotated[float, Field(gt=0, le=1)] | None = Field(
        default=None, description="Apple: fraction of unified memory the GPU may wire by default (recommendedMaxWorkingSetSize)."
    )
    bf16: bool
    fp8: bool
    sources: Annotated[list[Source], Field(min_length=1, max_length=MAX_LIST)]

    @model_validator(mode="after")
    def _consistent(self) -> "GpuEntry":
        if self.vendor == "nvidia" and (self.compute_capability is None or self.compute_capability.startswith("gfx")):
            raise ValueError('an NVIDIA card needs compute_capability like "8.9"')
        if self.vendor == "amd" and (self.compute_capability is None or not self.compute_capability.startswith("gfx")):
            raise ValueError('an AMD card needs compute_capability as its gfx target, like "gfx1100"')
        if self.vendor == "apple" and self.compute_capability is not None:
            raise ValueError("Apple GPUs have no compute_capability; set it to null")
        if self.vendor == "apple" and not self.unified_memory:
            raise ValueError("Apple silicon always has unified memory; set unified_memory: true")
        if self.gpu_share_default is not None and not self.unified_memory:
            raise ValueError("gpu_share_default only applies to unified memory; set it to null")
        # the driver total sits a little under the marketed size (GB vs GiB, reserved areas), never far above it
        marketed_mib = self.memory_gb * 1e9 / 2**20
        if not 0.85 * marketed_mib <= self.memory_mib <= 1.1 * self.memory_gb * 1024:
            raise ValueError(f"memory_mib ({self.memory_mib}) does not look like {self.memory_gb} GB as reported by a driver")
        return self


# --- end hardware ---

TAXONOMIES: dict[str, type[Strict]] = {
    "categories": Term,
    "tools": Term,
    "platforms": Term,
    "authors": Author,
}

KINDS: dict[str, type[Strict]] = {
    "errors": ErrorEntry,
    "guides": GuideEntry,
    "models": ModelEntry,
    "gpus": GpuEntry,
}
