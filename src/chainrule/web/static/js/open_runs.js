// A button that opens one learner's runs in the teacher's "Feedback on runs" section (comments.js lists a
// learner's runs there, to read and comment on): it chooses the learner there and moves the focus to it.
// Used wherever the teacher's page names a learner behind a number (similar code, item analysis).
import { el } from "./api.js";

export function openRunsButton(learnerId, name) {
  const open = el("button", { type: "button", class: "secondary", "data-open-runs": `${learnerId}` },
    `Open ${name}'s runs`);
  open.addEventListener("click", () => {
    const choose = document.getElementById("feedback-learner");
    if (!choose) return;
    choose.value = `${learnerId}`;
    choose.dispatchEvent(new Event("change"));
    choose.focus();
  });
  return open;
}
