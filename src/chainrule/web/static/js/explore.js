// Section 03, after the animation: change the inputs and watch every value and gradient change at
// once, then nudge one input by a small h and compare (change in the output) / h with its gradient.
// Every number comes from the engine on the server (POST /api/lessons/{id}/explore/{graph}).
import { post, el, fmt, parseNumber, NUMBER_HELP, debounce } from "./api.js";
import { GraphView, currentShape, finalState } from "./graph.js";

export function renderExplore(slot, lesson, trace, base) {
  const graph = lesson.see_it_work.graph;
  const url = `${base}/explore/${encodeURIComponent(graph)}`;
  const leaves = trace.nodes.filter((node) => node.leaf && !node.constant);
  const output = trace.nodes.find((node) => node.id === trace.output);
  let current = trace;  // the latest trace from the engine (same nodes, other numbers)

  const holder = el("div", { class: "explore", id: "explore" });
  const figure = el("figure", { class: "graph-figure" });
  const status = el("p", { class: "explore-status", "aria-live": "polite" });
  let view = null;
  const draw = () => {
    view = new GraphView(trace, { name: "explore", title: "The example graph with your inputs", shape: currentShape() });
    figure.replaceChildren(view.element);
    holder.dataset.shape = view.shape;
    show();
  };
  const show = () => {
    const { values, grads } = finalState(current);
    view.show(values, grads, null);
  };

  // One number field per input; every change runs the graph again.
  const fields = new Map();
  const problem = el("p", { class: "field-error", "aria-live": "polite" });
  const inputs = el("div", { class: "explore-inputs" });
  for (const leaf of leaves) {
    const id = `explore-${leaf.label}`;
    const field = el("input", { id, type: "text", inputmode: "decimal", autocomplete: "off", class: "number-input", value: fmt(leaf.data), "data-input": leaf.label });
    fields.set(leaf.label, field);
    inputs.append(el("span", { class: "explore-field" }, el("label", { for: id }, `${leaf.label} =`), field));
  }
  const readValues = () => {
    const values = {};
    for (const [label, field] of fields) {
      const number = parseNumber(field.value);
      if (Number.isNaN(number)) {
        problem.textContent = `${label}: ${NUMBER_HELP}`;
        return null;
      }
      values[label] = number;
    }
    problem.textContent = "";
    return values;
  };
  let asked = 0;
  const update = async () => {
    const values = readValues();
    if (!values) return;
    const ticket = ++asked;
    holder.setAttribute("aria-busy", "true");
    try {
      const answer = await post(url, { values }, "run the graph with your inputs");
      if (ticket !== asked) return;  // a newer change is on its way
      current = answer.trace;
      show();
      const out = current.nodes.find((node) => node.id === current.output);
      status.textContent = `${out.label} = ${fmt(out.data)}. Every value and gradient above is for your inputs.`;
      nudgeResult.replaceChildren();
    } catch (error) {
      // the message area says what went wrong
    } finally {
      if (ticket === asked) holder.removeAttribute("aria-busy");
    }
  };
  const later = debounce(update, 250);
  for (const field of fields.values()) field.addEventListener("input", later);
  const reset = el("button", { type: "button", class: "secondary explore-reset" }, "Back to the lesson's numbers");
  reset.addEventListener("click", () => {
    for (const leaf of leaves) fields.get(leaf.label).value = fmt(leaf.data);
    update();
  });

  // The nudge check: move one input by h, see how far the output moves.
  const which = el("select", { id: "nudge-input", class: "nudge-input" },
    ...leaves.map((leaf) => el("option", { value: leaf.label }, leaf.label)));
  const size = el("input", { id: "nudge-h", type: "text", inputmode: "decimal", autocomplete: "off", class: "number-input", value: "0.01" });
  const nudgeProblem = el("p", { class: "field-error", "aria-live": "polite" });
  const nudgeResult = el("div", { class: "nudge-result", "aria-live": "polite" });
  const nudgeForm = el("form", { class: "nudge-form" },
    el("div", { class: "inline" },
      el("label", { for: "nudge-input" }, "Nudge"), which,
      el("label", { for: "nudge-h" }, "by h ="), size,
      el("button", { type: "submit" }, "Nudge it")),
    nudgeProblem, nudgeResult);
  nudgeForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = readValues();
    const h = parseNumber(size.value);
    if (!values) return;
    if (Number.isNaN(h)) { nudgeProblem.textContent = `h: ${NUMBER_HELP}`; return; }
    nudgeProblem.textContent = "";
    const answer = await post(url, { values, nudge: { input: which.value, h } }, "nudge the input").catch(() => null);
    if (!answer) return;
    current = answer.trace;
    show();
    const n = answer.nudge;
    const name = output.label;
    const rows = [
      [`${name} before`, fmt(n.before)],
      [`${name} after moving ${n.input} by ${fmt(n.h)}`, fmt(n.after)],
      [`change in ${name}`, fmt(n.change)],
      [`change / h`, fmt(n.ratio)],
      [`gradient d${name}/d${n.input} from the backward pass`, fmt(n.grad)],
    ];
    nudgeResult.replaceChildren(
      el("table", { class: "nudge-table" }, el("tbody", {}, ...rows.map(([what, value], index) =>
        el("tr", { "data-row": ["before", "after", "change", "ratio", "grad"][index] }, el("th", { scope: "row" }, what), el("td", {}, value))))),
      el("p", { class: "nudge-note" },
        `change / h is ${fmt(n.ratio)} and the gradient is ${fmt(n.grad)}: for a small h they agree, because the gradient `
        + `is how much ${name} moves per unit of ${n.input}.`));
  });

  holder.append(
    el("h3", {}, "Explore: change the inputs"),
    el("p", {}, "Type other values for the inputs: the engine runs the graph forward and backward again, and every box shows its new value and gradient."),
    inputs, problem, el("div", { class: "inline" }, reset), figure, status,
    el("h3", {}, "Nudge check"),
    el("p", {}, "A gradient says how much the output moves per unit of an input. Nudge an input by a small h and compare."),
    nudgeForm);
  slot.append(holder);
  draw();
  window.matchMedia("(max-width: 40rem)").addEventListener("change", draw);
  return { update };
}
