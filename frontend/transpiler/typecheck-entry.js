// chainrule's type checker for the TypeScript exercises: the real TypeScript compiler, run on the
// learner's one file with an in-memory host (no file system, no network), against the ES2020 library
// declarations bundled in by build.mjs. It runs inside the grading sandbox, before the learner's code.
"use strict";
const ts = require("typescript");
const LIBRARY = require("chainrule-typescript-libs"); // {"lib.es5.d.ts": text, ...}, made by build.mjs

const LIB_DIR = "/typescript-lib/";
// The harness hands learner code a console, require, module and exports; declare what exercises use.
const GLOBALS_FILE = LIB_DIR + "chainrule-globals.d.ts";
const GLOBALS = `
interface Console {
  log(...data: any[]): void; error(...data: any[]): void; warn(...data: any[]): void;
  info(...data: any[]): void; debug(...data: any[]): void; table(...data: any[]): void;
}
declare var console: Console;
declare var require: (id: string) => any;
declare var module: { exports: any };
declare var exports: any;
`;
const OPTIONS = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2020,
  module: ts.ModuleKind.CommonJS,
  lib: ["lib.es2020.d.ts"],
  types: [],
  noResolve: true,
  skipLibCheck: true,
};
const MAX_ERRORS = 20;

const parsedLibs = new Map(); // a lib file is parsed once per process, however many checks run

function libText(fileName) {
  if (fileName === GLOBALS_FILE) return GLOBALS;
  if (!fileName.startsWith(LIB_DIR)) return undefined;
  return LIBRARY[fileName.slice(LIB_DIR.length)];
}

function typeCheck(source, fileName) {
  const host = {
    getSourceFile(name, languageVersion) {
      if (name === fileName) return ts.createSourceFile(name, source, languageVersion, true);
      if (!parsedLibs.has(name)) {
        const text = libText(name);
        parsedLibs.set(name, text === undefined ? undefined : ts.createSourceFile(name, text, languageVersion, false));
      }
      return parsedLibs.get(name);
    },
    getDefaultLibFileName: () => LIB_DIR + "lib.es2020.d.ts",
    getDefaultLibLocation: () => LIB_DIR.slice(0, -1),
    writeFile: () => {},
    getCurrentDirectory: () => "/",
    getDirectories: () => [],
    fileExists: (name) => name === fileName || libText(name) !== undefined,
    readFile: (name) => (name === fileName ? source : libText(name)),
    getCanonicalFileName: (name) => name,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => "\n",
  };
  const program = ts.createProgram([fileName, GLOBALS_FILE], OPTIONS, host);
  const file = program.getSourceFile(fileName);
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(file),
    ...program.getSemanticDiagnostics(file),
  ].filter((d) => d.category === ts.DiagnosticCategory.Error);
  return diagnostics.slice(0, MAX_ERRORS).map((d) => {
    let line = null;
    let column = null;
    if (d.file && d.start !== undefined) {
      const where = d.file.getLineAndCharacterOfPosition(d.start);
      line = where.line + 1;
      column = where.character + 1;
    }
    return { line, column, code: d.code, message: ts.flattenDiagnosticMessageText(d.messageText, "\n") };
  }).concat(diagnostics.length > MAX_ERRORS
    ? [{ line: null, column: null, code: null, message: `... and ${diagnostics.length - MAX_ERRORS} more type errors` }]
    : []);
}

module.exports = { typeCheck, version: ts.version };
