// Section 04: step through the neuron, but type a prediction before each of the gated steps.
//
// Nothing shows an answer before its prediction is made: the list "Your predictions" holds only the
// prompts already reached, and the feedback (right or not, the value, the reason) appears at the
// input, where the learner reads it and moves on with Next when ready.
import { get, put, el, fieldMessage } from "./api.js";
import { GraphPlayer, dependsOn, numberText } from "./graph.js";

/** "Right." / "Not quite." plus the value and the reason, as nodes. */
function feedbackParts(entry) {
  const verdict = entry.correct ? (entry.secondTry ? "Right, on your second try." : "Right.") : "Not quite.";
  const parts = [el("strong", {}, verdict), ` You said ${numberText(entry, "value")}.`];
  if (!entry.correct && entry.expected !== undefined && entry.expected !== null) {
    parts.push(` The value is ${numberText(entry, "expected")}.`);
  }
  if (entry.reason) parts.push(el("span", { class: "reason" }, ` ${entry.reason}`));
  return parts;
}

export async function renderPredict(slot, lesson, progress, base) {
  const spec = lesson.predict;
  const trace = await get(`${base}/trace/${encodeURIComponent(spec.graph)}`, "load the prediction graph");
  const made = new Map(Object.entries(progress.predictions || {}));  // key -> {value, correct, expected?, reason?}
  // A wrong first try made in this visit: key -> its answer, with the hint; the gate stays shut for one more try.
  const firstTries = new Map();
  const forwardCount = trace.forward.length;
  const gateIndex = (step) => (step.before_step.phase === "forward" ? 0 : forwardCount) + step.before_step.index;
  const gates = new Map(spec.steps.map((step) => [gateIndex(step), step]));
  // The box each prediction asks about, and the boxes it depends on (kept in view and named at the gate).
  const idOf = new Map(trace.nodes.map((node) => [node.label, node.id]));
  const labelOf = new Map(trace.nodes.map((node) => [node.id, node.label]));
  const askedAt = (position) => {
    const step = gates.get(position);
    if (!step || made.has(step.key) || !idOf.has(step.node_label)) return null;
    const primary = idOf.get(step.node_label);
    return { primary, related: dependsOn(trace, primary, step.kind), step };
  };

  const counter = el("p", { class: "prediction-counter", "aria-live": "polite" });
  const holder = el("div", { class: "player-holder", id: "predict-player" });
  const panel = el("div", { class: "prediction-panel" });
  const list = el("ol", { class: "prediction-list" });
  const items = new Map();
  slot.append(counter, holder, panel, el("h3", {}, "Your predictions"), list);

  // A list entry exists only once its prompt has been reached (asked now, or made before).
  const showResult = (key) => {
    const step = spec.steps.find((s) => s.key === key);
    if (!items.has(key)) {
      const status = el("span", { class: "prediction-status" });
      const item = el("li", { "data-key": key, class: "prediction" }, el("span", { class: "prediction-prompt" }, step.prompt), status);
      items.set(key, { item, status });
      // Keep the lesson's order, whatever order the entries were reached in.
      const later = spec.steps.slice(spec.steps.indexOf(step) + 1).map((s) => items.get(s.key)).find(Boolean);
      list.insertBefore(item, later ? later.item : null);
    }
    const entry = made.get(key);
    const { item, status } = items.get(key);
    item.classList.toggle("made", Boolean(entry));
    // Only a right first try is marked right: a right second try says so in words.
    item.classList.toggle("right", Boolean(entry && entry.correct && !entry.secondTry));
    item.classList.toggle("wrong", Boolean(entry && (!entry.correct || entry.secondTry)));
    const waiting = firstTries.has(key) ? "one more try" : "waiting for your prediction";
    status.replaceChildren(...(entry ? feedbackParts(entry) : [waiting]));
  };
  const updateCounter = () => {
    const count = spec.steps.filter((step) => made.has(step.key)).length;
    counter.textContent = `${count} of ${spec.steps.length} made`;
    (slot.closest("section") || slot).dataset.predictionsMade = String(count);
  };

  let player = null;
  let justMade = null;  // {key, position}: feedback stays at the input until the learner moves on
  const renderPanel = (position) => {
    if (justMade && justMade.position === position) return;  // still showing the feedback
    justMade = null;
    const step = gates.get(position);
    if (!step || made.has(step.key) || !player) {
      panel.replaceChildren(el("p", { class: "panel-note" },
        made.size >= spec.steps.length ? "All predictions made: play the rest freely." : "Step forward until the next prediction."));
      return;
    }
    // The player renders again on a resize (the hint appearing is one): the form in place, focus and all, stays.
    if (panel.querySelector(`form.prediction-form[data-key="${CSS.escape(step.key)}"]`)) return;
    showResult(step.key);
    const inputId = `prediction-${step.key}`;
    const input = el("input", { id: inputId, name: "value", type: "text", inputmode: "decimal", autocomplete: "off", required: true, class: "number-input", "aria-describedby": `${inputId}-look` });
    const problem = el("p", { class: "field-error", "aria-live": "polite" });
    // The hint after a wrong first try: announced as it appears, and read again with the field it describes.
    const hint = el("div", { class: "prediction-hint", id: `${inputId}-hint`, role: "status" });
    const form = el("form", { class: "prediction-form", "data-key": step.key },
      el("label", { for: inputId }, step.prompt), hint, el("div", { class: "inline" }, input, el("button", { type: "submit" }, "Submit prediction")), problem);
    const askAgain = (first) => {
      form.dataset.try = "2";
      hint.replaceChildren(el("p", {}, el("strong", {}, "Not quite."), ` You said ${numberText(first, "value")}.`,
        el("span", { class: "hint", "data-mistake": first.mistake || "" }, ` ${first.hint}`)), el("p", { class: "try-again" }, "Try once more:"));
      form.querySelector("button").textContent = "Submit second try";
      input.setAttribute("aria-describedby", `${inputId}-hint ${inputId}-look`);
      input.value = "";
    };
    if (firstTries.has(step.key)) askAgain(firstTries.get(step.key));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      problem.textContent = "";
      input.removeAttribute("aria-invalid");
      const button = form.querySelector("button");
      button.disabled = true;
      try {
        // What was typed goes as typed: the server reads it, and says at the field when it is not a number.
        const secondTry = firstTries.has(step.key);
        const answer = await put(`/api/progress/${encodeURIComponent(lesson.id)}/predictions/${encodeURIComponent(step.key)}`,
          secondTry ? { value: input.value, second_try: true } : { value: input.value }, "save your prediction", { atField: true });
        if (!answer.correct && !secondTry) {
          // A wrong first try: a hint aimed at it, and one more try before the reveal.
          firstTries.set(step.key, answer);
          askAgain(answer);
          showResult(step.key);
          button.disabled = false;
          input.focus();
          return;
        }
        firstTries.delete(step.key);
        made.set(step.key, secondTry ? { ...answer, secondTry: true } : answer);
        showResult(step.key);
        updateCounter();
        showFeedback(step, position);
      } catch (error) {
        button.disabled = false;
        if (error.field) {
          problem.textContent = fieldMessage(error);
          input.setAttribute("aria-invalid", "true");
          input.focus();
        }
      }
    });
    // A keyboard user stepping with the player's buttons lands in the prediction box.
    const active = document.activeElement;
    const fromPlayer = active && holder.contains(active);
    panel.replaceChildren(el("p", { class: "panel-note" }, "Predict before this step plays:"), form, lookAt(askedAt(position), `${inputId}-look`));
    if (fromPlayer) input.focus();
  };

  // Where to look: the asked box and the boxes it depends on, as the graph marks them.
  const lookAt = (asked, id) => {
    if (!asked) return null;
    const names = asked.related.map((node) => labelOf.get(node)).join(", ");
    const forward = asked.step.kind === "forward";
    return el("p", { class: "look-at", id, "data-asked": labelOf.get(asked.primary) },
      `In the graph: ${labelOf.get(asked.primary)} has a dashed blue outline: you predict its ${forward ? "value" : "gradient"}`,
      names ? `; ${forward ? "the boxes it is computed from" : "the boxes that use it, and their other inputs,"} have a blue outline: ${names}.` : ".");
  };

  // The verdict at the input, and a Next button: the step plays when the learner is ready.
  const showFeedback = (step, position) => {
    const entry = made.get(step.key);
    const feedback = el("div", { class: `prediction-feedback ${entry.correct ? "right" : "wrong"}`, "data-key": step.key, role: "status" },
      el("p", { class: "prediction-asked" }, step.prompt), el("p", {}, ...feedbackParts(entry)));
    const onward = el("button", { type: "button", class: "prediction-next" }, "Next ▶ play this step");
    onward.addEventListener("click", () => {
      justMade = null;
      player.goTo(position + 1);
      const again = panel.querySelector("input");
      (again || player.nextButton).focus();
    });
    justMade = { key: step.key, position };
    panel.replaceChildren(feedback, onward);
    player.render();  // the Next buttons now enabled; the panel keeps the feedback
    onward.focus();
  };

  player = new GraphPlayer(holder, trace, {
    name: "predict", title: spec.graph_name,
    gate: (index) => gates.has(index) && !made.has(gates.get(index).key),
    focus: (position) => askedAt(position),
    alsoInView: panel,
    onChange: (position) => renderPanel(position),
  });
  for (const step of spec.steps) if (made.has(step.key)) showResult(step.key);
  updateCounter();
  renderPanel(player.position);
  window.chainrulePredict = player;
}
