// A learner's own due dates in a class (GET /api/class/deadlines/mine, extensions included): a line under
// each dated lesson on the path page; on the lesson page, the lesson's date, the late policy, the credit so
// far, and each exercise's own date on the exercise. Outside a class there are no dates and nothing is asked.
// Every date and number is the server's text.
import { el, requestInit } from "./api.js";
import { localZoneName, wallClock } from "./when.js";

/** The signed-in person's dates ({time_zone, late_policy_text, lessons}), or null (no class, or unreadable). */
export async function myDueDates() {
  if (!document.body.dataset.account) return null;
  try {
    const answer = await fetch("/api/class/deadlines/mine", requestInit("GET"));
    return answer.ok ? await answer.json() : null;
  } catch (error) {
    return null;  // the dates are an aid: the page works without them
  }
}

export function lessonDates(dates, lessonId) {
  return (dates && dates.lessons.find((entry) => entry.lesson_id === lessonId)) || null;
}

// The date in the learner's own time zone (the browser's) with the class's beside it; one date alone where
// both read the same. The server sends the moment (due_at, ISO 8601) and the class's text (due_text).
function dateText(entry) {
  const mine = entry.due_at ? wallClock(entry.due_at) : null;
  if (!mine || mine === entry.due.replace("T", " ")) return entry.due_text;
  return `${mine} your time (${localZoneName()}); ${entry.due_text} for the class`;
}

function whenText(entry) {
  return entry.past_due ? `Was due ${dateText(entry)}` : `Due ${dateText(entry)}`;
}

/** "Due 2026-12-08 03:00 your time (America/New_York); 2026-12-08 09:00 (Europe/Berlin) for the class (your own
 * date). Credit so far: 3 of 8." as one paragraph. */
export function dueLine(entry, dates, { policy = false } = {}) {
  const parts = [];
  if (entry.due) {
    parts.push(el("strong", {}, whenText(entry)), entry.extended ? " (your own date)." : ".");
  } else if (entry.exercises.length) {
    parts.push(el("strong", {}, "Some exercises have due dates."));
  }
  if (entry.score_text) parts.push(` Credit so far: ${entry.score_text}.`);
  if (policy && dates.late_policy_text) parts.push(` After a due date, ${dates.late_policy_text}.`);
  return el("p", { class: "lesson-due", "data-past-due": entry.past_due ? "true" : "false" }, ...parts);
}

/** Each exercise with a date of its own says it under its title. */
export function markExerciseDates(entry, holder) {
  if (!entry) return;
  for (const exercise of entry.exercises) {
    const block = holder.querySelector(`[data-exercise="${CSS.escape(exercise.exercise_id)}"]`);
    const title = block && block.querySelector("h3");
    if (!title || block.querySelector(".exercise-due")) continue;
    title.after(el("p", { class: "exercise-due", "data-past-due": exercise.past_due ? "true" : "false" },
      `${whenText(exercise)}${exercise.extended ? " (your own date)" : ""}.`));
  }
}
