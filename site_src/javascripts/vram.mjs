// Calculator math for the "Will it run?" page: the browser twin of the Python
// package hooks/errorkb/calculator/, and like its vram.py the one import for
// callers. Its parts in ./calculator/ mirror the Python modules by name:
// facts (configure(facts) installs what the build exported in
// api/v1/calculator.json, key "facts"; call it once before anything else) ·
// inputs · engines (layers, weights and one section per engine) · verdict ·
// links · commands. Pure functions over plain objects with the same snake_case
// keys; both languages run over tests/calculator_cases.json.
export * from "./calculator/facts.mjs";
export * from "./calculator/inputs.mjs";
export * from "./calculator/engines.mjs";
export * from "./calculator/verdict.mjs";
export * from "./calculator/links.mjs";
export * from "./calculator/commands.mjs";
