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
    const submit = (answer) => post(`/api/review/${encodeURIComponent(item.lesson_id)}/${encodeURIComponent(item.question_id)}`,
      { answer, variant: item.variant || undefined }, "check your answer", { atField: true });
    list.append(el("li", { "data-lesson": item.lesson_id }, questionForm(question, submit, null, { submitLabel: "Answer" })));
  }
  empty.hidden = due.due.length > 0;
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
