// The class's people on the teacher's page (routes_people.py, routes_class.py): the invite (copy it, make
// a new one), the seats and approval, each learner (let in, rename, remove after keeping their work), the
// class's teachers (add one), its teaching assistants (add one, remove one), several learners chosen at once
// (let them in, remove them: routes_roster.py), and the class's state (close it, archive it, open it again).
// A teaching assistant sees it all and changes nothing (the server's people say you_change: false). Text goes in
// as text only; every number shown is the server's text.
import { api, get, put, post, el, plural } from "./api.js";
import { confirmStep } from "./confirm.js";

const box = document.getElementById("class-people");

function say(target, text) {
  target.textContent = text;
}

/** After the list was drawn again (the button pressed is gone): say what happened, and keep the focus there. */
function announce(text) {
  const said = document.getElementById("people-said");
  say(said, text);
  said.focus();
}

async function copy(text, said) {
  try {
    await navigator.clipboard.writeText(text);
    say(said, "Copied.");
  } catch {
    say(said, "This browser did not let the page copy: select the link and copy it yourself.");
  }
}

function linkField(id, label, link, said) {
  const field = el("input", { id, type: "text", readonly: true, value: link, class: "link-field" });
  field.addEventListener("focus", () => field.select());
  const button = el("button", { type: "button", class: "secondary" }, "Copy");
  button.addEventListener("click", () => copy(link, said));
  return el("p", {}, el("label", { for: id }, label), el("br"), field, " ", button);
}

function stateSection(data) {
  const buttons = [];
  const change = (state, text) => {
    const button = el("button", { type: "button", class: "secondary", "data-state": state }, text);
    button.addEventListener("click", async () => {
      await put("/api/class/state", { state }, "change the class's state");
      await draw();
      document.getElementById("people-state")?.focus();
    });
    buttons.push(button);
  };
  if (data.state === "open") change("closed", "Close the class");
  if (data.state !== "archived") change("archived", "Archive the class");
  if (data.state !== "open") change("open", "Open the class again");
  return el("div", {}, el("p", { id: "people-state", tabindex: "-1" }, `This class is ${data.state_text}.`),
    el("p", { class: "button-row" }, ...buttons));
}

function inviteSection(data) {
  const said = el("p", { "aria-live": "polite", id: "invite-said" });
  const parts = [];
  if (data.invite) parts.push(linkField("invite-link", "Learners join with this link (give it to the class only)", data.invite, said));
  else parts.push(el("p", {}, data.state === "open"
    ? "The current invite cannot be shown here (it was made before this page could show invites): make a new one."
    : "A closed class takes no one: open it again to invite learners."));
  if (data.state === "open") {
    const rotate = el("button", { type: "button", class: "secondary", id: "invite-rotate" }, "Make a new invite link");
    rotate.addEventListener("click", async () => {
      await post("/api/class/invite", {}, "make a new invite link");
      await draw();
      say(document.getElementById("invite-said"), "A new invite link: the previous one no longer works.");
      document.getElementById("invite-link")?.focus();
    });
    parts.push(el("p", {}, rotate));
  }
  const seats = el("input", { id: "people-seats", type: "number", min: "0", max: "10000", inputmode: "numeric",
    value: data.seats === null ? "" : `${data.seats}` });
  const approval = el("input", { id: "people-approval", type: "checkbox", checked: data.approval });
  const form = el("form", { class: "people-admission" },
    el("p", {}, el("label", { for: seats.id }, "Seats (empty: no limit) "), seats),
    el("p", {}, approval, el("label", { for: approval.id }, " Each learner who joins waits until a teacher lets them in")),
    el("p", {}, el("button", { type: "submit", class: "secondary" }, "Save the seats")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    await put("/api/class/admission", { seats: seats.value === "" ? null : Number(seats.value), approval: approval.checked }, "save the seats");
    await draw();
    say(document.getElementById("invite-said"), "Saved.");
  });
  return el("div", {}, el("p", { id: "people-seats-text" }, data.seats_text), ...parts, said, form);
}

function learnerRow(learner, changes) {
  const actions = el("div", { class: "button-row" });
  const choose = changes ? el("input", { type: "checkbox", id: `choose-${learner.id}`, "data-choose": String(learner.id) }) : null;
  const name = changes ? el("label", { for: `choose-${learner.id}`, class: "person-name" }, ` ${learner.name}`)
    : el("span", { class: "person-name" }, learner.name);
  const row = el("li", { "data-person": learner.name }, choose, name,
    learner.section ? el("span", { class: "muted" }, ` (section ${learner.section})`) : null,
    learner.approved ? null : el("span", { class: "muted" }, " (waiting to be let in)"), changes ? actions : null);
  if (!changes) return row;
  if (!learner.approved) {
    const approve = el("button", { type: "button", class: "secondary" }, `Let ${learner.name} in`);
    approve.addEventListener("click", async () => {
      await post(`/api/class/learners/${learner.id}/approve`, {}, "let the learner in");
      await draw();
      announce(`${learner.name} is in the class.`);
    });
    actions.append(approve);
  }
  const rename = el("button", { type: "button", class: "secondary" }, `Rename ${learner.name}`);
  rename.addEventListener("click", () => {
    const field = el("input", { id: `rename-${learner.id}`, type: "text", value: learner.name, maxlength: "60" });
    const error = el("span", { class: "form-error", "aria-live": "polite" });
    const form = el("form", { class: "inline-form" }, el("label", { for: field.id }, "New name "), field, " ",
      el("button", { type: "submit" }, "Save the name"), " ", error);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const renamed = await put(`/api/class/learners/${learner.id}/name`, { name: field.value }, "rename the learner", { atField: true });
        await draw();
        announce(`${learner.name} is now ${renamed.name}.`);
      } catch (failure) {
        if (failure.status === 422) error.textContent = failure.detail;
      }
    });
    actions.replaceChildren(form);
    field.focus();
  });
  const remove = el("button", { type: "button", class: "secondary danger" }, `Remove ${learner.name}`);
  remove.addEventListener("click", () => {
    const keep = el("a", { class: "button-link secondary", href: `/api/class/learners/${learner.id}/export`,
      download: `chainrule-progress-${learner.name}.json` }, `Download ${learner.name}'s work first`);
    const sure = el("button", { type: "button", class: "danger" }, `Remove ${learner.name} for good`);
    const cancel = el("button", { type: "button", class: "secondary" }, "Cancel");
    cancel.addEventListener("click", async () => {
      await draw();
      document.querySelector(`#class-people li[data-person="${CSS.escape(learner.name)}"] button`)?.focus();
    });
    sure.addEventListener("click", async () => {
      const gone = await api("DELETE", `/api/class/learners/${learner.id}`, undefined, "remove the learner");
      await draw();
      announce(`Removed ${gone.name}: their account and work`
        + (gone.runs_taken_back ? `, and ${plural(gone.runs_taken_back, "run")} waiting for the grader.` : "."));
    });
    actions.replaceChildren(el("p", { role: "group", "aria-label": `Remove ${learner.name}` },
      `Removing ${learner.name} deletes their account and all their work; their runs waiting for the grader end. `,
      keep, " ", sure, " ", cancel));
    keep.focus();
  });
  actions.append(rename, remove);
  return row;
}

function teachersSection(data) {
  const list = el("ul", { class: "people-list" }, ...data.teachers.map((teacher) => el("li", {}, teacher.name,
    teacher.you ? " (you)" : "", teacher.signed_up ? "" : " (has not set a password yet)")));
  return el("div", {}, list, ...addPerson({ kind: "teacher", label: "Add a teacher, named ", button: "Add the teacher",
    url: "/api/class/teachers", what: "add a teacher", more: "" }));
}

// The form that adds a teacher or a teaching assistant, and where their one-time link is shown once made.
function addPerson({ kind, label, button, url, what, more }) {
  const name = el("input", { id: `${kind}-name`, type: "text", maxlength: "60", autocomplete: "off" });
  const error = el("span", { class: "form-error", "aria-live": "polite" });
  const form = el("form", { class: "inline-form" }, el("label", { for: name.id }, label), name, " ",
    el("button", { type: "submit", class: "secondary" }, button), " ", error);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    try {
      const made = await post(url, { name: name.value }, what, { atField: true });
      await draw();
      const out = document.getElementById(`${kind}-link-out`);
      const copied = el("p", { "aria-live": "polite" });
      out.replaceChildren(linkField(`${kind}-link`, `Give ${made.name} this one-time link (they choose their password with it; it works for ${made.valid_for})${more}`, made.link, copied), copied);
      document.getElementById(`${kind}-link`).focus();
    } catch (failure) {
      if (failure.status === 422) error.textContent = failure.detail;
    }
  });
  return [form, el("div", { id: `${kind}-link-out`, "aria-live": "polite" })];
}

function chosenIds() {
  return [...box.querySelectorAll("input[data-choose]:checked")].map((input) => Number(input.dataset.choose));
}

// One action for the learners chosen with their boxes: let them in, or remove them after a second step (as one
// learner's removal asks): the server checks every id first, so a wrong one changes no one.
function bulkSection() {
  const out = el("div", { id: "bulk-step" });
  const approve = el("button", { type: "button", class: "secondary", id: "bulk-approve" }, "Let the chosen learners in");
  const remove = el("button", { type: "button", class: "secondary danger", id: "bulk-remove" }, "Remove the chosen learners");
  const none = () => { out.replaceChildren(el("p", { class: "form-error", tabindex: "-1" }, "Choose one or more learners first (tick their boxes).")); out.firstChild.focus(); };
  approve.addEventListener("click", async () => {
    const ids = chosenIds();
    if (!ids.length) return none();
    const done = await post("/api/class/bulk-approve", { ids }, "let the chosen learners in");
    await draw();
    announce(`${done.text}.`);
  });
  remove.addEventListener("click", () => {
    const ids = chosenIds();
    if (!ids.length) return none();
    const names = ids.map((id) => box.querySelector(`label[for="choose-${id}"]`)?.textContent.trim()).join(", ");
    const step = confirmStep({
      question: `Remove ${plural(ids.length, "learner")} for good: ${names}?`,
      details: [el("p", {}, "This deletes their accounts and all their work, and their runs waiting for the grader end. "
        + "To keep a learner's work, use their own Remove button first: it offers the download.")],
      yes: `Remove ${plural(ids.length, "learner")} for good`,
      onYes: async () => {
        const done = await post("/api/class/bulk-remove", { ids }, "remove the chosen learners");
        await draw();
        announce(`${done.text}.`);
      },
      onNo: () => { out.replaceChildren(); remove.focus(); },
    });
    out.replaceChildren(step);
    step.focus();
  });
  return el("div", {}, el("p", { class: "button-row", role: "group", "aria-label": "The chosen learners" }, approve, " ", remove), out);
}

function assistantsSection(data) {
  const list = data.assistants.length ? el("ul", { class: "people-list" }, ...data.assistants.map((assistant) => {
    const item = el("li", { "data-assistant": assistant.name }, assistant.name, assistant.you ? " (you)" : "",
      assistant.signed_up ? "" : " (has not set a password yet)");
    if (data.you_change) {
      const remove = el("button", { type: "button", class: "secondary danger" }, `Remove ${assistant.name}`);
      remove.addEventListener("click", async () => {
        await api("DELETE", `/api/class/assistants/${assistant.id}`, undefined, "remove the teaching assistant");
        await draw();
        announce(`${assistant.name} is no longer a teaching assistant of this class.`);
      });
      item.append(" ", remove);
    }
    return item;
  })) : el("p", {}, "No teaching assistant.");
  if (!data.you_change) return list;
  return el("div", {}, list, ...addPerson({ kind: "assistant", label: "Add a teaching assistant, named ",
    button: "Add the assistant", url: "/api/class/assistants", what: "add a teaching assistant",
    more: ". They read everything a teacher reads and comment on runs, but change no grade and no person." }));
}

async function draw() {
  const data = await get("/api/class/people", "load the class's people");
  const said = el("p", { id: "people-said", "aria-live": "polite", tabindex: "-1" });
  const learners = data.learners.length
    ? el("ul", { class: "people-list" }, ...data.learners.map((learner) => learnerRow(learner, data.you_change)))
    : el("p", {}, "No learner has joined yet: give them the invite link.");
  const changes = data.you_change;
  box.replaceChildren(
    el("h3", {}, "The class"), changes ? stateSection(data) : el("p", { id: "people-state" }, `This class is ${data.state_text}.`),
    el("h3", {}, "Invite and seats"), changes ? inviteSection(data) : el("p", { id: "people-seats-text" }, data.seats_text),
    el("h3", {}, "Learners"), said, learners, changes && data.learners.length ? bulkSection() : null,
    el("h3", {}, "Teachers"), changes ? teachersSection(data) : el("ul", { class: "people-list" }, ...data.teachers.map((t) => el("li", {}, t.name))),
    el("h3", {}, "Teaching assistants"), assistantsSection(data),
    el("p", {}, el("a", { href: "/account" }, "Your account: change your password, sign out everywhere")));
}

if (box) draw();
