// Calculator facts in the browser: the twin of hooks/errorkb/calculator/facts.py.
// The browser keeps none of its own: every table and constant comes from the
// facts the build exports (api/v1/calculator.json, key "facts";
// errorkb.calculator.facts.export). configure(facts) installs them once,
// before anything else runs; the other modules read them as live bindings.

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
