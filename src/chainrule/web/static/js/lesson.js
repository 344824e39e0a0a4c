// The lesson page: fetch the lesson, the learner's progress and the trace of its example graph,
// render the eight sections and their interactive parts, then mark the page ready.
import { get, el, clearLoading, showError, debounce, plural } from "./api.js";
import { GraphPlayer, formulaHighlighter } from "./graph.js";
import { renderMath, renderTex } from "./math.js";
import { dueLine, lessonDates, markExerciseDates, myDueDates } from "./due.js";

const main = document.getElementById("main");
const lessonId = main.dataset.lessonId;
const base = `/api/lessons/${encodeURIComponent(lessonId)}`;

function lessonLink(info, label) {
  // A lesson that is not written yet is named with its sentence, never linked.
  if (!info) return null;
  const available = info.status === "available" && info.href;
  return el("p", { class: `neighbour ${available ? "available" : "coming-next"}` },
    el("span", { class: "neighbour-role" }, `${label}: `),
    available ? el("a", { href: info.href }, info.title) : el("strong", {}, info.title),
    available ? null : el("span", { class: "badge" }, label === "After this" ? "coming next · not written yet" : "not written yet"),
    info.summary ? el("span", { class: "neighbour-summary" }, ` — ${info.summary}`) : null);
}

function renderHeader(lesson) {
  document.title = `${lesson.title} · chainrule`;
  document.getElementById("lesson-title").textContent = lesson.title;
  const crumbs = document.getElementById("lesson-breadcrumbs");
  crumbs.replaceChildren(el("a", { href: lesson.path.href, class: "back-to-path" }, `← ${lesson.path.title}`));
  const meta = document.getElementById("lesson-meta");
  meta.replaceChildren(`About ${plural(lesson.minutes, "minute")}.`);
  const neighbours = el("div", { class: "neighbours" },
    lessonLink(lesson.previous, "Before this"), lessonLink(lesson.next, "After this"));
  meta.after(neighbours);
}

/** The finished sections, as the server decides them (chainrule.progress.finished): a set of numbers. */
export function finishedSections(progress) {
  return new Set((progress.finished && progress.finished.sections) || []);
}

/** Tick the finished sections in the contents, say when the whole lesson is finished. */
function showFinished(done, lessonFinished) {
  for (const item of document.querySelectorAll("#lesson-toc li[data-section]")) {
    const finished = done.has(item.dataset.section);
    item.classList.toggle("finished", finished);
    item.querySelector(".toc-mark").textContent = finished ? "✓" : "";
    item.querySelector(".toc-state").textContent = finished ? " (finished)" : "";
  }
  const all = Boolean(lessonFinished);
  const banner = document.getElementById("lesson-finished");
  banner.hidden = !all;
  document.getElementById("main").dataset.finished = String(all);
}

/** The section to continue at: the first unfinished one after work has started (else none). */
function continueAt(lesson, done) {
  if (!lesson.sections.length || !done.has(lesson.sections[0].number)) return null;  // not started yet
  return lesson.sections.find((section) => !done.has(section.number)) || null;
}

function renderSections(lesson) {
  const toc = document.getElementById("lesson-toc");
  const list = el("ol");
  const holder = document.getElementById("lesson-sections");
  const slots = new Map();
  for (const section of lesson.sections) {
    const id = `section-${section.number}`;
    list.append(el("li", { "data-section": section.number },
      el("span", { class: "toc-mark", "aria-hidden": "true" }),
      el("a", { href: `#${id}` }, `${section.number} ${section.title}`, el("span", { class: "visually-hidden toc-state" }))));
    const heading = el("h2", { id: `${id}-title` }, el("span", { class: "section-number" }, section.number), ` ${section.title}`);
    const prose = el("div", { class: "prose", html: section.html });
    const widget = el("div", { class: "widget" });
    holder.append(el("section", { id, class: `lesson-section section-${section.slug}`, "aria-labelledby": `${id}-title`, "data-section": section.number },
      heading, prose, widget));
    slots.set(section.number, widget);
  }
  toc.replaceChildren(list);
  const banner = el("p", { id: "lesson-finished", class: "lesson-finished", role: "status" },
    el("strong", {}, "You have finished this lesson."), " Every section is done; your quiz questions come back in review.");
  banner.hidden = true;
  toc.after(banner);
  renderMath(holder);
  return slots;
}

function renderSeeItWork(slot, lesson, trace) {
  const formula = el("div", { class: "chain-formula", role: "group", "aria-label": lesson.see_it_work.formula_label });
  renderTex(formula, lesson.see_it_work.chain_formula);
  const holder = el("div", { class: "player-holder", id: "see-it-work-player" });
  slot.append(holder, formula);
  // While the backward pass plays, the formula lights up the term the current step computes.
  const highlight = formulaHighlighter(formula);
  const labels = new Map(trace.nodes.map((node) => [node.id, node.label]));
  return new GraphPlayer(holder, trace, {
    name: "seeit", title: lesson.see_it_work.graph_name,
    onChange: (position, step) => highlight(step, (id) => labels.get(id)),
  });
}

/** A lesson opened before the lessons it builds on are finished says what it assumes, and where that is taught. */
async function noteWhatItAssumes() {
  const path = await get("/api/path", "load the path");
  const entry = path.lessons.find((lesson) => lesson.id === lessonId);
  if (!entry || entry.finished || !entry.builds_on || !entry.builds_on.length) return;
  const states = new Map(path.lessons.map((lesson) => [lesson.id, Boolean(lesson.finished)]));
  const missing = entry.builds_on.filter((ref) => !states.get(ref.id));
  if (!missing.length) return;
  const links = [];
  missing.forEach((ref, index) => {
    if (index) links.push(index === missing.length - 1 ? " and " : ", ");
    links.push(el("a", { href: ref.href }, ref.title));
  });
  const note = el("p", { class: "continue-note assumes-note", id: "assumes-note", role: "note" },
    "This lesson builds on ", ...links, `, which you have not finished yet.`,
    entry.assumes ? ` It assumes you know ${entry.assumes}.` : "",
    " You can go on here, or start with ", el("a", { href: missing[0].href }, missing[0].title), " first.");
  document.getElementById("lesson-toc").before(note);
}

async function start() {
  let lesson, progress, trace;
  const dueLoad = myDueDates().then((dates) => ({ dates, entry: lessonDates(dates, lessonId) }));
  // Without the progress store (e.g. 503: locked or unreadable) the lesson still works; the message
  // area says why nothing is restored, and each later save reports its own failure.
  const noProgress = { finished: { sections: [], lesson: false }, predictions: {}, code: {}, results: {}, quiz: {}, explanation: null };
  try {
    // The lesson names its example graph; progress loads meanwhile.
    const lessonLoad = get(base, "load the lesson");
    const progressLoad = get(`/api/progress/${encodeURIComponent(lessonId)}`, "load your progress").catch(() => noProgress);
    lesson = await lessonLoad;
    [progress, trace] = await Promise.all([
      progressLoad,
      get(`${base}/trace/${encodeURIComponent(lesson.see_it_work.graph)}`, "load the example graph"),
    ]);
  } catch (error) {
    clearLoading();
    main.dataset.ready = "error";
    return;
  }
  clearLoading();
  renderHeader(lesson);
  const slots = renderSections(lesson);
  if (slots.has("03")) window.chainruleSeeItWork = renderSeeItWork(slots.get("03"), lesson, trace);
  let done = finishedSections(progress);
  showFinished(done, progress.finished && progress.finished.lesson);
  // Coming back: continue at the first unfinished section (unless the address names a section).
  const resume = continueAt(lesson, done);
  if (resume && !window.location.hash) {
    const target = document.getElementById(`section-${resume.number}`);
    const note = el("p", { class: "continue-note", id: "continue-note" }, "Welcome back: you continue at ",
      el("a", { href: `#section-${resume.number}` }, `${resume.number} ${resume.title}`), ".");
    document.getElementById("lesson-toc").after(note);
    target.scrollIntoView({ block: "start" });
  }
  const refresh = debounce(async () => {
    try {
      const latest = await get(`/api/progress/${encodeURIComponent(lessonId)}`, "load your progress");
      done = finishedSections(latest);
      showFinished(done, latest.finished.lesson);
    } catch (error) { /* the message area says why */ }
  }, 400);
  window.addEventListener("chainrule:saved", (event) => {
    if (!event.detail.url.endsWith("/progress/code")) refresh();  // typing is not finishing anything
  });
  main.dataset.ready = "true";  // content and the section 03 animation are on screen
  performance.mark("chainrule-ready");

  // The rest loads in parallel; each part reports its own errors on the page.
  const parts = [noteWhatItAssumes(), dueLoad.then(({ dates, entry }) => {
    if (entry) document.getElementById("lesson-meta").after(dueLine(entry, dates, { policy: true }));
  })];
  if (slots.has("03")) parts.push(import("./explore.js").then((m) => m.renderExplore(slots.get("03"), lesson, trace, base)));
  if (slots.has("03") && lesson.see_it_work.plot) {
    // The plot goes right under the graph's formula, whichever part of section 03 finishes loading first.
    const plotSlot = el("div", { class: "plot-slot" });
    slots.get("03").append(plotSlot);
    parts.push(import("./plots.js").then((m) => m.renderPlot(plotSlot, lesson.see_it_work.plot)));
  }
  // Plots a learner drives (driven.json), each placed now in its section: after section 03's plot, before the parts
  // still loading.
  const drivenSlots = new Map([...slots].map(([number, slot]) => [number, slot.appendChild(el("div", { class: "driven-slot" }))]));
  parts.push(import("./drivenplot.js").then((m) => m.renderDrivenPlots(drivenSlots, base)));
  if (slots.has("04")) parts.push(import("./predict.js").then((m) => m.renderPredict(slots.get("04"), lesson, progress, base)));
  if (slots.has("06")) parts.push(import("./quiz.js").then((m) => m.renderQuiz(slots.get("06"), lesson, progress, base)));
  if (slots.has("07")) parts.push(import("./explain.js").then((m) => m.renderExplain(slots.get("07"), lesson, progress, base)));
  if (slots.has("08")) parts.push(import("./explain.js").then((m) => m.renderRecap(slots.get("08"), lesson)));
  if (slots.has("05")) {
    parts.push(import("./exercises.js").then((m) => m.renderExercises(slots.get("05"), lesson, progress)).then(async () => {
      markExerciseDates((await dueLoad).entry, slots.get("05"));
    }));
  }
  const outcomes = await Promise.allSettled(parts);
  for (const outcome of outcomes) {
    if (outcome.status === "rejected" && !(outcome.reason && outcome.reason.status !== undefined)) {
      showError(`Part of the page failed to load: ${outcome.reason}`);
    }
  }
  main.dataset.complete = "true";  // every interactive part (editors included) is ready
  performance.mark("chainrule-complete");
}

start();
