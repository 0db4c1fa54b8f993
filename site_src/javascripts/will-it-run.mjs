// "Will it run?" page: form state <-> URL, the command to run, the working,
// and the DOM wiring. The math lives in ./vram.mjs. Pure functions are
// exported for node --test; mount() runs on every page load and instant
// navigation (document$), and does nothing on pages without the calculator.
import * as vram from "./vram.mjs";
import * as fromlog from "./fromlog.mjs";

const ARCH_KEYS = ["layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "vocab_size", "params_total",
  "native_context", "sliding_window", "layer_pattern", "kv_lora_rank", "qk_rope_head_dim"];
export const DEFAULTS = Object.freeze({
  model: "llama-3.1-8b", custom: Object.freeze(Object.fromEntries(ARCH_KEYS.map((k) => [k, null]))), engine: "llamacpp",
  quant: "", kv: "auto", context: 8192, seqs: 1, gpu: "", vram: 24, vendor: "nvidia", gpus: 1, util: 0.9,
});
const PARAMS = { model: "m", engine: "e", quant: "q", kv: "kv", context: "ctx", seqs: "seqs", gpu: "g", vram: "vram",
  vendor: "vendor", gpus: "n", util: "u" };
const NUMERIC = new Set(["context", "seqs", "vram", "gpus", "util"]);
// The choices a URL may hold, from the facts (vram.configure must have run).
const choices = () => ({ engine: vram.ENGINES, kv: ["auto", ...new Set(Object.values(vram.KV_BY_ENGINE).flat())],
  vendor: vram.F.vendors });
const SLUG = /^[A-Za-z0-9._-]{0,80}$/;

const num = (text) => (text === null || text.trim() === "" ? NaN : Number(text));

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
  const where = gpu ? gpu.title : `${state.vram} GiB`;
  return { arch, scenario, title, hfRepo, name, label: state.gpus > 1 ? `${state.gpus} x ${where}` : where };
}

/** Same text as errorkb.calculator.commands.command_for. */
export function commandFor(name, hfRepo, s, out) {
  const shrink = !out.fits && (out.max_context || 0) >= 1;
  const ctx = shrink ? out.max_context : s.context;
  const { seqs, kv_dtype: kv, quant } = s;
  if (s.engine === "vllm") {
    const parts = [`vllm serve ${hfRepo}`, `--max-model-len ${ctx}`, `--gpu-memory-utilization ${s.gpu_memory_utilization}`];
    if (s.gpus > 1) parts.push(`--tensor-parallel-size ${s.gpus}`);
    if (kv === "fp8") parts.push(`--kv-cache-dtype ${vram.F.fp8_kv_flag.vllm}`);
    if (quant === "fp8" && s.native_dtype !== "fp8") parts.push("--quantization fp8");
    if (seqs > vram.C.VLLM_SEQS_SMALL) parts.push(`--max-num-seqs ${seqs}`);
    let line = parts.join(" \\\n  ");
    if (quant === "awq-int4" || quant === "gptq-int4") {
      line = `# point at a ${quant.split("-")[0].toUpperCase()} checkpoint of this model; vLLM reads the format from it\n${line}`;
    }
    return line;
  }
  if (s.engine === "sglang") {
    const parts = [`python -m sglang.launch_server --model-path ${hfRepo}`, `--context-length ${ctx}`,
      `--mem-fraction-static ${out.mem_fraction_static}`];
    if (s.gpus > 1) parts.push(`--tp ${s.gpus}`);
    if (kv === "fp8") parts.push(`--kv-cache-dtype ${vram.F.fp8_kv_flag.sglang}`);
    if (quant === "fp8" && s.native_dtype !== "fp8") parts.push("--quantization fp8");
    if (seqs > 1) parts.push(`--max-running-requests ${seqs}`);
    let line = parts.join(" \\\n  ");
    if (quant === "awq-int4" || quant === "gptq-int4") {
      line = `# point at a ${quant.split("-")[0].toUpperCase()} checkpoint of this model; SGLang reads the format from it\n${line}`;
    }
    return line;
  }
  const gguf = `./${name}-${quant}.gguf`;
  if (s.engine === "llamacpp") {
    const layers = out.gpu_layers !== null && out.gpu_layers !== undefined && !shrink ? out.gpu_layers : 999;
    const parts = [`llama-server -m ${gguf}`, `-c ${ctx * seqs}`, `-np ${seqs}`, `-ngl ${layers}`, "--fit off"];
    if (kv !== "f16") parts.push(`-ctk ${kv} -ctv ${kv}`);
    if (kv === "q8_0" || kv === "q4_0") parts.push("--flash-attn on");
    return parts.join(" \\\n  ");
  }
  const env = [`OLLAMA_NUM_PARALLEL=${seqs}`];
  if (kv !== "f16") env.push("OLLAMA_FLASH_ATTENTION=1", `OLLAMA_KV_CACHE_TYPE=${kv}`);
  return `# Modelfile\nFROM ${gguf}\nPARAMETER num_ctx ${ctx}\n\n# then\n${env.join(" ")} ollama serve\nollama create ${name} -f Modelfile`;
}

export const gib = (n) => `${(n / vram.GIB).toFixed(2)} GiB`;
const fmt = (n) => n.toLocaleString("en-US");

/** The working, one sentence per stage, from the numbers of the result. */
export function stepsFor(arch, s, out) {
  const kinds = vram.layerKinds(arch);
  const q = vram.QUANTS[s.quant];
  const bits = q.embed_bpw === q.bpw ? `${q.bpw} bits each` : `${q.bpw} bits each, ${q.embed_bpw} for the embeddings`;
  let where = `: ${gib(out.weights_bytes)} over ${s.gpus} GPU(s).`;
  if (s.engine === "llamacpp" || s.engine === "ollama") {
    where = arch.tie_word_embeddings
      ? `: ${gib(out.weights_bytes)}, all on the GPU (the output layer reuses the embedding matrix).`
      : `: ${gib(vram.weightsBytes(arch, s.quant))}, of which ${gib(out.weights_bytes)} on the GPU (the token embedding stays in system memory).`;
  }
  const steps = [`Weights: ${fmt(arch.params_total)} parameters in ${s.quant} (${bits})${where}`];
  const full = kinds.filter((k) => k !== "sliding").length;
  const sliding = kinds.length - full;
  const perLayer = arch.mla ? `${arch.mla.kv_lora_rank} + ${arch.mla.qk_rope_head_dim} latent values`
    : `2 x ${arch.kv_heads} KV heads x ${arch.head_dim}`;
  if (s.engine === "vllm") {
    steps.push(`vLLM may use ${s.gpu_memory_utilization} of each GPU: ${gib(out.available_bytes / s.gpus)} per GPU.`);
    steps.push(`Left for the KV pool after weights, the profiled activation peak and non-torch memory: ${gib(out.kv_pool_bytes)} per GPU,`
      + ` in blocks of ${vram.C.VLLM_BLOCK} tokens of ${perLayer} (${s.kv_dtype}) per layer: ${fmt(out.kv_pool_tokens)} tokens.`);
    steps.push(`One request of ${fmt(s.context)} tokens needs ${gib(out.kv_one_request_bytes)} per GPU`
      + (sliding ? ` (${sliding} sliding-window layers keep only ${fmt(arch.sliding_window)} tokens + one batch)` : "")
      + `; the pool holds ${out.max_concurrency.toFixed(2)} of them at once.`);
  } else if (s.engine === "sglang") {
    const reserved = Object.entries(out.sglang_reserved_mib).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${fmt(v)}`).join(" + ");
    steps.push(`SGLang keeps ${reserved} MiB outside its static part, so --mem-fraction-static is ${out.mem_fraction_static}`
      + (s.mem_fraction_static ? " (set by you)." : " (its default for this card)."));
    steps.push(`Static part minus weights: a pool of ${gib(out.kv_pool_bytes)} per GPU, one token per page of ${perLayer} (${s.kv_dtype}) x ${arch.layers} layers:`
      + ` ${fmt(out.kv_pool_tokens)} tokens (max_total_num_tokens); --max-running-requests defaults to ${fmt(out.max_running_requests)}.`);
    steps.push(`${fmt(s.seqs)} request(s) of ${fmt(s.context)} tokens need ${gib(out.kv_cache_bytes)}`
      + (sliding ? " (sliding-window layers are counted in full)" : "") + `; the pool holds ${out.max_concurrency.toFixed(2)} of them at once.`);
  } else {
    const cells = s.engine === "llamacpp" ? `${fmt(vram.pad(s.context, s.llamacpp_pad))} cells per sequence (padded to ${s.llamacpp_pad})` : `${fmt(s.context)} tokens x ${s.seqs} (Ollama's estimate)`;
    steps.push(`KV cache: ${full} layers x ${cells} x ${perLayer} in ${s.kv_dtype}`
      + (sliding ? `, plus ${sliding} sliding-window layers that keep about ${fmt(arch.sliding_window)} tokens` : "")
      + ` x ${s.seqs} sequence(s) = ${gib(out.kv_cache_bytes)}.`);
  }
  for (const [name, size] of Object.entries(out.overhead_parts)) steps.push(`${name[0].toUpperCase()}${name.slice(1)}: ${gib(size)}.`);
  steps.push(`Total ${gib(out.total_bytes)} against ${gib(out.available_bytes)} usable.`);
  if (out.gpu_layers !== null) steps.push(`Only ${out.gpu_layers} of ${out.layers} layers fit on the GPU; the rest would run on the CPU.`);
  return [...steps, ...defaultsFor(arch, s, out)];
}

/** What the engine does by itself, in sentences (the command above pins the choice). */
export function defaultsFor(arch, s, out) {
  const lines = [];
  const layersNote = (n) => (n < arch.layers ? `, ${n} of ${arch.layers} layers on the GPU` : ", every layer on the GPU");
  if (out.llamacpp_defaults) {
    const d = out.llamacpp_defaults;
    lines.push(`With its defaults (no -c, no -ngl, --fit on keeping ${gib(vram.C.LLAMACPP_FIT_MARGIN)} free per GPU) llama.cpp would run`
      + ` ${fmt(d.context)} tokens per sequence${d.context_reduced ? ` instead of the model's ${fmt(arch.native_context)}` : ""}${layersNote(d.gpu_layers)}.`);
    lines.push(`With -c as set and --fit on it keeps the context${layersNote(out.fit_gpu_layers)}; --fit off in the command pins your choice.`);
  }
  if (out.ollama_defaults) {
    const d = out.ollama_defaults;
    lines.push(`Ollama's own default for this much GPU memory is num_ctx ${fmt(d.num_ctx)} with OLLAMA_NUM_PARALLEL=${d.num_parallel};`
      + ` it starts llama-server with -c num_ctx x parallel and lets --fit place the layers${layersNote(out.fit_gpu_layers)} at the context asked.`
      + " When a load with the default context runs out of memory, Ollama retries once with a smaller one (32768, then 4096).");
  }
  if (s.engine === "vllm") lines.push(`--max-model-len auto would pick ${fmt(out.max_context)} tokens, the largest length one request can hold.`);
  lines.push(`These numbers follow ${out.release}.`);
  return lines;
}

// ------------------------------------------------------------------- DOM

const VERDICT = { fits: "Fits", tight: "Tight: it starts, with little to spare", no: "Does not fit" };
let dataPromise = null;

function loadData(root) {
  const url = new URL(root.dataset.api, window.location.href);
  if (!dataPromise) dataPromise = fetch(url).then((r) => (r.ok ? r.json() : Promise.reject(new Error(r.statusText))));
  return dataPromise.catch((e) => { dataPromise = null; throw e; });
}

function option(value, text, selected) {
  const o = document.createElement("option");
  o.value = value; o.textContent = text; o.selected = selected;
  return o;
}

function fill(select, items, value) {
  select.replaceChildren(...items.map(([v, t]) => option(v, t, v === value)));
}

export function mount() {
  const root = document.getElementById("wir");
  if (!root || root.dataset.mounted) return;
  root.dataset.mounted = "1";
  const $ = (id) => document.getElementById(`wir-${id}`);
  loadData(root).then((data) => { vram.configure(data.facts); start(root, $, data); }).catch(() => {
    $("verdict").textContent = "The calculator data could not be loaded; reload the page to try again.";
  });
}

function start(root, $, data) {
  const state = readState(new URLSearchParams(window.location.search));
  const modelIds = Object.keys(data.models);
  if (!state.model || (state.model !== "custom" && !data.models[state.model])) state.model = modelIds[0] || "custom";
  if (state.gpu && !data.gpus[state.gpu]) state.gpu = "";
  const models = () => [...modelIds.map((id) => [id, data.models[id].title]), ["custom", "Custom architecture"]];
  const filterModels = () => {
    const needle = $("search").value.trim().toLowerCase();
    const hit = ([id, t]) => !needle || t.toLowerCase().includes(needle) || id.includes(needle);
    const matches = models().filter(([id, t]) => id !== "custom" && hit([id, t]));
    if (needle && matches.length && !matches.some(([id]) => id === state.model)) state.model = matches[0][0];
    const items = models().filter(([id, t]) => id === state.model || id === "custom" || hit([id, t]));
    fill($("model"), items, state.model);
  };
  const byVendor = {};
  for (const [id, g] of Object.entries(data.gpus)) (byVendor[g.vendor] ||= []).push([id, g.title]);
  const gpuSelect = $("gpu");
  gpuSelect.replaceChildren(option("", "Custom memory", state.gpu === ""));
  for (const [vendor, items] of Object.entries(byVendor)) {
    const group = document.createElement("optgroup");
    group.label = { nvidia: "NVIDIA", amd: "AMD", apple: "Apple" }[vendor] || vendor;
    group.append(...items.map(([id, t]) => option(id, t, id === state.gpu)));
    gpuSelect.append(group);
  }
  const form = $("form");
  const read = () => {
    state.model = $("model").value;
    state.engine = form.querySelector("input[name=engine]:checked")?.value || DEFAULTS.engine;
    state.quant = $("quant").value;
    state.kv = $("kv").value;
    for (const key of ["context", "seqs", "vram", "gpus", "util"]) state[key] = num($(key).value);
    state.gpu = gpuSelect.value;
    state.vendor = $("vendor").value;
    for (const key of ARCH_KEYS) {
      const el = $(`a-${key}`);
      if (key === "layer_pattern") state.custom[key] = el.value ? el.value.split(",") : null;
      else state.custom[key] = el.value.trim() === "" ? null : num(el.value);
    }
  };
  const write = () => {
    filterModels();
    const engine = form.querySelector(`input[name=engine][value=${state.engine}]`);
    if (engine) engine.checked = true;
    const quants = Object.entries(vram.QUANTS).filter(([, q]) => q.engines.includes(state.engine)).map(([k]) => [k, k]);
    if (!quants.some(([k]) => k === state.quant)) state.quant = "";
    fill($("quant"), [["", "Default for the engine"], ...quants], state.quant);
    const kvs = vram.KV_BY_ENGINE[state.engine].map((k) => [k, k]);
    if (state.kv !== "auto" && !vram.KV_BY_ENGINE[state.engine].includes(state.kv)) state.kv = "auto";
    fill($("kv"), [["auto", vram.F.safetensors_engines.includes(state.engine) ? "auto (model dtype)" : "auto (f16)"], ...kvs], state.kv);
    for (const key of ["context", "seqs", "vram", "gpus", "util"]) {
      if (document.activeElement !== $(key)) $(key).value = Number.isNaN(state[key]) ? "" : String(state[key]);
    }
    $("vendor").value = state.vendor;
    for (const key of ARCH_KEYS) {
      const el = $(`a-${key}`);
      const value = state.custom[key];
      if (document.activeElement !== el) el.value = value === null || Number.isNaN(value) ? "" : Array.isArray(value) ? value.join(",") : String(value);
    }
    $("custom").hidden = state.model !== "custom";
    $("memory").hidden = state.gpu !== "";
    $("util-field").hidden = state.engine !== "vllm";
  };
  const update = () => {
    write();
    const query = writeState(state);
    history.replaceState(history.state, "", `${window.location.pathname}${query ? `?${query}` : ""}${window.location.hash}`);
    render(root, $, data, state);
  };
  form.addEventListener("input", (event) => {
    if (event.target.id !== "wir-search") read();
    update();
  });
  form.addEventListener("submit", (event) => event.preventDefault());
  $("copy").addEventListener("click", () => copy($, window.location.href, "Link copied."));
  $("copy-command").addEventListener("click", () => copy($, $("command").textContent, "Command copied."));
  if (data.log_reader) {
    fromlog.configure(data.log_reader);
    $("log-read").addEventListener("click", () => readPasted($, data, state, update));
  }
  update();
  root.dataset.ready = "1";
}

const SHOW_GIB = { weights_gib: "weights", kv_gib: "KV cache", gpu_total_gib: "GPU memory", gpu_free_gib: "free on the GPU" };
const SHOW_NUM = { context: "context", seqs: "sequences", util: "utilisation", mem_fraction_static: "mem-fraction-static", tp: "GPUs" };

/** Read the pasted log, fill the form from it and show the budget and the proposals (all as text, never HTML). */
function readPasted($, data, state, update) {
  const r = fromlog.readLog($("log").value);
  const out = $("log-out");
  out.hidden = false;
  const list = $("log-proposals");
  list.replaceChildren();
  for (const id of ["log-budget", "log-failure"]) $(id).textContent = "";
  $("log-entry-p").hidden = true;
  if (!r.engine) {
    $("log-said").textContent = "This does not look like a vLLM, llama.cpp, Ollama or SGLang log.";
    return;
  }
  const modelId = fromlog.resolveModel(r.model, data.models);
  const gpuId = fromlog.resolveGpu(r.gpu_name, data.gpus);
  const arch = modelId ? data.models[modelId].arch : null;
  const gpuGib = gpuId ? data.gpus[gpuId].memory_mib / 1024 : null;
  const p = fromlog.propose(r, arch, gpuGib, arch ? arch.native_context : null);
  const said = [`engine ${vram.ENGINE_NAMES[r.engine] || r.engine}${r.release ? ` ${r.release}` : ""}`,
    `model ${r.model || "?"}${modelId ? ` (${data.models[modelId].title})` : ""}`, `GPU ${r.gpu_name || "?"}`];
  for (const [key, label] of Object.entries(SHOW_GIB)) if (r[key] != null) said.push(`${label} ${r[key].toFixed(2)} GiB`);
  for (const [key, label] of Object.entries(SHOW_NUM)) if (r[key] != null) said.push(`${label} ${r[key]}`);
  $("log-said").textContent = `What the log says: ${said.join("; ")}.`;
  if (p.need_bytes != null) {
    $("log-budget").textContent = `The KV cache for ${fmt(p.asked.context)} tokens needs ${gib(p.need_bytes)} a GPU; `
      + `the log leaves ${gib(p.room_bytes)} for it: ${p.starts ? "it fits" : "it does not fit"}.`;
  } else if (p.note) $("log-budget").textContent = p.note;
  if (r.failure) $("log-failure").textContent = `Why it failed: ${r.failure}`;
  if (r.error_id && data.errors[r.error_id]) {
    const a = $("log-entry");
    a.textContent = r.error_id;
    a.href = new URL(`../../${data.errors[r.error_id]}`, new URL($("log").closest("[data-api]").dataset.api, window.location.href)).href;
    $("log-entry-p").hidden = false;
  }
  const what = { context: (x) => `Context ${fmt(x.context)}`, util: (x) => `Utilisation ${x.util}`,
    kv: (x) => `KV cache ${x.kv}`, gpus: (x) => `${x.gpus} GPUs` };
  list.replaceChildren(...p.proposals.map((x) => {
    const li = document.createElement("li");
    li.dataset.change = x.change;
    const code = Object.assign(document.createElement("code"), { textContent: x.command });
    li.append(`${what[x.change](x)}: `, code);
    return li;
  }));
  // Fill the calculator with what the log says (engines the page models; the rest stays as it was).
  if (vram.ENGINES.includes(r.engine)) state.engine = r.engine;
  if (modelId) state.model = modelId;
  if (r.context) state.context = r.context;
  if (r.seqs && r.engine !== "vllm") state.seqs = r.seqs;
  if (r.tp) state.gpus = r.tp;
  if (r.util) state.util = r.util;
  if (r.kv_dtype && (vram.KV_BY_ENGINE[state.engine] || []).includes(r.kv_dtype)) state.kv = r.kv_dtype;
  if (gpuId) state.gpu = gpuId;
  else if (r.gpu_total_gib) { state.gpu = ""; state.vram = Math.round(r.gpu_total_gib * 100) / 100; }
  update();
}

function copy($, text, done) {
  const status = $("copy-status");
  const ok = () => { status.textContent = done; };
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(ok, () => { status.textContent = text; });
  else status.textContent = text;
}

function render(root, $, data, state) {
  const r = resolve(state, data);
  const out = vram.evaluate(r.arch, r.scenario);
  const verdict = $("verdict");
  const result = $("result");
  if (!out.ok) {
    result.dataset.verdict = "error";
    verdict.textContent = "Check the inputs";
    $("messages").replaceChildren(...out.errors.map((m) => Object.assign(document.createElement("li"), { textContent: m })));
    $("answer").hidden = true;
    return;
  }
  const s = out.scenario;
  result.dataset.verdict = out.verdict;
  verdict.textContent = `${VERDICT[out.verdict]}: ${r.title} on ${r.label} with ${vram.ENGINE_NAMES[s.engine]}`;
  $("messages").replaceChildren(...out.warnings.map((m) => Object.assign(document.createElement("li"), { textContent: m })));
  $("answer").hidden = false;
  const scale = Math.max(out.total_bytes, out.available_bytes);
  const seg = { weights: out.weights_bytes, kv: out.kv_cache_bytes, overhead: out.overhead_bytes,
    free: Math.max(0, out.available_bytes - out.total_bytes) };
  for (const [key, bytes] of Object.entries(seg)) {
    $(`bar-${key}`).style.width = `${(100 * bytes) / scale}%`;
    $(`val-${key}`).textContent = gib(bytes);
    $(`val-${key}`).dataset.bytes = String(bytes);
  }
  $("bar-limit").style.left = `${(100 * out.available_bytes) / scale}%`;
  $("val-usable").textContent = gib(out.available_bytes);
  $("bar").setAttribute("aria-label", `Weights ${gib(seg.weights)}, KV cache ${gib(seg.kv)}, overhead ${gib(seg.overhead)}; usable ${gib(out.available_bytes)}`);
  $("max-context").textContent = `${fmt(out.max_context)} tokens`;
  $("max-seqs").textContent = `${fmt(out.max_seqs)} at ${fmt(s.context)} tokens each`;
  const pooled = s.engine === "vllm" || s.engine === "sglang";
  $("pool").textContent = pooled ? `${gib(out.kv_pool_bytes)} per GPU, ${fmt(out.kv_pool_tokens)} tokens` : "";
  $("pool-row").hidden = !pooled;
  $("command").textContent = commandFor(r.name, r.hfRepo, s, out);
  $("command-note").textContent = !out.fits && out.max_context >= 1 ? `With the largest context that fits (${fmt(out.max_context)}):`
    : !out.fits ? "This will not start as set; the command shows the settings for reference:" : "";
  const base = new URL(root.dataset.api, window.location.href);
  $("errors").replaceChildren(...out.error_ids.map((id) => {
    const li = document.createElement("li");
    const a = Object.assign(document.createElement("a"), { href: new URL(`../../${data.errors[id]}`, base).href, textContent: id });
    li.append(a);
    return li;
  }));
  $("errors-block").hidden = out.error_ids.length === 0;
  $("steps").replaceChildren(...stepsFor(r.arch, s, out).map((t) => Object.assign(document.createElement("li"), { textContent: t })));
}

if (typeof window !== "undefined" && typeof document !== "undefined") {
  if (typeof window.document$ !== "undefined") window.document$.subscribe(() => mount());
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
}
