// The sweeps plot of a lesson's "see it work": one Jacobian filled two ways. Forward mode fills a column
// per sweep (one input seeded), reverse mode a row per sweep (one output seeded); the engine counted the
// steps of every sweep. Every number comes from the server (lesson.see_it_work.plot), with its text.
import { el, plural } from "./api.js";
import { frameStepper, choiceGroup, tableFrame } from "./fitplot.js";

const MODES = [
  { id: "forward", label: "forward mode (a column per sweep)" },
  { id: "reverse", label: "reverse mode (a row per sweep)" },
];

function formulaList(fn) {
  return el("p", { class: "sweep-formula" }, fn.formulas.join(";  "));
}

export function renderSweepPlot(slot, plot) {
  const holder = el("div", { class: "fit-plot sweep-plot", id: "sweep-plot" });
  const caption = el("p", { class: "fit-caption", "aria-live": "polite" });
  const tally = el("p", { class: "sweep-tally" });
  const area = el("div", { class: "sweep-area" });
  let fn = plot.functions[0];
  let mode = MODES[0];
  let cells = [];

  const table = () => {
    const head = el("tr", {}, el("td", {}), ...fn.inputs.map((name) => el("th", { scope: "col" }, `d/d${name}`)));
    cells = fn.jacobian.map(() => []);
    const rows = fn.jacobian.map((row, i) => el("tr", {}, el("th", { scope: "row" }, `y${i + 1}`),
      ...row.map((_, j) => { const cell = el("td", { class: "sweep-cell" }, "·"); cells[i][j] = cell; return cell; })));
    return el("table", { class: "sweep-table" },
      el("caption", {}, `The Jacobian: row i holds d y_i, column j holds d/d x_j (${fn.jacobian.length} × ${fn.inputs.length})`),
      el("thead", {}, head), el("tbody", {}, ...rows));
  };

  const show = (k) => {
    const frames = fn[mode.id];
    for (const row of cells) for (const cell of row) { cell.textContent = "·"; cell.className = "sweep-cell"; }
    for (let s = 0; s < k; s += 1) {
      const frame = frames[s];
      const current = s === k - 1 ? " current" : "";
      if (mode.id === "forward") {
        frame.column.forEach((_, i) => { cells[i][s].textContent = frame.column_text[i]; cells[i][s].className = `sweep-cell filled${current}`; });
      } else {
        frame.row.forEach((_, j) => { cells[s][j].textContent = frame.row_text[j]; cells[s][j].className = `sweep-cell filled${current}`; });
      }
    }
    holder.dataset.mode = mode.id;
    holder.dataset.function = fn.name;
    const done = frames[k - 1];
    tally.textContent = `Sweeps so far: ${k} of ${frames.length}. Steps so far: ${done ? done.total : 0}.`;
    if (!done) {
      caption.textContent = mode.id === "forward"
        ? `Forward mode: each sweep seeds one input with tangent 1 and fills that input's column. ${plural(frames.length, "sweep")} will fill the table.`
        : `Reverse mode: each sweep seeds one output with gradient 1 and fills that output's row. ${plural(frames.length, "sweep")} will fill the table.`;
    } else if (mode.id === "forward") {
      caption.textContent = `Forward sweep ${k} of ${frames.length}: ${done.seed} seeded with tangent 1, every other input 0. `
        + `It carried a tangent through ${plural(done.steps, "node")} and filled the column of ${done.seed}.`;
    } else {
      caption.textContent = `Reverse sweep ${k} of ${frames.length}: ${done.output} seeded with gradient 1. `
        + `It passed gradients back through ${plural(done.steps, "node")} and filled the row of ${done.output}.`;
    }
  };

  const stepper = frameStepper(holder, fn.forward.length, show, caption);
  const redraw = () => {
    stepper.stop();
    area.replaceChildren(formulaList(fn), tableFrame(table(), `The Jacobian of ${fn.label}`));
    stepper.setLast(fn[mode.id].length);
    stepper.goTo(0);
  };
  const functionChoices = plot.functions.map((f) => ({ id: f.name, label: f.label, fn: f }));
  holder.append(
    choiceGroup("Function", "sweep-function", functionChoices, functionChoices[0], (choice) => { fn = choice.fn; redraw(); }),
    choiceGroup("Mode", "sweep-mode", MODES, mode, (choice) => { mode = choice; redraw(); }),
    stepper.controls, area, tally, caption);
  slot.append(holder);
  redraw();
  return holder;
}
