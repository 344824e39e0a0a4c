// Run a learner's JavaScript or TypeScript file against the exercise cases, inside the sandbox.
//
// Usage (by the grader only):  node harness.js SPEC.json
// SPEC.json: {"nonce", "submission": path, "language": "javascript" | "typescript", "call": "neuronGrads" | "gradsOf",
//             "cases": [{"args": [...]}], "output_limit": int, "transpiler": path of the bundled sucrase,
//             "typechecker": path of the bundled TypeScript checker (TypeScript only),
//             "driver": path or null, "entry": name or null}
// With a driver (a case kind's own file, such as engine_driver.js), the learner's file must still define
// `call` (their class or function); the driver's code runs after it in the same scope, and each case calls
// the driver's `entry`, which builds graphs or networks with the learner's own classes.
// Events are lines on stdout, "<marker> <json>", exactly as in harness.py. Numbers are raw (the grader
// rounds, in one place); non-finite numbers travel as "NaN", "Infinity", "-Infinity".
// TypeScript is first type-checked by the real TypeScript compiler (spec.typechecker, the bundled
// typescript-check.js; its errors are one "type-errors" event, sent before any learner code runs), then
// stripped to JavaScript by sucrase, which keeps line numbers, so errors point at the learner's own
// lines. A top-level `function` is found whether or not it is exported.
"use strict";

const fs = require("fs");
const vm = require("vm");

const OUTPUT_SHOWN = 500;
const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const marker = "@@chainrule:" + spec.nonce + "@@ ";
const submission = spec.submission;
const outputLimit = spec.output_limit || 1000000;

const pause = new Int32Array(new SharedArrayBuffer(4));

// node makes its stdout pipe non-blocking: a full pipe answers EAGAIN, so wait a moment and retry.
function emit(event) {
  let data = Buffer.from("\n" + marker + JSON.stringify(event) + "\n", "utf8");
  while (data.length > 0) {
    try {
      data = data.subarray(fs.writeSync(1, data));
    } catch (err) {
      if (err.code !== "EAGAIN") throw err;
      Atomics.wait(pause, 0, 0, 2);
    }
  }
}

let source = "";
let lines = [];

function errorInfo(err) {
  const info = { type: "Error", message: String(err), line: null, text: null };
  if (err && typeof err === "object") {
    info.type = (err.constructor && err.constructor.name) || "Error";
    info.message = String(err.message === undefined ? err : err.message).slice(0, 1000);
    const stack = String(err.stack || "");
    const escaped = submission.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    let match = new RegExp(escaped + ":(\\d+)").exec(stack);
    if (!match && err.loc && err.loc.line) match = [null, String(err.loc.line)]; // sucrase syntax errors
    if (match && Number(match[1]) <= lines.length) {  // past the end: the kind's driver, not the learner's code
      info.line = Number(match[1]);
      info.text = (lines[info.line - 1] || "").trim();
    }
  } else {
    info.type = typeof err;
    info.message = "your code threw " + String(err);
  }
  return info;
}

function encode(x) {
  if (typeof x !== "number") {
    let text;
    try {
      text = JSON.stringify(x);
    } catch (e) {
      text = String(x);
    }
    return { type: x === null ? "null" : typeof x, repr: String(text === undefined ? x : text).slice(0, 80) };
  }
  if (Number.isFinite(x)) return x;
  return Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
}

// Capture what a test prints (console.* and direct stream writes) instead of letting it reach stdout.
let captured = "";
let total = 0;
let currentIndex = null; // the test now running (null while loading)
function capture(chunk) {
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
  total += text.length;
  if (captured.length <= OUTPUT_SHOWN) {
    const kept = text.slice(0, OUTPUT_SHOWN + 1 - captured.length);
    captured += kept;
    // Streamed as it comes, so a test that then hangs still shows what it printed.
    if (currentIndex !== null && kept) emit({ event: "output", index: currentIndex, text: kept });
  }
  if (total > outputLimit) {
    emit({ event: "output-limit" });
    realExit(3);
  }
  return true;
}
const realExit = process.exit.bind(process);
// A learner's process.exit() becomes an error of that test, as SystemExit does in Python.
process.exit = (code) => {
  throw new Error("your code called process.exit(" + (code === undefined ? "" : code) + ")");
};
process.stdout.write = (chunk, encoding, callback) => capture(chunk);
process.stderr.write = (chunk, encoding, callback) => capture(chunk);
function resetCapture() {
  const seen = { output: captured.slice(0, OUTPUT_SHOWN), truncated: total > OUTPUT_SHOWN };
  captured = "";
  total = 0;
  return seen;
}

// The checker comes from the startup snapshot when node was started from one (already loaded and
// warmed up), else from the bundle. A checker failure is reported, never fatal: the tests still run.
function typeCheck(text) {
  try {
    const checker = globalThis.__chainruleTypeChecker || require(spec.typechecker);
    emit({ event: "type-errors", errors: checker.typeCheck(text, submission) });
  } catch (err) {
    emit({ event: "type-check-failed", message: String((err && err.message) || err).slice(0, 500) });
  }
}

let fn;
try {
  source = fs.readFileSync(submission, "utf8");
  lines = source.split("\n");
  if (spec.language === "typescript" && spec.typechecker) typeCheck(source);
  let code = source;
  const hasModules = /^\s*(import|export)\b/m.test(source);
  if (spec.language === "typescript" || hasModules) {
    const { transform } = globalThis.__chainruleTranspiler || require(spec.transpiler);
    const transforms = spec.language === "typescript" ? ["typescript", "imports"] : ["imports"];
    code = transform(source, { transforms, filePath: submission }).code;
  }
  const name = spec.call;
  // The wrapper opens on the first line, so line numbers stay the learner's own.
  const driver = spec.driver ? fs.readFileSync(spec.driver, "utf8") : "";
  const entry = spec.driver ? spec.entry : name;
  const wrapped =
    "(function (exports, require, module, __filename, __dirname) {" + code +
    "\n;" + driver + "\n;return [typeof " + name + ' === "function" ? ' + name + " : undefined, " +
    "typeof " + entry + ' === "function" ? ' + entry + " : undefined];\n})";
  const factory = vm.runInThisContext(wrapped, { filename: submission });
  const mod = { exports: {} };
  const found = factory.call(mod.exports, mod.exports, require, mod, submission, ".");
  fn = found[0];
  if (typeof fn !== "function") fn = mod.exports && mod.exports[name];
  if (typeof fn !== "function") {
    throw new ReferenceError("no function named " + name + " was found in your file");
  }
  if (spec.driver) fn = found[1];
} catch (err) {
  emit({ event: "load-error", error: errorInfo(err), output: resetCapture().output });
  emit({ event: "done" });
  realExit(0);
}
emit({ event: "loaded", output: resetCapture().output });

spec.cases.forEach((testCase, index) => {
  const args = JSON.parse(JSON.stringify(testCase.args)); // fresh arrays: a case cannot spoil the next
  const grad = args[args.length - 1];
  currentIndex = index;
  let actual = null;
  let error = null;
  try {
    const returned = fn(...args);
    if (returned !== undefined && !Array.isArray(returned)) {
      const shown = encode(returned);  // JSON text ({"a":1}), not String()'s "[object Object]"
      throw new TypeError(spec.call + " returned " + shown.type + " " + shown.repr.slice(0, 40) + "; it must return an array of numbers");
    }
    actual = Array.from(returned === undefined ? grad : returned, encode);
  } catch (err) {
    error = errorInfo(err);
  }
  const seen = resetCapture();
  emit({ event: "case", index, actual, error, output: seen.output, truncated: seen.truncated });
});
emit({ event: "done" });
realExit(0);
