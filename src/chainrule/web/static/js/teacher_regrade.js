// The teacher's regrade: after an exercise's cases changed, grade each learner's latest (or best) run again,
// see who would change standing (before / after), then apply or revert. Everything comes from
// /api/class/regrades (web/routes_regrade.py); text goes in as text only.
import { get, post, el } from "./api.js";

let box = null;
const SAID = { pass: "passes", fail: "fails", error: "error", "not-graded": "not graded" };

function table(regrade) {
  const state = {
    grading: `Grading: ${regrade.waiting} runs still waiting for the grader.`,
    graded: `Graded: ${regrade.changes} learners would change standing. Nothing counts until you apply it.`,
    applied: `Applied: ${regrade.changes} learners changed standing.`,
    reverted: "Reverted: every standing is as before it.",
  }[regrade.state];
  const rows = regrade.rows.map((row) => el("tr", { "data-regrade-row": row.name },
    el("th", { scope: "row" }, row.name),
    el("td", { "data-label": "Before" }, row.passed_before ? "passed" : "not passed"),
    el("td", { "data-label": "After" }, row.after === null ? "waiting" : (SAID[row.after] || row.after)),
    el("td", { "data-label": "Changes" }, row.changes ? "yes" : "no")));
  const actions = el("p", {});
  const act = (label, path, what) => {
    const button = el("button", { type: "button", class: "secondary" }, label);
    button.addEventListener("click", async () => show(await post(`/api/class/regrades/${regrade.id}/${path}`, {}, what)));
    actions.append(button, " ");
  };
  if (regrade.state === "graded") act("Apply: the new verdicts count", "apply", "apply the regrade");
  if (regrade.state === "applied") act("Revert", "revert", "revert the regrade");
  return el("div", { "data-regrade": regrade.state },
    el("p", { "aria-live": "polite", id: "regrade-state" }, `Regrade of ${regrade.exercise_id} (${regrade.pick} runs). ${state}`),
    regrade.rows.length ? el("table", { class: "class-table" },
      el("thead", {}, el("tr", {}, ...["Learner", "Before", "After", "Changes"].map((text) => el("th", { scope: "col" }, text)))),
      el("tbody", {}, ...rows)) : el("p", {}, "No learner has run this exercise."),
    actions);
}

function show(regrade) {
  box.querySelector("[data-regrade-table]").replaceChildren(table(regrade));
  if (regrade.state === "grading") {
    setTimeout(async () => show(await get(`/api/class/regrades/${regrade.id}`, "follow the regrade")), 1000);
  }
}

export async function mountRegrade() {
  box = document.getElementById("class-regrade");
  if (!box) return;
  const data = await get("/api/class/regrades", "load the regrades");
  const exercise = el("select", { id: "regrade-exercise" }, ...data.exercises.map((entry) =>
    el("option", { value: entry.exercise_id }, `${entry.title}: ${entry.exercise_id}`)));
  const pick = el("select", { id: "regrade-pick" }, el("option", { value: "latest" }, "each learner's latest run"),
    el("option", { value: "best" }, "each learner's best run"));
  const form = el("form", { class: "deadline-form" },
    el("label", { class: "deadline-field" }, el("span", {}, "Exercise whose cases changed"), exercise),
    el("label", { class: "deadline-field" }, el("span", {}, "Grade again"), pick),
    el("button", { type: "submit" }, "Check who would change"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    show(await post("/api/class/regrades/new", { exercise_id: exercise.value, pick: pick.value }, "start the regrade"));
  });
  box.replaceChildren(form, el("div", { "data-regrade-table": "" }));
}
