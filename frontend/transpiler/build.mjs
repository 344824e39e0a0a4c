// Bundle the grader's two TypeScript tools, each into ONE JavaScript file committed under
// src/chainrule/grading/vendor/:
//   sucrase.js           sucrase: strips types and turns ES module syntax into CommonJS, keeping lines
//   typescript-check.js  the TypeScript compiler with the ES2020 library declarations, for type errors
// Run:  cd frontend/transpiler && npm ci && npm run build
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const vendor = path.resolve(here, "../../src/chainrule/grading/vendor");
const versionOf = (name) =>
  JSON.parse(readFileSync(path.join(here, "node_modules", name, "package.json"), "utf8")).version;
const common = { bundle: true, platform: "node", format: "cjs", target: "node18", minify: true, legalComments: "eof" };

await build({
  ...common,
  entryPoints: [path.join(here, "entry.js")],
  banner: { js: `// sucrase ${versionOf("sucrase")} (MIT), bundled by frontend/transpiler/build.mjs for chainrule's grader.` },
  outfile: path.join(vendor, "sucrase.js"),
});

// The library declarations lib.es2020.d.ts needs, following its `/// <reference lib="..." />` lines.
const libDir = path.join(here, "node_modules/typescript/lib");
function libClosure(start) {
  const files = {};
  const pending = [start];
  while (pending.length) {
    const name = pending.pop();
    if (name in files) continue;
    files[name] = readFileSync(path.join(libDir, name), "utf8");
    for (const match of files[name].matchAll(/\/\/\/\s*<reference\s+lib="([^"]+)"/g)) {
      pending.push(`lib.${match[1].toLowerCase()}.d.ts`);
    }
  }
  return files;
}
const libs = libClosure("lib.es2020.d.ts");
const bundledLibs = {
  name: "bundled-typescript-libs",
  setup(b) {
    b.onResolve({ filter: /^chainrule-typescript-libs$/ }, (args) => ({ path: args.path, namespace: "libs" }));
    b.onLoad({ filter: /.*/, namespace: "libs" }, () => ({ contents: JSON.stringify(libs), loader: "json" }));
  },
};
await build({
  ...common,
  entryPoints: [path.join(here, "typecheck-entry.js")],
  plugins: [bundledLibs],
  banner: {
    js: `// TypeScript ${versionOf("typescript")} (Apache-2.0) with its ES2020 library declarations (${Object.keys(libs).length} files), ` +
      "bundled by frontend/transpiler/build.mjs for chainrule's grader.",
  },
  outfile: path.join(vendor, "typescript-check.js"),
});
console.log("wrote " + vendor + "/sucrase.js and typescript-check.js");
