// Calculator engines in the browser: the twin of hooks/errorkb/calculator/
// layers.py (shapes), weights.py, and one section per engine as llamacpp.py,
// ollama.py, vllm.py and sglang.py are one module each (read their docstrings
// for the why). Input: an architecture and the engine's settings; output:
// bytes, tokens and the engine's own defaults. Pure functions over the facts
// of ./facts.mjs.
import { C, F, KV_TYPES, OLLAMA_KV_BPE, QUANTS } from "./facts.mjs";

// ------------------------------------------------------------------ layers (layers.py)

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

// ----------------------------------------------------------------- weights (weights.py)

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

/** What SGLang loads: MXFP4 experts padded the way its MoE backend needs (F.sglang_mxfp4_align). */
export function sglangWeights(arch, quant, vendor = "nvidia", computeCapability = null) {
  let scale = 1;
  if (quant === "mxfp4" && arch.experts) {
    const inter = arch.expert_intermediate || arch.hidden_size;
    let key = "cuda";
    if (vendor === "amd") key = "amd";
    else if (vendor === "nvidia" && (computeCapability || "").split(".")[0] === "10") key = "sm100";
    const [alignI, alignH] = F.sglang_mxfp4_align[key];
    scale = (pad(inter, alignI) * pad(arch.hidden_size, alignH)) / (inter * arch.hidden_size);
  }
  return weightsBytes(arch, quant, scale);
}

export function ggufGpuWeights(arch, quant) {
  const total = weightsBytes(arch, quant);
  if (arch.tie_word_embeddings) return total;
  return total - Math.floor((embeddingParams(arch) * QUANTS[quant].embed_bpw) / 8);
}

// ----------------------------------------------------------- llama.cpp (llamacpp.py)

/** Per-head K and V widths of an MLA model run without the latent cache (llamacpp.mla_head_dims). */
export function mlaHeadDims(arch) {
  const mla = arch.mla;
  const kDim = mla.qk_nope_head_dim ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : arch.head_dim;
  return [kDim, mla.v_head_dim || arch.head_dim];
}

export function llamacppKv(arch, context, seqs, kv, cellPad = C.LLAMACPP_PAD, mlaV = false, mlaFullHeads = false) {
  const cells = pad(context, cellPad);
  const swaCells = Math.min(cells, pad((arch.sliding_window || 0) + C.LLAMACPP_UBATCH, cellPad));
  let total = 0;
  for (const kind of layerKinds(arch)) {
    let perCell;
    if (kind === "mla" && mlaFullHeads) {
      const [kDim, vDim] = mlaHeadDims(arch);
      perCell = rowBytes(kv, arch.kv_heads * kDim) + rowBytes(kv, arch.kv_heads * vDim);
    } else if (kind === "mla") {
      perCell = rowBytes(kv, arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) + (mlaV ? rowBytes(kv, arch.mla.kv_lora_rank) : 0);
    } else {
      perCell = 2 * rowBytes(kv, arch.kv_heads * arch.head_dim);
    }
    total += perCell * (kind === "sliding" ? swaCells : cells);
  }
  return total * seqs;
}

export const llamacppCompute = (arch) => 4 * C.LLAMACPP_UBATCH * (arch.vocab_size + arch.hidden_size);
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


// ------------------------------------------------------------------ Ollama (ollama.py)

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
export function ollamaDefaultCtx(totalVram, native) {
  const [, ctx] = F.ollama_ctx_tiers.find(([atLeast]) => totalVram >= atLeast);
  return Math.min(ctx, native);
}

// -------------------------------------------------------------------- vLLM (vllm.py)

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
  if (vramBytes >= C.VLLM_HUGE_CARD) return [C.VLLM_BATCHED_HUGE, C.VLLM_SEQS_HUGE];
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

// ----------------------------------------------------------------- SGLang (sglang.py)

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
