// The lesson page: fetch the lesson, the learner's progress and the trace of its example graph,
// render the eight sections and their interactive parts, then mark the page ready.
import { get, el, clearLoading, showError } from "./api.js";
import { GraphPlayer } from "./graph.js";
import { renderMath, renderTex } from "./math.js";

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
  meta.replaceChildren(`About ${lesson.minutes} minutes.`);
  const neighbours = el("div", { class: "neighbours" },
    lessonLink(lesson.previous, "Before this"), lessonLink(lesson.next, "After this"));
  meta.after(neighbours);
}

function renderSections(lesson) {
  const toc = document.getElementById("lesson-toc");
  const list = el("ol");
  const holder = document.getElementById("lesson-sections");
  const slots = new Map();
  for (const section of lesson.sections) {
    const id = `section-${section.number}`;
    list.append(el("li", {}, el("a", { href: `#${id}` }, `${section.number} ${section.title}`)));
    const heading = el("h2", { id: `${id}-title` }, el("span", { class: "section-number" }, section.number), ` ${section.title}`);
    const prose = el("div", { class: "prose", html: section.html });
    const widget = el("div", { class: "widget" });
    holder.append(el("section", { id, class: `lesson-section section-${section.slug}`, "aria-labelledby": `${id}-title`, "data-section": section.number },
      heading, prose, widget));
    slots.set(section.number, widget);
  }
  toc.replaceChildren(list);
  renderMath(holder);
  return slots;
}

function renderSeeItWork(slot, lesson, trace) {
  const formula = el("div", { class: "chain-formula", "aria-label": "The chain rule along one path" });
  renderTex(formula, lesson.see_it_work.chain_formula);
  const holder = el("div", { class: "player-holder", id: "see-it-work-player" });
  slot.append(holder, formula);
  return new GraphPlayer(holder, trace, { name: "seeit", title: "The example graph", intervalMs: 700 });
}

async function start() {
  let lesson, progress, trace;
  // Without the progress store (e.g. 503: locked or unreadable) the lesson still works; the message
  // area says why nothing is restored, and each later save reports its own failure.
  const noProgress = { predictions: {}, code: {}, results: {}, quiz: {}, explanation: null };
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
  main.dataset.ready = "true";  // content and the section 03 animation are on screen
  performance.mark("chainrule-ready");

  // The rest loads in parallel; each part reports its own errors on the page.
  const parts = [];
  if (slots.has("03") && lesson.see_it_work.plot) parts.push(import("./fitplot.js").then((m) => m.renderFitPlot(slots.get("03"), lesson.see_it_work.plot)));
  if (slots.has("04")) parts.push(import("./predict.js").then((m) => m.renderPredict(slots.get("04"), lesson, progress, base)));
  if (slots.has("06")) parts.push(import("./quiz.js").then((m) => m.renderQuiz(slots.get("06"), lesson, progress, base)));
  if (slots.has("07")) parts.push(import("./explain.js").then((m) => m.renderExplain(slots.get("07"), lesson, progress, base)));
  if (slots.has("08")) parts.push(import("./explain.js").then((m) => m.renderRecap(slots.get("08"), lesson)));
  if (slots.has("05")) parts.push(import("./exercises.js").then((m) => m.renderExercises(slots.get("05"), lesson, progress)));
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
