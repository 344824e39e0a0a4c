// Calls to the lesson server's JSON API, plus the page's visible message area.
// Every failure is shown to the learner: nothing is dropped silently.

const tokenFromUrl = new URLSearchParams(window.location.search).get("token");

/** An API failure carrying the HTTP status and the server's explanation. */
export class ApiError extends Error {
  constructor(status, detail, what) {
    super(`${what}: ${detail}`);
    this.status = status;
    this.detail = detail;
    this.what = what;
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
 * Resolves to the parsed JSON; rejects with ApiError after showing the message on the page.
 */
export async function api(method, url, body, what = "talk to the lesson server") {
  const headers = { Accept: "application/json" };
  if (tokenFromUrl) headers["X-Chainrule-Token"] = tokenFromUrl;
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
    // keepalive lets a save sent while the page is closing still arrive (browsers cap it near 64 KB).
    if (method !== "GET" && init.body.length < 60000) init.keepalive = true;
  }
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
    const failure = new ApiError(response.status, detailText(parsed, response), `Could not ${what} (HTTP ${response.status})`);
    showError(failure.message);
    throw failure;
  }
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

export const get = (url, what) => api("GET", url, undefined, what);
export const put = (url, body, what) => api("PUT", url, body, what);
export const post = (url, body, what) => api("POST", url, body === undefined ? {} : body, what);

/** Show an error in the page's message area (kept until dismissed). */
export function showError(text) {
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

/**
 * Round |x| like Python's format(x, ".4f") / format(x, ".3e"): JS's toFixed and toExponential round an
 * exact tie away from zero, Python rounds it to even. A tie is exact when the exact decimal expansion
 * (100 more digits are plenty for a double) continues with 5 and then only zeros.
 */
function roundedLikePython(magnitude, digits, method) {
  const rounded = magnitude[method](digits);
  const [exact, exponent] = magnitude[method](100).split("e");
  const cut = exact.indexOf(".") + 1 + digits;
  if (!/^50*$/.test(exact.slice(cut))) return rounded;
  const kept = exact.slice(0, cut);
  if (Number(kept[kept.length - 1]) % 2 === 1) return rounded;  // rounding away from zero reaches the even digit
  return exponent === undefined ? kept : `${kept}e${exponent}`;
}

/**
 * Format a number for display, exactly as the server's captions do (chainrule.trace.format_number):
 * nan, inf, -inf; 0 for both zeros; a whole number below a million without a point ("6", "-3");
 * 1e-4 <= |x| < 1e6 with 4 decimals, trailing zeros dropped ("0.7071", "-1.5"); anything else with
 * 4 significant digits in exponent form ("1e-5", "1.235e6", "-2.5e-7").
 * JSON has no nan/inf (the trace sends null for them), so null shows as "nan/inf".
 */
export function fmt(x) {
  if (x === null || x === undefined) return "nan/inf";
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return "0";
  const magnitude = Math.abs(x);
  const sign = x < 0 ? "-" : "";
  if (Number.isInteger(x) && magnitude < 1e6) return sign + String(magnitude);
  if (magnitude >= 1e-4 && magnitude < 1e6) {
    return sign + roundedLikePython(magnitude, 4, "toFixed").replace(/0+$/, "").replace(/\.$/, "");
  }
  const [mantissa, exponent] = roundedLikePython(magnitude, 3, "toExponential").split("e");
  return `${sign}${mantissa.replace(/0+$/, "").replace(/\.$/, "")}e${Number(exponent)}`;
}

// What a typed number may look like; the server's chainrule.lessons.checking.parse_number accepts
// exactly the same: spaces around it, a sign (+, - or the typographic minus), digits with a decimal
// point (or a decimal comma when there is no point) and an exponent.
const NUMBER_SPACES = /^[ \t\r\n\f\v\u00a0\u2009\u202f]+|[ \t\r\n\f\v\u00a0\u2009\u202f]+$/g;
const NUMBER_SHAPE = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/;

/** How to type a number, shown when what was typed is not one (the server's message says the same). */
export const NUMBER_HELP =
  "Type a number in digits: a minus sign, a decimal point or comma, and an exponent written with e are fine.";

/** Parse what the learner typed as a number (" 0.5", "−1,5", ".88", "2.5E-3"); NaN when it is not one. */
export function parseNumber(text) {
  let cleaned = String(text).replace(NUMBER_SPACES, "").replaceAll("\u2212", "-");
  if (!cleaned.includes(".") && (cleaned.match(/,/g) || []).length === 1) cleaned = cleaned.replace(",", ".");
  if (!NUMBER_SHAPE.test(cleaned)) return NaN;
  const value = Number(cleaned);
  return Number.isFinite(value) ? value : NaN;
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
