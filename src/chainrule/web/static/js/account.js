// The account page: add a progress file exported in personal mode to this class account.
import { post } from "./api.js";

const input = document.getElementById("import-file");
const result = document.getElementById("import-result");
input.addEventListener("change", async () => {
  const file = input.files[0];
  if (!file) return;
  let document_;
  try {
    document_ = JSON.parse(await file.text());
  } catch {
    result.textContent = "That file is not JSON: choose the file `chainrule progress export` wrote.";
    return;
  }
  const answer = await post("/api/class/progress/import", document_, "add your progress file");
  const added = Object.entries(answer.added).filter(([, count]) => count).map(([what, count]) => `${count} ${what.replace("_", " ")}`);
  result.textContent = added.length ? `Added: ${added.join(", ")}.` : "Nothing new: everything in the file was here already.";
});
