// Entry point bundled into static/vendor/katex.js: KaTeX plus its auto-render helper.
import katex from "katex";
import renderMathInElement from "katex/contrib/auto-render";

export { katex, renderMathInElement };
export default katex;
