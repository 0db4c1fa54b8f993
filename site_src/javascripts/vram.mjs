// Calculator math for the "Will it run?" page: a line-by-line mirror of
// hooks/errorkb/calculator/vram.py (read its docstrings and constants for the why).
// Pure functions over plain objects with the same snake_case keys; both run
// over tests/calculator_cases.json, so the two cannot drift apart.

export const GIB = 1024 ** 3;
export const MIB = 1024 ** 2;
export const ENGINES = ["vllm", "llamacpp", "ollama"];
export const ENGINE_NAMES = { vllm: "vLLM", llamacpp: "llama.cpp", ollama: "Ollama" };
export const KV_TYPES = { f32: [4, 1], f16: [2, 1], bf16: [2, 1], fp8: [1, 1], q8_0: [34, 32], q4_0: [18, 32] };
export const KV_BY_ENGINE = { vllm: ["f16", "bf16", "fp8"], llamacpp: ["f16", "bf16", "q8_0", "q4_0"], ollama: ["f16", "q8_0", "q4_0"] };
export const OLLAMA_KV_BPE = { f16: 2, q8_0: 1, q4_0: 0.5 };
const GGUF = [["F16", 16.0005], ["Q8_0", 8.5008], ["Q6_K", 6.5633], ["Q5_K_M", 5.7036], ["Q5_K_S", 5.5704],
  ["Q4_K_M", 4.8944], ["Q4_K_S", 4.6672], ["IQ4_XS", 4.4597], ["Q3_K_L", 4.2979], ["Q3_K_S", 3.6429],
  ["IQ3_M", 3.7628], ["Q2_K", 3.1593], ["MXFP4", 4.25]];
export const QUANTS = {
  bf16: { engines: ["vllm"], bpw: 16, embed_bpw: 16 },
  f16: { engines: ["vllm"], bpw: 16, embed_bpw: 16 },
  fp8: { engines: ["vllm"], bpw: 8, embed_bpw: 16 },
  "awq-int4": { engines: ["vllm"], bpw: 4.15625, embed_bpw: 16 },
  "gptq-int4": { engines: ["vllm"], bpw: 4.15625, embed_bpw: 16 },
  mxfp4: { engines: ["vllm"], bpw: 4.25, embed_bpw: 16 },
  ...Object.fromEntries(GGUF.map(([name, bpw]) => [name, { engines: ["llamacpp", "ollama"], bpw, embed_bpw: bpw }])),
};
export const NATIVE_TO_VLLM = { bf16: "bf16", f16: "f16", fp8: "fp8", mxfp4: "mxfp4", f32: "bf16" };
export const C = {
  VLLM_BLOCK: 16, VLLM_DEFAULT_UTIL: 0.9, VLLM_LARGE_CARD: 70 * GIB,
  VLLM_BATCHED_LARGE: 8192, VLLM_SEQS_LARGE: 1024, VLLM_BATCHED_SMALL: 2048, VLLM_SEQS_SMALL: 256,
  VLLM_ACT_PER_TOKEN_HIDDEN: 27, VLLM_SAMPLER_COPIES: 3, VLLM_NON_TORCH: 256 * MIB, VLLM_NON_TORCH_TP: 768 * MIB,
  LLAMACPP_PAD: 256, LLAMACPP_PAD_LEGACY: 32, LLAMACPP_UBATCH: 512, RUNTIME_CONTEXT: 256 * MIB, OLLAMA_BATCH: 512,
  OLLAMA_GPT_OSS_WINDOW: 4096, OLLAMA_RESERVE: 457 * MIB, APPLE_SHARE_FALLBACK: 0.67, TIGHT_MARGIN: 0.05,
  MAX_CONTEXT: 16777216, MAX_SEQS: 4096,
};

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

const ARCH_BOUNDS = { layers: [1, 512], hidden_size: [64, 131072], attention_heads: [1, 1024], kv_heads: [1, 1024],
  head_dim: [8, 1024], vocab_size: [256, 4000000], native_context: [512, C.MAX_CONTEXT], params_total: [1000000, 1e13] };

export function checkArch(arch) {
  const errors = [];
  for (const [key, [lo, hi]] of Object.entries(ARCH_BOUNDS)) {
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

export function checkInputs(arch, sc) {
  const errors = checkArch(arch);
  const warnings = [];
  const engine = sc.engine;
  if (!ENGINES.includes(engine)) return [sc, [...errors, "Pick an engine: vllm, llamacpp or ollama."], warnings];
  const s = { ...sc };
  s.vendor = sc.vendor || "nvidia";
  const native = arch.native_dtype || "bf16";
  s.quant = sc.quant || (engine === "vllm" ? NATIVE_TO_VLLM[native] || "bf16" : "Q4_K_M");
  if (!(s.quant in QUANTS) || !QUANTS[s.quant].engines.includes(engine)) {
    const names = Object.keys(QUANTS).filter((k) => QUANTS[k].engines.includes(engine)).join(", ");
    errors.push(`${s.quant} is not a weight format for ${engine}; choose one of ${names}.`);
  }
  let kv = sc.kv_dtype || "auto";
  if (kv === "auto") kv = engine === "vllm" && ["bf16", "fp8", "mxfp4"].includes(native) ? "bf16" : "f16";
  s.kv_dtype = kv;
  if (!KV_BY_ENGINE[engine].includes(kv)) errors.push(`${engine} has no ${kv} KV cache; it offers ${KV_BY_ENGINE[engine].join(", ")}.`);
  for (const [key, lo, hi, label] of [["context", 1, C.MAX_CONTEXT, "Context"], ["seqs", 1, C.MAX_SEQS, "Concurrent sequences"],
    ["gpus", 1, 64, "GPU count"]]) {
    const v = whole(get(sc, key, key !== "context" ? 1 : null));
    if (v === null || v < lo || v > hi) errors.push(`${label} must be a whole number from ${fmt(lo)} to ${fmt(hi)}.`);
    s[key] = v;
  }
  const nativeCtx = whole(arch.native_context);
  if (s.context && nativeCtx && s.context > nativeCtx) {
    errors.push(`Context ${fmt(s.context)} is longer than the model's native ${fmt(nativeCtx)} tokens.`);
  }
  const vram = number(sc.vram_bytes);
  if (vram === null || vram < 256 * MIB || vram > 2048 * GIB) errors.push("GPU memory must be between 0.25 and 2048 GiB per GPU.");
  else s.vram_bytes = Math.floor(vram);
  const util = number(get(sc, "gpu_memory_utilization", C.VLLM_DEFAULT_UTIL));
  if (engine === "vllm" && (util === null || util < 0.05 || util > 1)) errors.push("gpu_memory_utilization must be a fraction from 0.05 to 1.");
  s.gpu_memory_utilization = util;
  if (s.vendor === "apple") {
    if (engine === "vllm") errors.push("vLLM does not run on Apple GPUs; pick llama.cpp or Ollama.");
    if (s.gpus && s.gpus > 1) errors.push("A Mac has one GPU; set the count to 1.");
  }
  if (engine === "vllm" && s.gpus && !errors.length && arch.attention_heads % s.gpus) {
    errors.push(`vLLM needs the ${arch.attention_heads} attention heads to divide evenly over ${s.gpus} GPUs.`);
  }
  const batched = sc.max_num_batched_tokens;
  if (batched !== undefined && batched !== null && !((whole(batched) || 0) >= 1 && whole(batched) <= 1048576)) {
    errors.push("max_num_batched_tokens must be a whole number from 1 to 1,048,576.");
  }
  s.llamacpp_pad = sc.llamacpp_pad || C.LLAMACPP_PAD;
  if (s.llamacpp_pad !== C.LLAMACPP_PAD && s.llamacpp_pad !== C.LLAMACPP_PAD_LEGACY) {
    errors.push("llamacpp_pad is 256 (current builds) or 32 (older builds without flash attention).");
  }
  if (errors.length) return [s, errors, warnings];
  let share = number(sc.unified_share);
  if (s.vendor === "apple") {
    share = share && share > 0 && share <= 1 ? share : C.APPLE_SHARE_FALLBACK;
    s.usable_bytes = Math.floor(s.vram_bytes * share);
  } else {
    s.usable_bytes = s.vram_bytes * s.gpus;
  }
  if (engine === "vllm" && s.gpus > arch.kv_heads) warnings.push("More GPUs than KV heads: vLLM copies each KV head to several GPUs.");
  return [s, errors, warnings];
}

// ----------------------------------------------------------------- weights

export const embeddingParams = (arch) => arch.vocab_size * arch.hidden_size;

export function weightsBytes(arch, quant) {
  const q = QUANTS[quant];
  const emb = Math.min(embeddingParams(arch) * (arch.tie_word_embeddings ? 1 : 2), arch.params_total);
  const body = arch.params_total - emb;
  return Math.floor((body * q.bpw) / 8) + Math.floor((emb * q.embed_bpw) / 8);
}

export function ggufGpuWeights(arch, quant) {
  const total = weightsBytes(arch, quant);
  if (arch.tie_word_embeddings) return total;
  return total - Math.floor((embeddingParams(arch) * QUANTS[quant].embed_bpw) / 8);
}

// ----------------------------------------------------------- the engines

export function llamacppKv(arch, context, seqs, kv, cellPad = C.LLAMACPP_PAD) {
  const cells = pad(context, cellPad);
  const swaCells = Math.min(cells, pad((arch.sliding_window || 0) + C.LLAMACPP_UBATCH, cellPad));
  let total = 0;
  for (const kind of layerKinds(arch)) {
    let perCell;
    if (kind === "mla") {
      perCell = rowBytes(kv, arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) + rowBytes(kv, arch.mla.kv_lora_rank);
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

export function vllmOverhead(arch, batched, maxSeqs, tp) {
  const samplerReqs = Math.min(maxSeqs, batched);
  return {
    "activation peak": Math.max(Math.floor((batched * arch.hidden_size * C.VLLM_ACT_PER_TOKEN_HIDDEN) / tp),
      samplerReqs * arch.vocab_size * 4 * C.VLLM_SAMPLER_COPIES),
    "non-torch memory": C.VLLM_NON_TORCH + (tp > 1 ? C.VLLM_NON_TORCH_TP : 0),
  };
}

const sum = (obj) => Object.values(obj).reduce((a, b) => a + b, 0);

export function plan(arch, s) {
  const { engine, context: ctx, seqs, gpus: n } = s;
  const out = { engine, layers: arch.layers, kv_pool_bytes: null, kv_pool_tokens: null, gpu_layers: null, max_concurrency: null };
  let weights, kv, parts, usable;
  if (engine === "vllm") {
    usable = Math.floor(s.vram_bytes * s.gpu_memory_utilization);
    let [batched, maxSeqs] = vllmBatched(s.vram_bytes, s.gpu_id);
    batched = s.max_num_batched_tokens || batched;
    parts = vllmOverhead(arch, batched, maxSeqs, n);
    weights = cdiv(weightsBytes(arch, s.quant), n);
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
  } else if (engine === "llamacpp") {
    weights = ggufGpuWeights(arch, s.quant);
    kv = llamacppKv(arch, ctx, seqs, s.kv_dtype, s.llamacpp_pad);
    parts = { "compute buffer": llamacppCompute(arch) * n };
    if (s.vendor !== "apple") parts["runtime context"] = C.RUNTIME_CONTEXT * n;
    usable = s.usable_bytes;
  } else {
    weights = ggufGpuWeights(arch, s.quant);
    kv = ollamaKv(arch, ctx, seqs, s.kv_dtype);
    parts = { "graph (Ollama estimate)": ollamaGraph(arch, ctx, seqs) };
    if (s.vendor !== "apple") parts["minimum free memory"] = C.OLLAMA_RESERVE * n;
    usable = s.usable_bytes;
  }
  const overhead = sum(parts);
  const total = weights + kv + overhead;
  Object.assign(out, { weights_bytes: weights, kv_cache_bytes: kv, overhead_bytes: overhead, overhead_parts: parts,
    total_bytes: total, available_bytes: usable });
  if (engine === "vllm") {
    out.fits = out.starts;
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
  if (s.engine === "vllm") {
    out.max_context = Math.max(0, largest(1, limit, (c) => plan(arch, { ...s, context: c, seqs: 1 }).starts));
    out.max_seqs = out.starts ? Math.floor(out.max_concurrency) : 0;
  } else {
    out.max_context = Math.max(0, largest(1, limit, (c) => fitsWith(c, s.seqs)));
    out.max_seqs = Math.max(0, largest(1, 4096, (k) => fitsWith(s.context, k)));
  }
  out.verdict = verdict(out, s);
  out.error_ids = predictedErrors(out, s);
  out.scenario = s;
  return out;
}

export function verdict(out, s) {
  if (!out.fits) return "no";
  if (s.engine === "vllm" && !out.fits_all) return "tight";
  if (out.total_bytes > out.available_bytes * (1 - C.TIGHT_MARGIN)) return "tight";
  return "fits";
}

export function predictedErrors(out, s) {
  if (out.verdict === "fits") return [];
  const oom = { amd: "rocm-hip-out-of-memory", apple: "metal-out-of-memory" }[s.vendor] || "cuda-oom-loading-model";
  const ids = [];
  if (s.engine === "vllm") {
    if (out.available_bytes < out.weights_bytes + out.overhead_bytes) ids.push(oom);
    if (out.kv_pool_bytes <= 0) ids.push("vllm-no-available-kv-cache-blocks");
    else if (!out.starts) ids.push("vllm-max-seq-len-exceeds-kv-cache");
    if (out.starts && !out.fits_all) ids.push("vllm-max-seq-len-exceeds-kv-cache");
    return ids;
  }
  if (s.engine === "llamacpp") ids.push(s.vendor === "nvidia" ? "llamacpp-cuda-malloc-failed" : oom);
  else ids.push("ollama-requires-more-system-memory", oom);
  if (out.kv_cache_bytes > out.weights_bytes && s.vendor === "nvidia") ids.push("cuda-oom-long-context");
  return ids;
}
