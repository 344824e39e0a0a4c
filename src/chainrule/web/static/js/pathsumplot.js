// The path-sum view (a "paths" plot, or a sweeps plot's "paths"): a gradient as the sum over every path from
// an input to the output, walked path by path, each path's part that reverse mode computed once marked.
// Every number comes from the server (the engine's local derivatives, products, sums and counts) with its text.
import { el, plural } from "./api.js";
import { frameStepper, choiceGroup, plotTableView } from "./fitplot.js";

const TIMES = " × ";

/** One path drawn as a chain: input, then each edge's local derivative and the node it leads to; the shared
 * node and the edges from shared_from on (reverse mode's shared part) are marked by a background and an underline
 * (the caption says it in words). */
function pathChain(path) {
  const chain = el("ol", { class: "path-chain", "aria-hidden": "true" }, el("li", { class: "path-node" }, path.nodes[0]));
  path.steps.forEach((step, k) => {
    const marked = (from) => (path.shared_from !== null && from >= path.shared_from ? " path-shared" : "");
    // The shared node itself (the head of the edge before shared_from), then everything after it.
    chain.append(el("li", { class: `path-edge${marked(k)}` }, `→ ${step.local_text} →`),
      el("li", { class: `path-node${marked(k + 1)}` }, step.to));
  });
  return chain;
}

function sharedText(fn, path) {
  if (path.shared_node === null) return "It passes no inner node another path passes, so reverse mode shares none of it.";
  return `Reverse mode computed d${fn.output}/d${path.shared_node} = ${path.shared_gradient_text} once, `
    + `the sum over every path from ${path.shared_node} to ${fn.output}; this path reuses it from ${path.shared_node} on (marked).`;
}

export function renderPathSumPlot(slot, plot) {
  const holder = el("div", { class: "fit-plot path-plot", id: "path-plot" });
  const caption = el("p", { class: "fit-caption", "aria-live": "polite" });
  const tally = el("p", { class: "path-tally" });
  const area = el("div", { class: "path-area" });
  const view = plotTableView("The path sums", 2);
  let fn = plot.functions[0];

  const fillTables = () => {
    view.tables[0].fill(`Every path of ${fn.label} to ${fn.output}, in the order of the steps`,
      ["", "path", "local derivatives", "product", "computed once by reverse mode"],
      fn.paths.map((path, k) => [`${k + 1} (from ${path.input})`, path.nodes.join(" → "),
        path.steps.map((step) => step.local_text).join(TIMES), path.product_text,
        path.shared_node === null ? "nothing" : `d${fn.output}/d${path.shared_node} = ${path.shared_gradient_text}`]));
    view.tables[1].fill("Each input's gradient: the sum of its paths' products, and the backward pass's",
      ["", "paths", "sum of the products", "backward pass"],
      fn.inputs.map((input) => [input.name, `${input.paths}`, input.path_sum_text, input.gradient_text]));
  };

  const show = (k) => {
    holder.dataset.function = fn.name;
    view.tables[0].mark(k - 1);
    const path = fn.paths[k - 1];
    if (!path) {
      area.replaceChildren(el("p", { class: "sweep-formula" }, fn.formulas.join(";  ")));
      tally.textContent = `Multiplications, path by path: 0 of ${fn.path_multiplications}. Reverse mode: one per edge, ${fn.reverse_multiplications}.`;
      caption.textContent = `${fn.label}: ${plural(fn.paths.length, "path")} from the inputs to ${fn.output}. `
        + "Step through them: each path multiplies its local derivatives, and each input's paths add up to its gradient.";
      return;
    }
    area.replaceChildren(el("p", { class: "sweep-formula" }, fn.formulas.join(";  ")), pathChain(path));
    tally.textContent = `Multiplications, path by path: ${path.multiplications_so_far} of ${fn.path_multiplications}. `
      + `Reverse mode: one per edge, ${fn.reverse_multiplications}.`;
    let text = `Path ${k} of ${fn.paths.length}, from ${path.input}: ${path.nodes.join(" → ")}. `
      + `Its local derivatives, multiplied onto the seed 1 (${plural(path.multiplications, "multiplication")}): `
      + `1${TIMES}${path.steps.map((step) => step.local_text).join(TIMES)} = ${path.product_text}. ${sharedText(fn, path)}`;
    const next = fn.paths[k];
    if (!next || next.input !== path.input) {
      const input = fn.inputs.find((entry) => entry.name === path.input);
      text += ` The sum over the ${plural(input.paths, "path")} from ${input.name} is ${input.path_sum_text}; `
        + `the backward pass gives d${fn.output}/d${input.name} = ${input.gradient_text}.`;
    }
    caption.textContent = text;
  };

  const stepper = frameStepper(holder, fn.paths.length, show, caption);
  const redraw = () => {
    stepper.stop();
    fillTables();
    stepper.setLast(fn.paths.length);
    stepper.goTo(0);
  };
  const choices = plot.functions.map((f) => ({ id: f.name, label: f.label, fn: f }));
  holder.append(el("h3", {}, "Why reverse mode shares work: the gradient as a sum over paths"));
  if (choices.length > 1) {
    holder.append(choiceGroup("Function", "path-function", choices, choices[0], (choice) => { fn = choice.fn; redraw(); }));
  }
  const legend = el("p", { class: "plot-legend" }, "Marked (underlined): the part of a path reverse mode computed once.");
  holder.append(stepper.controls, area, legend, tally, caption, view.element);
  slot.append(holder);
  redraw();
  return holder;
}
