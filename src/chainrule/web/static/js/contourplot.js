// The contour plot of a lesson's "see it work": a function of two inputs drawn by its level lines, with the
// gradient arrow at a point the learner moves over a lattice (buttons, or the arrow keys on the plot). Every
// number comes from the server (lesson.see_it_work.plot): the grid of values, and the value and gradient at
// every lattice point, computed by the engine, with their texts; nothing is computed here but the drawing.
import { el } from "./api.js";
import { numberText } from "./graph.js";
import { svg, plotTableView } from "./fitplot.js";

const SIZE = 320;  // the square panel, so that an arrow crossing a level line at right angles looks it
const PAD = 30;
const ARROW_PX = 70;  // the longest gradient on the lattice is drawn this long; the others in proportion

/** The level line of height `level` through one grid cell, as path segments (marching squares). */
function cellSegments(grid, i, j, level, sx, sy, coordinate) {
  const corners = [[i, j], [i + 1, j], [i + 1, j + 1], [i, j + 1]];
  const crossings = [];
  for (let k = 0; k < 4; k += 1) {
    const [ai, aj] = corners[k], [bi, bj] = corners[(k + 1) % 4];
    const a = grid[aj][ai] - level, b = grid[bj][bi] - level;
    if ((a < 0) !== (b < 0)) {
      const share = a / (a - b);
      crossings.push([sx(coordinate(ai + (bi - ai) * share)), sy(coordinate(aj + (bj - aj) * share))]);
    }
  }
  const parts = [];
  for (let k = 0; k + 1 < crossings.length; k += 2) {
    parts.push(`M${crossings[k][0]},${crossings[k][1]}L${crossings[k + 1][0]},${crossings[k + 1][1]}`);
  }
  return parts.join("");
}

function panel(plot) {
  const [across, up] = plot.inputs;
  const coordinate = (k) => -plot.span + (2 * plot.span * k) / plot.cells;
  const sx = (x) => PAD + ((x + plot.span) / (2 * plot.span)) * (SIZE - 2 * PAD);
  const sy = (y) => SIZE - PAD - ((y + plot.span) / (2 * plot.span)) * (SIZE - 2 * PAD);
  const root = svg("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, class: "fit-panel contour-panel", role: "img",
    "aria-label": `The level lines of f = ${plot.expression} over ${across} and ${up} from -${numberText(plot, "span")} to ${numberText(plot, "span")}, with the gradient arrow at the point` });
  const marker = svg("marker", { id: "contour-arrowhead", viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 6,
    markerHeight: 6, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M0,0L10,5L0,10z", class: "contour-arrowhead" }));
  const defs = svg("defs");
  defs.append(marker);
  root.append(defs,
    svg("line", { x1: PAD, y1: sy(0), x2: SIZE - PAD, y2: sy(0), class: "fit-axis" }),
    svg("line", { x1: sx(0), y1: PAD, x2: sx(0), y2: SIZE - PAD, class: "fit-axis" }),
    svg("text", { x: SIZE - PAD, y: sy(0) - 6, "text-anchor": "end", class: "fit-axis-label" }, across),
    svg("text", { x: sx(0) + 6, y: PAD - 8, class: "fit-axis-label" }, up));
  for (const level of plot.levels) {
    let d = "";
    for (let j = 0; j < plot.cells; j += 1) {
      for (let i = 0; i < plot.cells; i += 1) d += cellSegments(plot.grid, i, j, level.value, sx, sy, coordinate);
    }
    root.append(svg("path", { d, class: "contour-level", fill: "none" }));
  }
  for (const stop of plot.lattice) root.append(svg("circle", { cx: sx(stop.x), cy: sy(stop.y), r: 1.6, class: "contour-stop" }));
  const longest = Math.max(...plot.lattice.map((stop) => stop.size)) || 1;
  const arrow = svg("line", { class: "contour-arrow", "marker-end": "url(#contour-arrowhead)" });
  const point = svg("circle", { r: 5, class: "fit-point" });
  root.append(arrow, point);
  const update = (stop) => {
    const length = (stop.size / longest) * ARROW_PX;
    const x0 = sx(stop.x), y0 = sy(stop.y);
    const x1 = stop.size ? x0 + (stop.dx / stop.size) * length : x0;
    const y1 = stop.size ? y0 - (stop.dy / stop.size) * length : y0;  // up on the page is up in y
    for (const [key, value] of Object.entries({ x1: x0, y1: y0, x2: x1, y2: y1 })) arrow.setAttribute(key, value);
    arrow.setAttribute("visibility", stop.size ? "visible" : "hidden");
    point.setAttribute("cx", x0); point.setAttribute("cy", y0);
  };
  return { root, update };
}

export function renderContourPlot(slot, plot) {
  const [across, up] = plot.inputs;
  const n = plot.stops;
  const holder = el("div", { class: "fit-plot contour-plot", id: "contour-plot" });
  const caption = el("p", { class: "fit-caption", "aria-live": "polite", id: "contour-caption" });
  const drawing = panel(plot);
  const view = plotTableView("The contour plot", 2);
  const [row, levels] = view.tables;
  levels.fill("The heights of the level lines, lowest first", ["level line", "f"],
    plot.levels.map((level, k) => [`line ${k + 1}`, numberText(level, "value")]));
  let at = plot.start;
  const step = numberText(plot, "step");
  const moves = [
    { label: `${across} - ${step}`, key: "ArrowLeft", di: -1, dj: 0 },
    { label: `${across} + ${step}`, key: "ArrowRight", di: 1, dj: 0 },
    { label: `${up} - ${step}`, key: "ArrowDown", di: 0, dj: -1 },
    { label: `${up} + ${step}`, key: "ArrowUp", di: 0, dj: 1 },
  ];
  const buttons = moves.map((move) => el("button", { type: "button", class: "secondary", "data-move": move.key,
    onclick: () => go(move) }, `Move ${move.label}`));
  const show = () => {
    const stop = plot.lattice[at];
    const i = at % n, j = (at - i) / n;
    drawing.update(stop);
    holder.dataset.point = `${stop.x},${stop.y}`;
    moves.forEach((move, k) => {
      const ti = i + move.di, tj = j + move.dj;
      buttons[k].disabled = ti < 0 || ti >= n || tj < 0 || tj >= n;
    });
    const where = `(${across}, ${up}) = (${numberText(stop, "x")}, ${numberText(stop, "y")})`;
    caption.textContent = stop.size
      ? `At ${where}: f = ${numberText(stop, "value")}, ∂f/∂${across} = ${numberText(stop, "dx")}, ∂f/∂${up} = ${numberText(stop, "dy")}. `
        + `The gradient (${numberText(stop, "dx")}, ${numberText(stop, "dy")}) has length ${numberText(stop, "size")}: f climbs fastest that way, `
        + `about ${numberText(stop, "size")} per unit step.`
      : `At ${where}: f = ${numberText(stop, "value")}, and the gradient is (0, 0): no way is uphill, so the arrow has no length.`;
    const start = j * n;
    row.fill(`The gradient at every point of the row ${up} = ${numberText(stop, "y")}, as the arrow shows it there`,
      [across, "f", `∂f/∂${across}`, `∂f/∂${up}`, "length"],
      plot.lattice.slice(start, start + n).map((s) => [numberText(s, "x"), numberText(s, "value"), numberText(s, "dx"),
        numberText(s, "dy"), numberText(s, "size")]));
    row.mark(i);
  };
  const go = (move) => {
    const i = at % n, j = (at - i) / n;
    const ti = i + move.di, tj = j + move.dj;
    if (ti < 0 || ti >= n || tj < 0 || tj >= n) return;
    at = tj * n + ti;
    show();
    const k = moves.indexOf(move);
    if (buttons[k].disabled) buttons[(k % 2 === 0 ? k + 1 : k - 1)].focus();  // the edge: focus stays on a control that moves
  };
  const area = el("div", { class: "contour-area", tabindex: "0", role: "group", "aria-describedby": "contour-caption",
    "aria-label": `The contour plot: the arrow keys move the point by ${step}` }, drawing.root);
  area.addEventListener("keydown", (event) => {
    const move = moves.find((m) => m.key === event.key);
    if (!move) return;
    event.preventDefault();
    go(move);
  });
  holder.append(el("p", { class: "plot-legend" }, "The thin lines are level lines: f has one height along each. The arrow "
    + "is the gradient at the point, drawn in proportion to its length."),
  el("div", { class: "player-controls contour-moves" }, ...buttons), el("div", { class: "fit-panels" }, area), caption, view.element);
  slot.append(holder);
  show();
  return holder;
}
