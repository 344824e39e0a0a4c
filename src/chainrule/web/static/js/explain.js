// Section 07 (explain it back, saved) and section 08 (recap, back to the path, next lesson).
import { put, el } from "./api.js";
import { renderMath } from "./math.js";

export function renderExplain(slot, lesson, progress, base) {
  const spec = lesson.explain;
  const saved = progress.explanation || null;
  let ticked = new Set(saved ? saved.ticked : []);
  const textarea = el("textarea", { id: "explanation-text", rows: "6", class: "explanation" });
  textarea.value = saved ? saved.text : "";
  const status = el("span", { class: "status", role: "status", "aria-live": "polite" });
  const saveButton = el("button", { type: "submit" }, "Save my explanation");
  const form = el("form", { class: "explain-form" },
    el("label", { for: "explanation-text", class: "question-prompt" }, spec.prompt), textarea,
    el("div", { class: "inline" }, saveButton, status));
  const ideas = el("fieldset", { class: "key-ideas", hidden: !saved },
    el("legend", {}, "Key ideas of a good answer: tick the ones yours covered"));
  for (const idea of spec.key_ideas) {
    const id = `idea-${idea.id}`;
    const box = el("input", { type: "checkbox", id, value: idea.id, checked: ticked.has(idea.id) });
    box.addEventListener("change", () => {
      if (box.checked) ticked.add(idea.id); else ticked.delete(idea.id);
      store("Ticks saved.");
    });
    ideas.append(el("div", { class: "choice" }, box, el("label", { for: id }, idea.text)));
  }
  const count = el("p", { class: "ideas-count", "aria-live": "polite" });
  ideas.append(count);
  const updateCount = () => { count.textContent = `${ticked.size} of ${spec.key_ideas.length} key ideas covered.`; };
  updateCount();

  async function store(message) {
    status.textContent = "Saving…";
    try {
      await put(`${base}/explanation`, { text: textarea.value, ticked: [...ticked] }, "save your explanation");
      status.textContent = message || "Saved.";
      updateCount();
      return true;
    } catch (error) {
      status.textContent = "Not saved: see the message at the top.";
      return false;
    }
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!textarea.value.trim()) { status.textContent = "Write a few sentences first."; textarea.focus(); return; }
    saveButton.disabled = true;
    const ok = await store("Explanation saved. Now compare it with the key ideas below.");
    saveButton.disabled = false;
    if (ok && ideas.hidden) {
      ideas.hidden = false;
      ideas.querySelector("input").focus();
    }
  });
  slot.append(form, ideas);
  renderMath(ideas);
}

export function renderRecap(slot, lesson) {
  const recap = lesson.recap;
  // The section's prose may already list the points; show them here only when it does not.
  const prose = slot.parentElement ? slot.parentElement.querySelector(".prose") : null;
  const listed = prose ? prose.querySelectorAll("li").length : 0;
  if (listed < recap.points.length) {
    slot.append(el("ul", { class: "recap-points" }, ...recap.points.map((point) => el("li", {}, point))));
  }
  const next = recap.next || lesson.next;
  const nav = el("nav", { class: "lesson-end", "aria-label": "After this lesson" },
    el("a", { href: lesson.path.href, class: "button-link back-to-path" }, "← Back to path"));
  if (next) {
    const available = next.status === "available" && next.href;
    nav.append(el("div", { class: `next-lesson ${available ? "available" : "coming-next"}` },
      el("span", { class: "neighbour-role" }, "Next: "),
      available ? el("a", { href: next.href }, next.title) : el("strong", {}, next.title),
      available ? null : el("span", { class: "badge" }, "coming next · not written yet"),
      next.summary ? el("p", { class: "neighbour-summary" }, next.summary) : null));
  }
  slot.append(nav);
  renderMath(slot);
}
