// Section 06: five questions with immediate feedback; each then enters the review queue.
import { post, el } from "./api.js";
import { questionForm } from "./question.js";
import { renderMath } from "./math.js";

export function renderQuiz(slot, lesson, progress, base) {
  const answered = progress.quiz || {};
  const list = el("ol", { class: "question-list quiz" });
  for (const question of lesson.quiz) {
    const submit = (answer) => post(`${base}/quiz/${encodeURIComponent(question.id)}`, { answer }, "check your answer", { atField: true });
    list.append(el("li", {}, questionForm(question, submit, answered[question.id] || null, { retry: true })));
  }
  slot.append(list);
  renderMath(list);
}
