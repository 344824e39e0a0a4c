// The teacher's page: the class's progress grid, a pass-rate bar per exercise, quiz questions, what learners
// wrote to explain a lesson, and one learner's timeline. Everything comes from /api/class/... (routes_class.py);
// whatever a learner wrote goes in as text only (textContent, never HTML). While the page is open it asks for
// the overview every few seconds with the ETag of the last one: the server answers 304 while nothing changed.
import { get, post, el, clearLoading, requestInit } from "./api.js";
import { formatLocalTime, localZoneName } from "./when.js";
import { mountDeadlines } from "./teacher_deadlines.js";
import { mountRegrade } from "./teacher_regrade.js";
import { mountMarks } from "./teacher_marks.js";
import { mountSections, sectionQuery } from "./teacher_sections.js";
import { assistant } from "./staff.js";

const REFRESH_MS = 5000;
// An exercise's state in the grid (classes/report.py) and how the page says it.
const EXERCISE_STATES = {
  "not-started": "not started",
  tried: "tried, not passed yet",
  passed: "passed",
  "passed-with-solution": "passed after the model solution was shown",
};

function cell(kind, label, mark = "") {
  return el("span", { class: `cell ${kind}`, role: "img", "aria-label": label, "data-mark": mark || null });
}

// A square's table cell; work done after its due date says so in words beside the square (not by colour).
const LATE_SAID = "done late, after its due date";
function square(attributes, { late, kind, label, mark = "" }) {
  if (!late) return el("td", attributes, cell(kind, label, mark));
  return el("td", { ...attributes, "data-late": "" }, cell(kind, `${label}; ${LATE_SAID}`, mark),
    el("span", { class: "late-word", "aria-hidden": "true" }, "late"));
}

function exerciseCell(state, help, title, late) {
  const said = EXERCISE_STATES[state] || state;
  const label = `${title}: ${said}${help.text ? `; ${help.text}` : ""}`;
  // The marks on the square: S when the solution was shown, H when hints were opened (the legend says so).
  const mark = `${help.solution_shown ? "S" : ""}${help.hints ? "H" : ""}`;
  return { late, kind: state, label, mark };
}

function questionCell(right, prompt, late) {
  const kind = right === true ? "passed" : right === false ? "wrong" : "not-started";
  const said = right === true ? "right at the first answer" : right === false ? "wrong at the first answer" : "not answered";
  return { late, kind, label: `${prompt}: ${said}` };
}

// A column's heading is a short name (E1, Q1, W) that is a button: pointing at it, focusing it or tapping it
// writes the column's whole name above the grid (a touch screen has no hover).
function columnHead(short, name) {
  const button = el("button", { type: "button", class: "column-name", "aria-describedby": "grid-column-name", "data-name": name }, short);
  const show = () => { document.getElementById("grid-column-name").textContent = `${short}: ${name}`; };
  for (const event of ["click", "focus", "mouseenter"]) button.addEventListener(event, show);
  return el("th", { scope: "col", abbr: name, title: name }, button);
}

// Two header rows: the lessons (each spanning its squares), then E1, E2, ..., Q1, Q2, ... and W (explained).
function grid(data) {
  const zone = localZoneName();
  const lessons = el("tr", {}, el("td", { class: "learner-head" }), el("td", { colspan: "5" }));
  const head = el("tr", {}, el("th", { scope: "col", class: "learner-head" }, "Learner"), el("th", { scope: "col" }, "Sections"),
    el("th", { scope: "col" }, "Lessons"), el("th", { scope: "col" }, "Exercises"), el("th", { scope: "col" }, "Quiz"),
    el("th", { scope: "col" }, `Last active (your time, ${zone})`));
  for (const lesson of data.path) {
    const all = lesson.exercises.length + lesson.questions.length + 1;  // its squares and its W
    lessons.append(el("th", { scope: "colgroup", colspan: String(all), class: "lesson-head" }, lesson.title));
    lesson.exercise_titles.forEach((title, index) => head.append(columnHead(`E${index + 1}`, `${lesson.title}, exercise: ${title}`)));
    lesson.question_prompts.forEach((prompt, index) => head.append(columnHead(`Q${index + 1}`, `${lesson.title}, question: ${prompt}`)));
    head.append(columnHead("W", `${lesson.title}: explanation written`));
  }
  const titles = Object.fromEntries(data.path.map((lesson) => [lesson.id, lesson]));
  const rows = data.roster.map((learner) => {
    const name = el("button", { type: "button", class: "secondary", "data-learner": String(learner.id) }, learner.name);
    name.addEventListener("click", () => showTimeline(learner.id));
    const row = el("tr", { "data-learner-row": learner.name }, el("th", { scope: "row", class: "learner-name" }, name),
      el("td", {}, `${learner.sections_done} of ${learner.sections}`),
      el("td", {}, `${learner.lessons_done} of ${learner.lessons}`),
      el("td", {}, `${learner.exercises_passed} of ${learner.exercises}`),
      el("td", {}, `${learner.quiz_right} of ${learner.quiz_questions}`),
      el("td", { "data-last-active": learner.last_active || "" }, learner.last_active ? formatLocalTime(learner.last_active) : "–"));
    for (const lesson of learner.grid) {
      const shape = titles[lesson.lesson_id];
      const late = lesson.late;
      shape.exercises.forEach((exercise, index) => row.append(square({ "data-exercise": exercise },
        exerciseCell(lesson.exercise_states[exercise], lesson.help[exercise], shape.exercise_titles[index], late.exercises.includes(exercise)))));
      shape.questions.forEach((question, index) => row.append(square({ "data-question": question },
        questionCell(lesson.questions[question], shape.question_prompts[index], late.questions.includes(question)))));
      row.append(square({ "data-explained": lesson.lesson_id }, { late: late.explanation, kind: lesson.explained ? "passed" : "not-started",
        label: `${shape.title}: ${lesson.explained ? "explanation written" : "no explanation yet"}` }));
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
    el("td", { "data-label": "Exercise" }, item.title),
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
  const rows = data.questions.map((item) => el("tr", { "data-question": item.question_id },
    el("td", { "data-label": "Question" }, el("span", { class: "muted" }, `${item.lesson_title}: `), item.prompt),
    el("td", { "data-label": "Answered" }, String(item.learners_answered)),
    el("td", { "data-label": "First answer right" }, bar(item.share_right, item.share_right_text)),
    el("td", { "data-label": "Recall now (predicted)" }, bar(item.recall_now, item.recall_now_text)),
    el("td", { "data-label": "Most chosen wrong answer" }, item.most_chosen_wrong ? `${item.most_chosen_wrong.answer} (${item.most_chosen_wrong.times}×)` : "–")));
  return el("table", { class: "class-table" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

// One learner's explanation of one lesson: their own words (as text) and the key ideas they ticked.
function explanationCard(entry, heading, level = "h3") {
  const body = entry.text === null
    ? [el("p", { class: "muted" }, "Not written yet.")]
    : [el("p", { class: "explanation-text" }, entry.text),
      el("p", { class: "muted" }, entry.ticked_text),
      entry.ticked.length ? el("ul", { class: "ticked-ideas" }, ...entry.ticked.map((idea) => el("li", {}, idea.text))) : null,
      el("p", { class: "muted" }, `Written ${formatLocalTime(entry.at)} (your time)`)];
  return el("article", { class: "explanation-card", "data-explanation": heading }, el(level, {}, heading), ...body);
}

async function showExplanations(lessonId) {
  const box = document.getElementById("class-explanations");
  const data = await get(`/api/class/lessons/${encodeURIComponent(lessonId)}/explanations${sectionQuery()}`, "load the explanations");
  const ideas = el("details", {}, el("summary", {}, "The lesson's key ideas"),
    el("ul", {}, ...data.lesson.key_ideas.map((idea) => el("li", {}, idea.text))));
  box.replaceChildren(ideas, data.learners.length
    ? el("div", { class: "explanation-cards" }, ...data.learners.map((entry) => explanationCard(entry, entry.name)))
    : el("p", {}, "No learner has joined yet."));
}

function explanationsPicker(data) {
  const select = document.getElementById("explanations-lesson");
  if (select.options.length) return;  // drawn once; the refresh redraws the grid and tables only
  for (const lesson of data.path) select.append(el("option", { value: lesson.id }, lesson.title));
  const written = data.path.find((lesson) => data.roster.some((learner) => learner.grid.some((g) => g.lesson_id === lesson.id && g.explained)));
  if (written) select.value = written.id;
  select.addEventListener("change", () => showExplanations(select.value));
  if (data.path.length) showExplanations(select.value);
}

function timelineItem(event, titles) {
  const at = formatLocalTime(event.at);
  const exercise = titles[event.exercise_id] || event.exercise_id;
  if (event.kind === "run") {
    return el("li", { "data-event": "run" }, `${at} · ran “${exercise}” (${event.language}): `
        + (event.imported ? "imported from the learner's own file (not graded here; counts for nothing)"
          : event.status === "pass" ? "passed" : `did not pass: ${event.diagnosis}`),
      el("pre", {}, el("code", {}, event.source)));
  }
  if (event.kind === "hint") return el("li", { "data-event": "hint" }, `${at} · opened hint ${event.number} of “${exercise}”`);
  if (event.kind === "solution") return el("li", { "data-event": "solution" }, `${at} · was shown the model solution of “${exercise}”`);
  return el("li", { "data-event": "answer" }, `${at} · answered ${event.lesson_id} / ${event.question_id}: ${event.answer} (${event.correct ? "right" : "wrong"}${event.imported ? ", imported" : ""})`);
}

let exerciseTitles = {};

async function showTimeline(learnerId) {
  const box = document.getElementById("class-timeline");
  const data = await get(`/api/class/learners/${learnerId}/timeline`, "load the learner's timeline");
  const items = data.events.map((event) => timelineItem(event, exerciseTitles));
  const reset = el("button", { type: "button", class: "secondary" }, "Make a password reset link");
  const linkOut = el("p", { "aria-live": "polite" });
  reset.addEventListener("click", async () => {
    const made = await post(`/api/class/learners/${learnerId}/reset-link`, {}, "make a reset link");
    linkOut.replaceChildren("Give this one-time link to the learner: ", el("code", {}, made.link));
  });
  const explained = data.explanations.length
    ? el("div", { class: "explanation-cards" }, ...data.explanations.map((entry) => explanationCard(entry, entry.lesson_title, "h5")))
    : el("p", {}, "No explanation written yet.");
  box.replaceChildren(el("h3", {}, data.learner.name), ...(assistant ? [] : [reset, linkOut]),
    el("h4", {}, `Runs, answers and help used (times are yours, ${localZoneName()})`),
    items.length ? el("ol", { class: "timeline" }, ...items) : el("p", {}, "Nothing yet."),
    el("h4", {}, "Explanations"), explained);
}

function draw(data) {
  exerciseTitles = Object.fromEntries(data.exercises.map((item) => [item.exercise_id, item.title]));
  const box = document.getElementById("class-grid");
  const focused = document.activeElement;
  const keep = box.contains(focused) ? (focused.dataset.learner ? `[data-learner='${focused.dataset.learner}']`
    : focused.dataset.name ? `button.column-name[data-name='${CSS.escape(focused.dataset.name)}']` : null) : null;
  const scrolled = box.scrollLeft;
  box.replaceChildren(grid(data));
  box.scrollLeft = scrolled;
  if (keep) box.querySelector(keep)?.focus();
  document.getElementById("class-exercises").replaceChildren(exercisesTable(data));
  document.getElementById("class-questions").replaceChildren(questionsTable(data));
  explanationsPicker(data);
  stamp();
}

function stamp() {
  document.getElementById("class-refreshed").textContent =
    `Up to date as of ${formatLocalTime(new Date().toISOString())} (your time); it refreshes by itself while this page is open.`;
}

// The overview again, only when it changed: If-None-Match with the last ETag, 304 while nothing changed.
let etag = null;
let count = 0;  // overviews drawn (data-refreshes, for tests)
async function refresh() {
  const init = requestInit("GET", undefined, etag ? { "If-None-Match": etag } : {});
  const url = `/api/class/overview${sectionQuery()}`;
  const response = await fetch(url, init);
  if (response.status === 304) { stamp(); return; }
  if (!response.ok) {
    if (etag === null) await get(url, "load the class");  // says why, on the page
    return;
  }
  etag = response.headers.get("etag");
  draw(await response.json());
  count += 1;
  document.querySelector("main").dataset.refreshes = String(count);
}

function keepRefreshing() {
  setTimeout(async () => {
    try {
      if (document.visibilityState === "visible") await refresh();
    } catch {
      // The server did not answer this time (a restart): the next turn asks again.
    }
    keepRefreshing();
  }, REFRESH_MS);
}

async function main() {
  const csrf = document.cookie.match(/(?:^|; )(?:__Host-)?chainrule_csrf=([^;]+)/);
  if (csrf) document.getElementById("sign-out-csrf").value = decodeURIComponent(csrf[1]);
  await mountSections();
  await refresh();
  clearLoading();
  window.addEventListener("chainrule:section", () => {
    etag = null;
    refresh();
    const lesson = document.getElementById("explanations-lesson");
    if (lesson?.value) showExplanations(lesson.value);
  });
  mountDeadlines();
  mountRegrade();
  mountMarks();
  keepRefreshing();
}

main();
