// Section 04: step through the neuron, but type a prediction before each of the gated steps.
import { get, put, el, fmt, parseNumber, NUMBER_HELP } from "./api.js";
import { GraphPlayer } from "./graph.js";

export async function renderPredict(slot, lesson, progress, base) {
  const spec = lesson.predict;
  const trace = await get(`${base}/trace/${encodeURIComponent(spec.graph)}`, "load the prediction graph");
  const made = new Map(Object.entries(progress.predictions || {}));  // key -> {value, correct, reason?}
  const forwardCount = trace.forward.length;
  const gateIndex = (step) => (step.before_step.phase === "forward" ? 0 : forwardCount) + step.before_step.index;
  const gates = new Map(spec.steps.map((step) => [gateIndex(step), step]));

  const counter = el("p", { class: "prediction-counter", "aria-live": "polite" });
  const holder = el("div", { class: "player-holder", id: "predict-player" });
  const panel = el("div", { class: "prediction-panel" });
  const list = el("ol", { class: "prediction-list" });
  const items = new Map();
  for (const step of spec.steps) {
    const status = el("span", { class: "prediction-status" });
    const item = el("li", { "data-key": step.key, class: "prediction" },
      el("span", { class: "prediction-prompt" }, step.prompt), status);
    items.set(step.key, { item, status });
    list.append(item);
  }
  slot.append(counter, holder, panel, el("h3", {}, "Your predictions"), list);

  const showResult = (key) => {
    const entry = made.get(key);
    const { item, status } = items.get(key);
    item.classList.toggle("made", Boolean(entry));
    item.classList.toggle("right", Boolean(entry && entry.correct));
    item.classList.toggle("wrong", Boolean(entry && !entry.correct));
    if (!entry) { status.textContent = "not made yet"; return; }
    const verdict = entry.correct ? "right" : "not quite";
    const expected = entry.expected !== undefined && !entry.correct ? ` (the value is ${fmt(entry.expected)})` : "";
    status.textContent = `you said ${fmt(entry.value)}: ${verdict}${expected}.${entry.reason ? ` ${entry.reason}` : ""}`;
  };
  const updateCounter = () => {
    const count = spec.steps.filter((step) => made.has(step.key)).length;
    counter.textContent = `${count} of ${spec.steps.length} made`;
    (slot.closest("section") || slot).dataset.predictionsMade = String(count);
  };

  let player = null;
  const renderPanel = (position) => {
    const step = gates.get(position);
    if (!step || made.has(step.key) || !player) {
      panel.replaceChildren(el("p", { class: "panel-note" },
        made.size >= spec.steps.length ? "All predictions made: play the rest freely." : "Step forward until the next prediction."));
      return;
    }
    const inputId = `prediction-${step.key}`;
    const input = el("input", { id: inputId, name: "value", type: "text", inputmode: "decimal", autocomplete: "off", required: true, class: "number-input" });
    const problem = el("p", { class: "field-error", "aria-live": "polite" });
    const form = el("form", { class: "prediction-form", "data-key": step.key },
      el("label", { for: inputId }, step.prompt), el("div", { class: "inline" }, input, el("button", { type: "submit" }, "Submit prediction")), problem);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const value = parseNumber(input.value);
      if (Number.isNaN(value)) { problem.textContent = NUMBER_HELP; input.focus(); return; }
      problem.textContent = "";
      const button = form.querySelector("button");
      button.disabled = true;
      try {
        const answer = await put(`/api/progress/${encodeURIComponent(lesson.id)}/predictions/${encodeURIComponent(step.key)}`, { value }, "save your prediction");
        made.set(step.key, { value, ...answer });
        showResult(step.key);
        updateCounter();
        player.goTo(position + 1);  // the step plays now that the prediction is made
        const again = panel.querySelector("input");
        (again || player.nextButton).focus();
      } catch (error) {
        button.disabled = false;
      }
    });
    // A keyboard user stepping with the player's buttons lands in the prediction box.
    const active = document.activeElement;
    const fromPlayer = active && holder.contains(active);
    panel.replaceChildren(el("p", { class: "panel-note" }, "Predict before this step plays:"), form);
    if (fromPlayer) input.focus();
  };

  player = new GraphPlayer(holder, trace, {
    name: "predict", title: "The neuron", intervalMs: 700,
    gate: (index) => gates.has(index) && !made.has(gates.get(index).key),
    onChange: (position) => renderPanel(position),
  });
  for (const step of spec.steps) showResult(step.key);
  updateCounter();
  renderPanel(player.position);
  window.chainrulePredict = player;
}
