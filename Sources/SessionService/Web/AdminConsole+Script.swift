extension AdminConsole {
    /// The console's script (after ``WebScript/common``): the admin token, the connection and the
    /// session list (polled, retried with backoff, so a server restart heals by itself), and the
    /// selected session's live state, actions, stub mode, forced state and action log.
    static let script = #"""
const tokenKey = "reactor-server.adminToken";
// The tab's own storage: gone with the tab, never shared with other tabs, never in a URL.
let adminToken = sessionStorage.getItem(tokenKey) || "";
let reactorList = [];
let sessionRows = [];
let lastUpdated = "";
let selected = null;
let consoleStream = null;
let liveVersion = -1;
let stateEditorDirty = false;
let stubBusy = false;
let logSince = 0, logBusy = false, logAgain = false, logTimer = null, logCount = 0;
let pollTimer = null, pollFailures = 0, connected = false;
const wanted = new URL(location.href).searchParams.get("session");

function adminAPI(method, path, body) {
  return api(method, path, { headers: { Authorization: "Bearer " + adminToken }, body });
}
function adminPath(id, rest) { return "/admin/sessions/" + encodeURIComponent(id) + rest; }
/** Credentials for the session routes: none in the open access mode; a session token in token mode. */
function sessionCredentials(_id) { return {}; }
function setConnection(kind, text) { setStatus($("connection"), kind, text); }

async function poll() {
  clearTimeout(pollTimer);
  if (!adminToken) { connected = false; setConnection("idle", "not connected: type the admin token"); return; }
  let list;
  try {
    list = await adminAPI("GET", "/admin/sessions");
  } catch (error) {
    connected = false;
    if (error.status === 401) { setConnection("refused", "admin token refused: type the token the server printed at start"); return; }
    pollFailures += 1;
    const delay = Math.min(1000 * pollFailures, 5000);
    setConnection("unreachable", (error.status === 0 ? "server unreachable" : error.message) + ": retrying in " + delay / 1000 + " s");
    if (lastUpdated) $("sessionsNote").textContent = "As of " + lastUpdated + "; the list may be out of date.";
    pollTimer = setTimeout(poll, delay);
    return;
  }
  const reconnected = !connected;
  connected = true;
  pollFailures = 0;
  setConnection("connected", "connected");
  sessionRows = list.sessions;
  lastUpdated = clockTime();
  renderSessions();
  if (!reactorList.length) loadReactorList();
  if (!selected && wanted && sessionRows.some((row) => row.id === wanted)) select(wanted);
  if (selected) { syncSelected(); if (reconnected) loadLog(); }
  pollTimer = setTimeout(poll, sessionRows.length > 1000 ? 10000 : 2000);
}

async function loadReactorList() {
  try { reactorList = (await api("GET", "/reactors")).reactors; } catch (_) { return; }
  if (selected) renderExampleActions();
}

function renderSessions() {
  const filter = $("filter").value.trim();
  const matching = filter ? sessionRows.filter((row) => row.id.includes(filter)) : sessionRows;
  const shown = matching.slice(0, 200);
  // Rebuilding the rows must not take the keyboard focus away from the row it was on.
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.session : undefined;
  $("sessions").tBodies[0].replaceChildren(...shown.map((row) => {
    const line = node("tr");
    const pick = node("button", row.id, "pick");
    pick.type = "button";
    pick.dataset.session = row.id;
    pick.setAttribute("aria-label", "Open session " + row.id);
    if (selected && selected.id === row.id) { line.className = "selected"; pick.setAttribute("aria-current", "true"); }
    pick.addEventListener("click", () => select(row.id));
    const idCell = node("td");
    idCell.append(pick);
    if (row.unavailable) idCell.append(node("div", "unavailable: " + row.unavailable, "error"));
    line.append(idCell, node("td", row.reactor), node("td", String(row.version), "number"),
      node("td", String(row.subscribers), "number"), node("td", row.stub ? "on" : "", row.stub ? "stubbed" : ""));
    return line;
  }));
  if (focused) { const again = $("sessions").querySelector("button[data-session=\"" + CSS.escape(focused) + "\"]"); if (again) again.focus(); }
  let note = sessionRows.length + (sessionRows.length === 1 ? " session" : " sessions");
  if (filter) note += ", " + matching.length + " matching";
  if (shown.length < matching.length) note += ", showing the first " + shown.length;
  $("sessionsNote").textContent = note + "; updated " + lastUpdated + ".";
}

function syncSelected() {
  const row = sessionRows.find((candidate) => candidate.id === selected.id);
  if (!row) return;
  selected.reactor = row.reactor;
  if (!stubBusy) setStub(row.stub);
}

function setStub(on) {
  $("stub").checked = on;
  selected.stub = on;
  $("forceState").disabled = !on || !selected.usable;
  $("forceState").title = on ? "" : "Turn stub mode on to force a state";
}

function renderExampleActions() {
  const reactor = reactorList.find((candidate) => candidate.name === selected.reactor);
  const actions = (reactor && reactor.actions) || [];
  $("exampleActions").replaceChildren(...actions.map((action) => {
    const button = node("button", action.type);
    button.type = "button";
    button.setAttribute("aria-label", "Send " + JSON.stringify(action));
    button.addEventListener("click", () => { $("actionEditor").value = JSON.stringify(action); sendAction(); });
    return button;
  }));
  if (!$("actionEditor").value && actions.length) $("actionEditor").value = JSON.stringify(actions[0]);
  setDetailControls(selected.usable);
}

function setDetailControls(enabled) {
  for (const button of $("exampleActions").querySelectorAll("button")) button.disabled = !enabled;
  for (const id of ["actionEditor", "sendAction", "stub", "stateEditor", "versionSlider", "forkId", "fork"]) $(id).disabled = !enabled;
  $("forceState").disabled = !enabled || !selected.stub;
}

function select(id) {
  if (consoleStream) consoleStream.stop();
  clearTimeout(logTimer);
  const row = sessionRows.find((candidate) => candidate.id === id) || { id, reactor: "", stub: false };
  selected = { id, reactor: row.reactor, stub: row.stub, usable: true };
  liveVersion = -1;
  logSince = 0;
  logCount = 0;
  stateEditorDirty = false;
  resetTimeTravel();
  history.replaceState(null, "", "?session=" + encodeURIComponent(id));
  $("detailTitle").replaceChildren("Session ", node("code", id), " (" + row.reactor + ")");
  $("cards").hidden = false;
  $("liveVersion").textContent = "";
  $("liveState").textContent = "—";
  $("actionLog").tBodies[0].replaceChildren();
  for (const result of ["actionResult", "stubResult", "forkResult", "logNote"]) $(result).textContent = "";
  $("actionEditor").value = "";
  $("stateEditor").value = "";
  setStub(row.stub);
  renderExampleActions();
  renderSessions();
  consoleStream = new SessionStream(id, {
    onState: liveStateArrived,
    onStatus: detailStatus,
    probe: () => adminAPI("GET", adminPath(id, "/actions?limit=1&since=" + logSince)),
    // Open access mode: streams need no credential. Token mode would hand over a session token here.
    accessToken: () => null,
  });
  consoleStream.start();
  loadLog();
}

function detailStatus(kind, text) {
  setStatus($("streamStatus"), kind, text);
  const usable = kind !== "gone" && kind !== "ended" && kind !== "denied";
  if (selected && selected.usable !== usable) { selected.usable = usable; setDetailControls(usable); }
}

function liveStateArrived(version, state) {
  liveVersion = version;
  // The list is polled; the selected row follows the stream at once.
  const row = sessionRows.find((candidate) => candidate.id === selected.id);
  if (row && row.version !== version) { row.version = version; renderSessions(); }
  $("liveVersion").textContent = "version " + version;
  $("liveState").textContent = JSON.stringify(state, null, 2);
  if (!stateEditorDirty && document.activeElement !== $("stateEditor")) $("stateEditor").value = JSON.stringify(state, null, 2);
  rememberVersion(version, state);
  liveVersionMoved();
  loadLog();
}

async function sendAction() {
  if (!selected || !selected.usable) return;
  const id = selected.id;
  $("actionResult").className = "muted";
  $("actionResult").textContent = "sending …";
  try {
    const answer = await api("POST", "/sessions/" + encodeURIComponent(id) + "/actions", { body: $("actionEditor").value, headers: sessionCredentials(id) });
    if (!selected || selected.id !== id) return;
    $("actionResult").textContent = "accepted as action " + answer.seq + (selected.stub ? " (stub mode: recorded, not run)" : "");
    loadLog();
  } catch (error) {
    if (!selected || selected.id !== id) return;
    $("actionResult").className = "error";
    $("actionResult").textContent = error.message;
  }
}

$("tokenForm").addEventListener("submit", (event) => {
  event.preventDefault();
  adminToken = $("token").value.trim();
  sessionStorage.setItem(tokenKey, adminToken);
  $("token").value = "";
  $("token").placeholder = "set: kept in this tab";
  pollFailures = 0;
  poll();
});
$("forget").addEventListener("click", () => {
  adminToken = "";
  sessionStorage.removeItem(tokenKey);
  $("token").placeholder = "";
  clearTimeout(pollTimer);
  poll();
});
$("filter").addEventListener("input", renderSessions);
$("actionForm").addEventListener("submit", (event) => { event.preventDefault(); sendAction(); });
$("stateEditor").addEventListener("input", () => { stateEditorDirty = true; });
$("stub").addEventListener("change", async () => {
  const id = selected.id, enabled = $("stub").checked;
  stubBusy = true;
  try {
    const answer = await adminAPI("PUT", adminPath(id, "/stub"), { enabled });
    if (selected.id !== id) return;
    setStub(answer.stub);
    $("stubResult").className = "muted";
    $("stubResult").textContent = answer.stub ? "Stub mode on: actions are recorded, not run; states can be forced." : "Stub mode off: actions run again.";
  } catch (error) {
    if (selected.id !== id) return;
    setStub(!enabled);
    $("stubResult").className = "error";
    $("stubResult").textContent = error.message;
  } finally {
    stubBusy = false;
  }
});
$("forceForm").addEventListener("submit", async (event) => {
  event.preventDefault();
  const id = selected.id;
  try {
    const answer = await adminAPI("PUT", adminPath(id, "/state"), $("stateEditor").value);
    if (selected.id !== id) return;
    stateEditorDirty = false;
    $("stubResult").className = "muted";
    $("stubResult").textContent = "Forced: version " + answer.version + ".";
  } catch (error) {
    if (selected.id !== id) return;
    $("stubResult").className = "error";
    $("stubResult").textContent = error.message;
  }
});

poll();
"""#
}
