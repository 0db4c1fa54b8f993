// Calculator commands in the browser: the twin of hooks/errorkb/calculator/commands.py.
// Input: a checked scenario and its plan (commandFor, what the page prints), or a
// log's reading and one of its proposals (proposalCommand). Output: the command
// as text, the same as Python's. FLAGS is a copy of facts.ENGINE_FLAGS (the API
// file does not carry it); tests/test_cli_calc.py fails when the two differ.
import { C, ENGINE_NAMES, F } from "./facts.mjs";

export const FLAGS = {
  vllm: { start: "vllm serve {}", context: "--max-model-len {}", share: "--gpu-memory-utilization {}",
    gpus: "--tensor-parallel-size {}", kv: "--kv-cache-dtype {}", quantization: "--quantization {}", seqs: "--max-num-seqs {}" },
  sglang: { start: "python -m sglang.launch_server --model-path {}", context: "--context-length {}",
    share: "--mem-fraction-static {}", gpus: "--tp {}", kv: "--kv-cache-dtype {}", quantization: "--quantization {}",
    seqs: "--max-running-requests {}" },
  llamacpp: { start: "llama-server -m {}", context: "-c {}", seqs: "-np {}", layers: "-ngl {}", fit: "--fit {}",
    kv: "-ctk {0} -ctv {0}", flash: "--flash-attn {}", split: "--split-mode layer --tensor-split {}" },
  ollama: { start: "ollama serve", seqs: "OLLAMA_NUM_PARALLEL={}", context: "OLLAMA_CONTEXT_LENGTH={}",
    flash: "OLLAMA_FLASH_ATTENTION={}", kv: "OLLAMA_KV_CACHE_TYPE={}", modelfile_context: "PARAMETER num_ctx {}",
    create: "ollama create {} -f Modelfile" },
};
const CONTINUED = " \\\n  ";  // one setting a line, as a shell continues a command

// A function, not a string, as the replacement: a model name from a pasted log may hold "$&".
export const flag = (engine, setting, value = "") => FLAGS[engine][setting].replace(/\{0?\}/g, () => String(value));

/** The head of a vLLM or SGLang command: the model, the context, the memory share and the tensor-parallel size. */
function server(engine, model, context, share, gpus) {
  const parts = [flag(engine, "start", model), flag(engine, "context", context)];
  if (share) parts.push(flag(engine, "share", share));
  if (gpus > 1) parts.push(flag(engine, "gpus", gpus));
  return parts;
}

/** The head of a llama-server command: -c is shared by the -np sequences, so it is the context times them. */
const llamaServer = (model, context, seqs, layers) => [flag("llamacpp", "start", model), flag("llamacpp", "context", context * seqs),
  flag("llamacpp", "seqs", seqs), flag("llamacpp", "layers", layers)];

function ollamaEnv(seqs, kv, context = null) {
  const env = [flag("ollama", "seqs", seqs), ...(context ? [flag("ollama", "context", context)] : [])];
  if (kv !== "f16") env.push(flag("ollama", "flash", 1), flag("ollama", "kv", kv));
  return env;
}

/** The command that starts the engine with these settings (the largest context that fits when asked too much). */
export function commandFor(name, hfRepo, s, out) {
  const shrink = !out.fits && (out.max_context || 0) >= 1;
  const ctx = shrink ? out.max_context : s.context;
  const { engine, seqs, kv_dtype: kv, quant } = s;
  if (F.safetensors_engines.includes(engine)) {
    const share = engine === "vllm" ? s.gpu_memory_utilization : out.mem_fraction_static;
    const parts = server(engine, hfRepo, ctx, String(share), s.gpus);
    if (kv === "fp8") parts.push(flag(engine, "kv", F.fp8_kv_flag[engine]));
    if (quant === "fp8" && s.native_dtype !== "fp8") parts.push(flag(engine, "quantization", "fp8"));
    if (seqs > (engine === "vllm" ? C.VLLM_SEQS_SMALL : 1)) parts.push(flag(engine, "seqs", seqs));
    const line = parts.join(CONTINUED);
    if (quant === "awq-int4" || quant === "gptq-int4") {
      return `# point at a ${quant.split("-")[0].toUpperCase()} checkpoint of this model; ${ENGINE_NAMES[engine]} reads the format from it\n${line}`;
    }
    return line;
  }
  const gguf = `./${name}-${quant}.gguf`;
  if (engine === "llamacpp") {
    const layers = out.gpu_layers !== null && out.gpu_layers !== undefined && !shrink ? out.gpu_layers : 999;
    const parts = [...llamaServer(gguf, ctx, seqs, layers), flag(engine, "fit", "off")];
    if (kv !== "f16") parts.push(flag(engine, "kv", kv));
    if (kv === "q8_0" || kv === "q4_0") parts.push(flag(engine, "flash", "on"));
    return parts.join(CONTINUED);
  }
  return `# Modelfile\nFROM ${gguf}\n${flag(engine, "modelfile_context", ctx)}\n\n`
    + `# then\n${ollamaEnv(seqs, kv).join(" ")} ${flag(engine, "start")}\n${flag(engine, "create", name)}`;
}

const g = (x) => String(Number(x));  // Python's :g for the fractions used here (0.93, 0.9)

/** The engine's command line for a proposal, on one line (the model as the log names it). */
export function proposalCommand(r, p) {
  // a log that names only the model class (SGLang's "type=Qwen2ForCausalLM"), not a path
  const model = !r.model || /^\w+For(?:CausalLM|ConditionalGeneration)$/.test(r.model) ? "MODEL" : r.model;
  const engine = r.engine;
  if (F.safetensors_engines.includes(engine)) {
    const parts = server(engine, model, p.context, p.util ? g(p.util) : null, p.gpus);
    if (!["auto", "bf16", "f16"].includes(p.kv)) parts.push(flag(engine, "kv", p.kv));
    return parts.join(" ");
  }
  if (engine === "llamacpp") {
    const parts = llamaServer(model.endsWith(".gguf") ? model : "MODEL.gguf", p.context, p.seqs, 999);
    if (p.kv !== "f16") parts.push(flag(engine, "kv", p.kv), flag(engine, "flash", "on"));
    if (p.gpus > 1) parts.push(flag(engine, "split", Array(p.gpus).fill("1").join(",")));
    return parts.join(" ");
  }
  return `${ollamaEnv(p.seqs, p.kv, p.context).join(" ")} ${flag(engine, "start")}${p.gpus > 1 ? `   # with ${p.gpus} GPUs visible` : ""}`;
}
