// A lesson's graded exercises (section 05 of the built-in lessons), each with a language switch, a CodeMirror editor,
// reset, "Run tests" and per-test results. The latest code per exercise and language is
// saved (debounced) and restored on reload. Hints open one at a time on request; the model
// solution opens by itself at the run that makes it the lesson's number of runs that did not pass
// (3 unless lesson.json says otherwise), or earlier if the learner asks and confirms.
// Numbers on this page are the server's texts (expected_text, actual_text): nothing here formats one.
// A step of a project (exercise.continues, the capstone) starts from the learner's passing code of the step
// before: the starter route gives it, and a pass of that step here refreshes a next step not yet begun.
import { get, put, el, debounce, plural, focusResult, whileBusy } from "./api.js";
import { renderDrawnGraph } from "./drawn_graph.js";
import { renderMath } from "./math.js";
import { follow, runTests, ungradedRuns, waitingRuns } from "./jobs.js";

// What went wrong, said where it matters: the notice at the top may be dismissed, or gone after a reconnect.
function failureReason(error) {
  if (error && error.status === 0) return "the lesson server did not answer.";
  const detail = error && error.detail ? String(error.detail) : "no explanation came back.";
  return /[.!?]$/.test(detail) ? detail : `${detail}.`;
}

const LANGUAGE_NAMES = { python: "Python", javascript: "JavaScript", typescript: "TypeScript" };
const SAVE_DELAY_MS = 700;
const SAVE_RETRY_MS = 3000;  // a save the server answered 502-504 (its database away) is sent again this often
const AWAY = new Set([502, 503, 504]);

// This browser keeps two things per exercise: the text typed but not yet saved by the server (so an
// outage or a restart loses nothing: it is sent again when the server answers) and the language last
// chosen (restored on reload). localStorage belongs to this address, which a restart keeps.
const draftKey = (exerciseId, lang) => `chainrule:draft:${exerciseId}/${lang}`;
const languageKey = (exerciseId) => `chainrule:language:${exerciseId}`;
function remembered(key) {
  try { return window.localStorage.getItem(key); } catch (error) { return null; }  // storage off: nothing kept
}
function remember(key, value) {
  try {
    if (value === null) window.localStorage.removeItem(key); else window.localStorage.setItem(key, value);
  } catch (error) { /* storage full or off: the server copy is all there is */ }
}

export async function renderExercises(slot, lesson, progress) {
  const codemirror = await import("../vendor/codemirror.js");
  const savedCode = progress.code || {};
  const savedResults = progress.results || {};
  const list = el("div", { class: "exercises" });
  slot.append(list);
  const help = { lessonId: lesson.id, solutionAfter: lesson.solution_after };
  const ready = lesson.exercises.map((exercise, index) =>
    renderExercise(list, exercise, index, codemirror, savedCode, savedResults, help));
  await Promise.all(ready);
  slot.dataset.editorsReady = "true";
}

async function renderExercise(list, exercise, index, codemirror, savedCode, savedResults, help) {
  const languages = exercise.languages;
  const key = (language) => `${exercise.id}/${language}`;
  const texts = new Map();      // language -> the text the learner has now
  const starters = new Map();   // language -> starter source
  const chosen = remembered(languageKey(exercise.id));
  let language = languages.includes(chosen) ? chosen : languages[0];
  let programmatic = false;     // true while we replace the text ourselves (not a learner edit)

  const carried = new Set();    // languages whose starter is the learner's own passing code of the step before
  const starterFor = async (lang) => {
    if (!starters.has(lang)) {
      const body = await get(`/api/exercises/${encodeURIComponent(exercise.id)}/starter?language=${encodeURIComponent(lang)}`,
        `load the ${LANGUAGE_NAMES[lang] || lang} starter code`);
      starters.set(lang, body.source);
      if (body.carried_from) carried.add(lang); else carried.delete(lang);
    }
    return starters.get(lang);
  };
  const textFor = async (lang) => {
    if (texts.has(lang)) return texts.get(lang);
    const draft = remembered(draftKey(exercise.id, lang));
    if (draft !== null && draft !== savedCode[key(lang)]) {
      save(lang, draft);  // typed during an outage: the server gets it now
      return draft;
    }
    if (draft !== null) remember(draftKey(exercise.id, lang), null);  // the server has it
    if (typeof savedCode[key(lang)] === "string") return savedCode[key(lang)];
    return starterFor(lang);
  };

  const saveStatus = el("span", { class: "status save-status", role: "status", "aria-live": "polite" });
  let saveRetry = null;
  const save = debounce(async (lang, source) => {
    clearTimeout(saveRetry);
    saveStatus.textContent = "Saving…";
    try {
      await put("/api/progress/code", { exercise: exercise.id, language: lang, source }, "save your code");
      savedCode[key(lang)] = source;
      if (remembered(draftKey(exercise.id, lang)) === source) remember(draftKey(exercise.id, lang), null);
      if (lang === language) saveStatus.textContent = `Saved (${LANGUAGE_NAMES[lang] || lang}).`;
    } catch (error) {
      if (AWAY.has(error.status)) {
        // The server answers but cannot keep anything now (its database is away): send it again soon.
        saveStatus.textContent = "Not saved yet: kept in this browser, and sent again in a few seconds.";
        saveRetry = setTimeout(() => save(lang, remembered(draftKey(exercise.id, lang)) ?? source), SAVE_RETRY_MS);
        return;
      }
      saveStatus.textContent = error.status === 0
        ? "Not saved yet: kept in this browser, and saved when the server is back."
        : `Not saved: ${failureReason(error)}`;
    }
  }, SAVE_DELAY_MS);

  const block = el("article", { class: "exercise", id: `exercise-${exercise.id}`, "data-exercise": exercise.id, "aria-labelledby": `exercise-${exercise.id}-title` });
  block.append(el("h3", { id: `exercise-${exercise.id}-title` }, `${index + 1}. ${exercise.title}`));
  const prose = el("div", { class: "prose", html: exercise.html });
  block.append(prose);
  renderMath(prose);

  const switcher = el("fieldset", { class: "language-switch" }, el("legend", {}, "Language"));
  for (const lang of languages) {
    const id = `lang-${exercise.id}-${lang}`;
    const radio = el("input", { type: "radio", name: `lang-${exercise.id}`, id, value: lang, checked: lang === language });
    radio.addEventListener("change", () => { if (radio.checked) switchTo(lang); });
    switcher.append(el("span", { class: "choice" }, radio, el("label", { for: id }, LANGUAGE_NAMES[lang] || lang)));
  }
  block.append(switcher);

  const editorHolder = el("div", { class: "editor", "data-editor": exercise.id });
  block.append(editorHolder);
  const hintId = `editor-hint-${exercise.id}`;
  block.append(el("p", { class: "editor-hint", id: hintId }, "Tab indents. To leave the editor with the keyboard, press Esc, then Tab."));
  const carriedNote = el("p", { class: "carried-note", hidden: true },
    "This step starts from your own passing code of the step before: keep it, and add what this step asks for.");
  block.append(carriedNote);
  const download = el("a", { class: "download-code", hidden: true, download: "" }, "Download your passing code as one file that runs on its own");
  block.append(download);
  // Disabled until their editor has its text and they have their handlers: a press while the page loads would
  // otherwise do nothing and say nothing.
  const runButton = el("button", { type: "button", class: "run-tests", disabled: true }, "Run tests");
  const resetButton = el("button", { type: "button", class: "secondary reset-code", disabled: true }, "Reset to starter code");
  const runStatus = el("span", { class: "status run-status", role: "status", "aria-live": "polite" });
  block.append(el("div", { class: "editor-actions" }, runButton, resetButton, runStatus, saveStatus));
  // Not a live region: the run's status says the outcome in a few words, and the focus moves to the results.
  const results = el("div", { class: "results" });
  block.append(results);
  const helpPanel = renderHelp(exercise, help, () => language);
  block.append(helpPanel.element);
  list.append(block);

  const initial = await textFor(language).catch(() => "");
  const editor = codemirror.createEditor(editorHolder, {
    doc: initial,
    language,
    label: `${exercise.title}: ${LANGUAGE_NAMES[language] || language} code`,
    onChange: (text) => {
      texts.set(language, text);
      if (!programmatic) {
        remember(draftKey(exercise.id, language), text);  // until the server has it
        save(language, text);
      }
    },
  });
  // An editor whose long lines scroll sideways must be reachable from the keyboard: its text area is focusable
  // already (contenteditable); tabindex=0 says so to assistive tools as well, from the moment it is drawn.
  editor.view.contentDOM.tabIndex = 0;
  texts.set(language, initial);
  const downloads = exercise.downloads || [];
  const showExtras = () => {
    carriedNote.hidden = !(carried.has(language) && editor.getText() === starters.get(language));
    const passed = (savedResults[key(language)] || {}).status === "pass";
    download.hidden = !(passed && downloads.includes(language));
    download.setAttribute("href", `/api/exercises/${encodeURIComponent(exercise.id)}/passing-code?language=${encodeURIComponent(language)}`);
  };
  showExtras();
  // The step this one continues passed on this page: a language not begun here starts from that code now.
  if (exercise.continues) {
    window.addEventListener("chainrule:exercise-passed", async (event) => {
      const { exercise: passedId, language: lang } = event.detail || {};
      if (passedId !== exercise.continues) return;
      const untouched = typeof savedCode[key(lang)] !== "string" && (!texts.has(lang) || texts.get(lang) === starters.get(lang));
      starters.delete(lang);
      if (!untouched) return;
      let text;
      try { text = await starterFor(lang); } catch (error) { return; }
      texts.set(lang, text);
      if (lang === language) setText(text);
      showExtras();
    });
  }
  // The Tab trap and its way out, said by a screen reader as the editor takes focus, not only shown.
  const content = editorHolder.querySelector(".cm-content");
  if (content) content.setAttribute("aria-describedby", hintId);
  // A handle for tests and the benchmark (window.chainruleEditors[exercise id]).
  window.chainruleEditors = window.chainruleEditors || {};
  window.chainruleEditors[exercise.id] = editor;
  const setText = (text) => { programmatic = true; try { editor.setText(text); } finally { programmatic = false; } };
  const ungraded = new Map();  // language -> the latest run, when it ended without a grade (jobs.js)
  const ranHere = new Set();   // languages run on this page since it loaded: their newest result is on screen
  const showSavedResult = () => {
    const result = savedResults[key(language)];
    const missed = ungraded.get(language);
    if (result) renderResult(results, result, true, missed);
    else if (missed) renderResult(results, missed, true);
    else results.replaceChildren();
  };
  showSavedResult();
  ungradedRuns().then((runs) => {
    for (const run of runs.filter((entry) => entry.exercise === exercise.id && entry.result && !ranHere.has(entry.language))) {
      ungraded.set(run.language, run.result);
    }
    if (ungraded.has(language)) showSavedResult();
  });
  // Closing or reloading the page right after typing still saves the latest code.
  window.addEventListener("pagehide", () => save.flush());
  // Back after an outage: send what was typed meanwhile, and say that a run that could not reach the
  // server can be made now (the notice at the top is gone by then).
  window.addEventListener("chainrule:reconnected", () => {
    const draft = remembered(draftKey(exercise.id, language));
    if (draft !== null) { save(language, draft); save.flush(); }
    if (runStatus.dataset.outage === "true") {
      runStatus.textContent = "The lesson server is back: press Run tests to run them.";
      delete runStatus.dataset.outage;
    }
  });

  async function switchTo(lang) {
    if (lang === language) return;
    save.flush();
    texts.set(language, editor.getText());
    language = lang;
    remember(languageKey(exercise.id), lang);
    saveStatus.textContent = "";  // "Saved (Python)" is not news about the JavaScript text
    let text;
    try { text = await textFor(lang); } catch (error) { block.dataset.language = lang; return; }
    if (language !== lang) return;  // the learner switched again meanwhile
    editor.setLanguage(lang);
    setText(text);
    // Only now is the switch done: what is typed from here on is not replaced by the text that was loading.
    block.dataset.language = lang;
    editor.view.contentDOM.setAttribute("aria-label", `${exercise.title}: ${LANGUAGE_NAMES[lang] || lang} code`);
    showSavedResult();
    showExtras();
    helpPanel.languageChanged();
  }

  resetButton.addEventListener("click", async () => {
    let starter;
    try { starter = await starterFor(language); } catch (error) { return; }
    setText(starter);
    remember(draftKey(exercise.id, language), starter);
    save(language, starter);
    save.flush();
    runStatus.textContent = "Starter code restored.";
  });

  const showRun = (lang, result, { focus = false } = {}) => {
    ranHere.add(lang);
    ungraded.delete(lang);
    savedResults[key(lang)] = result;
    if (lang === language) renderResult(results, result, false);
    if (lang === language && focus) focusResult(results.querySelector(".verdict"));
    if (result.saved && result.status !== "pass") helpPanel.failedRun();
    runStatus.textContent = result.status === "pass" ? "All tests passed." : "Done: see the results below.";
    if (result.status === "pass") {
      window.dispatchEvent(new CustomEvent("chainrule:exercise-passed", { detail: { exercise: exercise.id, language: lang } }));
    }
    showExtras();
  };
  // A run still waiting for a grader when the page was (re)loaded: follow it here (jobs.js).
  waitingRuns().then(async (jobs) => {
    for (const job of jobs.filter((entry) => entry.exercise === exercise.id)) {
      runButton.disabled = true;
      try { showRun(job.language, await follow(job, (text) => { runStatus.textContent = text; })); } catch { /* shown */ }
      runButton.disabled = false;
    }
  });

  runButton.addEventListener("click", () => whileBusy(runButton, async () => {
    const lang = language;
    const source = editor.getText();
    save.flush();
    runStatus.textContent = "Running the tests…";
    results.setAttribute("aria-busy", "true");
    try {
      const result = await runTests(exercise.id, lang, source, (text) => { runStatus.textContent = text; });
      savedCode[key(lang)] = source;
      results.removeAttribute("aria-busy");
      showRun(lang, result, { focus: true });  // the focus moves to the results' header, which is read out
    } catch (error) {
      runStatus.dataset.outage = String(error.status === 0);
      runStatus.textContent = error.status === 0
        ? "The tests did not run: the lesson server did not answer. This page notices when it is back."
        : `The tests did not run: ${failureReason(error)}`;
    } finally {
      results.removeAttribute("aria-busy");
    }
  }));
  resetButton.disabled = false;
  runButton.disabled = false;  // before any run left waiting is followed (that callback comes later)
  block.dataset.language = language;
}

// Why a run ended without every test's own result (the counts follow, when there are tests).
const VERDICT_TEXT = {
  error: "Your code could not run.",
  timeout: "Your code took too long (time limit).",
  "cpu-limit": "Your code used too much CPU time.",
  "memory-limit": "Your code used too much memory.",
  "output-limit": "Your code printed too much output.",
  "file-limit": "Your code wrote too much to files.",
  crashed: "The test run crashed.",
  busy: "The grader is busy: try again in a moment.",
  "server-busy": "The server was too busy to run your code, so this run does not count: try again in a minute.",
  expired: "No grader took this run in time, so it was not graded.",
  "type-error": "TypeScript found type errors, so this run does not pass (the tests ran anyway).",
};

// A stored run without a verdict (written by an older version, or brought in from a file) is said by its status.
const STATUS_TEXT = { pass: "All tests passed.", fail: "Some tests failed.", error: "Your code could not run." };


/** One header that matches the counts below it: what passed, what failed, what raised or never finished. */
export function headline(result) {
  const tests = result.tests || [];
  const count = (status) => tests.filter((test) => test.status === status).length;
  if (result.verdict === "passed" && tests.length === 1) return "The test passed.";
  if (result.verdict === "passed") return `All ${tests.length} tests passed.`;
  if (!tests.length) return VERDICT_TEXT[result.verdict] || STATUS_TEXT[result.status] || "This run was not graded.";
  const parts = [`${count("pass")} of ${plural(tests.length, "test")} passed`];
  if (count("fail")) parts.push(`${count("fail")} failed`);
  if (count("error")) parts.push(`${count("error")} ${result.verdict === "error" ? "raised an error" : "did not finish"}`);
  const counts = `${parts.join("; ")}.`;
  const why = result.verdict === "failed" || result.verdict === "error" ? "" : VERDICT_TEXT[result.verdict] || "";
  return why ? `${why} ${counts}` : counts;
}

// ungradedAfter: the learner's latest run, when it ended without a grade after this (restored) one.
function renderResult(holder, result, restored, ungradedAfter = null) {
  const hasVerdict = typeof result.verdict === "string" && result.verdict !== "";
  const status = STATUS_TEXT[result.status] ? result.status : "error";
  const summary = el("div", { class: `verdict verdict-${status}` },
    el("strong", { class: "verdict-text" }, headline(result)));
  const facts = el("p", { class: "result-facts" },
    restored ? `Shown: your last ${ungradedAfter ? "graded " : ""}run, kept from before.` : "");
  const isolation = result.isolation || {};
  // One sentence for the learner; the layers, and why any is missing, folded away for whoever runs the server.
  const isolationLine = el("p", { class: `isolation isolation-${isolation.level}` },
    isolation.summary || `Isolation: ${isolation.level || "unknown"}`);
  const layers = Object.entries(isolation.layers || {}).filter(([, on]) => on === true).map(([name]) => name);
  const missing = (isolation.missing || []).map((m) =>
    el("li", {}, "not available: ", el("code", {}, m.layer), m.error ? `: ${m.error}` : ""));
  const isolationDetails = el("details", { class: "isolation-details" },
    el("summary", {}, "Sandbox layers"),
    el("p", {}, `Isolation: ${isolation.level || "unknown"}; layers in use: ${layers.join(", ") || "none"}.`),
    missing.length ? el("ul", {}, ...missing) : "");
  const parts = [summary];
  if (ungradedAfter) {
    parts.unshift(el("p", { class: "ungraded-note" }, el("strong", {}, "Your latest run was not graded. "),
      ungradedAfter.message || "Run it again.", " Below: your last graded run."));
  }
  if (restored) parts.push(facts);
  // The diagnosis once, at the top; the tests below do not repeat it. A run that stopped (or never ran)
  // says why in its message; a run whose tests all reported needs no more than the header and the tests.
  const tests = Array.isArray(result.tests) ? result.tests : [];
  if (result.diagnosis) {
    parts.push(el("p", { class: "result-diagnosis" }, el("strong", {}, "What went wrong: "), result.diagnosis));
  } else if (result.message && (!tests.length || !["passed", "failed", "error"].includes(result.verdict))) {
    parts.push(el("pre", { class: "result-message" }, result.message));
  }
  // A run that never ran (refused, or ended without a grade) has no isolation to tell of.
  if (result.isolation) parts.push(isolationLine, isolationDetails);
  const list = el("ol", { class: "test-results" });
  for (const test of tests) {
    const item = el("li", { class: `test test-${test.status}`, "data-status": test.status },
      el("span", { class: `test-status badge ${test.status}` }, test.status),
      " ", el("span", { class: "test-name" }, test.name));
    if (test.status !== "pass" || test.expected) {
      const table = el("table", { class: "expected-actual" },
        el("tbody", {},
          el("tr", {}, el("th", { scope: "row" }, "expected"), el("td", { class: "expected" }, test.expected_text || "—")),
          el("tr", {}, el("th", { scope: "row" }, "actual"), el("td", { class: "actual" }, test.actual_text || "—"))));
      item.append(table);
    }
    const said = typeof test.problems === "string" ? test.problems : test.message;
    if (said) item.append(el("p", { class: "test-message" }, said));
    const sameAsTop = result.diagnosis_mistake && test.mistake === result.diagnosis_mistake;
    if (test.hint && typeof test.problems === "string" && !sameAsTop) item.append(el("p", { class: "test-hint" }, test.hint));
    if (test.output) item.append(el("details", {}, el("summary", {}, "Output"), el("pre", {}, test.output)));
    if (test.test_code) item.append(el("details", {}, el("summary", {}, "Test code"), el("pre", {}, test.test_code)));
    list.append(item);
  }
  const typeErrors = typeErrorList(result);
  if (typeErrors) parts.push(typeErrors);
  parts.push(list);
  // A passing test that walked the learner's own graph (the capstone's network): drawn under the tests.
  const exerciseId = holder.closest("[data-exercise]")?.dataset.exercise || "exercise";
  for (const test of tests.filter((entry) => entry.status === "pass" && entry.drawing)) parts.push(renderDrawnGraph(exerciseId, test));
  holder.replaceChildren(...parts);
  holder.dataset.status = status;
  holder.dataset.verdict = hasVerdict ? result.verdict : "";
}

// TypeScript's type checker reports [{line, column, message}]; older results have no such list.
function typeErrorList(result) {
  const errors = Array.isArray(result.type_errors) ? result.type_errors : [];
  if (!errors.length) return null;
  const items = errors.map((error) => {
    const where = Number.isInteger(error.line)
      ? `Line ${error.line}${Number.isInteger(error.column) ? `, column ${error.column}` : ""}: `
      : "";
    return el("li", { class: "type-error", "data-line": Number.isInteger(error.line) ? String(error.line) : "" },
      el("span", { class: "type-error-where" }, where), String(error.message ?? ""));
  });
  const count = plural(errors.length, "type error");
  return el("div", { class: "type-errors" },
    el("p", { class: "type-errors-title" }, el("strong", {}, `TypeScript found ${count}:`)),
    el("ul", {}, ...items));
}

// Hints on request, one at a time, and the model solution behind a few failed runs or a confirm.
// currentLanguage() is the editor's language; the solution is shown in it, next to the learner's
// code (never replacing it).
function renderHelp(exercise, help, currentLanguage) {
  const base = `/api/lessons/${encodeURIComponent(help.lessonId)}/exercises/${encodeURIComponent(exercise.id)}`;
  const hintCount = exercise.hint_count || 0;
  let hintsShown = 0;
  let confirmed = false;   // the learner asked for the solution and confirmed, or it opened by itself
  let solutionOpen = false;
  let answers = 0;         // solution requests answered (data-solution-answers, for tests)

  const hints = el("ol", { class: "hints" });  // a hint shown takes the focus, and is read out from there
  const hintButton = el("button", { type: "button", class: "secondary show-hint" });
  const solutionButton = el("button", { type: "button", class: "secondary show-solution" }, "Show the model solution");
  const status = el("span", { class: "status help-status", role: "status", "aria-live": "polite" });
  const confirmText = el("p", { class: "solution-confirm-text" });
  const confirmButton = el("button", { type: "button", class: "confirm-solution" }, "Show it now");
  const keepTrying = el("button", { type: "button", class: "secondary keep-trying" }, "Keep trying");
  const confirmBox = el("div", { class: "solution-confirm", hidden: true }, confirmText,
    el("div", { class: "inline" }, confirmButton, keepTrying));
  const solutionNote = el("p", { class: "solution-note" });
  const solutionCode = el("code", {});
  const solution = el("div", { class: "solution", hidden: true }, solutionNote,
    el("pre", { class: "solution-source", tabindex: "0", "aria-label": `Model solution of ${exercise.title}` }, solutionCode));
  const element = el("div", { class: "exercise-help", "data-hints-shown": "0" },
    hints, el("div", { class: "editor-actions help-actions" }, hintCount ? hintButton : null, solutionButton, status),
    confirmBox, solution);

  const labelHintButton = () => {
    if (hintsShown >= hintCount) {
      hintButton.textContent = "No more hints";
      hintButton.disabled = true;
    } else {
      hintButton.textContent = `Show hint ${hintsShown + 1} of ${hintCount}`;
    }
  };
  labelHintButton();

  hintButton.addEventListener("click", () => whileBusy(hintButton, async () => {
    if (hintsShown >= hintCount) return;
    try {
      const hint = await get(`${base}/hints/${hintsShown + 1}`, "load the hint");
      const item = el("li", { class: "hint", "data-hint": String(hint.number), html: hint.html });
      hints.append(item);
      renderMath(item);
      hintsShown = hint.number;
      element.dataset.hintsShown = String(hintsShown);
      focusResult(item);  // the hint, read out; the button (perhaps "No more hints" now) is one Shift+Tab back
    } catch (error) {
      status.textContent = `The hint did not load: ${failureReason(error)}`;
    } finally {
      labelHintButton();
    }
  }));

  // One behaviour, as the lesson says: after `needed` runs that do not pass the solution opens by itself
  // (once, at that run); sooner, asking shows a confirm first; once open, it opens again at a click.
  const showSolution = async (withConfirm, { byItself = false } = {}) => {
    const language = currentLanguage();
    const query = `language=${encodeURIComponent(language)}${withConfirm ? "&confirm=true" : ""}${byItself ? "&after_run=true" : ""}`;
    const body = await get(`${base}/solution?${query}`, "load the model solution");
    if (byItself) {
      // After a run: only the run that makes the number opens it (a later one leaves it as the learner set it).
      if (!body.unlocked || body.failed_runs !== body.needed || solutionOpen) return;
    } else {
      element.dataset.solutionAnswers = String(++answers);  // answers to the learner's own requests
    }
    if (!body.unlocked) {
      const left = body.needed - body.failed_runs;
      confirmText.textContent = `So far ${plural(body.failed_runs, "run")} did not pass; the model solution opens ` +
        `by itself after ${plural(body.needed, "run")} that do not pass (${left} to go). Working it out yourself, ` +
        "with a hint if you need one, is what makes it stick. Show the solution now anyway?";
      confirmBox.hidden = false;
      element.dataset.solution = "locked";
      confirmButton.focus();
      return;
    }
    confirmed = true;
    solutionOpen = true;
    confirmBox.hidden = true;
    const name = LANGUAGE_NAMES[body.language] || body.language;
    solutionNote.textContent = byItself
      ? `The model solution (${name}) opened by itself: ${plural(body.failed_runs, "run")} did not pass. ` +
        "Compare it with your code; your code in the editor is unchanged."
      : `Model solution (${name}). Compare it with your code; your code in the editor is unchanged.`;
    solutionCode.textContent = body.source;
    solution.hidden = false;
    element.dataset.solution = "open";
    element.dataset.solutionOpened = byItself ? "by-itself" : "asked";
    solution.dataset.language = body.language;
    solutionButton.textContent = "Hide the model solution";
  };

  const guarded = (action) => () => whileBusy(solutionButton, async () => {
    try { await action(); } catch (error) {
      status.textContent = `The model solution did not load: ${failureReason(error)}`;
    }
  });

  solutionButton.addEventListener("click", guarded(async () => {
    if (solutionOpen) {
      solutionOpen = false;
      solution.hidden = true;
      solutionButton.textContent = "Show the model solution";
      return;
    }
    await showSolution(confirmed);
  }));
  confirmButton.addEventListener("click", guarded(() => showSolution(true)));
  keepTrying.addEventListener("click", () => {
    confirmBox.hidden = true;
    solutionButton.focus();
  });

  return {
    element,
    // A graded run that did not pass: at the run that reaches the number, the solution opens by itself.
    failedRun() {
      if (!confirmBox.hidden) confirmBox.hidden = true;
      return guarded(() => showSolution(false, { byItself: true }))();
    },
    async languageChanged() {
      if (solutionOpen) await guarded(() => showSolution(confirmed))();
    },
  };
}
