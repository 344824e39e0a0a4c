// What the class knows, per item (GET /api/class/items, web/routes_items.py; the rules are
// classes/item_analysis.py): each quiz question and exercise with who tried it, first tries right, difficulty,
// discrimination and the drawn values that are hard; two charts (each lesson's scores, first tries right per
// day), each an SVG drawn from the server's numbers with its data table beside it (the table is what a screen
// reader reads: the SVG is hidden from it). Every number shown is the server's text. From an item, the
// learners behind it (GET /api/class/items/learners) and a way to each one's runs.
import { get, el, focusResult } from "./api.js";
import { sectionQuery } from "./teacher_sections.js";
import { openRunsButton } from "./open_runs.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 320, HEIGHT = 120, BASE = 100;  // the charts' own coordinates (viewBox): they scale to the column

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, `${value}`);
  node.append(...children);
  return node;
}

// Bars of heights shares (0 to 1) with a label under each (under every few, past LABELS bars); the chart is
// hidden from screen readers. A bar is never wider than a fifth of the chart.
const LABELS = 10;
function bars(shares, labels) {
  const step = WIDTH / Math.max(shares.length, 5);
  const every = Math.max(1, (shares.length / LABELS) | 0);
  const drawn = shares.map((share, k) => svg("g", {},
    svg("rect", { x: k * step + step * 0.15, y: BASE - share * (BASE - 10), width: step * 0.7,
      height: share * (BASE - 10), class: "items-bar" }),
    k % every ? "" : svg("text", { x: k * step + step / 2, y: HEIGHT - 4, "text-anchor": "middle", class: "items-axis" }, labels[k])));
  return svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "items-chart", "aria-hidden": "true", focusable: "false" },
    svg("line", { x1: 0, y1: BASE, x2: WIDTH, y2: BASE, class: "items-base" }), ...drawn);
}

function table(caption, heads, rows) {
  return el("div", { class: "class-grid-scroll items-table", tabindex: "0", role: "region", "aria-label": caption },
    el("table", {}, el("caption", {}, caption),
      el("thead", {}, el("tr", {}, ...heads.map((head) => el("th", { scope: "col" }, head)))),
      el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((cell, k) =>
        k === 0 ? el("th", { scope: "row" }, cell) : el("td", {}, cell)))))));
}

function distribution(lesson) {
  const most = Math.max(1, ...lesson.bands.map((band) => band.learners));
  return el("figure", { class: "items-figure", "data-chart": `scores ${lesson.lesson_id}` },
    el("figcaption", {}, `${lesson.title}: ${lesson.learners_text} by their share of first tries right`),
    bars(lesson.bands.map((band) => band.learners / most), lesson.bands.map((band) => band.label.split(" to ")[0])),
    table(`${lesson.title}: learners per score band`, ["Share of first tries right", "Learners"],
      lesson.bands.map((band) => [band.label, band.learners_text])));
}

function passRate(days) {
  return el("figure", { class: "items-figure", "data-chart": "pass rate" },
    el("figcaption", {}, "First tries right, day by day (of any question or exercise)"),
    bars(days.map((day) => day.share_right), days.map((day) => day.day.slice(5))),
    table("First tries right per day", ["Day", "First tries", "Right"],
      days.map((day) => [day.day, day.tries_text, day.share_right_text])));
}

// One item's learners, each with their first try and a way to their runs in the feedback section.
function behind(found, title) {
  const list = el("ul", {}, ...found.learners.map((learner) => {
    const open = openRunsButton(learner.learner_id, learner.name);
    const run = learner.run_id === null ? "" : ` (run ${learner.run_id})`;
    return el("li", { "data-behind": learner.name },
      `${learner.name}: first try ${learner.right ? "right" : "not right"}${run} `, open);
  }));
  return [el("h4", { id: "items-behind-title" }, `${title}: ${found.learners_text} tried it`), list];
}

function itemRow(item, out) {
  const show = el("button", { type: "button", class: "secondary", "data-item": `${item.lesson_id}/${item.item_id}` },
    `Learners of ${item.item_id}`);
  show.addEventListener("click", async () => {
    const query = new URLSearchParams({ kind: item.kind, lesson: item.lesson_id, item: item.item_id });
    const found = await get(`/api/class/items/learners?${query}`, "load the learners of this item");
    out.replaceChildren(...behind(found, item.item_id));
    focusResult(out.querySelector("#items-behind-title"));
  });
  const hard = item.hard_values.length
    ? item.hard_values.map((value) => `${value.name} = ${value.value_text}: ${value.share_right_text} right of ${value.answers_text}`).join("; ")
    : (item.kind === "question" && item.reviews ? `none (${item.review_share_right_text} right of ${item.reviews_text})` : "\u2013");
  return [el("span", { title: item.title }, `${item.item_id} (${item.kind}, ${item.lesson_title})`),
    item.tried_text, `${item.right_text} (${item.difficulty_text})`, item.difficulty_text,
    item.discrimination_text, hard, show];
}

function result(found, out) {
  const left = found.left_out ? ` Left out (at most ${found.max_learners_text} at once): ${found.left_out_text} who joined later.` : "";
  const status = el("p", { id: "items-state" }, `Item analysis of ${found.learners_text}.${left}`);
  const tried = found.items.filter((item) => item.tried);
  if (!tried.length) {
    status.textContent = `No learner has tried a quiz question or an exercise yet (${found.learners_text} in the class).`;
    return [status];
  }
  return [status,
    el("p", { class: "muted" }, found.rules.difficulty), el("p", { class: "muted" }, found.rules.discrimination),
    el("p", { class: "muted" }, found.rules.hard),
    el("h3", {}, "Scores per lesson"),
    el("div", { class: "items-charts" }, ...found.charts.distribution.filter((lesson) => lesson.learners).map(distribution)),
    el("h3", {}, "Pass rate over time"), passRate(found.charts.pass_rate),
    el("h3", {}, "Items"),
    table("Items the class tried", ["Item", "Tried", "First try right", "Difficulty", "Discrimination", "Hard values", "Learners"],
      tried.map((item) => itemRow(item, out))),
    out];
}

function mountItems() {
  const box = document.getElementById("class-items");
  if (!box) return;
  const out = el("div", { "data-items-behind": "", "aria-live": "polite" });
  const shown = el("div", { "data-items": "" });
  const ask = el("button", { type: "button" }, "Analyse the class's answers");
  const analyse = async () => {
    const found = await get(`/api/class/items${sectionQuery()}`, "analyse the class's answers");
    out.replaceChildren();
    shown.replaceChildren(...result(found, out));
    box.dataset.section = new URLSearchParams(sectionQuery()).get("section") || "";
  };
  ask.addEventListener("click", async () => {
    await analyse();
    focusResult(shown.querySelector("#items-state"));
  });
  // Another section chosen above the grid: an analysis on show is made again for it (focus stays put).
  window.addEventListener("chainrule:section", () => { if (shown.childElementCount) analyse(); });
  box.replaceChildren(el("p", {}, ask), shown);
}

mountItems();
