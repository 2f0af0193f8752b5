/// The page at `/`: try the service from a browser with no tooling. It lists the reactors, creates a
/// session, sends actions (a button per example action, or any JSON), and shows the live state and
/// pulses through `EventSource`. Plain HTML and JavaScript, no external resources.
enum WebPage {
    static let contentType = "text/html; charset=utf-8"

    /// Content-Security-Policy for the page: nothing loads from elsewhere.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'"

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>reactor-server</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 60rem; padding: 1rem 1.5rem; color: #1d1d1f; }
  h1 { font-size: 1.4rem; margin: .2rem 0 1rem; }
  h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
  section { border: 1px solid #d7d7dc; border-radius: 8px; padding: .8rem 1rem; margin-bottom: 1rem; }
  button { font: inherit; padding: .3rem .8rem; margin: .15rem .3rem .15rem 0; border-radius: 6px; border: 1px solid #888; background: #f5f5f7; cursor: pointer; }
  button.primary { background: #0a64d8; color: white; border-color: #0a64d8; }
  input, select, textarea { font: 14px ui-monospace, monospace; padding: .3rem; border: 1px solid #aaa; border-radius: 6px; }
  textarea { width: 100%; box-sizing: border-box; min-height: 4.5rem; }
  pre { background: #f5f5f7; border-radius: 6px; padding: .6rem; overflow: auto; margin: .3rem 0; }
  .row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
  .muted { color: #6e6e73; font-size: .9rem; }
  .error { color: #b00020; }
  #log div { font: 13px ui-monospace, monospace; border-bottom: 1px solid #eee; padding: .15rem 0; }
  #log .pulse { color: #8a2be2; }
</style>
</head>
<body>
<h1>reactor-server</h1>
<p class="muted">One reactor per session: send actions, watch states arrive over Server-Sent Events.
  API description: <a href="/openapi.json">/openapi.json</a>.</p>

<section>
  <h2>1. Create a session</h2>
  <div class="row">
    <label>reactor <select id="reactor"></select></label>
    <label>id <input id="sessionId" placeholder="(server picks one)" size="24"></label>
    <button class="primary" id="create">Create</button>
    <span class="muted">or open an existing one:</span>
    <input id="openId" placeholder="session id" size="20"><button id="open">Open</button>
  </div>
  <pre id="initial" class="muted">Reactors load from GET /reactors …</pre>
</section>

<section>
  <h2>2. Send actions</h2>
  <div id="session" class="muted">No session yet.</div>
  <div id="buttons" class="row"></div>
  <textarea id="actionJson" spellcheck="false">{"type": "increase"}</textarea>
  <div class="row">
    <button class="primary" id="send">POST action</button>
    <label><input type="checkbox" id="wait"> ?wait=true</label>
    <span id="sendResult" class="muted"></span>
  </div>
</section>

<section>
  <h2>3. Live state</h2>
  <div class="row"><span id="streamStatus" class="muted">not connected</span></div>
  <pre id="state">—</pre>
  <div id="log"></div>
</section>

<script>
"use strict";
const $ = (id) => document.getElementById(id);
let reactors = [], current = null, source = null;

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = body; }
  const response = await fetch(path, init);
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch (_) {}
  if (!response.ok) {
    const error = json && json.error ? json.error.code + ": " + json.error.message : response.status + " " + text;
    throw new Error(error);
  }
  return json;
}

function logLine(text, cls) {
  const div = document.createElement("div");
  div.textContent = new Date().toLocaleTimeString() + "  " + text;
  if (cls) div.className = cls;
  $("log").prepend(div);
  while ($("log").childElementCount > 200) $("log").lastChild.remove();
}

async function loadReactors() {
  try {
    reactors = (await api("GET", "/reactors")).reactors;
    $("reactor").innerHTML = "";
    for (const r of reactors) {
      const option = document.createElement("option");
      option.value = r.name; option.textContent = r.name;
      $("reactor").append(option);
    }
    showReactor();
  } catch (e) { $("initial").textContent = "GET /reactors failed: " + e.message; $("initial").className = "error"; }
}

function showReactor() {
  const r = reactors.find((x) => x.name === $("reactor").value);
  if (!r) return;
  $("initial").className = "muted";
  $("initial").textContent = (r.description ? r.description + "\n" : "") + "initial state: " + JSON.stringify(r.initialState);
}

function showSession(session) {
  current = session;
  $("session").className = "";
  $("session").textContent = "session " + session.id + " (" + session.reactor + ")";
  const r = reactors.find((x) => x.name === session.reactor);
  $("buttons").innerHTML = "";
  for (const action of (r && r.actions) || []) {
    const button = document.createElement("button");
    button.textContent = action.type;
    button.title = JSON.stringify(action);
    button.onclick = () => { $("actionJson").value = JSON.stringify(action); send(); };
    $("buttons").append(button);
  }
  if (r && r.actions && r.actions.length) $("actionJson").value = JSON.stringify(r.actions[0]);
  watch(session.id);
}

function watch(id) {
  if (source) source.close();
  $("log").innerHTML = "";
  source = new EventSource("/sessions/" + encodeURIComponent(id) + "/events");
  source.onopen = () => { $("streamStatus").textContent = "connected"; };
  source.onerror = () => { $("streamStatus").textContent = "reconnecting …"; };
  source.addEventListener("state", (e) => {
    $("state").textContent = "version " + e.lastEventId + "\n" + JSON.stringify(JSON.parse(e.data), null, 2);
    logLine("state v" + e.lastEventId + "  " + e.data);
  });
  source.addEventListener("pulse", (e) => logLine("pulse " + e.data, "pulse"));
  source.addEventListener("end", () => { logLine("session deleted: stream ended"); source.close(); $("streamStatus").textContent = "ended"; });
  source.addEventListener("error", (e) => { if (e.data) { logLine("server closed the stream: " + e.data, "error"); source.close(); } });
}

async function send() {
  if (!current) { $("sendResult").textContent = "create or open a session first"; return; }
  const path = "/sessions/" + encodeURIComponent(current.id) + "/actions" + ($("wait").checked ? "?wait=true" : "");
  try {
    const result = await api("POST", path, $("actionJson").value);
    $("sendResult").className = "muted";
    $("sendResult").textContent = JSON.stringify(result);
  } catch (e) { $("sendResult").className = "error"; $("sendResult").textContent = e.message; }
}

$("reactor").onchange = showReactor;
$("create").onclick = async () => {
  const body = { reactor: $("reactor").value };
  if ($("sessionId").value.trim()) body.id = $("sessionId").value.trim();
  try { showSession(await api("POST", "/sessions", JSON.stringify(body))); }
  catch (e) { $("session").className = "error"; $("session").textContent = e.message; }
};
$("open").onclick = async () => {
  try { showSession(await api("GET", "/sessions/" + encodeURIComponent($("openId").value.trim()))); }
  catch (e) { $("session").className = "error"; $("session").textContent = e.message; }
};
$("send").onclick = send;
loadReactors();
</script>
</body>
</html>
"""#
}
