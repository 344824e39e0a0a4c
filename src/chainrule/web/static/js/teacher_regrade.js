// The teacher's regrade: after an exercise's cases changed, grade each learner's latest (or best) run again,
// see who would change standing (before / after), then apply or revert, each asked first; every regrade of the
// class (made here or with `chainrule class regrade`) is listed with its state. Everything comes from
// /api/class/regrades (web/routes_regrade.py); text goes in as text only.
import { get, post, el, plural } from "./api.js";
import { confirmStep } from "./confirm.js";
import { formatLocalTime, localZoneName } from "./when.js";
import { assistant, teachersOnly } from "./staff.js";

let box = null;
const SAID = { pass: "passes", fail: "fails", error: "error", "not-graded": "not graded" };
const STATE = { grading: "grading", graded: "graded, not applied", applied: "applied", reverted: "reverted" };
const ASK = {
  apply: (regrade) => ({
    question: `Apply the regrade of ${regrade.exercise_id}? Standing changes for ${plural(regrade.changes, "learner")}.`,
    detail: "The new verdicts count from now on, and the learners' earlier runs of the exercise do not (you can revert it later).",
    yes: "Yes, apply it",
  }),
  revert: (regrade) => ({
    question: `Revert the regrade of ${regrade.exercise_id}?`,
    detail: "Every learner's standing goes back to what it was before it was applied; its runs count for nothing.",
    yes: "Yes, revert it",
  }),
};

function table(regrade) {
  const state = {
    grading: `Grading: ${plural(regrade.waiting, "run")} still waiting for the grader.`,
    graded: `Graded: ${plural(regrade.changes, "learner")} would change standing. Nothing counts until you apply it.`,
    applied: `Applied: ${plural(regrade.changes, "learner")} changed standing.`,
    reverted: "Reverted: every standing is as before it.",
  }[regrade.state];
  const rows = regrade.rows.map((row) => el("tr", { "data-regrade-row": row.name },
    el("th", { scope: "row" }, row.name),
    el("td", { "data-label": "Before" }, row.passed_before ? "passed" : "not passed"),
    el("td", { "data-label": "After" }, row.after === null ? "waiting" : (SAID[row.after] || row.after)),
    el("td", { "data-label": "Changes" }, row.changes ? "yes" : "no")));
  const actions = el("p", {});
  const asking = el("div", {});
  // Applying and reverting change every learner's standing: each asks first (confirm.js).
  const act = (label, path) => {
    const button = el("button", { type: "button", class: "secondary" }, label);
    button.addEventListener("click", () => {
      const said = ASK[path](regrade);
      button.disabled = true;
      const step = confirmStep({
        question: said.question, details: [el("p", { class: "muted" }, said.detail)], yes: said.yes,
        onYes: async () => {
          const done = await post(`/api/class/regrades/${regrade.id}/${path}`, {}, `${path} the regrade`).catch(() => null);
          if (done) { show(done); refreshList(); } else { asking.replaceChildren(); button.disabled = false; }
        },
        onNo: () => { asking.replaceChildren(); button.disabled = false; button.focus(); },
      });
      asking.replaceChildren(step);
      step.focus();
    });
    actions.append(button, " ");
  };
  if (regrade.state === "graded" && !assistant) act("Apply: the new verdicts count", "apply");
  if (regrade.state === "applied" && !assistant) act("Revert", "revert");
  return el("div", { "data-regrade": regrade.state, "data-regrade-id": `${regrade.id}` },
    el("p", { "aria-live": "polite", id: "regrade-state", tabindex: "-1" }, `Regrade of ${regrade.exercise_id} (${regrade.pick} runs). ${state}`),
    regrade.rows.length ? el("table", { class: "class-table" },
      el("thead", {}, el("tr", {}, ...["Learner", "Before", "After", "Changes"].map((text) => el("th", { scope: "col" }, text)))),
      el("tbody", {}, ...rows)) : el("p", {}, "No learner has run this exercise."),
    actions, asking);
}

function show(regrade) {
  box.querySelector("[data-regrade-table]").replaceChildren(table(regrade));
  if (regrade.state === "grading") {
    setTimeout(async () => {
      const now = await get(`/api/class/regrades/${regrade.id}`, "follow the regrade");
      show(now);
      if (now.state !== "grading") refreshList();
    }, 1000);
  }
}

// Every regrade of the class, made on this page or with `chainrule class regrade`, newest first, with its state.
function list(regrades) {
  if (!regrades.length) return el("p", { class: "muted" }, "No regrade yet.");
  const rows = [...regrades].reverse().map((entry) => {
    const open = el("button", { type: "button", class: "secondary" }, "Show");
    open.setAttribute("aria-label", `Show regrade ${entry.id} of ${entry.exercise_id}`);
    open.addEventListener("click", async () => {
      show(await get(`/api/class/regrades/${entry.id}`, "open the regrade"));
      box.querySelector("#regrade-state").focus();
    });
    return el("tr", { "data-regrade-entry": `${entry.id}`, "data-state": entry.state },
      el("th", { scope: "row" }, entry.exercise_id),
      el("td", { "data-label": "Runs" }, entry.pick === "best" ? "each learner's best" : "each learner's latest"),
      el("td", { "data-label": "Started" }, formatLocalTime(entry.created_at)),
      el("td", { "data-label": "State" }, STATE[entry.state] || entry.state),
      el("td", { "data-label": "" }, open));
  });
  return el("table", { class: "class-table", id: "regrade-list" },
    el("caption", {}, `Regrades of this class (times in ${localZoneName()})`),
    el("thead", {}, el("tr", {}, ...["Exercise", "Runs", "Started", "State", ""].map((text) =>
      el("th", { scope: "col" }, text)))),
    el("tbody", {}, ...rows));
}

async function refreshList() {
  const data = await get("/api/class/regrades", "load the regrades");
  box.querySelector("[data-regrade-list]").replaceChildren(list(data.regrades));
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
    refreshList();
  });
  box.replaceChildren(assistant ? teachersOnly("regrades (starting, applying or reverting one)") : form,
    el("div", { "data-regrade-list": "" }, list(data.regrades)), el("div", { "data-regrade-table": "" }));
}
