// Build the vendored front-end files of the lesson page.
//   cd frontend/lesson && npm ci && npm run build
// writes src/chainrule/web/static/vendor/{codemirror.js, katex.js, katex.css, fonts/*.woff2, VERSIONS.json}
// so that a user of the Python package never runs npm and the page never loads anything from the internet.
import { build } from "esbuild";
import { mkdirSync, readFileSync, writeFileSync, readdirSync, copyFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "..", "..", "src", "chainrule", "web", "static", "vendor");
const katexDist = join(here, "node_modules", "katex", "dist");

const version = (pkg) => JSON.parse(readFileSync(join(here, "node_modules", ...pkg.split("/"), "package.json"), "utf8")).version;

rmSync(outDir, { recursive: true, force: true });
mkdirSync(join(outDir, "fonts"), { recursive: true });

const common = {
  bundle: true,
  format: "esm",
  minify: true,
  target: ["es2020"],
  legalComments: "eof", // keep the libraries' license headers in the built files
  logLevel: "info",
};

await build({ ...common, entryPoints: [join(here, "src", "codemirror-entry.js")], outfile: join(outDir, "codemirror.js") });
await build({ ...common, entryPoints: [join(here, "src", "katex-entry.js")], outfile: join(outDir, "katex.js") });

// KaTeX's stylesheet lists woff2, woff and ttf for every font. Browsers that load this page all read
// woff2, so ship only those and drop the other formats from the CSS (no dangling URLs).
let css = readFileSync(join(katexDist, "katex.min.css"), "utf8");
css = css.replace(/,\s*url\(fonts\/[^)]+\.woff\) format\("woff"\)/g, "");
css = css.replace(/,\s*url\(fonts\/[^)]+\.ttf\) format\("truetype"\)/g, "");
if (/\.woff\)|\.ttf\)/.test(css)) throw new Error("katex.css still refers to woff/ttf fonts; update build.mjs");
writeFileSync(join(outDir, "katex.css"), css);

let fonts = 0;
for (const name of readdirSync(join(katexDist, "fonts"))) {
  if (name.endsWith(".woff2")) {
    copyFileSync(join(katexDist, "fonts", name), join(outDir, "fonts", name));
    fonts += 1;
  }
}

const versions = Object.fromEntries(
  ["katex", "@codemirror/state", "@codemirror/view", "@codemirror/commands", "@codemirror/language",
   "@codemirror/autocomplete", "@codemirror/lang-python", "@codemirror/lang-javascript", "@lezer/highlight", "esbuild"]
    .map((p) => [p, version(p)]));
// The licenses of everything bundled into the vendored files (all MIT), in one file next to them.
const bundled = ["katex", "@codemirror/state", "@codemirror/view", "@codemirror/commands", "@codemirror/language",
  "@codemirror/autocomplete", "@codemirror/lang-python", "@codemirror/lang-javascript", "@codemirror/lint",
  "@lezer/common", "@lezer/highlight", "@lezer/lr", "@lezer/python", "@lezer/javascript",
  "@marijn/find-cluster-break", "crelt", "style-mod", "w3c-keyname"];
const licenseText = bundled.map((pkg) => {
  const folder = join(here, "node_modules", ...pkg.split("/"));
  const file = readdirSync(folder).find((name) => /^licen[cs]e/i.test(name));
  const text = file ? readFileSync(join(folder, file), "utf8").trim() : "(no license file found in the package)";
  return `## ${pkg} ${version(pkg)}\n\n${text}\n`;
}).join("\n");
writeFileSync(join(outDir, "THIRD_PARTY_LICENSES.md"),
  "# Licenses of the vendored front-end libraries\n\nBuilt by frontend/lesson/build.mjs.\n\n" + licenseText);
writeFileSync(join(outDir, "VERSIONS.json"), JSON.stringify({ built_by: "frontend/lesson/build.mjs", versions }, null, 2) + "\n");
console.log(`vendor: codemirror.js, katex.js, katex.css, ${fonts} woff2 fonts -> ${outDir}`);
