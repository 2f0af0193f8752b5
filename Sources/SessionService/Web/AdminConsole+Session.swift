extension AdminConsole {
    /// The selected session in the console: picking it, its live state (over its event stream, or by
    /// polling the admin API where the access mode keeps the stream from the console), actions sent
    /// by button or JSON, stub mode and the forced state.
    static let sessionScript = #"""
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
          for (const id of ["actionEditor", "sendAction", "stub", "stateEditor"]) $(id).disabled = !enabled;
          for (const id of ["versionSlider", "followLive", "forkId", "fork"]) $(id).disabled = !enabled || !historyKept;
          $("forceState").disabled = !enabled || !selected.stub;
        }

        function select(id) {
          if (consoleStream) consoleStream.stop();
          clearTimeout(logTimer);
          const row = sessionRows.find((candidate) => candidate.id === id) || { id, reactor: "", stub: false };
          selected = { id, reactor: row.reactor, stub: row.stub, usable: true, polled: false };
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
          $("timers").tBodies[0].replaceChildren();
          for (const result of ["actionResult", "stubResult", "forkResult", "logNote", "timersNote"]) {
            $(result).textContent = "";
          }
          $("actionEditor").value = "";
          $("stateEditor").value = "";
          setStub(row.stub);
          renderExampleActions();
          renderSessions();
          $("quarantine").hidden = true;
          loadLog();
          if (row.unavailable) return showQuarantine(row);
          // The access mode wants each session's own credential for its stream (openapi.json says so): no request
          // that must fail, the admin routes straight away.
          if (streamFacts && !streamFacts.streamable) return detailStatus("denied", "");
          consoleStream = new SessionStream(id, {
            onState: liveStateArrived,
            onStatus: detailStatus,
            // The session route, as the stream sees it: 401/403 means the access mode wants the session's credential.
            probe: () => api("GET", "/sessions/" + encodeURIComponent(id), { headers: sessionCredentials(id) }),
            accessToken: () => null,
          });
          consoleStream.start();
        }

        function detailStatus(kind, text) {
          if (kind === "denied" && selected) {
            // Token and jwt modes: the stream needs the session's own credential, which the console does not hold;
            // the admin routes still show every version, so the live state is followed through them.
            selected.polled = true;
            setStatus($("streamStatus"), "polled", "following by polling the admin API every 2 s "
              + "(in this access mode the event stream needs the session's own token)");
            followByPolling();
            return;
          }
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
          if (!stateEditorDirty && document.activeElement !== $("stateEditor")) {
            $("stateEditor").value = JSON.stringify(state, null, 2);
          }
          rememberVersion(version, state);
          liveVersionMoved();
          loadLog();
        }

        /** Polled mode: shows the version the session list reports, fetched through time travel. */
        async function followByPolling() {
          const id = selected.id;
          const row = sessionRows.find((candidate) => candidate.id === id);
          if (!row) {
            if (connected) {
              setStatus($("streamStatus"), "gone", "session " + id + " is no longer listed (deleted or expired)");
              selected.usable = false;
              setDetailControls(false);
            }
            return;
          }
          if (row.version === liveVersion) return;
          if (!historyKept) return showUnreadableVersion(row.version);
          try {
            const state = await stateAt(id, row.version);
            if (selected && selected.id === id && row.version > liveVersion) liveStateArrived(row.version, state);
          } catch (error) {
            if (!selected || selected.id !== id) return;
            if (error.code === "memory_only") return showUnreadableVersion(row.version);
            setStatus($("streamStatus"), "error", "cannot read version " + row.version + ": " + error.message);
          }
        }

        /** Without a journal no version can be read back: the list's version is all there is to show. */
        function showUnreadableVersion(version) {
          liveVersion = version;
          $("liveVersion").textContent = "version " + version;
          $("liveState").textContent =
            "(the state cannot be read here: the server keeps no history, storage.memoryOnly)";
          loadLog();
        }

        async function sendAction() {
          if (!selected || !selected.usable) return;
          const id = selected.id;
          $("actionResult").className = "muted";
          $("actionResult").textContent = "sending …";
          try {
            const answer = await api("POST", "/sessions/" + encodeURIComponent(id) + "/actions", {
              body: $("actionEditor").value, headers: sessionCredentials(id),
            });
            if (!selected || selected.id !== id) return;
            $("actionResult").textContent =
              "accepted as action " + answer.seq + (selected.stub ? " (stub mode: recorded, not run)" : "");
            loadLog();
          } catch (error) {
            if (!selected || selected.id !== id) return;
            $("actionResult").className = "error";
            $("actionResult").textContent = error.message;
          }
        }

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
            $("stubResult").textContent = answer.stub
              ? "Stub mode on: actions are recorded, not run; states can be forced."
              : "Stub mode off: actions run again.";
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
        """#
}
