// The class's common mistakes: per exercise, the mistakes the grader named in the class's runs that did not pass,
// counted (runs, learners) and per day in the class's time zone, each with the hint that answers it and its runs
// (GET /api/class/mistakes, web/routes_mistakes.py; the rules are classes/misconceptions.py). Computed when asked.
// Every number comes as the server's text; hints and names go in as text only (el() children are text nodes).
import { get, el, focusResult, whileBusy } from "./api.js";
import { formatLocalTime, localZoneName } from "./when.js";

// A run behind a mistake, shown where the page shows a learner's runs ("Feedback on runs", comments.js): the
// learner is chosen there, and once their runs are in, this one takes the focus (else the learner's choice does).
function openRun(run) {
  const choose = document.getElementById("feedback-learner");
  const runs = document.getElementById("feedback-runs");
  if (!choose || !runs) return;
  const landed = new MutationObserver(() => {
    landed.disconnect();
    const article = runs.querySelector(`article[data-run="${run.run_id}"]`);
    if (article) focusResult(article);
    else choose.focus();
  });
  landed.observe(runs, { childList: true });
  choose.value = `${run.learner_id}`;
  choose.dispatchEvent(new Event("change"));
}

function runButton(run) {
  return el("li", {}, el("button", { type: "button", class: "secondary", "data-open-run": `${run.run_id}`,
    onclick: () => openRun(run) }, `Run ${run.run_id}: ${run.name}, ${formatLocalTime(run.at)}`));
}

// Runs per day: a bar for each day beside its text (the bar is the chart; the text says the same).
function perDay(mistake, most) {
  return el("ul", { class: "mistake-days" }, ...mistake.days.map((day) => el("li", {},
    el("span", { class: "bar-track", "aria-hidden": "true" }, el("span", { class: "bar", style: `width: ${100 * day.runs / most}%` })),
    `${day.day}: ${day.runs_text}, ${day.learners_text}`)));
}

function mistakeRow(mistake, most) {
  const hint = mistake.hint === null
    ? el("p", { class: "muted" }, "This exercise no longer names this mistake.")
    : el("p", { class: "mistake-hint" }, mistake.hint);
  const source = mistake.from === "exercise" ? "The exercise's own hint" : "The grader's hint";
  const more = mistake.runs_not_listed ? el("p", { class: "muted" }, `And ${mistake.runs_not_listed_text} more, older.`) : null;
  return el("tr", { "data-mistake": mistake.mistake },
    el("td", { "data-label": "Mistake" }, el("code", {}, mistake.mistake), el("br"),
      el("span", { class: "muted" }, mistake.about)),
    el("td", { "data-label": "Runs" }, mistake.runs_text),
    el("td", { "data-label": "Learners" }, mistake.learners_text),
    el("td", { "data-label": "Per day" }, perDay(mistake, most)),
    el("td", { "data-label": "Hint" }, mistake.hint === null ? null : el("span", { class: "muted" }, `${source}:`), hint),
    el("td", { "data-label": "Its runs" }, el("ul", { class: "mistake-runs" }, ...mistake.recent_runs.map(runButton)), more));
}

function exerciseTable(entry, zone) {
  const title = `${entry.title} (${entry.exercise_id})`;
  if (!entry.mistakes.length) {
    return el("article", { class: "mistakes-exercise", "data-exercise": entry.exercise_id },
      el("h3", {}, title), el("p", {}, entry.said));
  }
  const most = Math.max(...entry.mistakes.flatMap((mistake) => mistake.days.map((day) => day.runs)), 1);
  const head = el("tr", {}, ...["Mistake", "Runs", "Learners", `Per day (${zone})`, "Hint", `Its runs (times: ${localZoneName()})`]
    .map((text) => el("th", { scope: "col" }, text)));
  return el("article", { class: "mistakes-exercise", "data-exercise": entry.exercise_id },
    el("h3", {}, title), el("p", {}, entry.said),
    el("table", { class: "class-table mistakes-table" }, el("caption", { class: "muted" }, `Mistakes named in ${entry.exercise_id}, the most runs first`),
      el("thead", {}, head), el("tbody", {}, ...entry.mistakes.map((mistake) => mistakeRow(mistake, most)))));
}

function result(found) {
  return [el("p", { id: "mistakes-state", "aria-live": "polite" }, found.said),
    ...found.exercises.map((entry) => exerciseTable(entry, found.time_zone))];
}

function mountMistakes() {
  const box = document.getElementById("class-mistakes");
  if (!box) return;
  const out = el("div", { "data-mistakes": "" });
  const count = el("button", { type: "button" }, "Count the class's mistakes");
  count.addEventListener("click", () => whileBusy(count, async () => {
    const found = await get("/api/class/mistakes", "count the class's mistakes");
    out.replaceChildren(...result(found));
    focusResult(out.querySelector("#mistakes-state"));
  }));
  box.replaceChildren(el("p", {}, count), out);
}

mountMistakes();
