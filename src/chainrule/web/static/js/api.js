// Calls to the lesson server's JSON API, plus the page's visible message area.
// Every failure is shown to the learner: nothing is dropped silently.

const tokenFromUrl = new URLSearchParams(window.location.search).get("token");

/** An API failure carrying the HTTP status and the server's explanation. */
export class ApiError extends Error {
  constructor(status, detail, what, field = null) {
    super(`${what}: ${detail}`);
    this.status = status;
    this.detail = detail;
    this.what = what;
    this.field = field;  // the input a 422 is about ("h", "a", "value"), when the server names one
  }
}

function detailText(body, response) {
  if (body && typeof body.detail === "string") return body.detail;
  if (body && Array.isArray(body.detail)) {
    // FastAPI validation errors: [{loc, msg}, ...]
    return body.detail.map((d) => (d.loc ? `${d.loc.join(".")}: ` : "") + (d.msg || JSON.stringify(d))).join("; ");
  }
  if (body && body.detail) return JSON.stringify(body.detail);
  if (response.status === 413) return "the request was too large for the server";
  return `${response.status} ${response.statusText || "error"}`;
}

/**
 * Call the API. `what` names the action for error messages ("save your prediction").
 * Resolves to the parsed JSON; rejects with ApiError after showing the message on the page, except a
 * 422 about one field when options.atField is true: the caller says that one at its field.
 */
/**
 * fetch()'s options for a call to this server: the lesson server's token, class mode's CSRF token on a
 * change, and a JSON body. Every call of every page is made with these (a page that reads the answer
 * its own way too: the playground, class mode's jobs).
 */
export function requestInit(method, body, extraHeaders = {}, raw = false) {
  const headers = { Accept: "application/json", ...extraHeaders };
  if (tokenFromUrl) headers["X-Chainrule-Token"] = tokenFromUrl;
  // Class mode (`chainrule serve`): a change carries the CSRF token its cookie holds (web/class_gate.py).
  const csrf = document.cookie.match(/(?:^|; )(?:__Host-)?chainrule_csrf=([^;]+)/);
  if (csrf && method !== "GET") headers["X-CSRF-Token"] = decodeURIComponent(csrf[1]);
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = raw ? body : JSON.stringify(body);  // raw: JSON text sent as it is (a progress file)
  }
  return init;
}

export async function api(method, url, body, what = "talk to the lesson server", options = {}) {
  const init = requestInit(method, body, {}, Boolean(options.raw));
  // keepalive lets a save sent while the page is closing still arrive (browsers cap it near 64 KB).
  if (init.body !== undefined && method !== "GET" && init.body.length < 60000) init.keepalive = true;
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    // The server is not answering (stopped or restarting): one notice for the whole outage, not one
    // error per call; the page checks until it answers again (see connectionLost).
    connectionLost();
    throw new ApiError(0, "the lesson server did not answer", `Could not ${what}`);
  }
  let parsed = null;
  const text = await response.text();
  if (text) {
    try { parsed = JSON.parse(text); } catch { parsed = null; }
  }
  if (!response.ok) {
    const field = parsed && typeof parsed.field === "string" ? parsed.field : null;
    const failure = new ApiError(response.status, detailText(parsed, response), `Could not ${what} (HTTP ${response.status})`, field);
    if (!(options.atField && response.status === 422 && field)) showError(failure.message, what);
    throw failure;
  }
  clearErrors(what);  // it worked this time: what an earlier failure of the same action said is over
  // Something was saved: parts of the page that show progress (the contents) may refresh.
  if (method !== "GET") window.dispatchEvent(new CustomEvent("chainrule:saved", { detail: { method, url } }));
  return parsed;
}

// ---------------------------------------------------------------- outages

const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 3000;
let reconnecting = null;

/** Whether the lesson server answered the last call (false during an outage). */
export function connected() {
  return reconnecting === null;
}

/**
 * The server stopped answering: say so once, keep checking, and when it answers again (a restart
 * listens on the same port) remove the notice and fire "chainrule:reconnected" so that parts of the
 * page send what they could not save meanwhile.
 */
function connectionLost() {
  if (reconnecting) return;
  document.documentElement.dataset.connection = "lost";
  const notice = connectionNotice();
  notice.textContent = "The lesson server is not answering (stopped or restarting). This page reconnects by itself "
    + "as soon as it is back; what you type is kept in this browser meanwhile.";
  let delay = RECONNECT_FIRST_MS;
  const check = async () => {
    let status = 0;
    try {
      const headers = { Accept: "application/json" };
      if (tokenFromUrl) headers["X-Chainrule-Token"] = tokenFromUrl;
      status = (await fetch("/api/path", { headers, credentials: "same-origin", cache: "no-store" })).status;
    } catch (error) { status = 0; }
    if (status === 0) {
      delay = Math.min(delay * 2, RECONNECT_MAX_MS);
      reconnecting = setTimeout(check, delay);
      return;
    }
    if (status === 401 || status === 403) {
      // Back, but this tab's session is not (a data folder without its session secret): only a new link helps.
      notice.textContent = "The lesson server is back, but this tab's session is not: open the address that "
        + "`chainrule lesson` printed. What you typed is kept in this browser and comes back there.";
      reconnecting = null;
      document.documentElement.dataset.connection = "refused";
      return;
    }
    reconnecting = null;
    notice.remove();
    const area = document.getElementById("messages");
    if (area && !area.querySelector(".message")) area.hidden = true;
    document.documentElement.dataset.connection = "ok";
    window.dispatchEvent(new CustomEvent("chainrule:reconnected"));
  };
  reconnecting = setTimeout(check, delay);
}

function connectionNotice() {
  const area = document.getElementById("messages");
  let notice = document.getElementById("connection-notice");
  if (!notice) {
    notice = Object.assign(document.createElement("div"), { id: "connection-notice", className: "message notice" });
    if (area) { area.hidden = false; area.prepend(notice); }
  }
  return notice;
}

/** A 422's explanation as said at its own field (which names the field already): without the "value: " in front. */
export function fieldMessage(error) {
  const prefix = `${error.field}: `;
  return error.detail.startsWith(prefix) ? error.detail.slice(prefix.length) : error.detail;
}

export const get = (url, what) => api("GET", url, undefined, what);
export const put = (url, body, what, options) => api("PUT", url, body, what, options);
export const post = (url, body, what, options) => api("POST", url, body === undefined ? {} : body, what, options);

/** Take away the messages that failures of one action (`what`, as given to api()) showed. */
function clearErrors(what) {
  const area = document.getElementById("messages");
  if (!area) return;
  for (const item of area.querySelectorAll(".message.error")) if (item.dataset.what === what) item.remove();
  if (!area.querySelector(".message")) area.hidden = true;
}

/** Show an error in the page's message area (kept until dismissed, or until the same action, `what`, works). */
export function showError(text, what = "") {
  const area = document.getElementById("messages");
  if (!area) { console.error(text); return; }
  area.hidden = false;
  // The same failure repeated (e.g. three editors failing alike) is shown once, with a count.
  for (const existing of area.querySelectorAll(".message")) {
    if (existing.dataset.text === text) {
      const times = Number(existing.dataset.times || "1") + 1;
      existing.dataset.times = String(times);
      existing.querySelector(".times").textContent = ` (×${times})`;
      return;
    }
  }
  const item = document.createElement("div");
  item.dataset.text = text;
  item.dataset.what = what;
  item.className = "message error";
  const words = document.createElement("span");
  words.textContent = text;
  words.append(Object.assign(document.createElement("span"), { className: "times" }));
  const close = document.createElement("button");
  close.type = "button";
  close.className = "dismiss";
  close.textContent = "Dismiss";
  close.setAttribute("aria-label", "Dismiss this message");
  close.addEventListener("click", () => {
    item.remove();
    if (!area.querySelector(".message")) area.hidden = true;
  });
  item.append(words, close);
  area.append(item);
}

/** Create an element: el("p", {class: "x", text: "hi"}, child, ...). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "html") node.innerHTML = value;
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child);
  }
  return node;
}

/** Do `work` for a press of `button`, one press at a time: while it runs the button says it is busy
 * (aria-disabled) and another press does nothing. It is not disabled: a disabled button would drop the keyboard
 * focus to the page. Returns what `work` returns (undefined for a press while busy). */
export async function whileBusy(button, work) {
  if (button.getAttribute("aria-disabled") === "true") return undefined;
  button.setAttribute("aria-disabled", "true");
  try { return await work(); } finally { button.removeAttribute("aria-disabled"); }
}

/** Move the keyboard focus to what an action produced (a result, a hint, feedback): it takes the focus without
 * becoming a Tab stop, and a screen reader reads it out from there. */
export function focusResult(element) {
  element.tabIndex = -1;
  element.focus();
}

/** When `button` is disabled while focused (the last Next), focus moves to `instead`, if that can take it. */
export function keepFocus(button, instead) {
  if (button.disabled && document.activeElement === button && !instead.disabled) instead.focus();
}

/** "1 sweep", "6 sweeps": the one plural rule of the page's sentences (`many` for an irregular plural). */
export function plural(count, word, many = `${word}s`) {
  return `${count} ${count === 1 ? word : many}`;
}

export function debounce(fn, ms) {
  let timer = null;
  let lastArgs = [];
  const wrapped = (...args) => {
    lastArgs = args;
    clearTimeout(timer);
    timer = setTimeout(() => { timer = null; fn(...lastArgs); }, ms);
  };
  /** Run a pending call now (e.g. before switching language). */
  wrapped.flush = () => {
    if (timer !== null) { clearTimeout(timer); timer = null; return fn(...lastArgs); }
    return undefined;
  };
  return wrapped;
}

export function clearLoading() {
  for (const node of document.querySelectorAll("[data-loading]")) node.remove();
}
