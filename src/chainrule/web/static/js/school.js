// The teacher's page, in the school's systems: how the class signs in (single sign-on: passwords on or off,
// the teacher's own link to a provider) and, for a class made by an LMS course, that course's roster (who has
// not opened chainrule yet) and the scores on their way to the LMS gradebook. Sections the server does not
// offer (no provider, not an LMS course) stay hidden. Text goes in as text only.
import { el, plural, post, put, requestInit } from "./api.js";
import { confirmStep } from "./confirm.js";
import { assistant, teachersOnly } from "./staff.js";

async function optional(url) {
  const answer = await fetch(url, requestInit("GET"));
  return answer.ok ? answer.json() : null;
}

function csrf() {
  const found = document.cookie.match(/(?:^|; )(?:__Host-)?chainrule_csrf=([^;]+)/);
  return found ? decodeURIComponent(found[1]) : "";
}

function people(count) {
  return plural(count, "person", "people");
}

async function setPasswords(body, what) {
  const changed = await post("/api/class/sign-in-options", body, what).catch(() => null);
  if (changed) signInSection(changed);
}

function signInSection(options) {
  const section = document.getElementById("school-sign-in");
  if (!options || !options.providers.length) return;
  section.hidden = false;
  const state = document.getElementById("sign-in-state");
  const actions = document.getElementById("sign-in-actions");
  state.textContent = options.passwords
    ? "Learners sign in with a password, or with a school account."
    : "Passwords are off: everyone signs in with a school account.";
  actions.replaceChildren();
  // Who could not sign in with passwords off: everyone with no linked school (or LMS) account.
  const lockedOut = options.locked_out || [];
  const teachers = lockedOut.filter((person) => person.role === "teacher");
  const names = (list) => el("ul", { class: "locked-out" }, ...list.map((person) =>
    el("li", { "data-locked-out": person.name }, `${person.name} (${person.role})`)));
  if (assistant) {
    actions.append(teachersOnly("how the class signs in"));
  } else if (!options.passwords) {
    const on = el("button", { type: "button", class: "secondary", id: "passwords-toggle" }, "Turn passwords on");
    on.addEventListener("click", () => setPasswords({ passwords: true }, "turn passwords on"));
    actions.append(el("p", {}, on));
    if (lockedOut.length) {
      actions.append(el("p", { id: "lock-out-warning" }, `${people(lockedOut.length)} cannot sign in now (no linked school account):`), names(lockedOut));
    }
  } else if (teachers.length) {
    actions.append(el("p", { id: "lock-out-warning" }, `Passwords stay on while a teacher has no linked school account (they could not sign in): ${plural(teachers.length, "teacher")}.`),
      names(teachers));
  } else {
    const off = el("button", { type: "button", class: "secondary", id: "passwords-toggle" }, "Turn passwords off");
    const place = el("div", {});
    off.addEventListener("click", () => {
      if (!lockedOut.length) { setPasswords({ passwords: false }, "turn passwords off"); return; }
      off.disabled = true;
      const step = confirmStep({
        question: `Turning passwords off locks out ${people(lockedOut.length)}: they have no linked school account.`,
        details: [names(lockedOut), el("p", { class: "muted" }, "They could not sign in until passwords are on again (then they sign in with their password and link their school account on their account page).")],
        yes: "Turn passwords off anyway", no: "Keep passwords on",
        onYes: () => setPasswords({ passwords: false, lock_out: true }, "turn passwords off"),
        onNo: () => { place.replaceChildren(); off.disabled = false; off.focus(); },
      });
      place.replaceChildren(step);
      step.focus();
    });
    actions.append(el("p", {}, off), place);
  }
  if (!options.linked) {
    actions.append(el("p", { class: "muted" }, "Your own account is not linked to a school account yet (passwords can go off once it is):"));
    for (const provider of options.providers) {
      const form = el("form", { method: "post", action: `/sso/start/${provider.id}` },
        el("input", { type: "hidden", name: "csrf", value: csrf() }), el("input", { type: "hidden", name: "link", value: "1" }),
        el("button", { type: "submit", class: "secondary" }, `Link with ${provider.name}`));
      actions.append(form);
    }
  }
}

function rosterSection(roster, scores) {
  if (!roster) return;
  document.getElementById("lms-course").hidden = false;
  document.getElementById("lms-title").textContent = `In the LMS course: ${roster.course}`;
  const place = document.getElementById("lms-roster");
  if (roster.error) place.append(el("p", { class: "form-error" }, roster.error));
  const waiting = roster.members.filter((member) => !member.launched);
  place.append(el("p", {}, `${roster.members.length} in the course; ${waiting.length} not in chainrule yet.`));
  if (roster.members.length) {
    const head = el("tr", {}, el("th", { scope: "col" }, "Name"), el("th", { scope: "col" }, "Role"), el("th", { scope: "col" }, "Opened chainrule"));
    const rows = roster.members.map((member) => el("tr", { "data-member": member.name },
      el("td", { "data-label": "Name" }, member.name), el("td", { "data-label": "Role" }, member.role),
      el("td", { "data-label": "Opened chainrule" }, member.launched ? "yes" : "not yet")));
    place.append(el("table", { class: "class-table" }, el("thead", {}, head), el("tbody", {}, ...rows)));
  }
  const list = document.getElementById("lms-scores");
  const pending = (scores ? scores.scores : []).filter((score) => !score.sent);
  list.append(el("p", {}, pending.length
    ? `${plural(pending.length, "score")} waiting for the LMS (sent again until it takes them):`
    : "Every score is in the LMS gradebook."));
  for (const score of pending) {
    list.append(el("p", { class: "muted" }, `${score.learner}, ${score.lesson_title}: ${score.score} of ${score.maximum} (${score.error || "not tried yet"})`));
  }
}

// Each lesson linked in the course has its column; the whole path has one only when the teacher says so.
function pathColumnSection(setting) {
  if (!setting) return;
  const place = document.getElementById("lms-path-column");
  if (assistant) {
    place.replaceChildren(el("p", { id: "path-column-state" }, setting.path_column
      ? `The whole path has a column of its own in the LMS gradebook (${setting.points_text}).`
      : "Only the lessons linked in the course have columns in the LMS gradebook."),
    teachersOnly("the gradebook's columns"));
    return;
  }
  const box = el("input", { type: "checkbox", id: "path-column", checked: setting.path_column });
  box.addEventListener("change", async () => {
    const changed = await put("/api/class/lms/path-column", { path_column: box.checked }, "change the path's column").catch(() => null);
    if (changed) pathColumnSection(changed);
    else box.checked = !box.checked;
  });
  place.replaceChildren(
    el("p", {}, box, " ", el("label", { for: "path-column" }, `A column for the whole path (${setting.points_text}: every lesson's sections)`)),
    el("p", { class: "muted", id: "path-column-state" }, setting.path_column
      ? "On: each learner's score for the whole path goes to its own column of the LMS gradebook, besides each lesson's."
      : "Off: only the lessons linked in the course get columns. Opening chainrule from the course's navigation adds none."));
}

signInSection(await optional("/api/class/sign-in-options"));
// The server marks the page of a class that is an LMS course's; any other has no LMS part to ask for.
if (document.querySelector("main").hasAttribute("data-lms-course")) {
  pathColumnSection(await optional("/api/class/lms/path-column"));
  rosterSection(await optional("/api/class/lms/roster"), await optional("/api/class/lms/scores"));
}
