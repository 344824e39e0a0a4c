// The teacher's page: the class's progress grid, a pass-rate bar per exercise, quiz questions, and one
// learner's timeline. Everything comes from /api/class/... (routes_class.py); text goes in as text only.
import { get, post, el, clearLoading } from "./api.js";
import { mountDeadlines } from "./teacher_deadlines.js";
import { mountRegrade } from "./teacher_regrade.js";


function cell(state, label) {
  const kind = state === true ? "passed" : state === false ? "wrong" : "none";
  const said = state === true ? "done" : state === false ? "not right" : "not yet";
  return el("span", { class: `cell ${kind}`, role: "img", "aria-label": `${label}: ${said}`, title: `${label}: ${said}` });
}

// Two header rows: the lessons (each spanning its squares), then E1, E2, ... and Q1, Q2, ... within each.
function grid(data) {
  const lessons = el("tr", {}, el("td", { colspan: "6" }));
  const head = el("tr", {}, el("th", { scope: "col" }, "Learner"), el("th", { scope: "col" }, "Sections"), el("th", { scope: "col" }, "Lessons"),
    el("th", { scope: "col" }, "Exercises"), el("th", { scope: "col" }, "Quiz"), el("th", { scope: "col" }, "Last active"));
  for (const lesson of data.path) {
    lessons.append(el("th", { scope: "colgroup", colspan: String(lesson.exercises.length + lesson.questions.length), class: "lesson-head" }, lesson.title));
    lesson.exercises.forEach((exercise, index) => head.append(el("th", { scope: "col", title: exercise, abbr: exercise }, `E${index + 1}`)));
    lesson.questions.forEach((question, index) => head.append(el("th", { scope: "col", title: question, abbr: question }, `Q${index + 1}`)));
  }
  const rows = data.roster.map((learner) => {
    const name = el("button", { type: "button", class: "secondary", "data-learner": String(learner.id) }, learner.name);
    name.addEventListener("click", () => showTimeline(learner.id));
    const row = el("tr", { "data-learner-row": learner.name }, el("th", { scope: "row" }, name),
      el("td", {}, `${learner.sections_done} of ${learner.sections}`),
      el("td", {}, `${learner.lessons_done} of ${learner.lessons}`),
      el("td", {}, `${learner.exercises_passed} of ${learner.exercises}`),
      el("td", {}, `${learner.quiz_right} of ${learner.quiz_questions}`),
      el("td", {}, learner.last_active ? learner.last_active.slice(0, 16).replace("T", " ") : "–"));
    for (const lesson of learner.grid) {
      for (const [exercise, passed] of Object.entries(lesson.exercises)) row.append(el("td", {}, cell(passed ? true : null, exercise)));
      for (const [question, right] of Object.entries(lesson.questions)) row.append(el("td", {}, cell(right, question)));
    }
    return row;
  });
  if (!rows.length) return el("p", {}, "No learner has joined yet: give them the invite link from `chainrule class create`.");
  return el("table", { class: "class-grid" }, el("thead", {}, lessons, head), el("tbody", {}, ...rows));
}

// A share as a bar (its width) beside the server's text of it (numbers are written by the server).
function bar(share, text) {
  const width = share === null || share === undefined ? 0 : share * 100;
  return el("span", {}, el("span", { class: "bar-track", "aria-hidden": "true" }, el("span", { class: "bar", style: `width: ${width}%` })), text);
}

function exercisesTable(data) {
  const head = el("tr", {}, ...["Exercise", "Runs", "Passed", "Passed at the first run", "Median runs to pass", "Most common diagnoses of failing runs"]
    .map((text) => el("th", { scope: "col" }, text)));
  const rows = data.exercises.map((item) => el("tr", { "data-exercise": item.exercise_id },
    el("td", { "data-label": "Exercise" }, item.exercise_id),
    el("td", { "data-label": "Runs" }, String(item.runs)),
    el("td", { "data-label": "Passed" }, bar(item.learners_tried ? item.learners_passed / item.learners_tried : null, item.passed_text)),
    el("td", { "data-label": "Passed at the first run" }, item.passed_first_run_text),
    el("td", { "data-label": "Median runs to pass" }, item.median_runs_to_pass_text),
    el("td", { "data-label": "Diagnoses" }, item.diagnoses.length
      ? el("ul", {}, ...item.diagnoses.map((d) => el("li", {}, `${d.diagnosis} (${d.runs})`))) : "–")));
  return el("table", { class: "class-table" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

function questionsTable(data) {
  const head = el("tr", {}, ...["Question", "Answered", "First answer right", "Recall now (predicted)", "Most chosen wrong answer"].map((t) => el("th", { scope: "col" }, t)));
  const rows = data.questions.map((item) => el("tr", {},
    el("td", { "data-label": "Question" }, `${item.lesson_id} / ${item.question_id}`),
    el("td", { "data-label": "Answered" }, String(item.learners_answered)),
    el("td", { "data-label": "First answer right" }, bar(item.share_right, item.share_right_text)),
    el("td", { "data-label": "Recall now (predicted)" }, bar(item.recall_now, item.recall_now_text)),
    el("td", { "data-label": "Most chosen wrong answer" }, item.most_chosen_wrong ? `${item.most_chosen_wrong.answer} (${item.most_chosen_wrong.times}×)` : "–")));
  return el("table", { class: "class-table" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

async function showTimeline(learnerId) {
  const box = document.getElementById("class-timeline");
  const data = await get(`/api/class/learners/${learnerId}/timeline`, "load the learner's timeline");
  const items = data.events.map((event) => (event.kind === "run"
    ? el("li", {}, `${event.at.slice(0, 16).replace("T", " ")} · run ${event.exercise_id} (${event.language}): `
        + (event.imported ? "imported from the learner's own file (not graded here; counts for nothing)"
          : event.status === "pass" ? "passed" : `did not pass: ${event.diagnosis}`),
      el("pre", {}, el("code", {}, event.source)))
    : el("li", {}, `${event.at.slice(0, 16).replace("T", " ")} · answered ${event.lesson_id} / ${event.question_id}: ${event.answer} (${event.correct ? "right" : "wrong"}${event.imported ? ", imported" : ""})`)));
  const reset = el("button", { type: "button", class: "secondary" }, "Make a password reset link");
  const linkOut = el("p", { "aria-live": "polite" });
  reset.addEventListener("click", async () => {
    const made = await post(`/api/class/learners/${learnerId}/reset-link`, {}, "make a reset link");
    linkOut.replaceChildren("Give this one-time link to the learner: ", el("code", {}, made.link));
  });
  box.replaceChildren(el("h3", {}, data.learner.name), reset, linkOut,
    items.length ? el("ol", { class: "timeline" }, ...items) : el("p", {}, "Nothing yet."));
}

async function main() {
  const csrf = document.cookie.match(/(?:^|; )(?:__Host-)?chainrule_csrf=([^;]+)/);
  if (csrf) document.getElementById("sign-out-csrf").value = decodeURIComponent(csrf[1]);
  const data = await get("/api/class/overview", "load the class");
  document.getElementById("class-grid").replaceChildren(grid(data));
  document.getElementById("class-exercises").replaceChildren(exercisesTable(data));
  document.getElementById("class-questions").replaceChildren(questionsTable(data));
  clearLoading();
  mountDeadlines();
  mountRegrade();
}

main();
