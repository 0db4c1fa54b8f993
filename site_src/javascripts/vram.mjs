// Calculator math for the "Will it run?" page: the browser twin of the Python
// package hooks/errorkb/calculator/ (read its docstrings for the why). Every
// constant comes from the facts the build exports (api/v1/calculator.json,
// key "facts"; errorkb.calculator.facts.export): call configure(facts) once
// before anything else. Pure functions over plain objects with the same
// snake_case keys; both run over tests/calculator_cases.json.

export let F = null;   // the facts: tables by their export() names
export let C = null;   // the numeric constants by their Python names
export let ENGINES, ENGINE_NAMES, KV_TYPES, KV_BY_ENGINE, OLLAMA_KV_BPE, QUANTS, NATIVE_TO_VLLM, GIB, MIB;

/** Install the facts the build exported; returns them for chaining. */
export function configure(facts) {
  F = facts;
  C = facts.numbers;
  ({ engines: ENGINES, engine_names: ENGINE_NAMES, kv_types: KV_TYPES, kv_by_engine: KV_BY_ENGINE,
    ollama_kv_bpe: OLLAMA_KV_BPE, quants: QUANTS, native_to_vllm: NATIVE_TO_VLLM } = facts);
  GIB = C.GIB; MIB = C.MIB;
  return facts;
}

const fmt = (n) => n.toLocaleString("en-US");
export const cdiv = (a, b) => Math.floor((a + b - 1) / b);
export const pad = (n, to) => cdiv(n, to) * to;
const count = (list, item) => list.filter((x) => x === item).length;

export function layerKinds(arch) {
  if (arch.mla) return Array(arch.layers).fill("mla");
  const pattern = arch.layer_pattern && arch.layer_pattern.length ? arch.layer_pattern : ["full"];
  return Array.from({ length: arch.layers }, (_, i) => pattern[i % pattern.length]);
}

export function rowBytes(kv, n) {
  const [size, block] = KV_TYPES[kv];
  return Math.floor((n * size) / block);
}

// ------------------------------------------------------------------ inputs

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

// ----------------------------------------------------------------- weights

export const embeddingParams = (arch) => arch.vocab_size * arch.hidden_size;

/** Parameters by tensor class (errorkb.calculator.weights.tensor_classes). */
export function tensorClasses(arch, quant) {
  const emb = Math.min(embeddingParams(arch) * (arch.tie_word_embeddings ? 1 : 2), arch.params_total);
  const classes = { embeddings: emb, attention: 0, router: 0 };
  if ("attn_bpw" in QUANTS[quant] && !arch.mla) {
    classes.attention = arch.layers * arch.hidden_size * arch.head_dim * 2 * (arch.attention_heads + arch.kv_heads);
    classes.router = arch.layers * arch.hidden_size * (arch.experts || 0);
  }
  classes.body = Math.max(0, arch.params_total - classes.embeddings - classes.attention - classes.router);
  return classes;
}

export function weightsBytes(arch, quant, bodyScale = 1) {
  const q = QUANTS[quant];
  const c = tensorClasses(arch, quant);
  const wide = c.attention + c.router;
  return Math.floor((c.body * bodyScale * q.bpw) / 8) + Math.floor((c.embeddings * q.embed_bpw) / 8)
    + Math.floor((wide * (q.attn_bpw ?? q.bpw)) / 8);
}

export function vllmWeights(arch, quant) {
  let scale = 1;
  if (quant === "mxfp4" && arch.experts) scale = pad(arch.hidden_size, C.VLLM_MXFP4_HIDDEN_ALIGN) / arch.hidden_size;
  return weightsBytes(arch, quant, scale);
}

export function ggufGpuWeights(arch, quant) {
  const total = weightsBytes(arch, quant);
  if (arch.tie_word_embeddings) return total;
  return total - Math.floor((embeddingParams(arch) * QUANTS[quant].embed_bpw) / 8);
}

// ----------------------------------------------------------- the engines

export function llamacppKv(arch, context, seqs, kv, cellPad = C.LLAMACPP_PAD, mlaV = false) {
  const cells = pad(context, cellPad);
  const swaCells = Math.min(cells, pad((arch.sliding_window || 0) + C.LLAMACPP_UBATCH, cellPad));
  let total = 0;
  for (const kind of layerKinds(arch)) {
    let perCell;
    if (kind === "mla") {
      perCell = rowBytes(kv, arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) + (mlaV ? rowBytes(kv, arch.mla.kv_lora_rank) : 0);
    } else {
      perCell = 2 * rowBytes(kv, arch.kv_heads * arch.head_dim);
    }
    total += perCell * (kind === "sliding" ? swaCells : cells);
  }
  return total * seqs;
}

export const llamacppCompute = (arch) => 4 * C.LLAMACPP_UBATCH * (arch.vocab_size + arch.hidden_size);

export function ollamaKv(arch, context, seqs, kv) {
  const tokens = context * seqs;
  const mla = arch.mla;
  const kDim = mla ? (mla.qk_nope_head_dim || 0) + mla.qk_rope_head_dim : arch.head_dim;
  const vDim = mla ? mla.v_head_dim || arch.head_dim : arch.head_dim;
  const perToken = (kDim + vDim) * arch.kv_heads;
  const window = { gemma3: arch.sliding_window || 0, "gpt-oss": C.OLLAMA_GPT_OSS_WINDOW }[arch.family];
  let total = 0;
  for (const kind of layerKinds(arch)) {
    const n = kind === "sliding" && window ? seqs * window + C.OLLAMA_BATCH : tokens;
    total += Math.floor(n * perToken * OLLAMA_KV_BPE[kv]);
  }
  return total;
}

export function ollamaGraph(arch, context, seqs) {
  const b = C.OLLAMA_BATCH, c = context * seqs, e = arch.hidden_size;
  return Math.max(4 * b * (1 + 4 * e + c * (1 + arch.attention_heads)), 4 * b * (e + arch.vocab_size));
}

export function vllmPage(arch, kv, tp) {
  const size = KV_TYPES[kv][0];
  if (arch.mla) return C.VLLM_BLOCK * (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) * size;
  const heads = Math.max(1, Math.floor(arch.kv_heads / tp));
  return 2 * C.VLLM_BLOCK * heads * arch.head_dim * size;
}

export function vllmGroups(arch) {
  const kinds = layerKinds(arch);
  const nSlide = count(kinds, "sliding");
  const nFull = kinds.length - nSlide;
  if (!nSlide || !nFull) return [kinds.length, nFull > 0 ? 1 : 0, nSlide > 0 ? 1 : 0];
  let size = Math.min(nFull, nSlide);
  if (Math.max(nFull, nSlide) < size * 1.5) size = Math.max(nFull, nSlide);
  return [size, cdiv(nFull, size), cdiv(nSlide, size)];
}

export function vllmBlocksPerRequest(arch, context, batched) {
  const [, gFull, gSlide] = vllmGroups(arch);
  const full = cdiv(context, C.VLLM_BLOCK);
  const slide = cdiv(Math.min((arch.sliding_window || 0) - 1 + batched, context), C.VLLM_BLOCK) + 1;
  return gFull * full + gSlide * slide;
}

export function vllmBatched(vramBytes, gpuId) {
  if (vramBytes >= C.VLLM_LARGE_CARD && !(gpuId || "").includes("a100")) return [C.VLLM_BATCHED_LARGE, C.VLLM_SEQS_LARGE];
  return [C.VLLM_BATCHED_SMALL, C.VLLM_SEQS_SMALL];
}

export function vllmOverhead(arch, batched, maxSeqs, tp, v0 = false) {
  const samplerReqs = Math.min(maxSeqs, batched);
  const copies = v0 ? C.VLLM_SAMPLER_COPIES_V0 : C.VLLM_SAMPLER_COPIES;
  return {
    "activation peak": Math.max(Math.floor((batched * arch.hidden_size * C.VLLM_ACT_PER_TOKEN_HIDDEN) / tp),
      samplerReqs * arch.vocab_size * 4 * copies),
    "non-torch memory": C.VLLM_NON_TORCH + (tp > 1 ? C.VLLM_NON_TORCH_TP : 0),
  };
}

// SGLang (errorkb.calculator.sglang): the default --mem-fraction-static and the token pool.
export function sglangTier(gpuMib, tp) {
  for (const [bound, chunk, bsSmall, bsLarge] of F.sglang_tiers) {
    if (bound === null || gpuMib < bound) return [chunk, tp < 4 ? bsSmall : bsLarge];
  }
  throw new Error("the last tier has no bound");
}

export function sglangPrefillGraphSizes(maxTokens) {
  let count = 0;
  for (const [first, last, step] of F.sglang_prefill_graph_steps) {
    const top = Math.min(last || maxTokens, maxTokens);
    if (top >= first) count += Math.floor((top - first) / step) + 1;
  }
  return count;
}

export function sglangReserved(gpuMib, tp, mla, prefillGraphs) {
  const [chunk, maxBs] = sglangTier(gpuMib, tp);
  const parts = { metadata: C.SGLANG_RESERVE_BASE_MIB, activations: Math.max(chunk, C.SGLANG_ACT_MIN_TOKENS) * C.SGLANG_ACT_MIB_PER_TOKEN,
    parallel: (tp / 8) * C.SGLANG_PARALLEL_MIB, "decode graphs": maxBs * C.SGLANG_GRAPH_MIB_PER_BATCH, "prefill graphs": 0 };
  if (prefillGraphs) parts["prefill graphs"] = mla ? C.SGLANG_PREFILL_GRAPH_MLA_MIB : sglangPrefillGraphSizes(chunk) * C.SGLANG_PREFILL_GRAPH_MIB;
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  if (gpuMib > C.SGLANG_FLOOR_ABOVE_MIB && total < C.SGLANG_FLOOR_MIB) parts["floor for large cards"] = C.SGLANG_FLOOR_MIB - total;
  return parts;
}

export function sglangMemFraction(vramBytes, tp, mla, prefillGraphs) {
  const gpuMib = vramBytes / C.MIB;
  const reserved = Object.values(sglangReserved(gpuMib, tp, mla, prefillGraphs)).reduce((a, b) => a + b, 0);
  return Math.floor(((gpuMib - reserved) / gpuMib) * 1000 + 0.5) / 1000;
}

export function sglangCell(arch, kv, tp) {
  const size = KV_TYPES[kv][0];
  if (arch.mla) return arch.layers * (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) * size;
  return arch.layers * 2 * Math.max(1, Math.floor(arch.kv_heads / tp)) * arch.head_dim * size;
}

export function sglangMaxRunning(tokens, context) {
  const estimated = Math.min(Math.max(Math.trunc((tokens / context) * C.SGLANG_REQS_PER_CONTEXT), C.SGLANG_REQS_MIN), C.SGLANG_REQS_MAX);
  return Math.max(0, Math.min(estimated, Math.floor(tokens / 2)));
}

/** The static fraction the aiter backend (AMD) leaves: 0.85 of it above 8192 tokens of context. */
export function sglangAiterFraction(fraction, context) {
  return context > C.SGLANG_AITER_RESERVE_ABOVE ? fraction * C.SGLANG_AITER_RESERVE : fraction;
}

/** Bytes of aiter's paged-decode workspace one GPU allocates after the pool (none for MLA models). */
export function sglangAiterWorkspace(arch, maxRunning, context, tp) {
  if (arch.mla) return 0;
  const perPartition = maxRunning * Math.max(1, Math.floor(arch.attention_heads / tp)) * cdiv(context, C.SGLANG_AITER_PARTITION);
  return perPartition * (arch.head_dim * C.SGLANG_AITER_BYTES_PER_HEAD_DIM + C.SGLANG_AITER_BYTES_PER_PARTITION);
}

const sum = (obj) => Object.values(obj).reduce((a, b) => a + b, 0);

/** llama.cpp, and Ollama since it runs llama-server: llama.cpp's cells; Ollama before 0.30: its own estimate. */
function ggufParts(arch, s, ctx, seqs) {
  const n = s.gpus;
  const weights = ggufGpuWeights(arch, s.quant);
  let kv, parts;
  if (s.engine === "ollama" && s.ollama_legacy) {
    kv = ollamaKv(arch, ctx, seqs, s.kv_dtype);
    parts = { "graph (Ollama estimate)": ollamaGraph(arch, ctx, seqs) };
  } else {
    kv = llamacppKv(arch, ctx, seqs, s.kv_dtype, s.llamacpp_pad, Boolean(s.llamacpp_mla_v));
    parts = { "compute buffer": llamacppCompute(arch) * n };
  }
  if (s.vendor !== "apple") {
    if (s.engine === "llamacpp") parts["runtime context"] = C.RUNTIME_CONTEXT * n;
    else parts["minimum free memory"] = C.OLLAMA_RESERVE * n;
  }
  return { weights, kv, parts };
}

export const fitApplies = (s) => s.engine === "llamacpp" || (s.engine === "ollama" && !s.ollama_legacy);

export function fitLayers(layers, budget, spread, other) {
  if (spread + other <= budget) return layers;
  return Math.max(0, Math.min(layers, Math.floor(((budget - other) * layers) / spread)));
}

/** What --fit does without -c and -ngl (errorkb.calculator.llamacpp.llamacpp_fit). */
export function llamacppFit(layers, native, budget, useAt) {
  const fits = (ctx) => useAt(ctx).reduce((a, b) => a + b, 0) <= budget;
  const floor = Math.min(native, C.LLAMACPP_FIT_MIN_CTX);
  if (fits(native)) return { context: native, gpu_layers: layers, context_reduced: false };
  if (fits(floor)) {
    let lo = Math.floor(floor / C.LLAMACPP_FIT_ALIGN), hi = Math.floor(Math.max(floor, native) / C.LLAMACPP_FIT_ALIGN);
    while (lo < hi) {
      const mid = Math.floor((lo + hi + 1) / 2);
      if (fits(mid * C.LLAMACPP_FIT_ALIGN)) lo = mid;
      else hi = mid - 1;
    }
    return { context: Math.max(floor, lo * C.LLAMACPP_FIT_ALIGN), gpu_layers: layers, context_reduced: true };
  }
  return { context: floor, gpu_layers: fitLayers(layers, budget, ...useAt(floor)), context_reduced: native > floor };
}

export function ollamaDefaultCtx(totalVram, native) {
  const [, ctx] = F.ollama_ctx_tiers.find(([atLeast]) => totalVram >= atLeast);
  return Math.min(ctx, native);
}

/** What the engine does on its own (errorkb.calculator.verdict.engine_defaults). */
export function engineDefaults(arch, s, out) {
  if (!fitApplies(s)) return {};
  const budget = out.available_bytes - C.LLAMACPP_FIT_MARGIN * s.gpus;
  const useAt = (ctx) => { const p = ggufParts(arch, s, ctx, s.seqs); return [p.weights + p.kv, sum(p.parts)]; };
  const found = { fit_gpu_layers: fitLayers(arch.layers, budget, out.weights_bytes + out.kv_cache_bytes, out.overhead_bytes) };
  if (s.engine === "llamacpp") found.llamacpp_defaults = llamacppFit(arch.layers, arch.native_context, budget, useAt);
  else found.ollama_defaults = { num_ctx: ollamaDefaultCtx(s.usable_bytes, arch.native_context), num_parallel: C.OLLAMA_NUM_PARALLEL };
  return found;
}

export function plan(arch, s) {
  const { engine, context: ctx, seqs, gpus: n } = s;
  const out = { engine, layers: arch.layers, kv_pool_bytes: null, kv_pool_tokens: null, gpu_layers: null, max_concurrency: null };
  let weights, kv, parts, usable;
  if (engine === "vllm") {
    usable = Math.floor(s.vram_bytes * s.gpu_memory_utilization);
    let [batched, maxSeqs] = vllmBatched(s.vram_bytes, s.gpu_id);
    batched = s.max_num_batched_tokens || batched;
    maxSeqs = s.max_num_seqs || maxSeqs;
    parts = vllmOverhead(arch, batched, maxSeqs, n, Boolean(s.vllm_v0));
    weights = cdiv(vllmWeights(arch, s.quant), n);
    const pool = usable - weights - sum(parts);
    const page = vllmPage(arch, s.kv_dtype, n);
    const [groupSize, gFull, gSlide] = vllmGroups(arch);
    const blocks = Math.floor(Math.floor(Math.max(pool, 0) / page) / groupSize);
    const perReq = vllmBlocksPerRequest(arch, ctx, batched);
    const one = groupSize * page * perReq;
    Object.assign(out, { kv_pool_bytes: Math.max(pool, 0), kv_pool_tokens: Math.floor(blocks / (gFull + gSlide)) * C.VLLM_BLOCK,
      max_concurrency: blocks / perReq, kv_one_request_bytes: one, batched_tokens: batched });
    kv = one * seqs;
    const starts = pool > 0 && one <= pool;
    out.fits_all = starts && perReq * seqs <= blocks;
    out.starts = starts;
    weights *= n; kv *= n; usable *= n;
    parts = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, v * n]));
  } else if (engine === "sglang") {
    const graphs = s.vendor === "nvidia";
    const aiter = s.vendor === "amd"; // the default attention backend on AMD Instinct
    const mla = Boolean(arch.mla);
    const fraction = s.mem_fraction_static || sglangMemFraction(s.vram_bytes, n, mla, graphs);
    const effective = aiter ? sglangAiterFraction(fraction, ctx) : fraction;
    const freeAtStart = s.vram_bytes - C.RUNTIME_CONTEXT;
    const staticBytes = Math.floor(freeAtStart * effective);
    weights = cdiv(weightsBytes(arch, s.quant), n);
    const pool = staticBytes - weights;
    const cell = sglangCell(arch, s.kv_dtype, n);
    const tokens = Math.floor(Math.max(pool, 0) / cell);
    const running = sglangMaxRunning(tokens, ctx);
    const workspace = aiter ? sglangAiterWorkspace(arch, running, ctx, n) : 0; // allocated after the pool
    Object.assign(out, { kv_pool_bytes: Math.max(pool, 0), kv_pool_tokens: tokens, kv_one_request_bytes: cell * ctx,
      mem_fraction_static: fraction, mem_fraction_effective: effective, max_running_requests: running,
      sglang_reserved_mib: sglangReserved(s.vram_bytes / C.MIB, n, mla, graphs), aiter_workspace_bytes: workspace,
      max_concurrency: tokens / ctx });
    out.starts = tokens > 0 && workspace <= freeAtStart - staticBytes;
    out.fits_all = out.starts && tokens >= ctx * seqs && seqs <= running;
    parts = { "kept outside --mem-fraction-static": Math.max(freeAtStart - staticBytes - workspace, 0) * n,
      "runtime context": C.RUNTIME_CONTEXT * n };
    if (aiter && workspace) parts["aiter decode workspace"] = workspace * n;
    kv = cell * ctx * seqs * n;
    weights *= n;
    usable = s.vram_bytes * n;
  } else {
    ({ weights, kv, parts } = ggufParts(arch, s, ctx, seqs));
    usable = s.usable_bytes;
  }
  const overhead = sum(parts);
  const total = weights + kv + overhead;
  Object.assign(out, { weights_bytes: weights, kv_cache_bytes: kv, overhead_bytes: overhead, overhead_parts: parts,
    total_bytes: total, available_bytes: usable });
  if (engine === "vllm") {
    out.fits = out.starts;
  } else if (engine === "sglang") {
    out.fits = out.starts && out.kv_pool_tokens >= ctx;
  } else {
    out.fits = total <= usable;
    if (!out.fits) {
      const perLayer = (weights + kv) / arch.layers;
      out.gpu_layers = Math.max(0, Math.min(arch.layers, Math.floor((usable - overhead) / perLayer)));
    }
  }
  return out;
}

function largest(lo, hi, ok) {
  if (hi < lo || !ok(lo)) return lo - 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi + 1) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function evaluate(arch, scenario) {
  const [s, errors, warnings] = checkInputs(arch, scenario);
  if (errors.length) return { ok: false, errors, warnings };
  const out = plan(arch, s);
  Object.assign(out, { ok: true, errors: [], warnings });
  const fitsWith = (ctx, seqs) => {
    const p = plan(arch, { ...s, context: ctx, seqs });
    return s.engine === "vllm" ? p.fits_all : p.fits;
  };
  const limit = arch.native_context;
  if (s.engine === "sglang" && s.vendor === "amd") { // aiter: the fraction and the workspace follow the context
    out.max_context = Math.max(0, largest(1, Math.min(limit, out.kv_pool_tokens), (c) => fitsWith(c, 1)));
    out.max_seqs = Math.min(Math.floor(out.kv_pool_tokens / s.context), out.max_running_requests);
  } else if (s.engine === "sglang") {
    out.max_context = Math.min(limit, out.kv_pool_tokens);
    out.max_seqs = Math.min(Math.floor(out.kv_pool_tokens / s.context), out.max_running_requests);
  } else if (s.engine === "vllm") {
    out.max_context = Math.max(0, largest(1, limit, (c) => plan(arch, { ...s, context: c, seqs: 1 }).starts));
    out.max_seqs = out.starts ? Math.floor(out.max_concurrency) : 0;
  } else {
    out.max_context = Math.max(0, largest(1, limit, (c) => fitsWith(c, s.seqs)));
    out.max_seqs = Math.max(0, largest(1, C.MAX_SEQS, (k) => fitsWith(s.context, k)));
  }
  out.verdict = verdict(out, s);
  out.error_ids = predictedErrors(out, s);
  out.release = F.releases[s.engine].release;
  Object.assign(out, engineDefaults(arch, s, out));
  out.scenario = s;
  return out;
}

export function verdict(out, s) {
  if (!out.fits) return "no";
  if ((s.engine === "vllm" || s.engine === "sglang") && !out.fits_all) return "tight";
  if (s.engine === "sglang") return out.kv_cache_bytes > out.kv_pool_bytes * s.gpus * (1 - C.TIGHT_MARGIN) ? "tight" : "fits";
  if (out.total_bytes > out.available_bytes * (1 - C.TIGHT_MARGIN)) return "tight";
  if (fitApplies(s) && out.total_bytes > out.available_bytes - C.LLAMACPP_FIT_MARGIN * s.gpus) return "tight";
  return "fits";
}

export function predictedErrors(out, s) {
  if (out.verdict === "fits") return [];
  const E = F.error_ids;
  const oom = E[`oom_${s.vendor}`] || E.oom_nvidia;
  const ids = [];
  if (s.engine === "vllm") {
    if (out.available_bytes < out.weights_bytes + out.overhead_bytes) ids.push(oom);
    if (out.kv_pool_bytes <= 0) ids.push(E.vllm_no_blocks);
    else if (!out.starts) ids.push(E.vllm_max_seq_len);
    if (out.starts && !out.fits_all) ids.push(E.vllm_max_seq_len);
    return ids;
  }
  if (s.engine === "sglang") {
    if (out.kv_pool_tokens > 0 && !out.starts) return [oom]; // aiter's decode workspace finds no room after the pool
    if (out.weights_bytes > out.available_bytes - out.overhead_parts["runtime context"]) ids.push(oom);
    ids.push(E.sglang_memory);
    return ids;
  }
  if (s.engine === "llamacpp") ids.push(s.vendor === "nvidia" ? E.llamacpp_malloc : oom);
  else ids.push(E.ollama_memory, oom);
  if (out.kv_cache_bytes > out.weights_bytes && s.vendor === "nvidia") ids.push(E.long_context);
  return ids;
}

/** Plan and verdict without the searches for the limits (what the fit tables of the pages need). */
export function assess(arch, scenario) {
  const [s, errors, warnings] = checkInputs(arch, scenario);
  if (errors.length) return { ok: false, errors, warnings };
  const out = plan(arch, s);
  Object.assign(out, { ok: true, errors: [], warnings });
  out.verdict = verdict(out, s);
  return out;
}

/** KV bytes one GPU holds for `seqs` sequences of `context` tokens, as the engine sizes them. */
export function kvCacheFor(arch, engine, kv, context, seqs = 1) {
  if (engine === "llamacpp" || engine === "ollama") return llamacppKv(arch, context, seqs, kv);
  if (engine === "sglang") return sglangCell(arch, kv, 1) * context * seqs;
  const groupSize = vllmGroups(arch)[0];
  return groupSize * vllmPage(arch, kv, 1) * vllmBlocksPerRequest(arch, context, C.VLLM_BATCHED_SMALL) * seqs;
}

/** What one more token of context costs once sliding windows are full. */
export function kvCachePerToken(arch, engine, kv) {
  const n = C.PER_TOKEN_PROBE;
  return (kvCacheFor(arch, engine, kv, 2 * n) - kvCacheFor(arch, engine, kv, n)) / n;
}

/** The scenario for a GPU of calculator.json; errorkb.calculator.hardware.scenario is its twin. */
export function scenario(gpuId, gpu, engine, context, quant = null, kv = "auto", seqs = 1, gpus = 1, utilization = C.VLLM_DEFAULT_UTIL) {
  return { engine, quant, kv_dtype: kv, context, seqs, gpus, vram_bytes: gpu.memory_mib * C.MIB, vendor: gpu.vendor,
    gpu_id: gpuId, unified_share: gpu.gpu_share_default, gpu_memory_utilization: utilization };
}
