// The review page: questions that are due come back; each answer reschedules it; a rating can be undone.
import { get, post, el, clearLoading } from "./api.js";
import { questionForm } from "./question.js";
import { renderMath } from "./math.js";
import { formatWhen } from "./when.js";

const main = document.getElementById("main");
const list = document.getElementById("review-list");
const empty = document.getElementById("review-empty");
const undoButton = document.getElementById("undo-review");
const undoStatus = document.getElementById("undo-status");
const reviewed = document.getElementById("reviewed");
const reviewedList = document.getElementById("reviewed-list");

// The answers given on this page (with their feedback) stay through a reload of this tab.
const SESSION_KEY = "chainrule:reviewed";
function answeredHere() {
  try { return JSON.parse(window.sessionStorage.getItem(SESSION_KEY) || "[]"); } catch (error) { return []; }
}
function keepAnswered(entry) {
  const kept = answeredHere().filter((e) => !(e.lesson_id === entry.lesson_id && e.question.id === entry.question.id));
  kept.push(entry);
  try { window.sessionStorage.setItem(SESSION_KEY, JSON.stringify(kept.slice(-50))); } catch (error) { /* storage off */ }
}

function showAnswered(dueKeys) {
  const entries = answeredHere().filter((e) => !dueKeys.has(`${e.lesson_id}/${e.question.id}`));  // undone: due again
  reviewedList.replaceChildren(...entries.map((e) => {
    const previous = { answer: e.answer, correct: e.outcome.correct, expected: e.outcome.expected, reason: e.outcome.reason,
      practice: e.outcome.practice, due: e.outcome.review && e.outcome.review.due, text: e.outcome.review && e.outcome.review.text };
    const submit = (answer) => post(`/api/review/${encodeURIComponent(e.lesson_id)}/${encodeURIComponent(e.question.id)}`,
      { answer, variant: e.variant || undefined }, "check your answer", { atField: true });
    return el("li", { "data-lesson": e.lesson_id }, questionForm(e.question, submit, previous, { submitLabel: "Answer" }));
  }));
  reviewed.hidden = entries.length === 0;
  renderMath(reviewedList);
}

async function loadDue() {
  let due;
  try {
    due = await get("/api/review/due", "load the questions due for review");
  } catch (error) {
    clearLoading();
    main.dataset.ready = "error";
    return;
  }
  clearLoading();
  list.replaceChildren();
  for (const item of due.due) {
    const question = { id: item.question_id, prompt: item.prompt, kind: item.kind, options: item.options || [] };
    let given = null;
    const submit = (answer) => {
      given = answer;
      return post(`/api/review/${encodeURIComponent(item.lesson_id)}/${encodeURIComponent(item.question_id)}`,
        { answer, variant: item.variant || undefined }, "check your answer", { atField: true });
    };
    const onAnswered = (outcome) => keepAnswered({ lesson_id: item.lesson_id, variant: item.variant, question, answer: given, outcome });
    list.append(el("li", { "data-lesson": item.lesson_id }, questionForm(question, submit, null, { submitLabel: "Answer", onAnswered })));
  }
  empty.hidden = due.due.length > 0;
  // Nothing due: say when the next question comes back (or how questions get here at all).
  empty.textContent = due.next_due
    ? `Nothing is due right now. The next question comes back ${formatWhen(due.next_due)}.`
    : "Nothing is due right now: questions come here once you have answered them in a lesson's quiz.";
  showAnswered(new Set(due.due.map((item) => `${item.lesson_id}/${item.question_id}`)));
  renderMath(list);
  main.dataset.ready = "true";
  performance.mark("chainrule-ready");
  main.dataset.due = String(due.due.length);
}

undoButton.addEventListener("click", async () => {
  undoButton.disabled = true;
  try {
    const body = await post("/api/review/undo", {}, "undo the last rating");
    if (body.undone) {
      const due = body.undone.due ? formatWhen(body.undone.due) : "now";
      undoStatus.textContent = `Undone: that question is due again (${due}).`;
      await loadDue();
    } else {
      undoStatus.textContent = "Nothing to undo.";
    }
  } catch (error) {
    undoStatus.textContent = "Not undone: see the message at the top.";
  } finally {
    undoButton.disabled = false;
  }
});

loadDue();
