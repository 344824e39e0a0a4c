// Graded runs. "Run tests" posts the run to /api/grade; the server answers with the result (200: graded
// in the server's own sandbox) or with a job to follow (202: a class kept in PostgreSQL, where a
// `chainrule worker` takes it; web/routes_jobs.py). The page learns which from the answer, and after a
// reload from GET /api/jobs (its runs still waiting, and its runs that ended without a grade); it never
// guesses. A run is sent with a key, so sending it again after a lost answer finds the same job; while
// the server or its database is away, the page says so and keeps trying.
import { ApiError, plural, post, requestInit, showError } from "./api.js";

const POLL_MS = 1000;
const RETRY_MS = [1000, 2000, 3000, 5000];

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function newKey() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

async function call(method, url, body, key) {
  const response = await fetch(url, requestInit(method, body, key ? { "X-Chainrule-Run": key } : {}));
  let parsed = null;
  try { parsed = await response.json(); } catch { parsed = null; }
  return { status: response.status, body: parsed };
}

// Answers that mean "not now" (the server restarting behind a proxy, its database away), tried again.
const AWAY = new Set([502, 503, 504]);

/** The call's answer; while the server or its database does not answer, say so and try again. */
async function patiently(attempt, show, what) {
  for (let tries = 0; ; tries += 1) {
    let answer = null;
    try { answer = await attempt(); } catch { answer = null; }
    if (answer && !AWAY.has(answer.status)) {
      if (answer.status >= 400) {
        const detail = (answer.body && typeof answer.body.detail === "string") ? answer.body.detail : `HTTP ${answer.status}`;
        const failure = new ApiError(answer.status, detail, `Could not ${what} (HTTP ${answer.status})`);
        showError(failure.message);
        throw failure;
      }
      return answer.body;
    }
    const wait = RETRY_MS[Math.min(tries, RETRY_MS.length - 1)];
    const why = answer ? "The class server cannot reach its database" : "The server is not answering";
    show(`${why}; your run is kept. Trying again in ${wait / 1000} s…`);
    await pause(wait);
  }
}

export function describe(status) {
  if (status.state === "queued") {
    const ahead = (status.position || 1) - 1;
    return ahead === 0 ? "Queued: your run is next for a grader." : `Queued: ${plural(ahead, "run")} ahead of yours.`;
  }
  if (status.state === "running") return "A grader is running your tests…";
  return "Graded.";
}

/** Follow a job until it is graded or ended; its grading result. */
export async function follow(status, show) {
  let current = status;
  while (current.state === "queued" || current.state === "running") {
    show(describe(current));
    await pause(current.poll_after ? current.poll_after * 1000 : POLL_MS);
    current = await patiently(() => call("GET", `/api/jobs/${current.job}`), show, "see your run");
  }
  return current.result;
}

/** Run the tests: the grading result, after following the job if the server queued the run (202). Where
 * runs wait for workers (GET /api/jobs says so), a run is kept while the server is away, so the page tries
 * again with the same key; where the server grades while the page waits, a run the server never answered
 * did not run, and the page says so (api.js). */
export async function runTests(exercise, language, source, show) {
  if (!(await pageRuns()).queued) {
    const answer = await post("/api/grade", { exercise, language, source }, "run the tests");  // api.js tells lesson.js
    return answer && answer.job !== undefined ? finished(await follow(answer, show)) : answer;
  }
  const key = newKey();
  const answer = await patiently(() => call("POST", "/api/grade", { exercise, language, source }, key), show, "run the tests");
  // A job (the server queued the run: 202) is followed until it is graded; a result is the grading itself.
  return finished(answer && answer.job !== undefined ? await follow(answer, show) : answer);
}

function finished(result) {
  // A kept run may finish a section: the parts of the page that show progress refresh (lesson.js).
  if (result && result.saved) window.dispatchEvent(new CustomEvent("chainrule:saved", { detail: { method: "POST", url: "/api/grade" } }));
  return result;
}

let runs = null;

/** GET /api/jobs once per page: {queued, jobs, ungraded} ({jobs: [], ungraded: []} if it cannot be read). */
function pageRuns() {
  if (runs === null) {
    runs = call("GET", "/api/jobs")
      .then((answer) => (answer.status === 200 && answer.body ? answer.body : null))
      .catch(() => null)
      .then((body) => {
        if (!body) runs = null;  // not known now (the server or its database away): asked again next time
        return body || { queued: false, jobs: [], ungraded: [] };
      });
  }
  return runs;
}

/** The learner's runs still waiting or running (for a page loaded while they wait); [] if none. */
export const waitingRuns = () => pageRuns().then((body) => body.jobs || []);

/** Runs that ended without a grade after the learner's last graded run (per exercise and language). */
export const ungradedRuns = () => pageRuns().then((body) => body.ungraded || []);
