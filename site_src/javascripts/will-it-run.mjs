// "Will it run?" page, its wiring: load the calculator's data, read the form
// and the pasted log, keep the URL in step, and hand each change to
// ./will-it-run-render.mjs. The math is ./vram.mjs's, the state
// ./will-it-run-state.mjs's. mount() runs on every page load and instant
// navigation (document$), and does nothing on pages without the calculator.
import * as vram from "./vram.mjs";
import * as fromlog from "./fromlog.mjs";
import { fmt, gib, render } from "./will-it-run-render.mjs";
import { ARCH_KEYS, DEFAULTS, num, readState, writeState } from "./will-it-run-state.mjs";

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
    state.mla = $("mla").value;
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
    const mla = state.model === "custom" ? Boolean(state.custom.kv_lora_rank) : Boolean(data.models[state.model]?.arch?.mla);
    $("mla").value = state.mla;
    $("mla-field").hidden = !(mla && (state.engine === "llamacpp" || state.engine === "ollama"));
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

const SHOW_GIB = { weights_gib: "weights", kv_gib: "KV cache", cuda_graph_gib: "CUDA graphs (vLLM's estimate)",
  gpu_total_gib: "GPU memory", gpu_free_gib: "free on the GPU" };
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
  const verdictOf = (q) => (q.capped_tokens ? "a request that long does not fit, but SGLang still starts" : q.starts ? "it fits" : "it does not fit");
  const said = [`engine ${vram.ENGINE_NAMES[r.engine] || r.engine}${r.release ? ` ${r.release}` : ""}`,
    `model ${r.model || "?"}${modelId ? ` (${data.models[modelId].title})` : ""}`, `GPU ${r.gpu_name || "?"}`];
  for (const [key, label] of Object.entries(SHOW_GIB)) if (r[key] != null) said.push(`${label} ${r[key].toFixed(2)} GiB`);
  for (const [key, label] of Object.entries(SHOW_NUM)) if (r[key] != null) said.push(`${label} ${r[key]}`);
  $("log-said").textContent = `What the log says: ${said.join("; ")}.`;
  if (p.starts != null && p.need_bytes != null && p.room_bytes != null) {
    const what = p.asked.context ? `The KV cache for ${fmt(p.asked.context)} tokens` : "The KV cache the log sized (its context is not printed)";
    $("log-budget").textContent = `${what} needs ${gib(p.need_bytes)} a GPU; `
      + `the log leaves ${gib(p.room_bytes)} for it: ${verdictOf(p)}.`;
    if (p.note) $("log-budget").textContent += ` ${p.note}`;
  } else if (p.starts != null && p.fit) {
    $("log-budget").textContent = `llama.cpp's own projection (--fit) at the settings it was started with, ${gib(p.fit.projected_bytes)} `
      + `against ${gib(p.fit.free_bytes)} free${p.fit.margin_bytes ? `, keeping ${gib(p.fit.margin_bytes)}` : " (all GPUs together)"}: `
      + `${verdictOf(p)}.`;
  } else if (p.starts != null) {
    $("log-budget").textContent = `A sequence of ${fmt(p.asked.context)} tokens against the ${fmt(p.pool_tokens)} tokens `
      + `the engine's KV pool holds (as the log prints it): ${verdictOf(p)}.`;
    if (p.note) $("log-budget").textContent += ` ${p.note}`;
  } else if (p.note) $("log-budget").textContent = p.note;
  if (r.failure) $("log-failure").textContent = `Why it failed: ${r.failure}`;
  else if (r.failure_kind === "llamacpp_cpu_only") {
    $("log-failure").textContent = `No layer is on a GPU (0 of ${r.model_layers} offloaded): llama.cpp keeps the model in system RAM `
      + "and runs it on the CPU (-ngl 0, a build without GPU support, or --fit found no room on the GPU).";
  } else if (r.failure_kind === "ollama_cpu_only") {
    $("log-failure").textContent = "Ollama found no GPU it can use (library=cpu): the memory figures are system RAM and the model runs on the CPU.";
  }
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
    if (x.model_limit_unknown) {
      li.append(` (only if the model's own limit, max_position_embeddings, is at least ${fmt(x.context)} tokens: the log does not give it)`);
    }
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

if (typeof window !== "undefined" && typeof document !== "undefined") {
  if (typeof window.document$ !== "undefined") window.document$.subscribe(() => mount());
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
}
