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
    const failure = new ApiError(0, "the lesson server did not answer. Is `chainrule lesson` still running?", `Could not ${what}`);
    showError(failure.message);
    throw failure;
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
  return parsed;
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
 * Format a number from the API for display: at most 4 decimals, trailing zeros dropped.
 * JSON has no nan/inf (the trace sends null for them), so null shows as "nan/inf".
 */
export function fmt(x) {
  if (x === null || x === undefined) return "nan/inf";
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x);
  let text = x.toFixed(4).replace(/0+$/, "").replace(/\.$/, "");
  if (text === "-0") text = "0";
  return text;
}

/** Parse what the learner typed as a number ("0.5", "-1,5", ".88"); NaN when it is not one. */
export function parseNumber(text) {
  const cleaned = String(text).trim().replace(",", ".").replace(/^\+/, "");
  if (!/^-?(\d+\.?\d*|\.\d+)(e-?\d+)?$/i.test(cleaned)) return NaN;
  return Number(cleaned);
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
