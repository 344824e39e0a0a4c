// A second step before a change that is hard to take back (applying a regrade, turning passwords off while
// people would be locked out): the question, what it does, and two buttons. It sits in the page where the
// first button was (no modal to trap focus in): focus moves to "cancel", the safe choice, inside a group named
// by the question (a screen reader says it on arriving); Tab reaches the other button, Escape cancels.
import { el } from "./api.js";

let made = 0;

/** The step's element: put it in the page, then call its focus(); onYes/onNo run once, on the choice. */
export function confirmStep({ question, details = [], yes, no = "Cancel", onYes, onNo }) {
  const id = `confirm-question-${++made}`;
  const yesButton = el("button", { type: "button", "data-confirm": "yes" }, yes);
  const noButton = el("button", { type: "button", class: "secondary", "data-confirm": "no" }, no);
  const box = el("div", { class: "confirm-step", role: "group", "aria-labelledby": id },
    el("p", { id }, el("strong", {}, question)), ...details, el("p", {}, yesButton, " ", noButton));
  let chosen = false;
  const choose = (handler) => () => {
    if (chosen) return;
    chosen = true;
    yesButton.disabled = true;
    noButton.disabled = true;
    handler();
  };
  yesButton.addEventListener("click", choose(onYes));
  noButton.addEventListener("click", choose(onNo));
  box.addEventListener("keydown", (event) => { if (event.key === "Escape") noButton.click(); });
  box.focus = () => noButton.focus();
  return box;
}
