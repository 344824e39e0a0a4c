// Comments on a learner's run (routes_comments.py): on the teacher's page a teacher picks a learner, sees
// their latest runs and comments on a line or the whole file; on the lesson page and the account page the
// learner reads the comments on their own runs and answers. A comment is Markdown rendered text-safe: the
// page builds every node itself (no innerHTML), so no HTML a comment holds is ever HTML; a link is a link
// only to http(s), with rel="noopener noreferrer".
import { api, get, el } from "./api.js";
import { formatWhen } from "./when.js";

// ---------------------------------------------------------------- Markdown, text-safe

const INLINE = /`([^`\n]+)`|\*\*([^*\n]+)\*\*|\*([^*\n]+)\*|\b_([^_\n]+)_\b|\[([^\]\n]+)\]\(([^()\s]+)\)/g;

function safeHref(href) {
  try {
    const url = new URL(href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

function inline(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) nodes.push(document.createTextNode(text.slice(last, match.index)));
    const [whole, code, strong, em, em2, label, href] = match;
    if (code !== undefined) nodes.push(el("code", { text: code }));
    else if (strong !== undefined) nodes.push(el("strong", { text: strong }));
    else if (em !== undefined || em2 !== undefined) nodes.push(el("em", { text: em ?? em2 }));
    else {
      const target = safeHref(href);
      nodes.push(target ? el("a", { href: target, rel: "noopener noreferrer", text: label }) : document.createTextNode(whole));
    }
    last = match.index + whole.length;
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}

function withBreaks(lines) {
  const nodes = [];
  lines.forEach((line, index) => {
    if (index) nodes.push(el("br"));
    nodes.push(...inline(line));
  });
  return nodes;
}

/** A comment's Markdown as nodes: paragraphs, "- " lists, ``` code blocks, `code`, **strong**, *em*, links. */
export function markdown(text) {
  const box = el("div", { class: "comment-body" });
  const lines = text.split(/\r\n|\r|\n/);
  let index = 0;
  while (index < lines.length) {
    const line = lines[index];
    if (/^\s*```/.test(line)) {
      const code = [];
      index += 1;
      while (index < lines.length && !/^\s*```/.test(lines[index])) code.push(lines[index++]);
      index += 1;
      box.append(el("pre", {}, el("code", { text: code.join("\n") })));
    } else if (/^\s*[-*] /.test(line)) {
      const list = el("ul");
      while (index < lines.length && /^\s*[-*] /.test(lines[index])) {
        list.append(el("li", {}, ...inline(lines[index++].replace(/^\s*[-*] /, ""))));
      }
      box.append(list);
    } else if (!line.trim()) {
      index += 1;
    } else {
      const paragraph = [];
      while (index < lines.length && lines[index].trim() && !/^\s*(```|[-*] )/.test(lines[index])) paragraph.push(lines[index++]);
      box.append(el("p", {}, ...withBreaks(paragraph)));
    }
  }
  return box;
}

// ---------------------------------------------------------------- a run and its comments

function where(comment) {
  return comment.line === null ? "On the whole file" : `On line ${comment.line}`;
}

function commentItem(comment) {
  const who = comment.by_teacher ? `${comment.author} (teacher)` : comment.author;
  return el("li", { class: comment.by_teacher ? "comment by-teacher" : "comment", "data-comment": `${comment.id}` },
    el("p", { class: "comment-meta" }, el("strong", { text: who }), ` · ${where(comment)} · ${formatWhen(comment.at)}`),
    markdown(comment.body));
}

function codeLines(run) {
  const lines = run.source.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return el("ol", { class: "run-code", "aria-label": "The run's code, one item per line" },
    ...lines.map((line, index) => el("li", { "data-line": `${index + 1}` }, el("code", { text: line || " " }))));
}

/** The form under a run: a comment (or an answer) on a line or on the whole file. */
function commentForm(run, list, verb) {
  const lines = run.source.split("\n").filter((line, index, all) => index < all.length - 1 || line !== "").length || 1;
  const id = `run-${run.id}`;
  const target = el("select", { id: `${id}-line`, name: "line" }, el("option", { value: "" }, "the whole file"),
    ...Array.from({ length: lines }, (_, index) => el("option", { value: `${index + 1}` }, `line ${index + 1}`)));
  const text = el("textarea", { id: `${id}-body`, name: "body", rows: "3", maxlength: "4000", required: true });
  const said = el("p", { class: "comment-said", "aria-live": "polite" });
  const form = el("form", { class: "comment-form", "data-run": `${run.id}` },
    el("p", {}, el("label", { for: target.id }, `${verb} on `), target),
    el("p", {}, el("label", { for: text.id }, "Your words (Markdown: **bold**, *italic*, `code`, [a link](https://…))"), el("br"), text),
    el("p", {}, el("button", { type: "submit" }, verb)), said);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    said.textContent = "";
    const body = { line: target.value === "" ? null : Number(target.value), body: text.value };
    try {
      const made = await api("POST", `/api/class/runs/${run.id}/comments`, body, "send the comment", { atField: true });
      list.append(commentItem(made));
      text.value = "";
      said.textContent = "Sent.";
    } catch (error) {
      // Not valid (422), the learner's storage full (413), too many comments lately (429): say why.
      if ([413, 422, 429].includes(error.status)) said.textContent = error.detail;
    }
  });
  return form;
}

/** A view shows only the latest comments (classes/comments.py): this button loads a run's earlier ones. */
function earlierButton(run, list) {
  let left = run.earlier_comments || 0;
  if (!left) return document.createTextNode("");
  const button = el("button", { type: "button", class: "earlier-comments" }, `Show earlier comments (${left} more)`);
  button.addEventListener("click", async () => {
    const first = list.querySelector("[data-comment]");
    const before = first ? first.dataset.comment : `${2 ** 31 - 1}`;
    const page = await get(`/api/class/runs/${run.id}/earlier-comments?before=${before}`, "load the earlier comments");
    list.prepend(...page.comments.map(commentItem));
    left = page.earlier_comments;
    if (left) button.textContent = `Show earlier comments (${left} more)`;
    else button.remove();
  });
  return button;
}

function runBlock(run, { verb, headingLevel }) {
  const outcome = run.imported ? "imported from the learner's own file" : run.passed ? "passed" : "did not pass";
  const list = el("ol", { class: "comments" }, ...run.comments.map(commentItem));
  return el("article", { class: "run-thread", "data-run": `${run.id}`, "aria-label": `Run of ${run.exercise_id}, ${formatWhen(run.at)}` },
    el(`h${headingLevel}`, {}, `${run.exercise_id} (${run.language}) · ${formatWhen(run.at)} · ${outcome}`),
    codeLines(run), earlierButton(run, list), list, commentForm(run, list, verb));
}

// ---------------------------------------------------------------- the three pages

/** The latest answers of the class's learners, each with a button that opens that learner's runs. */
function latestAnswers(answers, open) {
  if (!answers.length) return el("p", { class: "muted" }, "No learner has answered a comment yet.");
  return el("ol", { class: "comments latest-answers" }, ...answers.map((answer) => {
    const show = el("button", { type: "button", class: "secondary" }, `Open ${answer.author}'s runs`);
    show.addEventListener("click", () => open(answer.learner_id));
    return el("li", { class: "comment" },
      el("p", { class: "comment-meta" }, el("strong", { text: answer.author }),
        ` · ${answer.exercise_id} · ${where(answer)} · ${formatWhen(answer.at)}`),
      markdown(answer.body), show);
  }));
}

async function teacherPage(box) {
  const [people, latest] = await Promise.all([get("/api/class/people", "load the class's learners"),
    get("/api/class/answers", "load the learners' answers")]);
  const learners = people.learners.filter((learner) => learner.approved);
  const choose = el("select", { id: "feedback-learner" }, el("option", { value: "" }, "Choose a learner"),
    ...learners.map((learner) => el("option", { value: `${learner.id}` }, learner.name)));
  const runs = el("div", { id: "feedback-runs", "aria-live": "polite" });
  choose.addEventListener("change", async () => {
    if (!choose.value) { runs.replaceChildren(); return; }
    const data = await get(`/api/class/learners/${choose.value}/runs`, "load the learner's runs");
    runs.replaceChildren(data.runs.length
      ? el("div", {}, ...data.runs.map((run) => runBlock(run, { verb: "Comment", headingLevel: 4 })))
      : el("p", {}, `${data.learner.name} has no runs yet.`));
  });
  const open = (learnerId) => {
    choose.value = `${learnerId}`;
    choose.dispatchEvent(new Event("change"));
    choose.focus();
  };
  box.replaceChildren(el("h3", {}, "Latest answers from learners"), latestAnswers(latest.answers, open),
    el("h3", {}, "A learner's runs"), el("p", {}, el("label", { for: choose.id }, "Learner: "), choose), runs);
}

async function learnerThreads(box, exercise, headingLevel) {
  const query = exercise ? `?exercise=${encodeURIComponent(exercise)}` : "";
  const data = await get(`/api/class/comments${query}`, "load your teacher's comments");
  if (!data.runs.length) {
    box.replaceChildren(el("p", { class: "muted" }, "No comments on your runs yet."));
    return data.runs;
  }
  box.replaceChildren(...data.runs.map((run) => runBlock(run, { verb: "Answer", headingLevel })));
  return data.runs;
}

/** The lesson page: under each exercise that has comments on the learner's runs, those runs and comments. */
async function lessonPage(main) {
  const data = await get("/api/class/comments", "load your teacher's comments");
  const exercises = new Set(data.runs.map((run) => run.exercise_id));
  const placed = new Set();
  const place = () => {
    for (const exercise of exercises) {
      const article = placed.has(exercise) ? null : main.querySelector(`article[data-exercise="${CSS.escape(exercise)}"]`);
      if (!article) continue;
      placed.add(exercise);
      const box = el("div", { class: "run-threads" });
      article.append(el("section", { class: "teacher-comments", "aria-label": `Your teacher's comments on ${exercise}` },
        el("h4", {}, "Your teacher's comments"), box));
      box.append(...data.runs.filter((run) => run.exercise_id === exercise).map((run) => runBlock(run, { verb: "Answer", headingLevel: 5 })));
    }
    return placed.size === exercises.size;
  };
  if (!exercises.size || place()) return;
  const watch = new MutationObserver(() => { if (place()) watch.disconnect(); });
  watch.observe(main, { childList: true, subtree: true });
}

const main = document.getElementById("main");
const teacherBox = document.getElementById("class-feedback");
const accountBox = document.querySelector("[data-comments='account']");
if (teacherBox) teacherPage(teacherBox);
else if (accountBox) learnerThreads(accountBox, null, 3);
else if (main && main.dataset.page === "lesson") lessonPage(main);
