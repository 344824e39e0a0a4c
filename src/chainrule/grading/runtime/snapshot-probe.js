// Run from a freshly built TypeScript snapshot: prints "ready" when the checker is there and works.
"use strict";
const checker = globalThis.__chainruleTypeChecker;
const errors = checker ? checker.typeCheck('const n: number = "x";', "/probe/solution.ts") : [];
process.stdout.write(errors.length === 1 && errors[0].code === 2322 ? "ready\n" : "not ready\n");
