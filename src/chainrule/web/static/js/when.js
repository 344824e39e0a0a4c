// The one way the pages write a moment (a review's due time): weekday, day, month and time,
// in the learner's own locale, e.g. "Thursday 3 December, 09:30".
const FORMAT = { weekday: "long", day: "numeric", month: "long", hour: "2-digit", minute: "2-digit" };

export function formatWhen(iso) {
  const moment = new Date(iso);
  return Number.isNaN(moment.getTime()) ? String(iso) : moment.toLocaleString(undefined, FORMAT);
}

// "The answer is 6." for a number; for an option (a whole sentence of its own) quote it instead of
// running it into ours, so that no capital follows "is" and no second full stop follows its own.
export function answerSentence(kind, expected) {
  const text = String(expected).trim();
  if (kind === "choice") return `The right answer: “${text.replace(/[.!?]+$/, "")}”.`;
  return `The answer is ${text}.`;
}

// A moment in the reader's own time zone, short ("2 Mar, 09:30"), and the name of that zone for a label
// ("Europe/Paris"): the teacher's page writes every time of the class this way.
const SHORT = { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" };

export function formatLocalTime(iso) {
  const moment = new Date(iso);
  return Number.isNaN(moment.getTime()) ? String(iso) : moment.toLocaleString(undefined, SHORT);
}

export function localZoneName() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "your time zone";
}

// A moment as the class's due dates are written ("2026-12-04 17:59"), in the reader's own time zone; null for
// a moment that cannot be read.
const WALL_CLOCK = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" };

export function wallClock(iso) {
  const moment = new Date(iso);
  if (Number.isNaN(moment.getTime())) return null;
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-GB", WALL_CLOCK).formatToParts(moment)
    .map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}
