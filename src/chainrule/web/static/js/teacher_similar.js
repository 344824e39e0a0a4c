// The teacher's similar code: for the exercise chosen, the pairs of learners whose latest runs are unusually
// similar (GET /api/class/similar, web/routes_similar.py; the rule is classes/similarity.py), each pair with
// its score and the two files side by side. Computed only when asked, for one exercise. Learners' code and
// names go in as text only (el() children are text nodes, never HTML).
import { get, el, plural, focusResult } from "./api.js";
import { openRunsButton } from "./open_runs.js";


// One side of a pair: whose run, how much of it the other file holds, a way to their runs, and the code.
function side(run, other) {
  const open = openRunsButton(run.learner_id, run.name);  // this run is among them, to comment on
  return el("div", { class: "similar-side", "data-side": run.name },
    el("h4", {}, run.name),
    el("p", { class: "muted" }, `Run ${run.run_id} (${run.language}, ${run.status === "pass" ? "passed" : "not passed"}): `
      + `${run.share_text} of it is also in ${other.name}'s file.${run.cut ? " Only its beginning was compared." : ""}`),
    el("p", {}, open),
    el("pre", { class: "similar-code", tabindex: "0", "aria-label": `${run.name}'s code` }, el("code", {}, run.source)));
}

function pairView(pair) {
  return el("article", { class: "similar-pair", "data-pair": `${pair.a.name} and ${pair.b.name}` },
    el("h3", {}, `${pair.a.name} and ${pair.b.name}: ${pair.score_text} similar`),
    el("div", { class: "similar-sides" }, side(pair.a, pair.b), side(pair.b, pair.a)));
}

function result(found) {
  const left = found.left_out ? ` Left out (at most ${found.max_learners_text} are compared at once): ${plural(found.left_out, "learner")} whose latest run is older.` : "";
  const said = found.pairs.length
    ? `${plural(found.pairs.length, "pair")} of learners with code at least ${found.similar_at_text} alike, among the latest runs of ${found.exercise_id} by ${plural(found.learners, "learner")}.${left}`
    : `No two latest runs of ${found.exercise_id} are ${found.similar_at_text} alike or more (runs by ${plural(found.learners, "learner")}).${left}`;
  const status = el("p", { id: "similar-state", "aria-live": "polite" }, said);
  return [status, ...found.pairs.map(pairView)];
}

async function mountSimilar() {
  const box = document.getElementById("class-similar");
  if (!box) return;
  const data = await get("/api/class/regrades", "load the exercises");
  const exercise = el("select", { id: "similar-exercise" }, ...data.exercises.map((entry) =>
    el("option", { value: entry.exercise_id }, `${entry.title}: ${entry.exercise_id}`)));
  const out = el("div", { "data-similar": "" });
  const form = el("form", { class: "deadline-form" },
    el("label", { class: "deadline-field" }, el("span", {}, "Exercise"), exercise),
    el("button", { type: "submit" }, "Find similar code"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const found = await get(`/api/class/similar?exercise=${encodeURIComponent(exercise.value)}`, "compare the learners' code");
    out.replaceChildren(...result(found));
    focusResult(out.querySelector("#similar-state"));
  });
  box.replaceChildren(form, out);
}

mountSimilar();
