extension AdminConsole {
    /// The console's script (after ``WebScript/common``): its state, the admin token, the connection and
    /// the session list (polled, retried with backoff, so a server restart heals by itself).
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
  if (selected) { syncSelected(); if (reconnected) loadLog(); if (selected.polled) followByPolling(); }
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
"""#
}
