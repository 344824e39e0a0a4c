// The teacher's page, in the school's systems: how the class signs in (single sign-on: passwords on or off,
// the teacher's own link to a provider) and, for a class made by an LMS course, that course's roster (who has
// not opened chainrule yet) and the scores on their way to the LMS gradebook. Sections the server does not
// offer (no provider, not an LMS course) stay hidden. Text goes in as text only.
import { el, post, requestInit } from "./api.js";

async function optional(url) {
  const answer = await fetch(url, requestInit("GET"));
  return answer.ok ? answer.json() : null;
}

function csrf() {
  const found = document.cookie.match(/(?:^|; )(?:__Host-)?chainrule_csrf=([^;]+)/);
  return found ? decodeURIComponent(found[1]) : "";
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
  const toggle = el("button", { type: "button", class: "secondary", id: "passwords-toggle" },
    options.passwords ? "Turn passwords off" : "Turn passwords on");
  toggle.addEventListener("click", async () => {
    const changed = await post("/api/class/sign-in-options", { passwords: !options.passwords },
      options.passwords ? "turn passwords off" : "turn passwords on").catch(() => null);
    if (changed) signInSection(changed);
  });
  actions.append(el("p", {}, toggle));
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
    ? `${pending.length} score${pending.length === 1 ? "" : "s"} waiting for the LMS (sent again until it takes them):`
    : "Every score is in the LMS gradebook."));
  for (const score of pending) {
    list.append(el("p", { class: "muted" }, `${score.learner}, ${score.lesson}: ${score.score} of ${score.maximum} (${score.error || "not tried yet"})`));
  }
}

signInSection(await optional("/api/class/sign-in-options"));
rosterSection(await optional("/api/class/lms/roster"), await optional("/api/class/lms/scores"));
