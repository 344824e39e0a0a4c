// The section filter of the teacher's page (routes_class.py's ?section=): a select above the grid, filled with the
// class's sections (GET /api/class/roster); choosing one narrows the grid, the exercises and questions, the
// explanations and the gradebook link to that section's learners. The page's other scripts ask sectionQuery()
// and listen for "chainrule:section".
import { get } from "./api.js";

const select = () => document.getElementById("section-filter");

/** "?section=..." for the section chosen, or "" for the whole class. */
export function sectionQuery() {
  const chosen = select()?.value || "";
  return chosen ? `?section=${encodeURIComponent(chosen)}` : "";
}

/** The select's options again from the class's sections (after an import, say); the choice kept if it is still there. */
export async function loadSections() {
  const box = document.getElementById("section-filter-box");
  if (!box) return;
  const data = await get("/api/class/roster", "load the class's sections");
  const field = select();
  const kept = field.value;
  field.replaceChildren(new Option("The whole class", ""), ...data.sections.map((name) => new Option(name, name)));
  field.value = data.sections.includes(kept) ? kept : "";
  box.hidden = data.sections.length === 0;
  gradebookLink();
}

function gradebookLink() {
  const link = document.getElementById("gradebook-link");
  if (link) link.href = `/teacher/gradebook.csv${sectionQuery()}`;
}

export function mountSections() {
  select()?.addEventListener("change", () => {
    gradebookLink();
    const chosen = select().value;
    document.getElementById("section-said").textContent = chosen
      ? `Showing section ${chosen} only: the grid, the exercises, the questions, the explanations, the gradebook and the item analysis.`
      : "Showing the whole class.";
    window.dispatchEvent(new CustomEvent("chainrule:section"));
  });
  return loadSections();
}
