// The path page: the lessons of the path in order (added lessons last), with the learner's progress in each.
import { get, el, clearLoading, plural } from "./api.js";
import { dueLine, lessonDates, myDueDates } from "./due.js";

// "2 of 5 predictions · 1 of 2 exercises passed · ..." when the lesson's totals are known.
function progressText(progress, totals) {
  if (!progress) return null;
  const count = (done, total, what) => (total ? `${done} of ${total} ${what}` : `${done} ${what}`);
  const parts = [];
  if (progress.predictions) parts.push(count(progress.predictions, totals && totals.predictions, "predictions made"));
  if (progress.exercises) parts.push(count(progress.exercises, totals && totals.exercises, "exercises passed"));
  if (progress.quiz) parts.push(count(progress.quiz, totals && totals.quiz, "questions answered"));
  if (progress.explanation) parts.push("explained back");
  return parts.length ? parts.join(" · ") : "not started yet";
}

// The share of a lesson's parts done: predictions, exercises, questions and the explanation, each counted once.
function progressShare(progress, totals) {
  if (!progress || !totals) return null;
  const total = totals.predictions + totals.exercises + totals.quiz + 1;
  const done = progress.predictions + progress.exercises + progress.quiz + (progress.explanation ? 1 : 0);
  return { done, total };
}

/** True when the server says every section of the lesson is finished (chainrule.progress.finished). */
const finished = (lesson) => Boolean(lesson.finished);

function progressBlock(lesson) {
  const share = progressShare(lesson.progress, lesson.totals);
  // Started, done: as the server decides them (code saved counts as started, as on the lesson page).
  const state = !lesson.started ? "not started" : finished(lesson) ? "done" : "in progress";
  const label = `Your progress in ${lesson.title}`;
  return el("div", { class: "lesson-progress-block", "data-state": state },
    share ? el("progress", { max: String(share.total), value: String(share.done), "aria-label": label }) : null,
    el("p", { class: "lesson-progress" }, `Your progress: ${progressText(lesson.progress, lesson.totals)}`,
      lesson.started ? el("span", { class: "badge" }, state) : null));
}

/** "Builds on: A ✓, B": the lessons this one builds on, linked, each ticked once it is finished. */
function buildsOnLine(lesson, byId) {
  if (!lesson.builds_on || !lesson.builds_on.length) {
    return el("p", { class: "lesson-builds-on" }, "Builds on: nothing before it; a good place to start.");
  }
  const parts = [];
  lesson.builds_on.forEach((ref, index) => {
    if (index) parts.push(", ");
    const done = byId.has(ref.id) && finished(byId.get(ref.id));
    parts.push(el("a", { href: ref.href }, ref.title), done ? el("span", { class: "builds-on-done" }, " ✓",
      el("span", { class: "visually-hidden" }, " (finished)")) : null);
  });
  return el("p", { class: "lesson-builds-on" }, "Builds on: ", ...parts);
}

/** Where the learner stands: the first lesson begun and not finished, else the first one not finished. */
function standingAt(lessons) {
  const written = lessons.filter((lesson) => lesson.href);
  const begun = written.find((lesson) => !finished(lesson) && lesson.started);
  return begun || written.find((lesson) => !finished(lesson)) || null;
}

async function start() {
  const main = document.getElementById("main");
  let path;
  const dueLoad = myDueDates();
  try {
    path = await get("/api/path", "load the path");
  } catch (error) {
    clearLoading();
    main.dataset.ready = "error";
    return;
  }
  clearLoading();
  document.getElementById("path-title").textContent = path.title;
  document.title = `${path.title} · chainrule`;
  if (path.summary) document.getElementById("path-title").after(el("p", { class: "lead" }, path.summary));
  const list = document.getElementById("path-lessons");
  const byId = new Map(path.lessons.map((lesson) => [lesson.id, lesson]));
  const here = standingAt(path.lessons);
  const dates = await dueLoad;
  path.lessons.forEach((lesson, index) => {
    const available = lesson.status === "available" && lesson.href;
    const heading = el("h2", { class: "lesson-title" },
      el("span", { class: "lesson-index" }, `${index + 1}`), " ",
      available ? el("a", { href: lesson.href }, lesson.title) : el("span", {}, lesson.title));
    const item = el("li", { class: `path-lesson ${available ? "available" : "coming-next"}`, "data-lesson": lesson.id, "data-status": lesson.status, "data-finished": String(finished(lesson)),
      "data-here": lesson === here ? "true" : "false", "aria-current": lesson === here ? "step" : undefined },
      heading,
      available ? null : el("span", { class: "badge" }, lesson.status === "coming-next" ? "coming next · not written yet" : "not written yet"),
      lesson === here ? el("span", { class: "badge you-are-here" }, "you are here") : null,
      el("p", { class: "lesson-summary" }, lesson.summary),
      available ? buildsOnLine(lesson, byId) : null,
      lesson.minutes ? el("p", { class: "lesson-minutes" }, `About ${plural(lesson.minutes, "minute")}`) : null,
      available && lessonDates(dates, lesson.id) ? dueLine(lessonDates(dates, lesson.id), dates) : null,
      available && finished(lesson) ? el("p", { class: "lesson-done" }, el("strong", {}, "✓ Finished."), " Its questions come back in review.") : null,
      available && lesson.progress ? progressBlock(lesson) : null,
      available && !lesson.progress ? el("p", { class: "lesson-progress unknown" }, "Your progress cannot be read right now.") : null);
    list.append(item);
  });
  // Where the learner left off: the first lesson begun and not finished.
  const begun = path.lessons.find((lesson) => lesson.href && !finished(lesson) && lesson.started);
  if (begun) {
    list.before(el("p", { class: "continue-note", id: "continue-note" }, "Continue where you left off: ",
      el("a", { href: begun.href }, begun.title), "."));
  }
  main.dataset.ready = "true";
  performance.mark("chainrule-ready");
}

start();
