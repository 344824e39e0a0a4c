// Builds a node startup snapshot with the TypeScript checker loaded, its library declarations parsed
// and its code warmed up, so that a TypeScript grading does not redo that work on every run.
//
// Usage (by the grader only, outside the sandbox, on our own vendored code and a fixed sample):
//   node --snapshot-blob OUT.blob --build-snapshot typescript-snapshot.js CHECKER.js TRANSPILER.js
// A node started with `--snapshot-blob OUT.blob SCRIPT ARGS...` finds the checker on
// globalThis.__chainruleTypeChecker and sucrase on globalThis.__chainruleTranspiler, and then runs
// SCRIPT as a CommonJS module, with ARGS as usual.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");
const v8 = require("v8");
const Module = require("module");

function runCommonJS(file, mainRequire) {
  const wrapper = vm.runInThisContext(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file });
  const mod = { exports: {} };
  wrapper.call(mod.exports, mod.exports, mainRequire(file), mod, file, path.dirname(file));
  return mod.exports;
}

const checkerFile = path.resolve(process.argv[2]);
const checker = runCommonJS(checkerFile, () => require);
const sample = [
  "export function f(values: number[], grad: number[]): number[] {",
  "  const seen = new Set<number>(values); const map = new Map<string, number>();",
  "  for (const v of values) { seen.add(Math.tanh(v) ** 2); map.set(String(v), v); }",
  "  const wrong: number = 'text'; console.log(wrong, Array.from(seen).includes(1));",
  "  return grad.map((g, i) => g + (values[i] ?? 0));",
  "}",
].join("\n");
for (let i = 0; i < 3; i++) checker.typeCheck(sample, "/warm-up/solution.ts");
globalThis.__chainruleTypeChecker = checker;
const transpiler = runCommonJS(path.resolve(process.argv[3]), () => require);
transpiler.transform(sample, { transforms: ["typescript", "imports"], filePath: "/warm-up/solution.ts" });
globalThis.__chainruleTranspiler = transpiler;

v8.startupSnapshot.setDeserializeMainFunction(() => {
  runCommonJS(path.resolve(process.argv[1]), (file) => Module.createRequire(file));
});
