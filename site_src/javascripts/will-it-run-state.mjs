// "Will it run?" page, its state: the form's values <-> the URL's query (short
// links for support emails), and the architecture and scenario the math needs
// (resolve). Pure functions, exported for node --test; the page's wiring is in
// ./will-it-run.mjs.
import * as vram from "./vram.mjs";

export const ARCH_KEYS = ["layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "vocab_size", "params_total",
  "native_context", "sliding_window", "layer_pattern", "kv_lora_rank", "qk_rope_head_dim"];
export const DEFAULTS = Object.freeze({
  model: "llama-3.1-8b", custom: Object.freeze(Object.fromEntries(ARCH_KEYS.map((k) => [k, null]))), engine: "llamacpp",
  quant: "", kv: "auto", context: 8192, seqs: 1, gpu: "", vram: 24, vendor: "nvidia", gpus: 1, util: 0.92, mla: "auto",
});
const PARAMS = { model: "m", engine: "e", quant: "q", kv: "kv", context: "ctx", seqs: "seqs", gpu: "g", vram: "vram",
  vendor: "vendor", gpus: "n", util: "u", mla: "mla" };
const NUMERIC = new Set(["context", "seqs", "vram", "gpus", "util"]);
// The choices a URL may hold, from the facts (vram.configure must have run).
const choices = () => ({ engine: vram.ENGINES, kv: ["auto", ...new Set(Object.values(vram.KV_BY_ENGINE).flat())],
  vendor: vram.F.vendors, mla: MLA_CACHES });
export const MLA_CACHES = ["auto", "latent", "heads"];
const SLUG = /^[A-Za-z0-9._-]{0,80}$/;

export const num = (text) => (text === null || text.trim() === "" ? NaN : Number(text));

/** URLSearchParams -> state; unknown choices fall back to defaults, numbers stay numbers (or NaN). */
export function readState(params) {
  const state = { ...DEFAULTS, custom: { ...DEFAULTS.custom } };
  for (const [key, name] of Object.entries(PARAMS)) {
    const raw = params.get(name);
    if (raw === null) continue;
    if (NUMERIC.has(key)) state[key] = num(raw);
    else if (choices()[key]) state[key] = choices()[key].includes(raw) ? raw : DEFAULTS[key];
    else state[key] = SLUG.test(raw) ? raw : DEFAULTS[key];
  }
  if (state.model === "custom") {
    for (const key of ARCH_KEYS) {
      const raw = params.get(`a.${key}`);
      if (raw === null || raw === "") continue;
      state.custom[key] = key === "layer_pattern"
        ? raw.split(",").filter((k) => k === "full" || k === "sliding") : num(raw);
    }
  }
  return state;
}

/** state -> query string with only what differs from the defaults (short links for support emails). */
export function writeState(state) {
  const params = new URLSearchParams();
  for (const [key, name] of Object.entries(PARAMS)) {
    if (key === "vram" && state.gpu) continue;
    if (key === "vendor" && state.gpu) continue;
    const value = state[key];
    if (value !== DEFAULTS[key] && value !== "" && !(typeof value === "number" && Number.isNaN(value))) params.set(name, String(value));
  }
  if (state.model === "custom") {
    for (const key of ARCH_KEYS) {
      const value = state.custom[key];
      if (value === null || value === undefined || (typeof value === "number" && Number.isNaN(value))) continue;
      params.set(`a.${key}`, Array.isArray(value) ? value.join(",") : String(value));
    }
  }
  return params.toString();
}

/** The architecture and scenario the math needs, from the state and the loaded data. */
export function resolve(state, data) {
  let arch, title, hfRepo, name;
  if (state.model === "custom") {
    const c = state.custom;
    arch = { ...c, params_active: c.params_total, native_dtype: "bf16", family: null, tie_word_embeddings: false,
      layer_pattern: c.layer_pattern && c.layer_pattern.length ? c.layer_pattern : null,
      mla: c.kv_lora_rank ? { kv_lora_rank: c.kv_lora_rank, qk_rope_head_dim: c.qk_rope_head_dim || 0 } : null };
    title = "Custom model"; hfRepo = "your-org/your-model"; name = "model";
  } else {
    const id = state.model && data.models[state.model] ? state.model : Object.keys(data.models)[0];
    const m = data.models[id];
    arch = m.arch; title = m.title; hfRepo = m.hf_repo; name = id;
  }
  const gpu = state.gpu ? data.gpus[state.gpu] : null;
  const scenario = gpu
    ? vram.scenario(state.gpu, gpu, state.engine, state.context, state.quant || null, state.kv, state.seqs, state.gpus, state.util)
    : { engine: state.engine, quant: state.quant || null, kv_dtype: state.kv, context: state.context, seqs: state.seqs,
      gpus: state.gpus, gpu_memory_utilization: state.util, gpu_id: null, vram_bytes: state.vram * vram.GIB,
      vendor: state.vendor, unified_share: null };
  scenario.native_dtype = arch.native_dtype;
  if (state.mla === "latent" || state.mla === "heads") scenario.mla_full_heads = state.mla === "heads";
  const where = gpu ? gpu.title : `${state.vram} GiB`;
  return { arch, scenario, title, hfRepo, name, label: state.gpus > 1 ? `${state.gpus} x ${where}` : where };
}
