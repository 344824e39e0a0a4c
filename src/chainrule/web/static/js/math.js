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
}

/** Render one TeX string into `node`; falls back to the plain TeX text if KaTeX cannot parse it. */
export function renderTex(node, tex, displayMode = true) {
  try {
    katex.render(tex, node, { displayMode, throwOnError: false });
  } catch (error) {
    node.textContent = tex;
  }
}
