// The teacher's hand on the gradebook: override a learner's credit of a lesson or an exercise, excuse it, or
// undo either, always with a reason and after a confirmation; and the audit log of every change to what a
// learner is credited, a page at a time. Everything comes from /api/class/marks and /api/class/audit
// (web/routes_marks.py); numbers and dates are the server's texts, whatever a person wrote goes in as text.
import { get, put, el } from "./api.js";
import { mountDeadlines } from "./teacher_deadlines.js";
import { assistant, teachersOnly } from "./staff.js";

let box = null;
let page = 1;

const ACTIONS = [
  ["override", "Give a credit by hand"],
  ["excuse", "Excuse it (counts neither for nor against)"],
  ["undo", "Undo the override or excuse"],
];
const SAID = { override: "credit given by hand", excuse: "excused" };

function field(label, input, hint) {
  return el("label", { class: "deadline-field" }, el("span", {}, label), input, hint ? el("span", { class: "muted" }, hint) : null);
}

function markForm(data) {
  const learner = el("select", { id: "mark-learner" }, ...data.learners.map((learner) => el("option", { value: String(learner.id) }, learner.name)));
  const lesson = el("select", { id: "mark-lesson" }, ...data.lessons.map((entry) => el("option", { value: entry.lesson_id }, entry.title)));
  const exercise = el("select", { id: "mark-exercise" });
  const credit = el("input", { type: "text", inputmode: "decimal", id: "mark-credit", autocomplete: "off" });
  const creditHint = el("span", { class: "muted", id: "mark-credit-hint" });
  const reason = el("textarea", { id: "mark-reason", rows: "2", maxlength: "500", required: true });
  const choices = ACTIONS.map(([value, label], index) => el("label", { class: "mark-choice" },
    el("input", { type: "radio", name: "mark-action", value, checked: index === 0 }), ` ${label}`));
  const chosen = () => choices.map((choice) => choice.querySelector("input")).find((input) => input.checked).value;
  const lessonOf = () => data.lessons.find((entry) => entry.lesson_id === lesson.value);
  const fillExercises = () => {
    exercise.replaceChildren(el("option", { value: "" }, "The whole lesson"),
      ...lessonOf().exercises.map((id) => el("option", { value: id }, `Exercise ${id}`)));
    sayCredit();
  };
  const sayCredit = () => {
    creditHint.textContent = exercise.value ? "1: passed on time, 0: not passed" : `a number from ${lessonOf().most_text} (its sections)`;
    credit.disabled = chosen() !== "override";
  };
  lesson.addEventListener("change", fillExercises);
  exercise.addEventListener("change", sayCredit);
  for (const choice of choices) choice.querySelector("input").addEventListener("change", sayCredit);
  const confirmBox = el("div", { id: "mark-confirm", class: "mark-confirm", hidden: true });
  const form = el("form", { class: "deadline-form", "data-form": "mark" },
    field("Learner", learner), field("Lesson", lesson), field("Of", exercise),
    el("fieldset", { class: "mark-actions" }, el("legend", {}, "What to do"), ...choices),
    el("label", { class: "deadline-field" }, el("span", {}, "Credit to give"), credit, creditHint),
    field("Reason (required; kept in the audit log)", reason),
    el("button", { type: "submit" }, "Review the change"));
  credit.setAttribute("aria-describedby", "mark-credit-hint");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { learner_id: Number(learner.value), lesson_id: lesson.value, exercise_id: exercise.value || null,
      action: chosen(), reason: reason.value };
    if (body.action === "override") body.credit = credit.value.trim() === "" ? null : Number(credit.value);
    const what = `${learner.selectedOptions[0].textContent}, ${lesson.selectedOptions[0].textContent}${exercise.value ? `, exercise ${exercise.value}` : ""}`;
    const doing = body.action === "override" ? `give ${credit.value.trim()} as the credit of` : body.action === "excuse" ? "excuse" : "undo the override or excuse of";
    const yes = el("button", { type: "button" }, "Save the change");
    const back = el("button", { type: "button", class: "secondary" }, "Go back");
    confirmBox.replaceChildren(el("p", { id: "mark-confirm-text" }, `About to ${doing} ${what}, because: ${reason.value.trim()}`), yes, " ", back);
    confirmBox.hidden = false;
    yes.setAttribute("aria-describedby", "mark-confirm-text");
    back.addEventListener("click", () => { confirmBox.hidden = true; form.querySelector("button[type=submit]").focus(); });
    yes.addEventListener("click", async () => {
      confirmBox.hidden = true;
      const entry = await put("/api/class/marks", body, "save the change of credit");
      reason.value = "";
      page = 1;
      const now = await get("/api/class/marks/in-force", "load the overrides and excuses");
      box.querySelector("[data-mark-list]").replaceChildren(markList(now));
      await drawLog();
      box.querySelector("[data-mark-status]").textContent = `Saved: ${what}: ${entry.score_text}.`;
      box.querySelector("[data-mark-status]").focus();
      mountDeadlines();  // the credit table of the due dates shows it too
    });
    yes.focus();
  });
  fillExercises();
  return el("div", {}, form, confirmBox);
}

function markList(data) {
  if (!data.marks.length) return el("p", { class: "muted" }, "No credit is set by hand and nothing is excused.");
  return el("ul", { id: "mark-list" }, ...data.marks.map((mark) => el("li", {},
    `${mark.name}, ${mark.lesson_id}${mark.exercise_id ? `, exercise ${mark.exercise_id}` : ""}: ${SAID[mark.kind]}`
    + `${mark.credit_text ? ` (${mark.credit_text})` : ""}, because: ${mark.reason}`)));
}

function auditTable(log) {
  const pager = el("p", { class: "audit-pager" });
  const go = (label, to) => {
    const button = el("button", { type: "button", class: "secondary" }, label);
    button.addEventListener("click", async () => { page = to; await drawLog(); box.querySelector("#audit-page").focus(); });
    pager.append(button, " ");
  };
  if (log.page > 1) go("Newer changes", log.page - 1);
  if (log.page < log.pages) go("Older changes", log.page + 1);
  const rows = log.entries.map((entry) => el("tr", { "data-audit": entry.kind },
    el("td", { "data-label": "When (UTC)" }, entry.at_text),
    el("td", { "data-label": "Who" }, entry.actor_name),
    el("td", { "data-label": "Change" }, entry.kind),
    el("td", { "data-label": "Learner" }, entry.learner_name || "the class"),
    el("td", { "data-label": "Lesson" }, [entry.lesson_id, entry.exercise_id].filter(Boolean).join(" / ")),
    el("td", { "data-label": "Before" }, entry.before_text),
    el("td", { "data-label": "After" }, entry.after_text),
    el("td", { "data-label": "Reason" }, entry.reason)));
  return el("div", { id: "audit-log" },
    el("p", { id: "audit-page", tabindex: "-1" }, log.page_text),
    log.entries.length ? el("div", { class: "class-grid-scroll", tabindex: "0", role: "region", "aria-label": "The audit log (scrolls sideways)" },
      el("table", { class: "class-table" },
        el("thead", {}, el("tr", {}, ...["When (UTC)", "Who", "Change", "Learner", "Lesson", "Before", "After", "Reason"]
          .map((text) => el("th", { scope: "col" }, text)))),
        el("tbody", {}, ...rows))) : el("p", { class: "muted" }, "Nothing has changed what a learner is credited yet."),
    pager);
}

async function drawLog() {
  const log = await get(`/api/class/audit?page=${page}`, "load the audit log");
  box.querySelector("#audit-log").replaceWith(auditTable(log));
}

async function draw() {
  const data = await get("/api/class/marks/in-force", "load the overrides and excuses");
  box.replaceChildren(
    el("p", { "data-mark-status": "", "aria-live": "polite", tabindex: "-1" }),
    assistant ? teachersOnly("a learner's credit by hand") : data.learners.length ? markForm(data) : el("p", {}, "No learner has joined yet."),
    el("h3", {}, "In force now"), el("div", { "data-mark-list": "" }, markList(data)),
    el("h3", {}, "Every change to what a learner is credited"),
    el("p", {}, el("a", { class: "button-link secondary", href: "/teacher/audit.csv", download: "" }, "Download the audit log (CSV)")),
    el("div", { id: "audit-log" }));
  await drawLog();
}

export async function mountMarks() {
  box = document.getElementById("class-marks");
  if (!box) return;
  await draw();
}
