// The path page: the lessons of "Math for CS and ML" in order, with the learner's progress.
import { get, el, clearLoading } from "./api.js";

/** True when every part of the lesson is done (the same rule as the lesson page's contents). */
function finished(lesson) {
  const { progress, totals } = lesson;
  if (!progress || !totals) return false;
  return Object.entries(totals).every(([key, total]) => progress[key] >= total) && progress.explained;
}

function progressText(progress) {
  if (!progress) return null;
  const parts = [];
  if (progress.predictions) parts.push(`${progress.predictions} predictions made`);
  if (progress.exercises_passed) parts.push(`${progress.exercises_passed} exercises passed`);
  if (progress.quiz_answered) parts.push(`${progress.quiz_answered} questions answered`);
  if (progress.explained) parts.push("explained back");
  return parts.length ? parts.join(" · ") : "not started yet";
}

async function start() {
  const main = document.getElementById("main");
  let path;
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
  path.lessons.forEach((lesson, index) => {
    const available = lesson.status === "available" && lesson.href;
    const heading = el("h2", { class: "lesson-title" },
      el("span", { class: "lesson-index" }, `${index + 1}`), " ",
      available ? el("a", { href: lesson.href }, lesson.title) : el("span", {}, lesson.title));
    const item = el("li", { class: `path-lesson ${available ? "available" : "coming-next"}`, "data-lesson": lesson.id, "data-status": lesson.status, "data-finished": String(finished(lesson)) },
      heading,
      available ? null : el("span", { class: "badge" }, lesson.status === "coming-next" ? "coming next · not written yet" : "not written yet"),
      el("p", { class: "lesson-summary" }, lesson.summary),
      lesson.minutes ? el("p", { class: "lesson-minutes" }, `About ${lesson.minutes} minutes`) : null,
      available && finished(lesson) ? el("p", { class: "lesson-done" }, el("strong", {}, "✓ Finished."), " Its questions come back in review.") : null,
      available && lesson.progress ? el("p", { class: "lesson-progress" }, `Your progress: ${progressText(lesson.progress)}`) : null,
      available && !lesson.progress ? el("p", { class: "lesson-progress unknown" }, "Your progress cannot be read right now.") : null);
    list.append(item);
  });
  main.dataset.ready = "true";
  performance.mark("chainrule-ready");
}

start();
