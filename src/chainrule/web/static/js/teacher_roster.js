// The class's roster on the teacher's page (routes_roster.py): who is listed (name, e-mail or school id, section)
// and who of them joined, and, for a teacher, importing a roster CSV: the file's bytes go as they are, and the
// server takes every row or none, naming each bad line. A teaching assistant sees the list only.
import { api, get, el } from "./api.js";
import { loadSections } from "./teacher_sections.js";
import { assistant } from "./staff.js";

const box = document.getElementById("class-roster");

function table(entries) {
  if (!entries.length) return el("p", { id: "roster-empty" }, "No roster yet: learners join with the invite alone.");
  const head = el("tr", {}, ...["Name", "E-mail or school id", "Section", "Joined as"].map((text) => el("th", { scope: "col" }, text)));
  const rows = entries.map((entry) => el("tr", { "data-roster": entry.key },
    el("td", { "data-label": "Name" }, entry.name), el("td", { "data-label": "E-mail or school id" }, entry.key),
    el("td", { "data-label": "Section" }, entry.section || "–"),
    el("td", { "data-label": "Joined as" }, entry.joined_as || "not joined yet")));
  return el("table", { class: "class-table", id: "roster-table" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

function importForm(rule) {
  const file = el("input", { id: "roster-file", type: "file", accept: ".csv,text/csv", "aria-describedby": "roster-rule" });
  const said = el("div", { id: "roster-said", "aria-live": "polite", tabindex: "-1" });
  const form = el("form", { class: "roster-import" },
    el("p", { id: "roster-rule", class: "muted" }, rule),
    el("p", {}, el("label", { for: file.id }, "Roster file (CSV) "), file),
    el("p", {}, el("button", { type: "submit" }, "Import the roster")), said);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    said.replaceChildren();
    if (!file.files.length) {
      said.replaceChildren(el("p", { class: "form-error" }, "Choose a CSV file first."));
      said.focus();
      return;
    }
    try {
      const data = await file.files[0].arrayBuffer();
      const done = await api("POST", "/api/class/roster.csv", data, "import the roster", { raw: true, atField: true });
      await draw();
      await loadSections();
      const out = document.getElementById("roster-said");
      out.replaceChildren(el("p", {}, `Imported: ${done.text}.`));
      out.focus();
    } catch (failure) {
      if (failure.status !== 422) throw failure;  // api() has said it at the top of the page
      said.replaceChildren(el("p", { class: "form-error", role: "alert" }, failure.detail));
      said.focus();
    }
  });
  return form;
}

async function draw() {
  const data = await get("/api/class/roster", "load the roster");
  box.replaceChildren(...(assistant ? [] : [importForm(data.rule)]), table(data.entries));
}

if (box) draw();
