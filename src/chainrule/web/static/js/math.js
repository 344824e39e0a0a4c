// Math rendering with the vendored KaTeX: $...$ inline, $$...$$ display.
import { katex, renderMathInElement } from "../vendor/katex.js";

export function renderMath(node) {
  renderMathInElement(node, {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "\\(", right: "\\)", display: false },
      { left: "$", right: "$", display: false },
    ],
    throwOnError: false,
  });
  keepPunctuationWithMath(node);
  breakOnlyAtRelations(node);
}

/**
 * A full stop or comma after inline math stays on its line: the math and the punctuation go into one
 * span that does not wrap (otherwise a phone may start a line with ".").
 */
function keepPunctuationWithMath(node) {
  for (const math of node.querySelectorAll(".katex:not(.katex-display .katex)")) {
    const after = math.nextSibling;
    if (!after || after.nodeType !== Node.TEXT_NODE) continue;
    const match = /^[.,;:!?)\]]+/.exec(after.textContent);
    if (!match) continue;
    after.textContent = after.textContent.slice(match[0].length);
    const holder = document.createElement("span");
    holder.className = "math-with-punctuation";
    math.replaceWith(holder);
    holder.append(math, match[0]);
  }
}

/**
 * Display math wraps on a narrow screen only after a relation (=, <, ...), never inside one side of an
 * equation: KaTeX's pieces between two relations are grouped into one piece that does not wrap.
 */
function breakOnlyAtRelations(node) {
  for (const html of node.querySelectorAll(".katex-display .katex-html")) {
    if (html.dataset.grouped) continue;
    html.dataset.grouped = "true";
    let group = null;
    for (const base of Array.from(html.children)) {
      if (!base.classList.contains("base")) { group = null; continue; }
      if (!group) {
        group = document.createElement("span");
        group.className = "math-side";
        base.before(group);
      }
      group.append(base);
      const parts = Array.from(base.children).filter((part) => !part.classList.contains("mspace"));
      const last = parts[parts.length - 1];
      if (last && last.classList.contains("mrel")) group = null;  // a line may break after a relation
    }
  }
}

/** Render one TeX string into `node`; falls back to the plain TeX text if KaTeX cannot parse it. */
export function renderTex(node, tex, displayMode = true) {
  try {
    katex.render(tex, node, { displayMode, throwOnError: false });
    breakOnlyAtRelations(node);
  } catch (error) {
    node.textContent = tex;
  }
}
