"""Calculator commands: the command line that starts an engine with the settings the calculator arrived at.

Input: a checked scenario and its plan (``command_for``: what `kb will-it-run` and the
page print), or a log's reading and one of its proposals (``proposal_command``: the
settings a log proposes, see ``proposal``). Output: the command as text. Every flag and
environment variable is spelt by ``facts.ENGINE_FLAGS``. The browser twins print the
same text: commandFor and proposalCommand in site_src/javascripts/calculator/commands.mjs.
"""

from __future__ import annotations

import re

from errorkb.calculator.facts import ENGINE_FLAGS, ENGINE_NAMES, FP8_KV_FLAG, SAFETENSORS_ENGINES, VLLM_SEQS_SMALL

CONTINUED = " \\\n  "  # one setting a line, as a shell continues a command


def flag(engine: str, setting: str, value: object = "") -> str:
    return ENGINE_FLAGS[engine][setting].format(value)


def number_text(x: float) -> str:
    """A number as JavaScript's String() writes it (1 not 1.0), so the page and the CLI print the same command."""
    return str(int(x)) if x == int(x) else repr(float(x))


def _server(engine: str, model: str, context: int, share: str | None, gpus: int) -> list[str]:
    """The head of a vLLM or SGLang command: the model, the context, the memory share and the tensor-parallel size."""
    parts = [flag(engine, "start", model), flag(engine, "context", context)]
    if share:
        parts.append(flag(engine, "share", share))
    if gpus > 1:
        parts.append(flag(engine, "gpus", gpus))
    return parts


def _llama_server(model: str, context: int, seqs: int, layers: int) -> list[str]:
    """The head of a llama-server command: -c is shared by the -np sequences, so it is the context times them."""
    return [flag("llamacpp", "start", model), flag("llamacpp", "context", context * seqs), flag("llamacpp", "seqs", seqs),
            flag("llamacpp", "layers", layers)]


def _ollama_env(seqs: int, kv: str, context: int | None = None) -> list[str]:
    env = [flag("ollama", "seqs", seqs)] + ([flag("ollama", "context", context)] if context else [])
    if kv != "f16":
        env += [flag("ollama", "flash", 1), flag("ollama", "kv", kv)]
    return env


def command_for(name: str, hf_repo: str, s: dict, out: dict) -> str:
    """The command that starts the engine with these settings (the largest context that fits when asked too much)."""
    shrink = not out["fits"] and out.get("max_context", 0) >= 1
    ctx = out["max_context"] if shrink else s["context"]
    engine, seqs, kv, quant = s["engine"], s["seqs"], s["kv_dtype"], s["quant"]
    if engine in SAFETENSORS_ENGINES:
        share = s["gpu_memory_utilization"] if engine == "vllm" else out["mem_fraction_static"]
        parts = _server(engine, hf_repo, ctx, number_text(share), s["gpus"])
        if kv == "fp8":
            parts.append(flag(engine, "kv", FP8_KV_FLAG[engine]))
        if quant == "fp8" and s.get("native_dtype") != "fp8":
            parts.append(flag(engine, "quantization", "fp8"))
        if seqs > (VLLM_SEQS_SMALL if engine == "vllm" else 1):  # vLLM's own default already runs that many
            parts.append(flag(engine, "seqs", seqs))
        line = CONTINUED.join(parts)
        if quant in ("awq-int4", "gptq-int4"):
            line = f"# point at a {quant.split('-')[0].upper()} checkpoint of this model; {ENGINE_NAMES[engine]} reads the format from it\n" + line
        return line
    gguf = f"./{name}-{quant}.gguf"
    if engine == "llamacpp":
        layers = out["gpu_layers"] if out.get("gpu_layers") is not None and not shrink else 999
        parts = _llama_server(gguf, ctx, seqs, layers) + [flag(engine, "fit", "off")]
        if kv != "f16":
            parts.append(flag(engine, "kv", kv))
        if kv in ("q8_0", "q4_0"):
            parts.append(flag(engine, "flash", "on"))
        return CONTINUED.join(parts)
    return (f"# Modelfile\nFROM {gguf}\n{flag(engine, 'modelfile_context', ctx)}\n\n"
            f"# then\n{' '.join(_ollama_env(seqs, kv))} {flag(engine, 'start')}\n{flag(engine, 'create', name)}")


def proposal_command(r: dict, p: dict) -> str:
    """The engine's command line for a proposal, on one line (the model as the log names it)."""
    model = r.get("model") or "MODEL"
    if re.fullmatch(r"\w+For(?:CausalLM|ConditionalGeneration)", model):
        model = "MODEL"  # a log that names only the model class (SGLang's "type=Qwen2ForCausalLM"), not a path
    engine = r["engine"]
    if engine in SAFETENSORS_ENGINES:
        parts = _server(engine, model, p["context"], f"{p['util']:g}" if p.get("util") else None, p["gpus"])
        if p["kv"] not in ("auto", "bf16", "f16"):
            parts.append(flag(engine, "kv", p["kv"]))
        return " ".join(parts)
    if engine == "llamacpp":
        parts = _llama_server(model if model.endswith(".gguf") else "MODEL.gguf", p["context"], p["seqs"], 999)
        if p["kv"] != "f16":
            parts += [flag(engine, "kv", p["kv"]), flag(engine, "flash", "on")]
        if p["gpus"] > 1:
            parts.append(flag(engine, "split", ",".join(["1"] * p["gpus"])))
        return " ".join(parts)
    line = " ".join(_ollama_env(p["seqs"], p["kv"], p["context"])) + " " + flag(engine, "start")
    return line + (f"   # with {p['gpus']} GPUs visible" if p["gpus"] > 1 else "")
