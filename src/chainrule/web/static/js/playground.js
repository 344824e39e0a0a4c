// The playground: the learner's own expression, run by the engine on the server (POST /api/playground),
// stepped through with the lessons' graph player, with forward mode beside reverse mode and a nudge
// check. Every number on this page is the server's text (the "<key>_text" beside each number in the
// answer, the trace's included): nothing here formats or computes a number.
import { el, clearLoading, debounce, plural, requestInit } from "./api.js";
import { nudgeTable } from "./explore.js";
import { GraphPlayer, numberText } from "./graph.js";

const RUN_URL = "/api/playground";
const main = document.getElementById("main");
const form = document.getElementById("pg-form");
const expressionInput = document.getElementById("pg-expression");
const expressionProblem = document.getElementById("pg-expression-problem");
const results = document.getElementById("pg-results");
const status = document.getElementById("pg-status");
const inputsSlot = document.getElementById("pg-inputs");
const playerSlot = document.getElementById("pg-player-slot");
const sweepsSlot = document.getElementById("pg-sweeps");
const nudgeSlot = document.getElementById("pg-nudge");

let submitted = null;     // the expression last sent with "Show its graph" (value changes reuse it)
let current = null;       // the last answer that ran
let player = null;
let seed = null;          // the input forward mode differentiates by
let asked = 0;            // the latest request; older answers are dropped
const fields = new Map(); // name -> { input, problem }

// ---------------------------------------------------------------- talking to the server

// api.js's post() shows every failure as a banner at the top of the page; here a problem belongs next to
// the field it is about, said once, so this one call reads the 422's "problems" itself (with api.js's
// request: its token, and class mode's CSRF token).
async function ask(body) {
  let response;
  try {
    response = await fetch(RUN_URL, requestInit("POST", body));
  } catch (error) {
    return { failure: "The lesson server did not answer. Is `chainrule lesson` still running?" };
  }
  let answer = null;
  try { answer = await response.json(); } catch (error) { answer = null; }
  if (response.ok && answer) return { result: answer };
  if (response.status === 422 && answer && Array.isArray(answer.problems)) return { problems: answer.problems };
  const detail = answer && typeof answer.detail === "string" ? answer.detail : response.statusText || "no explanation";
  return { failure: `The playground could not run your expression (HTTP ${response.status}): ${detail}` };
}

function typedValues() {
  const values = Object.create(null);  // a name such as __proto__ is an ordinary key here
  for (const [name, field] of fields) values[name] = field.input.value;
  return values;
}

// The page's address keeps the expression, its inputs and the followed input (#e=...&v.x=2&seed=x), so
// that a reload, or the link sent to a friend, shows the same run.
function saveInAddress(result) {
  const state = new URLSearchParams();
  state.set("e", result.expression);
  for (const [name, field] of fields) state.set(`v.${name}`, field.input.value);
  if (result.seed) state.set("seed", result.seed);
  history.replaceState(null, "", `#${state}`);
}

function readAddress() {
  try {
    const state = new URLSearchParams(window.location.hash.slice(1));
    if (!state.has("e")) return null;
    const values = Object.create(null);
    for (const [key, value] of state) if (key.startsWith("v.")) values[key.slice(2)] = value;
    return { expression: state.get("e"), values, seed: state.get("seed") };
  } catch (error) {
    return null;  // an address that is not ours: start with the example
  }
}

let startValues = null;  // the inputs kept in the address, until the first run makes their fields

async function run({ nudge = null, fromForm = false } = {}) {
  const body = { values: fields.size || !startValues ? typedValues() : startValues, seed };
  if (submitted !== null) body.expression = submitted;
  if (nudge) body.nudge = nudge;
  const ticket = ++asked;
  results.setAttribute("aria-busy", "true");
  const answer = await ask(body);
  if (ticket !== asked) return;  // a newer change is on its way
  results.removeAttribute("aria-busy");
  clearProblems();
  if (answer.result) {
    show(answer.result);
    saveInAddress(answer.result);
  } else if (answer.problems) {
    showProblems(answer.problems, fromForm);
  } else {
    markStale(answer.failure);
  }
  main.dataset.runs = String(Number(main.dataset.runs || "0") + 1);
}

// ---------------------------------------------------------------- problems, said where they are

function clearProblems() {
  expressionProblem.replaceChildren();
  expressionInput.removeAttribute("aria-invalid");
  for (const field of fields.values()) {
    field.problem.textContent = "";
    field.input.removeAttribute("aria-invalid");
  }
  const nudgeProblem = document.getElementById("pg-nudge-problem");
  if (nudgeProblem) nudgeProblem.textContent = "";
  for (const id of ["pg-nudge-input", "pg-nudge-h"]) {
    const input = document.getElementById(id);
    if (input) input.removeAttribute("aria-invalid");
  }
}

// The server counts columns in characters (code points); JavaScript strings count UTF-16 units, so the
// text is split into characters first (an emoji before the problem must not shift the mark).
function span(text, column, length) {
  const chars = Array.from(text);
  const start = Math.min(column - 1, chars.length);
  const end = Math.min(chars.length, start + (length || 1));
  return { chars, start, end, units: [chars.slice(0, start).join("").length, chars.slice(0, end).join("").length] };
}

/** The expression again, with the characters a problem is about marked (escaped: text nodes only). */
function markedText(text, column, length) {
  const { chars, start, end } = span(text, column, length);
  const code = el("code", {});
  code.append(chars.slice(0, start).join(""));
  if (start >= chars.length) {
    code.append(el("mark", { class: "pg-at-end" }, " "));  // the problem is at the end of the text
  } else {
    code.append(el("mark", {}, chars.slice(start, end).join("")), chars.slice(end).join(""));
  }
  return el("pre", { class: "pg-echo", "aria-hidden": "true" }, code);
}

function showProblems(problems, fromForm) {
  const text = submitted === null ? expressionInput.value : submitted;
  let firstMarked = null;
  for (const problem of problems) {
    const where = problem.field || "";
    if (where.startsWith("values.") && fields.has(where.slice(7))) {
      const field = fields.get(where.slice(7));
      field.problem.textContent = problem.message;
      field.input.setAttribute("aria-invalid", "true");
    } else if (where.startsWith("nudge.") && document.getElementById("pg-nudge-problem")) {
      const said = document.getElementById("pg-nudge-problem");
      said.textContent = said.textContent ? `${said.textContent} ${problem.message}` : problem.message;
      const input = document.getElementById(where === "nudge.h" ? "pg-nudge-h" : "pg-nudge-input");
      if (input) input.setAttribute("aria-invalid", "true");
    } else {
      expressionInput.setAttribute("aria-invalid", "true");
      const at = problem.column ? ` (column ${problem.column})` : "";
      const message = el("p", { class: "pg-problem-message", "data-column": problem.column || "" },
        el("strong", {}, "Cannot run this" + at + ": "), problem.message);
      expressionProblem.append(message);
      if (problem.column) {
        expressionProblem.append(markedText(text, problem.column, problem.length));
        if (!firstMarked) firstMarked = problem;
      }
    }
  }
  if (fromForm && firstMarked) {
    // Put the text cursor on the problem too, so that fixing it starts there.
    const [start, end] = span(expressionInput.value, firstMarked.column, firstMarked.length).units;
    expressionInput.focus();
    expressionInput.setSelectionRange(start, end);
  }
  markStale("Not run: fix the problem said at its field.");
}

/** Keep the last numbers that ran on screen, but never as current: say whose they are. */
function markStale(reason) {
  if (!current) {
    status.textContent = reason;
    results.hidden = false;
    results.dataset.state = "none";
    return;
  }
  results.dataset.state = "stale";
  status.replaceChildren(el("strong", {}, reason), " ", `The numbers below are still those of the last run: ${runDescription(current)}.`);
}

function runDescription(result) {
  const inputs = result.values.map((entry) => `${entry.name} = ${entry.value_text}`).join(", ");
  return inputs ? `${result.expression} with ${inputs}` : result.expression;
}

// ---------------------------------------------------------------- a run that worked

function show(result) {
  const sameGraph = current && current.expression === result.expression;
  const sameNames = current && current.names.join(" ") === result.names.join(" ");
  current = result;
  seed = result.seed;
  if (!sameNames) renderInputs(result);
  renderPlayer(result, sameGraph);
  renderSweeps(result);
  renderNudge(result, sameNames);
  const output = result.trace.nodes.find((node) => node.id === result.trace.output);
  status.replaceChildren(`${runDescription(result)}: ${output.label} = ${numberText(output, "data")}. `,
    "Every value and gradient on this page is for these inputs.");
  // Where the first inf or nan came from: the node and the operation that made it.
  const found = result.trace.non_finite;
  const origin = document.getElementById("pg-non-finite");
  origin.hidden = !found;
  origin.textContent = found ? found.text : "";
  results.dataset.nonFinite = found ? found.node : "";
  results.hidden = false;
  results.dataset.state = "current";
}

function renderInputs(result) {
  fields.clear();
  const later = debounce(() => run(), 300);
  const rows = result.values.map((entry) => {
    const id = `pg-value-${entry.name}`;  // names are letters, digits and _ only (the parser's rule)
    const input = el("input", {
      id, type: "text", inputmode: "decimal", autocomplete: "off", class: "number-input", value: entry.value_text,
      "data-name": entry.name, "aria-describedby": `${id}-problem`,
    });
    const problem = el("p", { class: "field-error", id: `${id}-problem`, "aria-live": "polite" });
    input.addEventListener("input", later);
    fields.set(entry.name, { input, problem });
    return el("div", { class: "pg-field" }, el("label", { for: id }, `${entry.name} =`), input, problem);
  });
  inputsSlot.replaceChildren(...(rows.length ? rows : [el("p", { class: "pg-none" },
    "This expression has no names, so it has no inputs to change: it is a constant. Add a name such as x to play with it.")]));
}

// The picture: the lessons' graph player, with its layouts (top to bottom on a phone), its boxes sized to
// this run's numbers, in a frame that scrolls and follows each step.
function renderPlayer(result, sameGraph) {
  const trace = result.trace;
  if (sameGraph && player) {
    // The same graph with other numbers: drawn again (its boxes fit the new numbers), at the same step.
    player.redraw(trace);
    return;
  }
  const holder = el("div", { class: "player-holder pg-player", id: "pg-player" });
  playerSlot.replaceChildren(repeatsNote(result), holder);
  player = new GraphPlayer(holder, trace, {
    name: "playground", title: `The graph of ${result.expression}`,
    onChange: (at, step) => markActiveRow(step ? step.node : null),
  });
}

/** Say when the expression writes one computation more than once: the engine builds each copy anew. */
function repeatsNote(result) {
  const groups = result.repeats || [];
  if (!groups.length) return el("p", { id: "pg-repeats", hidden: true });
  const formula = new Map(result.trace.nodes.map((node) => [node.id, node.formula || node.label]));
  const said = groups.map((ids) => `${plural(ids.length, "time")}: ${ids.map((id) => formula.get(id)).join(", ")}`);
  return el("p", { id: "pg-repeats", class: "pg-repeats", "data-groups": groups.length },
    el("strong", {}, "A computation written more than once is computed more than once. "),
    `Your expression writes the same computation ${said.join("; and ")}. The engine builds a new box each time `
    + "the text writes one (it does not look for repeats), so every copy has its own value and gradient, and the "
    + "gradients of their inputs add up over the copies, as over any two paths.");
}

// ---------------------------------------------------------------- forward mode beside reverse mode

function renderSweeps(result) {
  const sweeps = result.sweeps;
  if (!sweeps) {
    sweepsSlot.replaceChildren(el("p", { class: "pg-none" }, "With no inputs there is nothing to differentiate by: add a name such as x."));
    return;
  }
  const out = sweeps.output;
  const by = sweeps.seed;
  const choice = el("select", { id: "pg-seed", class: "pg-seed" },
    ...result.names.map((name) => el("option", { value: name, selected: name === by }, name)));
  choice.addEventListener("change", () => { seed = choice.value; run(); });
  const symbols = sweeps.symbols;
  const agreement = sweeps.agree
    ? [`Both give ${symbols.result} = `, el("strong", {}, sweeps.forward_text),
      `: forward mode as the tangent of ${out}, reverse mode as the gradient at ${by}.`]
    : [`Here they differ: forward mode gives ${symbols.result} = `, el("strong", {}, sweeps.forward_text),
      ", reverse mode ", el("strong", {}, sweeps.reverse_text),
      ". An infinity or a nan on the way makes the two sums come out differently."];
  const head = el("tr", {},
    el("th", { scope: "col" }, "Node"),
    el("th", { scope: "col" }, "Value"),
    el("th", { scope: "col", class: "pg-forward" }, "Forward: ", el("span", { class: "pg-d" }, symbols.tangent)),
    el("th", { scope: "col", class: "pg-reverse" }, "Reverse: ", el("span", { class: "pg-d" }, symbols.grad)));
  const rows = sweeps.rows.map((row) => el("tr", {
    "data-node": row.node, class: [row.node === sweeps.seed_node ? "pg-seed-row" : "", row.node === result.trace.output ? "pg-output-row" : ""].join(" ").trim() || undefined,
  },
  el("th", { scope: "row" }, el("span", { class: "pg-node-label" }, row.label),
    row.formula ? el("span", { class: "pg-node-formula" }, row.formula) : null),
  el("td", { "data-col": "value" }, row.value_text),
  el("td", { "data-col": "tangent", class: "pg-forward" }, row.tangent_text),
  el("td", { "data-col": "grad", class: "pg-reverse" }, row.grad_text)));
  const table = el("table", { class: "pg-sweeps-table" },
    el("caption", { class: "visually-hidden" }, `Every node's value, its tangent ${symbols.tangent} from forward mode and its gradient ${symbols.grad} from reverse mode`),
    el("thead", {}, head), el("tbody", {}, ...rows));
  sweepsSlot.replaceChildren(
    el("p", { class: "pg-sweeps-intro" },
      "Forward mode follows one input’s effect to every node, in one sweep from the inputs; reverse mode "
      + "gathers every input’s effect on the one output, in one sweep back from it."),
    el("p", { class: "inline pg-seed-choice" }, el("label", { for: "pg-seed" }, "Forward mode follows the input"), choice),
    el("p", { class: "pg-agreement", "data-agree": String(sweeps.agree) }, ...agreement),
    el("div", { class: "pg-table-frame", tabindex: "0", role: "region", "aria-label": "Forward and reverse mode, node by node" }, table));
  markActiveRow(player && player.position > 0 ? player.steps[player.position - 1].node : null);
}

function markActiveRow(nodeId) {
  for (const row of sweepsSlot.querySelectorAll("tr[data-node]")) row.classList.toggle("pg-active-row", row.dataset.node === nodeId);
}

// ---------------------------------------------------------------- the nudge check

function renderNudge(result, sameNames) {
  const existing = document.getElementById("pg-nudge-form");
  if (!result.names.length) {
    nudgeSlot.replaceChildren(el("p", { class: "pg-none" }, "With no inputs there is nothing to nudge."));
    return;
  }
  if (!existing || !sameNames) {
    const which = el("select", { id: "pg-nudge-input", class: "pg-nudge-input" },
      ...result.names.map((name) => el("option", { value: name }, name)));
    const size = el("input", {
      id: "pg-nudge-h", type: "text", inputmode: "decimal", autocomplete: "off", class: "number-input", value: "0.01",
      "aria-describedby": "pg-nudge-problem",
    });
    const nudgeForm = el("form", { id: "pg-nudge-form", class: "nudge-form", novalidate: true },
      el("div", { class: "inline" },
        el("label", { for: "pg-nudge-input" }, "Nudge"), which,
        el("label", { for: "pg-nudge-h" }, "by h ="), size,
        el("button", { type: "submit" }, "Nudge it")),
      el("p", { class: "field-error", id: "pg-nudge-problem", "aria-live": "polite" }),
      el("div", { id: "pg-nudge-result", class: "nudge-result", "aria-live": "polite" }));
    nudgeForm.addEventListener("submit", (event) => {
      event.preventDefault();
      run({ nudge: { input: which.value, h: size.value } });
    });
    nudgeSlot.replaceChildren(nudgeForm);
  }
  const slot = document.getElementById("pg-nudge-result");
  const n = result.nudge;
  if (!n) { slot.replaceChildren(); return; }
  const out = result.sweeps ? result.sweeps.output : "the output";
  slot.replaceChildren(nudgeTable(n, out));
}

// ---------------------------------------------------------------- start

form.addEventListener("submit", (event) => {
  event.preventDefault();
  submitted = expressionInput.value;
  run({ fromForm: true });
});

for (const example of document.querySelectorAll(".pg-example")) {
  example.addEventListener("click", () => {
    expressionInput.value = example.dataset.expression;
    submitted = expressionInput.value;
    run({ fromForm: true });
  });
}

async function start() {
  const saved = readAddress();
  if (saved) {
    submitted = saved.expression;
    expressionInput.value = saved.expression;
    startValues = saved.values;
    seed = saved.seed;
  }
  await run({ fromForm: Boolean(saved) });
  clearLoading();
  if (current && !saved) expressionInput.value = current.expression;
  if (submitted === null) submitted = current ? current.expression : "";
  main.dataset.ready = "true";  // usable: a run, or the problem said where it is
}

start();
