/// The script both pages share: `api()` (JSON calls whose failures read as the API's error or as
/// "server unreachable", never the browser's "Failed to fetch") and `SessionStream` (one session's
/// states over Server-Sent Events, with a status that always says what is true: live, retrying
/// because the server is unreachable, the session deleted or gone, no access).
enum WebScript {
    static let common = #"""
"use strict";
const $ = (id) => document.getElementById(id);

/** An answer the API refused (status, code and message of its error body), or status 0: no answer at all. */
class APIError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

/** Calls the API with JSON in and out; options: headers, body (a string is sent as written). */
async function api(method, path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  const init = { method, headers, cache: "no-store" };
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  let response, text;
  try {
    response = await fetch(path, init);
    text = await response.text();
  } catch (_) {
    throw new APIError(0, "unreachable", "server unreachable");
  }
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch (_) { json = null; }
  if (!response.ok) {
    if (json && json.error) throw new APIError(response.status, json.error.code, json.error.code + ": " + json.error.message);
    throw new APIError(response.status, "http_" + response.status, "HTTP " + response.status + (text ? ": " + text.trim().slice(0, 200) : ""));
  }
  return json;
}

/** Sets a status element's text and kind (the kind colours its dot: live, retrying, gone, …). */
function setStatus(node, kind, text) {
  node.dataset.kind = kind;
  node.textContent = text;
}

/** A time of day for logs and "updated at" lines. */
function clockTime(date = new Date()) { return date.toLocaleTimeString(); }

/** A node with text, for building lists without innerHTML. */
function node(tag, text, className) {
  const element = document.createElement(tag);
  if (text !== undefined) element.textContent = text;
  if (className) element.className = className;
  return element;
}

/**
 * Follows one session's states over Server-Sent Events. When the stream breaks it asks `probe()` why
 * (a request about the session) and reports the truth through onStatus(kind, text):
 * "live"; "retrying" (server unreachable or failing: tries again, backing off to 5 s); "gone" (404:
 * deleted or expired, no retry); "ended" (deleted while we watched); "denied" (401/403).
 * accessToken() may return a session token (token access mode) for `access_token=`.
 */
class SessionStream {
  constructor(id, handlers) {
    this.id = id;
    this.handlers = handlers;
    this.source = null;
    this.timer = null;
    this.failures = 0;
    this.breaks = 0;
    this.stopped = true;
  }

  start() { this.stopped = false; this.open(); }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.source) this.source.close();
    this.source = null;
  }

  status(kind, text) { if (!this.stopped || kind === "ended") this.handlers.onStatus(kind, text); }

  open() {
    if (this.stopped) return;
    let url = "/sessions/" + encodeURIComponent(this.id) + "/events";
    const token = this.handlers.accessToken ? this.handlers.accessToken() : null;
    if (token) url += "?access_token=" + encodeURIComponent(token);
    this.status("connecting", "connecting …");
    const source = new EventSource(url);
    this.source = source;
    source.addEventListener("open", () => {
      if (this.source === source) this.status("live", "live: states arrive as they happen");
    });
    source.addEventListener("state", (event) => {
      this.failures = 0;
      this.breaks = 0;
      this.handlers.onState(Number(event.lastEventId), JSON.parse(event.data));
    });
    source.addEventListener("pulse", (event) => {
      if (this.handlers.onPulse) this.handlers.onPulse(JSON.parse(event.data));
    });
    source.addEventListener("end", () => {
      source.close();
      this.source = null;
      this.stopped = true;
      this.handlers.onStatus("ended", "session deleted: its stream has ended");
    });
    // Both the connection's failure and the server's `event: error` (which carries data) land here.
    source.addEventListener("error", (event) => {
      if (this.source !== source) return;
      source.close();
      this.source = null;
      let reason = null;
      if (event.data) { try { reason = JSON.parse(event.data); } catch (_) { reason = null; } }
      this.breaks += 1;
      this.recover(reason);
    });
  }

  async recover(reason) {
    if (this.stopped) return;
    try {
      await this.handlers.probe();
    } catch (error) {
      if (this.stopped) return;
      if (error.status === 404) return this.status("gone", "session " + this.id + " no longer exists (deleted or expired)");
      if (error.status === 401 || error.status === 403) return this.status("denied", "no access to this session: " + error.message);
      this.failures += 1;
      const delay = Math.min(500 * 2 ** (this.failures - 1), 5000);
      const why = error.status === 0 ? "server unreachable" : error.message;
      this.status("retrying", why + ": retrying in " + (delay / 1000).toFixed(1) + " s");
      this.timer = setTimeout(() => this.recover(reason), delay);
      return;
    }
    if (this.stopped) return;
    // The session is there: reopen at once, but back off if the stream keeps breaking without a state.
    const delay = this.breaks <= 1 ? 0 : Math.min(500 * 2 ** (this.breaks - 2), 5000);
    if (delay === 0) return this.open();
    const why = reason && reason.code ? "the server ended the stream (" + reason.code + ")" : "the stream broke";
    this.status("retrying", why + ": reconnecting in " + (delay / 1000).toFixed(1) + " s");
    this.timer = setTimeout(() => this.open(), delay);
  }
}
"""#
}
