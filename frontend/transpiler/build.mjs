// Bundle sucrase into ONE JavaScript file, committed at src/chainrule/grading/vendor/sucrase.js.
// Run:  cd frontend/transpiler && npm ci && npm run build
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const outfile = path.resolve(here, "../../src/chainrule/grading/vendor/sucrase.js");
const version = JSON.parse(readFileSync(path.join(here, "node_modules/sucrase/package.json"), "utf8")).version;

await build({
  entryPoints: [path.join(here, "entry.js")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18",
  minify: true,
  legalComments: "eof",
  banner: { js: `// sucrase ${version} (MIT), bundled by frontend/transpiler/build.mjs for chainrule's grader.` },
  outfile,
});
console.log("wrote " + outfile);
