// The teacher's due dates: the class's time zone and late policy, a due date per lesson, one learner's
// extension, many extensions from a CSV, and each learner's credit as of their own due dates. Everything
// comes from /api/class/deadlines (web/routes_deadlines.py); numbers and dates are the server's texts.
import { get, put, post, el } from "./api.js";
import { assistant, teachersOnly } from "./staff.js";

let box = null;

function field(label, input) {
  return el("label", { class: "deadline-field" }, el("span", {}, label), input);
}

function policyForm(data) {
  const zone = el("input", { type: "text", id: "deadline-zone", value: data.time_zone, autocomplete: "off", spellcheck: "false" });
  const late = el("input", { type: "text", id: "deadline-late", value: data.late_policy === "per-day" ? `${data.late_percent}%` : "no-credit", autocomplete: "off" });
  const form = el("form", { class: "deadline-form", "data-form": "policy" },
    field("Time zone of the due dates (an IANA name, like Europe/Berlin)", zone),
    field("Late work earns (no-credit, or a percentage less per day, like 10%)", late),
    el("button", { type: "submit" }, "Save the time zone and late policy"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    draw(await put("/api/class/deadlines/policy", { time_zone: zone.value, late: late.value }, "save the late policy"));
  });
  return el("div", {}, el("p", { id: "deadline-policy-text" }, `Due dates are in ${data.time_zone}; ${data.late_policy_text}.`),
    assistant ? teachersOnly("the time zone, the late policy, due dates and extensions") : form);
}

function dueTable(data) {
  const rows = data.due.map((entry) => {
    const what = entry.exercise_id ? `${entry.title}: exercise ${entry.exercise_id}` : entry.title;
    const input = el("input", { type: "datetime-local", value: entry.due || "", "aria-label": `Due date of ${what}` });
    const save = el("button", { type: "button", class: "secondary" }, "Save");
    save.addEventListener("click", async () => {
      draw(await put("/api/class/deadlines/due", { lesson_id: entry.lesson_id, exercise_id: entry.exercise_id, due: input.value || null },
        `save the due date of ${what}`));
    });
    return el("tr", { "data-due": entry.exercise_id ? `${entry.lesson_id}/${entry.exercise_id}` : entry.lesson_id },
      el("td", { "data-label": "Lesson" }, what), assistant ? null : el("td", { "data-label": "Due" }, input, " ", save),
      el("td", { "data-label": assistant ? "Due" : "Now" }, entry.due_text));
  });
  const heads = assistant ? ["Lesson", "Due"] : ["Lesson", "Due (an empty date: none)", "Now"];
  return el("table", { class: "class-table" },
    el("thead", {}, el("tr", {}, ...heads.map((text) => el("th", { scope: "col" }, text)))),
    el("tbody", {}, ...rows));
}

function extensionForms(data) {
  const who = el("select", { id: "extend-learner" }, ...data.learners.map((learner) => el("option", { value: String(learner.id) }, learner.name)));
  const lesson = el("select", { id: "extend-lesson" }, ...data.due.filter((entry) => !entry.exercise_id)
    .map((entry) => el("option", { value: entry.lesson_id }, entry.title)));
  const due = el("input", { type: "text", id: "extend-due", placeholder: "2026-12-08 23:59 or +2", autocomplete: "off" });
  const one = el("form", { class: "deadline-form", "data-form": "extend" },
    field("Learner", who), field("Lesson", lesson), field("Their own due date (a date, or +N days after the lesson's)", due),
    el("button", { type: "submit" }, "Extend"));
  one.addEventListener("submit", async (event) => {
    event.preventDefault();
    draw(await put("/api/class/deadlines/extensions", { learner_id: Number(who.value), lesson_id: lesson.value, due: due.value || null },
      "set the extension"));
  });
  const text = el("textarea", { id: "extend-csv", rows: "4", placeholder: "learner,lesson,due\nAda,backprop,+2" });
  const many = el("form", { class: "deadline-form", "data-form": "extend-csv" },
    field("Many extensions at once, as CSV (learner,lesson,due on each row; one bad row sets none)", text),
    el("button", { type: "submit", class: "secondary" }, "Set these extensions"));
  many.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answer = await post("/api/class/deadlines/extensions.csv", { csv: text.value }, "set the extensions");
    draw(answer);
    box.querySelector("[data-deadline-status]").textContent = `Extensions set: ${answer.set}.`;
  });
  const list = data.extensions.length
    ? el("ul", { id: "extension-list" }, ...data.extensions.map((entry) => el("li", {}, `${entry.name}, ${entry.lesson_id}: due ${entry.due_text}`)))
    : el("p", { class: "muted" }, "No extensions yet.");
  if (assistant) return el("div", {}, list);
  return el("div", {}, list, data.learners.length ? one : null, many);
}

function creditTable(data) {
  if (!data.learners.length) return el("p", {}, "No learner has joined yet.");
  const lessons = data.due.filter((entry) => !entry.exercise_id);
  const head = el("tr", {}, el("th", { scope: "col" }, "Learner"), ...lessons.map((entry) => el("th", { scope: "col" }, entry.title)));
  const rows = data.learners.map((learner) => el("tr", { "data-credit-row": learner.name }, el("th", { scope: "row" }, learner.name),
    ...learner.lessons.map((entry) => el("td", { "data-lesson": entry.lesson_id },
      el("span", { class: "credit" }, entry.score_text),
      entry.late_work ? el("span", { class: "late-mark" }, ` · late work: ${entry.late_work}`) : null,
      entry.extended ? el("span", { class: "muted" }, ` · extended to ${entry.due_text}`) : null,
      entry.mark && entry.mark.kind === "override" ? el("span", { class: "muted" }, " · given by hand") : null))));
  return el("div", { class: "class-grid-scroll", tabindex: "0", role: "region", "aria-label": "Credit as of each learner's due dates (scrolls sideways)" },
    el("table", { class: "class-grid credit-grid" }, el("thead", {}, head), el("tbody", {}, ...rows)));
}

function draw(data) {
  box.replaceChildren(
    el("p", { "data-deadline-status": "", "aria-live": "polite" }),
    el("h3", {}, "Time zone and late work"), policyForm(data),
    el("h3", {}, "Due dates"), dueTable(data),
    el("h3", {}, "Extensions"), extensionForms(data),
    el("h3", {}, "Credit as of each learner's own due date"), creditTable(data));
}

export async function mountDeadlines() {
  box = document.getElementById("class-deadlines");
  if (!box) return;
  draw(await get("/api/class/deadlines", "load the due dates"));
}
