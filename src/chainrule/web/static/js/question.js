// One question (numeric or multiple choice) with immediate feedback; used by the quiz and the review page.
import { el, fieldMessage, focusResult, whileBusy } from "./api.js";
import { answerSentence, formatWhen } from "./when.js";

let counter = 0;

/**
 * Build a question form.
 * question: {id, prompt, kind: "number"|"choice", options}
 * submit(answer: string) -> Promise<{correct, expected, reason, review: {due, text}}>
 * previous: an earlier answer to show ({answer, correct, text, due}) or null.
 */
export function questionForm(question, submit, previous = null, options = {}) {
  counter += 1;
  const uid = `q${counter}-${question.id}`;
  // Not a live region: after Check answer the focus moves to it, and a screen reader reads it from there.
  const feedback = el("div", { class: "feedback" });
  const problem = el("p", { class: "field-error", "aria-live": "polite" });
  const form = el("form", { class: `question question-${question.kind}`, "data-question": question.id });
  let readAnswer;
  if (question.kind === "choice") {
    const fieldset = el("fieldset", {}, el("legend", { class: "question-prompt" }, question.prompt));
    question.options.forEach((option, index) => {
      const id = `${uid}-opt${index}`;
      fieldset.append(el("div", { class: "choice" },
        el("input", { type: "radio", name: uid, id, value: option, required: index === 0 }),
        el("label", { for: id }, option)));
    });
    form.append(fieldset);
    readAnswer = () => {
      const chosen = form.querySelector(`input[name="${uid}"]:checked`);
      if (!chosen) { problem.textContent = "Choose one of the options."; return null; }
      return chosen.value;
    };
  } else {
    const id = `${uid}-input`;
    const input = el("input", { id, type: "text", inputmode: "decimal", autocomplete: "off", class: "number-input" });
    form.append(el("label", { for: id, class: "question-prompt" }, question.prompt));
    form.numberInput = input;
    // What was typed goes as typed: the server reads the number, and a 422 says at this field what is wrong.
    readAnswer = () => input.value;
  }
  const button = el("button", { type: "submit" }, options.submitLabel || "Check answer");
  form.append(el("div", { class: "inline" }, form.numberInput || null, button), problem, feedback);

  const said = (answer) => (question.kind === "choice" ? ` You chose “${answer.replace(/\.$/, "")}”.` : ` You answered ${answer}.`);
  const hintOf = (outcome) => el("span", { class: "hint", "data-mistake": outcome.mistake || "" }, ` ${outcome.hint}`);
  // A wrong first answer in the lesson gets a hint aimed at it and one more try before the answer is shown.
  let mayRetry = Boolean(options.retry) && !previous;
  const showHint = (outcome, answer) => {
    form.classList.remove("right");
    form.classList.add("wrong");
    form.dataset.correct = "false";
    form.dataset.retry = "true";
    form.dataset.practice = String(Boolean(outcome.practice));
    feedback.replaceChildren(el("strong", {}, "Not quite."), said(answer), hintOf(outcome),
      el("p", { class: "try-again" }, "Try once more: change your answer and check it again."));
  };

  const show = (outcome, answer) => {
    form.dataset.retry = "false";
    form.classList.toggle("right", outcome.correct);
    form.classList.toggle("wrong", !outcome.correct);
    form.dataset.correct = String(outcome.correct);
    const parts = [el("strong", {}, outcome.correct ? "Right." : "Not quite.")];
    if (answer !== undefined && answer !== null) parts.push(said(answer));
    if (!outcome.correct && outcome.hint) parts.push(hintOf(outcome));
    if (!outcome.correct && outcome.expected) parts.push(` ${answerSentence(question.kind, outcome.expected)}`);
    if (outcome.reason) parts.push(el("span", { class: "reason" }, ` ${outcome.reason}`));
    const review = outcome.review || {};
    form.dataset.practice = String(Boolean(outcome.practice));
    if (outcome.practice) {
      // A retry after the first answer: checked, but the review schedule is the first answer's.
      parts.push(el("p", { class: "practice-note" }, "Practice: only your first answer counts for review, so this one leaves the schedule as it was."));
    }
    if (review.text) {
      const due = review.due ? ` (${formatWhen(review.due)})` : "";
      const text = review.text.charAt(0).toUpperCase() + review.text.slice(1);
      parts.push(el("p", { class: "review-note" }, `${text}${due}.`));
    }
    feedback.replaceChildren(...parts);
  };

  if (previous) {
    show({ correct: previous.correct, expected: previous.expected, reason: previous.reason, hint: previous.hint, mistake: previous.mistake, practice: previous.practice, review: { due: previous.due, text: previous.text } }, previous.answer);
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    const answer = readAnswer();
    if (answer === null) return;
    await whileBusy(button, async () => {
      try {
        const outcome = await submit(answer);
        if (!outcome.correct && mayRetry && outcome.hint) showHint(outcome, answer);
        else show(outcome, answer);
        mayRetry = false;
        focusResult(feedback);
        if (options.onAnswered) options.onAnswered(outcome);
      } catch (error) {
        if (error.field) {
          problem.textContent = fieldMessage(error);
          if (form.numberInput) form.numberInput.focus();
        } else {
          feedback.textContent = "Your answer was not checked: see the message at the top.";
          focusResult(feedback);
        }
      }
    });
  });
  return form;
}
