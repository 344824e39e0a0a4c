// Graded runs that wait for a grader. In a class kept in PostgreSQL, "Run tests" makes a job that a
// `chainrule worker` takes (web/routes_jobs.py): this module sends the run, follows its job (queued with
// its place, running, graded) and gives back the grading result, as POST /api/grade does elsewhere.
// A run is sent with a key, so sending it again after a lost answer finds the same job; while the
// server or its database is away, the page says so and keeps trying. A reloaded page resumes its jobs.
import { ApiError, post, requestInit, showError } from "./api.js";

const POLL_MS = 1000;
const RETRY_MS = [1000, 2000, 3000, 5000];

// Class mode's pages carry a CSRF cookie; the personal lesson server has no jobs.
const classMode = () => /(?:^|; )(?:__Host-)?chainrule_csrf=/.test(document.cookie);
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

/** The call's answer; while the server or its database does not answer, say so and try again. */
async function patiently(attempt, show, what) {
  for (let tries = 0; ; tries += 1) {
    let answer = null;
    try { answer = await attempt(); } catch { answer = null; }
    if (answer && answer.status < 500) {
      if (answer.status >= 400) {
        const detail = (answer.body && typeof answer.body.detail === "string") ? answer.body.detail : `HTTP ${answer.status}`;
        const failure = new ApiError(answer.status, detail, `Could not ${what} (HTTP ${answer.status})`);
        showError(failure.message);
        throw failure;
      }
      return answer.body;
    }
    const wait = RETRY_MS[Math.min(tries, RETRY_MS.length - 1)];
    const why = answer ? "The class server cannot reach its database" : "The class server is not answering";
    show(`${why}; your run is kept. Trying again in ${wait / 1000} s…`);
    await pause(wait);
  }
}

export function describe(status) {
  if (status.state === "queued") {
    const ahead = (status.position || 1) - 1;
    return ahead === 0 ? "Queued: your run is next for a grader." : `Queued: ${ahead} run${ahead === 1 ? "" : "s"} ahead of yours.`;
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

/** Run the tests: the grading result, after following the job if the run was queued. */
export async function runTests(exercise, language, source, show) {
  if (!classMode()) return post("/api/grade", { exercise, language, source }, "run the tests");
  const key = newKey();
  const answer = await patiently(() => call("POST", "/api/grade", { exercise, language, source }, key), show, "run the tests");
  if (!answer || answer.job === undefined) return answer;
  return follow(answer, show);
}

let openJobs = null;

/** The learner's runs still waiting or running (for a page loaded while they wait); [] if none or unknown. */
export function waitingRuns() {
  if (openJobs === null && !classMode()) openJobs = Promise.resolve([]);
  if (openJobs === null) {
    openJobs = call("GET", "/api/jobs").then((answer) => (answer.status === 200 && answer.body ? answer.body.jobs : []))
      .catch(() => []);
  }
  return openJobs;
}
