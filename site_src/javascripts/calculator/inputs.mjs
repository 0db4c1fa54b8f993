// Calculator inputs in the browser: the twin of hooks/errorkb/calculator/inputs.py.
// Input: an architecture and a scenario as the page builds them; output:
// [normalised scenario, errors, warnings], every problem a sentence. scenario()
// builds the scenario for a GPU of calculator.json, as hardware.scenario does.
import { C, ENGINE_NAMES, ENGINES, F, GIB, KV_BY_ENGINE, NATIVE_TO_VLLM, QUANTS } from "./facts.mjs";

const fmt = (n) => n.toLocaleString("en-US");
const whole = (v) => (typeof v === "number" && Number.isFinite(v) && Number.isInteger(v) ? v : null);
const number = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);
const get = (o, k, d) => (k in o ? o[k] : d);

export function checkArch(arch) {
  const errors = [];
  for (const [key, [lo, hi]] of Object.entries(F.arch_bounds)) {
    const v = whole(arch[key]);
    if (v === null || v < lo || v > hi) errors.push(`Architecture: ${key} must be a whole number from ${fmt(lo)} to ${fmt(hi)}.`);
  }
  if (errors.length) return errors;
  if (arch.attention_heads % arch.kv_heads) errors.push("Architecture: kv_heads must divide attention_heads.");
  if ((arch.layer_pattern || []).includes("sliding") && !((whole(arch.sliding_window) || 0) > 0)) {
    errors.push("Architecture: sliding layers need a sliding_window of at least 1 token.");
  }
  return errors;
}

/** The weight format the engine loads when the user picks none. */
const safetensors = (engine) => F.safetensors_engines.includes(engine);

export function defaultQuant(engine, nativeDtype) {
  if (safetensors(engine)) return NATIVE_TO_VLLM[nativeDtype || "bf16"] || "bf16";
  return F.default_gguf_quant;
}

export function checkInputs(arch, sc) {
  const errors = checkArch(arch);
  const warnings = [];
  const engine = sc.engine;
  if (!ENGINES.includes(engine)) {
    return [sc, [...errors, `Pick an engine: ${ENGINES.slice(0, -1).join(", ")} or ${ENGINES[ENGINES.length - 1]}.`], warnings];
  }
  const s = { ...sc };
  s.vendor = sc.vendor || "nvidia";
  const native = arch.native_dtype || "bf16";
  s.quant = sc.quant || defaultQuant(engine, native);
  if (!(s.quant in QUANTS) || !QUANTS[s.quant].engines.includes(engine)) {
    const names = Object.keys(QUANTS).filter((k) => QUANTS[k].engines.includes(engine)).join(", ");
    errors.push(`${s.quant} is not a weight format for ${engine}; choose one of ${names}.`);
  }
  let kv = sc.kv_dtype || "auto";
  if (kv === "auto") kv = safetensors(engine) && F.vllm_auto_kv_bf16.includes(native) ? "bf16" : "f16";
  s.kv_dtype = kv;
  if (!KV_BY_ENGINE[engine].includes(kv)) errors.push(`${engine} has no ${kv} KV cache; it offers ${KV_BY_ENGINE[engine].join(", ")}.`);
  for (const [key, lo, hi, label] of [["context", 1, C.MAX_CONTEXT, "Context"], ["seqs", 1, C.MAX_SEQS, "Concurrent sequences"],
    ["gpus", 1, C.MAX_GPUS, "GPU count"]]) {
    const v = whole(get(sc, key, key !== "context" ? 1 : null));
    if (v === null || v < lo || v > hi) errors.push(`${label} must be a whole number from ${fmt(lo)} to ${fmt(hi)}.`);
    s[key] = v;
  }
  const nativeCtx = whole(arch.native_context);
  if (s.context && nativeCtx && s.context > nativeCtx) {
    errors.push(`Context ${fmt(s.context)} is longer than the model's native ${fmt(nativeCtx)} tokens.`);
  }
  const vram = number(sc.vram_bytes);
  const [vLo, vHi] = F.input_bounds.vram_bytes;
  if (vram === null || vram < vLo || vram > vHi) errors.push(`GPU memory must be between ${vLo / GIB} and ${vHi / GIB} GiB per GPU.`);
  else s.vram_bytes = Math.floor(vram);
  const util = number(get(sc, "gpu_memory_utilization", C.VLLM_DEFAULT_UTIL));
  const [uLo, uHi] = F.input_bounds.gpu_memory_utilization;
  if (engine === "vllm" && (util === null || util < uLo || util > uHi)) errors.push(`gpu_memory_utilization must be a fraction from ${uLo} to ${uHi}.`);
  s.gpu_memory_utilization = util;
  const fraction = sc.mem_fraction_static;
  const [fLo, fHi] = F.input_bounds.mem_fraction_static;
  if (engine === "sglang" && fraction !== undefined && fraction !== null && !((number(fraction) || 0) >= fLo && number(fraction) <= fHi)) {
    errors.push(`mem_fraction_static must be a fraction from ${fLo} to ${fHi}.`);
  }
  s.mem_fraction_static = fraction !== undefined && fraction !== null ? number(fraction) : null;
  if (s.vendor === "apple") {
    if (safetensors(engine)) errors.push(`${ENGINE_NAMES[engine]} does not run on Apple GPUs; pick llama.cpp or Ollama.`);
    if (s.gpus && s.gpus > 1) errors.push("A Mac has one GPU; set the count to 1.");
  }
  if (safetensors(engine) && s.gpus && !errors.length && arch.attention_heads % s.gpus) {
    errors.push(`${ENGINE_NAMES[engine]} needs the ${arch.attention_heads} attention heads to divide evenly over ${s.gpus} GPUs.`);
  }
  const batched = sc.max_num_batched_tokens;
  const [bLo, bHi] = F.input_bounds.max_num_batched_tokens;
  if (batched !== undefined && batched !== null && !((whole(batched) || 0) >= bLo && whole(batched) <= bHi)) {
    errors.push(`max_num_batched_tokens must be a whole number from ${fmt(bLo)} to ${fmt(bHi)}.`);
  }
  s.llamacpp_pad = sc.llamacpp_pad || C.LLAMACPP_PAD;
  if (s.llamacpp_pad !== C.LLAMACPP_PAD && s.llamacpp_pad !== C.LLAMACPP_PAD_LEGACY) {
    errors.push(`llamacpp_pad is ${C.LLAMACPP_PAD} (current builds) or ${C.LLAMACPP_PAD_LEGACY} (older builds without flash attention).`);
  }
  const given = sc.mla_full_heads;
  if (given !== undefined && given !== null && typeof given !== "boolean") {
    errors.push("mla_full_heads is true (a GGUF without llama.cpp's MLA keys, as in the Ollama library) or false.");
  }
  // The Ollama library's DeepSeek GGUFs carry no MLA keys (facts.RELEASES, ollama); other GGUFs are taken to have them.
  s.mla_full_heads = Boolean(arch.mla) && (typeof given === "boolean" ? given : engine === "ollama");
  if (errors.length) return [s, errors, warnings];
  let share = number(sc.unified_share);
  if (s.vendor === "apple") {
    share = share && share > 0 && share <= 1 ? share : C.APPLE_SHARE_FALLBACK;
    s.usable_bytes = Math.floor(s.vram_bytes * share);
  } else {
    s.usable_bytes = s.vram_bytes * s.gpus;
  }
  if (safetensors(engine) && s.gpus > arch.kv_heads) warnings.push(`More GPUs than KV heads: ${ENGINE_NAMES[engine]} copies each KV head to several GPUs.`);
  return [s, errors, warnings];
}

/** The scenario for a GPU of calculator.json; errorkb.calculator.hardware.scenario is its twin. */
export function scenario(gpuId, gpu, engine, context, quant = null, kv = "auto", seqs = 1, gpus = 1, utilization = C.VLLM_DEFAULT_UTIL) {
  return { engine, quant, kv_dtype: kv, context, seqs, gpus, vram_bytes: gpu.memory_mib * C.MIB, vendor: gpu.vendor,
    gpu_id: gpuId, compute_capability: gpu.compute_capability ?? null, unified_share: gpu.gpu_share_default,
    gpu_memory_utilization: utilization };
}
