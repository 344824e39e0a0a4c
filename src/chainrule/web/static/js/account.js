// The account page: add a progress file exported in personal mode to this class account; change the password.
import { post, fieldMessage } from "./api.js";

const input = document.getElementById("import-file");
const result = document.getElementById("import-result");
input?.addEventListener("change", async () => {
  const file = input.files[0];
  if (!file) return;
  // The file's own bytes, as it is: parsing and writing it again here would change its numbers (0.0 becomes 0).
  const text = await file.text();
  const answer = await post("/api/class/progress/import", text, "add your progress file", { raw: true });
  if (!answer) return;
  const added = Object.entries(answer.added).filter(([, count]) => count).map(([what, count]) => `${count} ${what.replace("_", " ")}`);
  const again = (answer.graded_again || []).map((run) => `${run.exercise} (${run.language}): ${run.job ? "queued for the grader" : run.verdict === "busy" ? "the grader was busy, run it on the lesson page" : run.status === "pass" ? "passed" : "did not pass"}`);
  result.textContent = (added.length ? `Added: ${added.join(", ")}.` : "Nothing new: everything in the file was here already.")
    + (again.length ? ` Your code was graded again here (only these results count): ${again.join("; ")}.` : "");
});

// A new password: every other session of the account ends; this browser gets a new one (routes_people.py).
const passwordForm = document.getElementById("password-form");
passwordForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const said = document.getElementById("password-result");
  said.textContent = "";
  const body = { current: passwordForm.elements.current.value, new: passwordForm.elements.new.value };
  try {
    const answer = await post("/api/class/account/password", body, "change your password", { atField: true });
    passwordForm.reset();
    said.textContent = answer.detail;
  } catch (error) {
    if (error.status === 422) said.textContent = fieldMessage(error);
  }
});
