// Log reader and proposals for the "Will it run?" page: the browser twin of
// hooks/errorkb/calculator/fromlog.py (readLog) and proposal.py (propose; the
// command lines are commands.mjs's, as proposal.py's are commands.py's).
// The patterns and limits come from the build (api/v1/calculator.json, key
// "log_reader"; fromlog.export): call configure(reader) once, after
// vram.configure(facts). Pure functions; both languages run over
// tests/fromlog_cases.json.
import * as vram from "./vram.mjs";

let R = null;

/** Install the exported patterns and proposal limits. */
export function configure(reader) {
  R = reader;
  return reader;
}

export function detect(text) {
  for (const [engine, pattern] of R.detect) if (new RegExp(pattern, "m").test(text)) return engine;
  return null;
}

function value(m, field, first = 1, defaultUnit = "GiB") {
  const raw = m[first].trim();
  if (field.endsWith("_gib")) {
    const unit = m.length - 1 > first ? m[first + 1] || "" : defaultUnit;
    return Number(raw) * R.to_gib[unit];
  }
  if (R.number_fields.includes(field)) return Number(raw.replaceAll(",", ""));
  return raw;
}

function apply(table, text, out, skip = []) {
  for (const [field, [spec, ...patterns]] of Object.entries(table)) {
    if (skip.includes(field) || (out[field] !== undefined && out[field] !== null)) continue;
    const [mode, unit = "GiB"] = spec.split(":"); // "device:MiB": sizes printed without a unit are MiB
    let values = [];
    for (const pattern of patterns) {
      const found = [...text.matchAll(new RegExp(pattern, "gm"))];
      if (mode === "device") {
        const byDevice = new Map();
        for (const m of found) byDevice.set(m[1], value(m, field, 2, unit));
        values = [...byDevice.values()];
      } else if (mode === "count") values = found.length ? [new Set(found.map((m) => m[1])).size] : [];
      else values = found.map((m) => value(m, field, 1, unit));
      if (values.length) break;
    }
    if (values.length) {
      out[field] = mode === "sum" || mode === "device" ? values.reduce((a, b) => a + b, 0)
        : mode === "first" ? values[0] : values[values.length - 1];
    }
  }
}

// SGLang starts with any pool of at least one token: it caps one request at the pool and refuses a longer one.
function sglangCapped(out, s, tokens) {
  if (tokens <= 0) return;
  const n = (x) => x.toLocaleString("en-US");
  Object.assign(out, { starts: true, capped_tokens: tokens,
    note: `SGLang starts: its pool holds ${n(tokens)} tokens, fewer than the ${n(s.context)} asked, so it refuses a request longer than the pool. The largest context that fits is below.` });
}

function tidy(r) {
  const engine = r.engine;
  const has = (k) => r[k] !== undefined && r[k] !== null;
  if (engine === "vllm" && !has("kv_tokens") && r.gpu_blocks) r.kv_tokens = r.gpu_blocks * 16;
  if (engine === "vllm" && !has("kv_tokens") && r.concurrency && r.context) r.kv_tokens = Math.round(r.context * r.concurrency);
  if (engine === "llamacpp" && !has("kv_gib") && has("kv_total_gib")) r.kv_gib = r.kv_total_gib;
  if ((engine === "llamacpp" || engine === "ollama") && !has("tp") && (r.devices || 0) > 1) r.tp = r.devices; // a row a GPU
  if (engine === "ollama" && r.ctx_size && !has("context")) r.context = Math.floor(r.ctx_size / (r.seqs || 1));
  const defaultCtx = r.default_ctx;
  delete r.default_ctx;
  if (engine === "ollama" && !has("context") && defaultCtx) r.context = defaultCtx; // the num_ctx Ollama picked for the GPU
  if (engine === "ollama" && has("gpu_free_list")) {
    const list = r.gpu_free_list;
    delete r.gpu_free_list;
    const sizes = [...list.matchAll(new RegExp(R.size, "g"))].map((m) => Number(m[1]) * R.to_gib[m[2]]);
    if (sizes.length) { r.tp = sizes.length; r.gpu_free_gib = sizes.reduce((a, b) => a + b, 0) / sizes.length; }
  }
  if (engine === "sglang") {
    if (has("k_gib")) r.kv_gib = r.k_gib + (r.v_gib || 0);
    else if (has("kv_size_gib")) r.kv_gib = r.kv_size_gib;
    if (has("weights_gib") && has("free_after_weights_gib")) r.gpu_total_gib = r.weights_gib + r.free_after_weights_gib;
  }
  for (const key of ["context", "seqs", "tp", "kv_tokens", "gpu_layers", "model_layers", "batched"]) {
    if (has(key)) r[key] = Math.trunc(r[key]);
  }
  const text = r.failure || "";
  r.failure_kind = null; r.error_id = null;
  for (const [of, pattern, kind, entry] of R.failures) {
    if ((of === "*" || of === engine) && text && new RegExp(pattern).test(text)) { r.failure_kind = kind; r.error_id = entry; break; }
  }
  if (r.failure_kind === null && engine === "vllm" && has("kv_gib") && r.kv_gib <= 0) {
    r.failure_kind = "vllm_no_blocks"; r.error_id = "vllm-no-available-kv-cache-blocks";
  }
  if (r.failure_kind === null && engine === "ollama" && r.library === "cpu") {
    r.failure_kind = "ollama_cpu_only"; r.error_id = "ollama-gpu-not-used";
  }
  if (r.failure_kind === null && engine === "llamacpp" && r.gpu_layers === 0 && (r.model_layers || 0) > 0) {
    r.failure_kind = "llamacpp_cpu_only"; // no layer on a GPU: the model is in system RAM (see fromlog.py)
  }
  return r;
}

/** Every memory fact the log states (see fromlog.read_log). */
export function readLog(text) {
  const engine = detect(text);
  if (engine === null) return { engine: null, failure_kind: null, error_id: null };
  const out = { engine };
  apply(R.patterns[engine], text, out);
  if (R.inherit[engine]) apply(R.patterns[R.inherit[engine]], text, out, ["context", "seqs"]);
  return tidy(out);
}

// ------------------------------------------------------------------ proposal (proposal.py)

const KV_ALIAS = { auto: "bf16", fp8_e4m3: "fp8", fp8_e5m2: "fp8" };
function bytesPer(kv) {
  const [size, block] = vram.KV_TYPES[KV_ALIAS[kv] || kv] || [2, 1];
  return size / block;
}
const nan = (v) => (v === undefined || v === null ? NaN : v);

export function kvNeed(r, arch, s) {
  const { engine } = r;
  const { context: ctx, seqs, kv, gpus: n } = s;
  const mla = Boolean(arch && arch.mla);
  if (arch) {
    if (engine === "vllm") {
      const kind = bytesPer(kv) === 1 ? "fp8" : "bf16";
      return vram.vllmGroups(arch)[0] * vram.vllmPage(arch, kind, n)
        * vram.vllmBlocksPerRequest(arch, ctx, r.batched || vram.C.VLLM_BATCHED_SMALL) * seqs;
    }
    if (engine === "sglang") {
      const width = mla ? arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim : 2 * Math.max(1, Math.floor(arch.kv_heads / n)) * arch.head_dim;
      return ctx * seqs * arch.layers * width * bytesPer(kv);
    }
    const name = vram.KV_TYPES[kv] ? kv : "f16";
    // An MLA GGUF without llama.cpp's MLA keys prints every KV head (n_head_kv 128 for DeepSeek V3, 1 with the keys).
    const fullHeads = mla && (r.n_head_kv || 1) > 1;
    return (engine === "llamacpp" ? vram.llamacppKv(arch, ctx, seqs, name, vram.C.LLAMACPP_PAD, false, fullHeads)
      : vram.ollamaKv(arch, ctx, seqs, name)) / n;
  }
  const baseKv = r.kv_dtype || s.kv0;
  let perToken;
  if (r.needed_kv_gib && r.context) perToken = (r.needed_kv_gib * vram.GIB) / r.context;
  else if (hybrid(r) && r.kv_gib) perToken = (r.kv_gib * vram.GIB) / (r.concurrency * r.context);
  else if (r.kv_tokens && r.kv_gib) perToken = (r.kv_gib * vram.GIB) / r.kv_tokens;
  else if (r.kv_gib && r.context) perToken = (r.kv_gib * vram.GIB) / (r.context * (r.seqs || 1));
  else return NaN;
  const split = engine === "llamacpp" || engine === "ollama" ? n / (r.tp || 1) : 1;
  return (perToken * ctx * seqs * bytesPer(kv)) / bytesPer(baseKv) / split;
}

export function room(r, s, gpuGib) {
  const { engine } = r;
  const n0 = r.tp || 1;
  const n = s.gpus;
  const total = (r.gpu_total_gib || gpuGib || NaN) * vram.GIB;
  const weights = (r.weights_gib || 0) * vram.GIB;
  if (engine === "vllm" || engine === "sglang") {
    let pool = nan(r.kv_gib) * vram.GIB;
    const share0 = engine === "vllm" ? r.util : r.mem_fraction_static;
    const share = s.util || share0;
    if (share !== share0) pool += (share - share0) * total;
    return pool + weights * (1 - n0 / n);
  }
  const free = (r.gpu_free_gib || r.gpu_total_gib || gpuGib || NaN) * vram.GIB;
  if (engine === "ollama" && r.required_gib !== undefined && r.required_gib !== null) {
    const fixed = (r.required_gib - (r.kv_gib || 0)) * vram.GIB;
    return (free * n - fixed) / n;
  }
  // llama.cpp, and Ollama since llama-server runs inside it (its memory table, no memory.required line)
  const compute = (r.compute_gib || 0) * vram.GIB;
  const runtime = r.gpu_free_gib ? 0 : vram.C.RUNTIME_CONTEXT;
  return (free * n - weights - (compute + runtime) * n) / n;
}

/** proposal.hybrid's twin: vLLM's concurrency line disagrees with its pool in tokens beyond its two decimals. */
export function hybrid(r) {
  if (r.engine !== "vllm" || !(r.concurrency && r.context && r.kv_tokens)) return false;
  return Math.abs(r.concurrency * r.context - r.kv_tokens) > 0.005 * r.context + 1;
}

/** The pool in tokens a vLLM or SGLang log printed, when s keeps the logged settings (see proposal.token_pool). */
export function tokenPool(r, s) {
  if (!["vllm", "sglang"].includes(r.engine) || !r.kv_tokens) return null;
  const logged = asked(r);
  const same = s.kv === logged.kv && s.gpus === logged.gpus && (s.util || logged.util) === logged.util;
  if (!same) return null;
  if (hybrid(r)) return Math.floor(r.concurrency * r.context); // requests of C tokens the pool holds, hybrid layers counted
  return r.kv_tokens;
}

export function fits(r, arch, s, gpuGib) {
  const need = kvNeed(r, arch, s);
  const have = room(r, s, gpuGib);
  if (Number.isNaN(need) || Number.isNaN(have)) {
    const pool = tokenPool(r, s);
    return pool !== null && s.context * s.seqs > 0 && s.context * s.seqs <= pool;
  }
  return need > 0 && need <= have;
}

function largestContext(r, arch, s, gpuGib, ceiling) {
  let lo = 0;
  let hi = ceiling;
  while (lo < hi) {
    const mid = Math.floor((lo + hi + 1) / 2);
    if (fits(r, arch, { ...s, context: mid }, gpuGib)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function asked(r) {
  const kv0 = r.kv_dtype || (r.engine === "vllm" || r.engine === "sglang" ? "auto" : "f16");
  return { context: r.context ?? null, seqs: r.engine === "vllm" || r.engine === "sglang" ? 1 : r.seqs || 1, kv: kv0, kv0,
    gpus: r.tp || 1, util: (r.engine === "vllm" ? r.util : r.mem_fraction_static) ?? null };
}

function finish(r, out, s, arch, gpuGib) {
  for (const p of out.proposals) {
    delete p.kv0;
    p.fits = fits(r, arch, { ...p, kv0: s.kv0 }, gpuGib);
    p.command = vram.proposalCommand(r, p);
  }
  return out;
}

/** A vLLM or SGLang log that gives its KV pool in tokens only: the pool in GiB by the engine's arithmetic (see proposal.pool_from_tokens). */
export function poolFromTokens(r, arch) {
  if (!["vllm", "sglang"].includes(r.engine) || (r.kv_gib !== undefined && r.kv_gib !== null) || !r.kv_tokens || !arch) return r;
  const s = asked(r);
  return { ...r, kv_gib: kvNeed(r, arch, { ...s, context: r.kv_tokens, seqs: 1 }) / vram.GIB };
}

/** proposal._fit's twin: llama.cpp's own --fit projection when the log gives no budget of its own. */
function fit(r, out) {
  if (out.starts !== null && out.starts !== undefined) return;
  if (r.fit_projected_gib == null || r.fit_free_gib == null) return;
  const several = (r.fit_devices || 0) > 1 || (r.devices || 0) > 1;
  if (several && r.fit_projected_gib <= r.fit_free_gib) return; // a sum over GPUs can hide a device that is over
  const margin = several ? 0 : r.fit_margin_gib || 0;
  out.fit = { projected_bytes: r.fit_projected_gib * vram.GIB, free_bytes: r.fit_free_gib * vram.GIB, margin_bytes: margin * vram.GIB };
  out.starts = r.fit_projected_gib + margin <= r.fit_free_gib;
}

/** The budget the log implies and the nearest settings that start (see proposal.propose). */
export function propose(r, arch = null, gpuGib = null, nativeContext = null) {
  const P = R.proposal;
  r = poolFromTokens(r, arch);
  const s = asked(r);
  const { kv0, ...shown } = s;
  const out = { engine: r.engine, asked: shown, failure: r.failure ?? null, failure_kind: r.failure_kind,
    error_id: r.error_id, proposals: [] };
  const limit = nativeContext || r.n_ctx_train; // the model's own longest context, when known
  const ceiling = Math.min(limit || P.context_ceiling, P.context_ceiling);
  if (!s.context) {
    const have = room(r, s, gpuGib);
    Object.assign(out, { need_bytes: null, room_bytes: Number.isNaN(have) ? null : have, starts: null });
    if (["llamacpp", "ollama"].includes(r.engine) && s.gpus === 1 && r.kv_gib !== undefined && r.kv_gib !== null && !Number.isNaN(have)) {
      // the KV cache the log sized, at whatever context it was given, against the room the log leaves
      Object.assign(out, { need_bytes: r.kv_gib * vram.GIB, starts: r.kv_gib * vram.GIB > 0 && r.kv_gib * vram.GIB <= have });
    }
    const best = largestContext(r, arch, { ...s, context: 1 }, gpuGib, ceiling);
    if (best > 0) {
      out.proposals.push({ change: "context", ...s, context: best });
      out.note = "The log does not say which context was asked; the largest that fits is below.";
    } else {
      fit(r, out);
      out.note = out.starts !== null
        ? "The log does not print the context it was given, so no other context is proposed."
        : "The log does not say which context was asked, nor enough numbers for a budget (KV size and the memory left for it).";
    }
    return finish(r, out, s, arch, gpuGib);
  }
  const need = kvNeed(r, arch, s);
  const have = room(r, s, gpuGib);
  const inBytes = !Number.isNaN(need) && !Number.isNaN(have);
  const pool = inBytes ? null : tokenPool(r, s);
  Object.assign(out, { need_bytes: Number.isNaN(need) ? null : need, room_bytes: Number.isNaN(have) ? null : have,
    starts: inBytes || pool !== null ? fits(r, arch, s, gpuGib) : null });
  if (r.engine === "sglang" && out.starts === false && !r.failure) {
    sglangCapped(out, s, pool !== null ? pool : inBytes && need > 0 ? Math.floor(have / (need / (s.context * s.seqs))) : 0);
  }
  if (pool !== null) out.pool_tokens = pool;
  else if (!inBytes) {
    fit(r, out);
    if (out.starts === null) out.note = "The log does not give enough numbers for a budget (KV size and the memory left for it).";
    return out;
  }
  const best = largestContext(r, arch, s, gpuGib, ceiling);
  if (best > 0) {
    out.proposals.push({ change: "context", ...s, context: best });
    // vLLM and SGLang also refuse a length above the model's own limit (max_position_embeddings): when neither a
    // model entry nor the log gives it, a context longer than the one asked holds only if the model allows it
    if (["vllm", "sglang"].includes(r.engine) && !limit && best > (s.context || 0)) {
      out.proposals[out.proposals.length - 1].model_limit_unknown = true;
    }
  }
  if (!out.starts) {
    const total = (r.gpu_total_gib || gpuGib || 0) * vram.GIB;
    if ((r.engine === "vllm" || r.engine === "sglang") && s.util && total && inBytes) {
      const util = Math.ceil((s.util + (need - have) / total) * 100) / 100;
      if (util <= P.max_util && fits(r, arch, { ...s, util }, gpuGib)) out.proposals.push({ change: "util", ...s, util });
    }
    for (const kv of P.cache_steps[r.engine]) {
      if (bytesPer(kv) < bytesPer(s.kv) && fits(r, arch, { ...s, kv }, gpuGib)) {
        out.proposals.push({ change: "kv", ...s, kv });
        break;
      }
    }
    const heads = arch ? arch.attention_heads : null;
    for (const n of P.gpu_counts) {
      if (n > s.gpus && (heads === null || heads % n === 0) && fits(r, arch, { ...s, gpus: n }, gpuGib)) {
        out.proposals.push({ change: "gpus", ...s, gpus: n });
        break;
      }
    }
  }
  return finish(r, out, s, arch, gpuGib);
}

// ------------------------------------------------------------------ names (fromlog.model_key, gpu_key)

/** "neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8" -> "llama-3.1-70b". */
export function modelKey(name) {
  let base = name.trim().replace(/\/+$/, "").split("/").pop().toLowerCase();
  if (base.endsWith(".gguf")) base = base.slice(0, -5);
  const packaging = new RegExp(R.packaging);
  return base.split(/[-_ ]+/).filter((w) => w && !packaging.test(w)).join("-");
}

export function gpuKey(name) {
  return name.toLowerCase().replace(/[^a-z0-9 ]/g, " ").split(/\s+/).filter((w) => w && !R.gpu_noise.includes(w)).join(" ");
}

/** The model entry a log's model name points at ({id: {hf_repo}} as in calculator.json), or null. */
export function resolveModel(name, models) {
  if (!name) return null;
  const key = modelKey(name);
  for (const id of Object.keys(models).sort()) {
    if (key && (key === modelKey(id) || key === modelKey(models[id].hf_repo))) return id;
  }
  return null;
}

export function resolveGpu(name, gpus) {
  if (!name) return null;
  const key = gpuKey(name);
  for (const id of Object.keys(gpus).sort()) if (key && gpuKey(gpus[id].title).startsWith(key)) return id;
  return null;
}
