extension AdminConsole {
    /// The console's script (after ``WebScript/common``): its state, the admin token, the connection and
    /// reading the session list through `GET /admin/sessions` (on connect, every 10 s for new sessions,
    /// subscribers and stub flags, on demand; retried with backoff, so a server restart heals by itself);
    /// its versions stay live over one `/events` stream (``sessionListScript``).
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
        // What /openapi.json says: how many sessions one /events stream takes, and whether streams need a
        // session credential.
        let streamFacts = null;
        // Versions the stream delivered, by session: a list read just before a new state must not move a row back.
        const streamed = new Map();
        let streamBreaks = 0, renderTimer = null, filterTimer = null, listReadWhileLive = false;
        // The last change the stream told of that the table no longer shows (a session deleted).
        let listNews = "";
        const listStream = new ListStream({
          onLive: listLive, onState: listState, onEnd: listEnded, onBroken: listBroken,
        });
        const wanted = new URL(location.href).searchParams.get("session");

        function adminAPI(method, path, body) {
          return api(method, path, { headers: { Authorization: "Bearer " + adminToken }, body });
        }
        function adminPath(id, rest) { return "/admin/sessions/" + encodeURIComponent(id) + rest; }
        /** Credentials for the session routes: none in the open access mode; a session token in token mode. */
        function sessionCredentials(_id) { return {}; }
        function setConnection(kind, text) { setStatus($("connection"), kind, text); }

        /** Reads the session list, then follows the shown sessions over the one stream (or says why it cannot). */
        async function refreshList() {
          clearTimeout(pollTimer);
          if (!adminToken) {
            connected = false;
            listStream.stop();
            setConnection("idle", "not connected: type the admin token");
            return;
          }
          if (document.hidden) { listStream.stop(); setConnection("idle", "paused while this tab is hidden"); return; }
          let list, liveAtRead;
          try {
            if (!streamFacts) streamFacts = await loadStreamFacts();
            liveAtRead = listStream.state === "live";
            list = await adminAPI("GET", "/admin/sessions");
          } catch (error) {
            connected = false;
            listStream.stop();
            if (error.status === 401) {
              setConnection("refused", "admin token refused: type the token the server printed at start");
              return;
            }
            pollFailures += 1;
            const delay = Math.min(1000 * pollFailures, 5000);
            const why = error.status === 0 ? "server unreachable" : error.message;
            setConnection("unreachable", why + ": retrying in " + delay / 1000 + " s");
            if (lastUpdated) $("sessionsNote").textContent = "As of " + lastUpdated + "; the list may be out of date.";
            clearTimeout(pollTimer);
            pollTimer = setTimeout(refreshList, delay);
            return;
          }
          listReadWhileLive = liveAtRead;
          const reconnected = !connected;
          connected = true;
          pollFailures = 0;
          for (const row of list.sessions) {
            const seen = streamed.get(row.id);
            row.via = seen !== undefined && seen >= row.version ? "stream" : "list";
            if (seen !== undefined && seen > row.version) row.version = seen;
          }
          sessionRows = list.sessions;
          lastUpdated = clockTime();
          if (!streamFacts.streamable) setConnection("connected", "connected: the list is read every 2 s");
          renderSessions();
          followShown();
          if (!reactorList.length) loadReactorList();
          if (!selected && wanted && sessionRows.some((row) => row.id === wanted)) select(wanted);
          if (selected) { syncSelected(); if (reconnected) loadLog(); if (selected.polled) followByPolling(); }
          // Reads may overlap (a click, the stream opening): the last one to finish sets the one timer.
          clearTimeout(pollTimer);
          const pollEvery = !streamFacts.streamable ? 2000 : sessionRows.length > 1000 ? 30000 : 10000;
          pollTimer = setTimeout(refreshList, pollEvery);
        }

        async function loadReactorList() {
          try { reactorList = (await api("GET", "/reactors")).reactors; } catch (_) { return; }
          if (selected) renderExampleActions();
        }

        $("tokenForm").addEventListener("submit", (event) => {
          event.preventDefault();
          adminToken = $("token").value.trim();
          sessionStorage.setItem(tokenKey, adminToken);
          $("token").value = "";
          $("token").placeholder = "set: kept in this tab";
          pollFailures = 0;
          refreshList();
        });
        $("forget").addEventListener("click", () => {
          adminToken = "";
          sessionStorage.removeItem(tokenKey);
          $("token").placeholder = "";
          clearTimeout(pollTimer);
          refreshList();
        });
        $("refresh").addEventListener("click", () => { pollFailures = 0; refreshList(); });
        $("filter").addEventListener("input", () => {
          renderSessions();
          // The stream follows what is shown: re-opened once typing pauses, not at every key.
          clearTimeout(filterTimer);
          filterTimer = setTimeout(followShown, 400);
        });
        // A hidden tab lets go of its stream: a session with a subscriber never expires or leaves memory.
        document.addEventListener("visibilitychange", () => { if (adminToken) refreshList(); });
        """#
}
