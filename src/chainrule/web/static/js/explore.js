// Section 03, after the animation: change the inputs and watch every value and gradient change at
// once, then nudge one input by a small h and compare (change in the output) / h with its gradient.
// Every number comes from the engine on the server (POST /api/lessons/{id}/explore/{graph}), with its
// text: nothing here formats a number. The server also reads what was typed: a problem is said once, at
// its field, and the graph never shows numbers for other inputs as if they were for what is typed now.
// When a value or a gradient is inf or nan, the server says where the first one came from (non_finite),
// and the nudge check says whether change / h and the gradient agree, and if not, why (its note).
import { post, el, debounce } from "./api.js";
import { GraphTable, GraphView, currentShape, finalState, markScrolling, numberText } from "./graph.js";

export function renderExplore(slot, lesson, trace, base) {
  const graph = lesson.see_it_work.graph;
  const url = `${base}/explore/${encodeURIComponent(graph)}`;
  const leaves = trace.nodes.filter((node) => node.leaf && !node.constant);
  const output = trace.nodes.find((node) => node.id === trace.output);
  let current = trace;  // the latest trace from the engine (same nodes, other numbers)

  const holder = el("div", { class: "explore", id: "explore" });
  const figure = el("figure", { class: "graph-figure" });
  const status = el("p", { class: "explore-status", "aria-live": "polite" });
  // Where the first inf or nan came from (the node and its operation), while there is one.
  const origin = el("p", { class: "non-finite-note", id: "explore-non-finite", hidden: true });
  const sayOrigin = (steps) => {
    const found = steps && steps.non_finite;
    origin.hidden = !found;
    origin.textContent = found ? found.text : "";
    holder.dataset.nonFinite = found ? found.node : "";
  };
  let view = null;
  const title = "The example graph with your inputs";
  const table = new GraphTable(trace, { title });
  // Drawn from the latest answer's layout: its boxes are sized to its own numbers (a long one widens them).
  const draw = () => {
    const [left, top] = [figure.scrollLeft, figure.scrollTop];
    view = new GraphView(current, { name: "explore", title, shape: currentShape() });
    figure.replaceChildren(view.element);
    figure.scrollLeft = left;
    figure.scrollTop = top;
    holder.dataset.shape = view.shape;
    const { values, grads } = finalState(current);
    view.show(values, grads, null);
    table.show(values, grads, null);
    if (figure.isConnected) markScrolling(figure, title);
  };
  const show = () => draw();
  // The graph's numbers are for the inputs of `current`; while what is typed cannot be run they are
  // marked as the last ones that worked (greyed, and said in words), never as the learner's.
  const lastInputs = () => current.nodes.filter((node) => node.leaf && !node.constant)
    .map((node) => `${node.label} = ${numberText(node, "data")}`).join(", ");
  const markStale = (stale) => {
    holder.dataset.stale = String(stale);
    figure.classList.toggle("stale", stale);
    if (stale) status.textContent = `Not run: the graph still shows the numbers for ${lastInputs()}, not for what is typed now.`;
  };

  // One number field per input; every change runs the graph again.
  const fields = new Map();
  const problem = el("p", { class: "field-error", id: "explore-problem", "aria-live": "polite" });
  const inputs = el("div", { class: "explore-inputs" });
  for (const leaf of leaves) {
    const id = `explore-${leaf.label}`;
    const field = el("input", { id, type: "text", inputmode: "decimal", autocomplete: "off", class: "number-input", value: numberText(leaf, "data"), "data-input": leaf.label, "aria-describedby": "explore-problem" });
    fields.set(leaf.label, field);
    inputs.append(el("span", { class: "explore-field" }, el("label", { for: id }, `${leaf.label} =`), field));
  }
  // What is typed goes to the server as typed; it reads the numbers.
  const readValues = () => Object.fromEntries(Array.from(fields, ([label, field]) => [label, field.value]));
  /** Say a problem at its field (once: it replaces the last one); null clears every field's problem. */
  const fieldProblem = (error) => {
    const target = error ? fields.get(error.field) || (error.field === "h" ? size : null) : null;
    for (const field of [...fields.values(), size]) field.toggleAttribute("aria-invalid", field === target);
    if (target) target.setAttribute("aria-invalid", "true");
    problem.textContent = error && target !== size ? error.detail : "";
    nudgeProblem.textContent = error && target === size ? error.detail : "";
  };
  let asked = 0;
  const update = async () => {
    const values = readValues();
    const ticket = ++asked;
    holder.setAttribute("aria-busy", "true");
    try {
      const answer = await post(url, { values }, "run the graph with your inputs", { atField: true });
      if (ticket !== asked) return;  // a newer change is on its way
      current = answer.trace;
      show();
      sayOrigin(current);
      fieldProblem(null);
      markStale(false);
      const out = current.nodes.find((node) => node.id === current.output);
      status.textContent = `${out.label} = ${numberText(out, "data")}. Every value and gradient above is for your inputs.`;
      nudgeResult.replaceChildren();
    } catch (error) {
      if (ticket !== asked) return;
      if (error.field) fieldProblem(error);  // anything else: the message area (or the outage notice) says it
      markStale(true);
      nudgeResult.replaceChildren();
    } finally {
      if (ticket === asked) holder.removeAttribute("aria-busy");
    }
  };
  const later = debounce(update, 250);
  for (const field of fields.values()) field.addEventListener("input", later);
  const reset = el("button", { type: "button", class: "secondary explore-reset" }, "Back to the lesson's numbers");
  reset.addEventListener("click", () => {
    for (const leaf of leaves) fields.get(leaf.label).value = numberText(leaf, "data");
    update();
  });

  // The nudge check: move one input by h, see how far the output moves.
  const which = el("select", { id: "nudge-input", class: "nudge-input" },
    ...leaves.map((leaf) => el("option", { value: leaf.label }, leaf.label)));
  const size = el("input", { id: "nudge-h", type: "text", inputmode: "decimal", autocomplete: "off", class: "number-input", value: "0.01", "aria-describedby": "nudge-problem" });
  const nudgeProblem = el("p", { class: "field-error", id: "nudge-problem", "aria-live": "polite" });
  const nudgeResult = el("div", { class: "nudge-result", "aria-live": "polite" });
  const nudgeForm = el("form", { class: "nudge-form" },
    el("div", { class: "inline" },
      el("label", { for: "nudge-input" }, "Nudge"), which,
      el("label", { for: "nudge-h" }, "by h ="), size,
      el("button", { type: "submit" }, "Nudge it")),
    nudgeProblem, nudgeResult);
  nudgeForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const ticket = ++asked;
    let answer;
    try {
      answer = await post(url, { values: readValues(), nudge: { input: which.value, h: size.value } }, "nudge the input", { atField: true });
    } catch (error) {
      if (ticket !== asked) return;
      if (error.field) fieldProblem(error);
      nudgeResult.replaceChildren();  // no table for numbers that were not run
      markStale(true);
      return;
    }
    if (ticket !== asked) return;
    current = answer.trace;
    show();
    sayOrigin(current);
    fieldProblem(null);
    markStale(false);
    const out = current.nodes.find((node) => node.id === current.output);
    status.textContent = `${out.label} = ${numberText(out, "data")}. Every value and gradient above is for your inputs.`;
    nudgeResult.replaceChildren(nudgeTable(answer.nudge, output.label));
  });

  holder.append(
    el("h3", {}, "Explore: change the inputs"),
    el("p", {}, "Type other values for the inputs: the engine runs the graph forward and backward again, and every box shows its new value and gradient."),
    inputs, problem, el("div", { class: "inline" }, reset), figure, status, origin, table.element,
    el("h3", {}, "Nudge check"),
    el("p", {}, "A gradient says how much the output moves per unit of an input. Nudge an input by a small h and compare."),
    nudgeForm);
  slot.append(holder);
  draw();
  sayOrigin(trace);
  window.addEventListener("resize", debounce(() => markScrolling(figure, title), 150));
  window.matchMedia("(max-width: 40rem)").addEventListener("change", draw);
  return { update };
}

/**
 * The nudge check's numbers (the server's texts) and its note, which says whether change / h and the
 * gradient agree and, if not, why (a kink, h not small, an inf or nan and where it came from).
 * Shared with the playground.
 */
export function nudgeTable(n, name) {
  const rows = [
    ["before", `${name} before`, n.before_text],
    ["after", `${name} after moving ${n.input} by ${n.h_text}`, n.after_text],
    ["change", `change in ${name}`, n.change_text],
    ["ratio", "change / h", n.ratio_text],
    ["grad", `gradient ${n.symbol} from the backward pass`, n.grad_text],
  ];
  const table = el("table", { class: "nudge-table" }, el("tbody", {}, ...rows.map(([key, what, text]) =>
    el("tr", { "data-row": key }, el("th", { scope: "row" }, what), el("td", {}, text)))));
  const note = el("p", { class: "nudge-note", "data-verdict": n.verdict }, n.note);
  const holder = document.createDocumentFragment();
  holder.append(table, note);
  return holder;
}
