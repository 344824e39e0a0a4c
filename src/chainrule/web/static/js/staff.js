// Who reads the teacher's page: a teacher, or a teaching assistant (web/roles.py's "staff": they read the class
// and comment on runs, and change no grade and no person; the server refuses them every changing route). The
// page offers an assistant no control the server would refuse: where a panel's controls would be, one sentence
// says whose they are. The server marks the page (teacher.html's data-role).
import { el } from "./api.js";

export const assistant = document.querySelector("main")?.dataset.role === "assistant";

/** In place of a panel's changing controls, for an assistant: what only a teacher of the class changes. */
export function teachersOnly(what) {
  return el("p", { class: "muted", "data-teachers-only": "" },
    `Only a teacher of the class can change ${what}: as a teaching assistant, you read them here.`);
}
