extension WebPage {
    /// The page's own script (after ``WebScript/common``): the session in the URL, the list of
    /// sessions this browser opened (localStorage), the reactor picker, actions and the live state.
    static let script = #"""
        let reactors = [];
        let current = null;
        let stream = null;
        let opening = 0;
        let retryTimer = null;
        let shownVersion = -1;
        let streamKind = "";

        /**
         * Credentials for a session in the token access mode (its token, remembered at creation); none in open
         * mode.
         */
        function sessionHeaders(id) {
          const entry = remembered.find(id);
          return entry && entry.token ? { Authorization: "Bearer " + entry.token } : {};
        }

        function sessionPath(id) { return "/sessions/" + encodeURIComponent(id); }
        function urlSession() { return new URL(location.href).searchParams.get("session"); }

        function setURL(id, push) {
          const url = new URL(location.href);
          if (id) url.searchParams.set("session", id); else url.searchParams.delete("session");
          if (url.href === location.href) return;
          if (push) history.pushState({ session: id }, "", url); else history.replaceState({ session: id }, "", url);
        }

        async function loadReactors() {
          try {
            reactors = (await api("GET", "/reactors")).reactors;
          } catch (error) {
            $("reactorInfo").className = "error";
            $("reactorInfo").textContent = "Cannot load the reactors (" + error.message + "): retrying in 2 s.";
            setTimeout(loadReactors, 2000);
            return;
          }
          const select = $("reactor");
          select.replaceChildren(...reactors.map((reactor) => {
            const option = node("option", reactor.name);
            option.value = reactor.name;
            return option;
          }));
          select.disabled = false;
          $("create").disabled = false;
          if (current) select.value = current.reactor;
          describeReactor();
          if (current) renderButtons();
        }

        function describeReactor() {
          const reactor = reactors.find((candidate) => candidate.name === $("reactor").value);
          $("reactorInfo").className = "muted";
          $("reactorInfo").textContent = reactor
            ? (reactor.description ? reactor.description + " " : "")
              + "Initial state: " + JSON.stringify(reactor.initialState)
            : "";
          const takesParams = Boolean(reactor && reactor.params);
          $("paramsField").hidden = !takesParams;
          $("params").value = takesParams ? JSON.stringify(reactor.params) : "";
        }

        function renderButtons() {
          const reactor = current && reactors.find((candidate) => candidate.name === current.reactor);
          const actions = (reactor && reactor.actions) || [];
          $("buttons").replaceChildren(...actions.map((action) => {
            const button = node("button", action.type);
            button.type = "button";
            button.title = "Send " + JSON.stringify(action);
            button.setAttribute("aria-label", "Send " + JSON.stringify(action));
            button.addEventListener("click", () => { $("actionJson").value = JSON.stringify(action); send(); });
            return button;
          }));
          if (!$("actionJson").value && actions.length) $("actionJson").value = JSON.stringify(actions[0]);
          setControls(usable());
        }

        function usable() { return current !== null && current.usable; }

        function setControls(enabled) {
          for (const control of $("buttons").querySelectorAll("button")) control.disabled = !enabled;
          $("send").disabled = !enabled;
          $("actionJson").disabled = !enabled;
          $("delete").disabled = !enabled;
        }

        function showState(version, state) {
          shownVersion = version;
          $("version").textContent = "version " + version;
          $("state").textContent = JSON.stringify(state, null, 2);
          const loading = state !== null && typeof state === "object" && state.isLoading === true;
          $("spinner").classList.toggle("hidden", !loading);
          const failure =
            state !== null && typeof state === "object" && typeof state.error === "string" ? state.error : "";
          $("stateError").textContent = failure ? "Error in the state: " + failure : "";
          $("stateError").classList.toggle("hidden", !failure);
        }

        function logLine(text, className) {
          const line = node("div", clockTime() + "  " + text, className);
          $("log").prepend(line);
          while ($("log").childElementCount > 200) $("log").lastChild.remove();
        }

        function clearSession(title) {
          if (stream) stream.stop();
          stream = null;
          clearTimeout(retryTimer);
          current = null;
          shownVersion = -1;
          streamKind = "";
          $("sessionTitle").textContent = title;
          $("buttons").replaceChildren();
          $("actionJson").value = "";
          $("sendResult").textContent = "";
          $("version").textContent = "";
          $("state").textContent = "—";
          $("spinner").classList.add("hidden");
          $("stateError").classList.add("hidden");
          $("log").replaceChildren();
          $("sessionBody").hidden = true;
          $("stateHeading").textContent = "Live state";
          $("stateBox").classList.remove("stale");
          setControls(false);
        }

        function streamStatus(kind, text) {
          setStatus($("streamStatus"), kind, text);
          if (!current) return;
          if (kind === "live" && streamKind === "retrying") logLine("reconnected");
          streamKind = kind;
          const usableNow = kind !== "gone" && kind !== "ended" && kind !== "denied";
          if (current.usable !== usableNow) {
            current.usable = usableNow;
            setControls(usableNow);
            // What is left on screen is the last state seen, no longer live.
            $("stateHeading").textContent = usableNow ? "Live state" : "Last known state";
            $("stateBox").classList.toggle("stale", !usableNow);
            if (!usableNow) { $("sendResult").textContent = ""; remembered.mark(current.id, true); renderList(); }
          }
          if (kind === "ended") logLine("session deleted: the stream ended");
        }

        /**
         * Opens a session by id: shows it, puts it in the URL (a new history entry when `push`) and follows its
         * states.
         */
        async function openSession(id, push) {
          const attempt = ++opening;
          clearSession("Session " + id);
          setURL(id, push);
          renderList();
          document.title = id + " · reactor-server";
          setStatus($("streamStatus"), "connecting", "loading the session …");
          let session;
          try {
            session = await api("GET", sessionPath(id), { headers: sessionHeaders(id) });
          } catch (error) {
            if (attempt !== opening) return;
            if (error.status === 404) {
              setStatus($("streamStatus"), "gone",
                "session " + id + " does not exist (deleted, expired, or never created on this server)");
              if (remembered.find(id)) { remembered.mark(id, true); renderList(); }
              return;
            }
            const why = error.status === 0 ? "server unreachable" : error.message;
            const kind = error.status === 401 || error.status === 403 ? "denied" : "retrying";
            setStatus($("streamStatus"), kind, why + (error.status === 0 ? ": retrying in 2 s" : ""));
            if (error.status === 0) {
              retryTimer = setTimeout(() => { if (attempt === opening) openSession(id, false); }, 2000);
            }
            return;
          }
          if (attempt !== opening) return;
          current = { id: session.id, reactor: session.reactor, usable: true };
          remembered.remember(session);
          remembered.mark(session.id, false);
          renderList();
          $("sessionTitle").replaceChildren("Session ", node("code", session.id), " (" + session.reactor + ")");
          if (reactors.some((reactor) => reactor.name === session.reactor)) {
            $("reactor").value = session.reactor;
            describeReactor();
          }
          renderButtons();
          showState(session.version, session.state);
          logLine("opened at version " + session.version + "  " + JSON.stringify(session.state));
          $("sessionBody").hidden = false;
          stream = new SessionStream(session.id, {
            onState(version, state) {
              // A reconnected stream starts with the current state again: show it, log only what is new.
              if (version !== shownVersion) logLine("state v" + version + "  " + JSON.stringify(state));
              showState(version, state);
            },
            onPulse(pulse) {
              logLine("pulse " + pulse.name + " = " + JSON.stringify(pulse.value) + " (#" + pulse.count + ")", "pulse");
            },
            onStatus: streamStatus,
            probe: () => api("GET", sessionPath(session.id), { headers: sessionHeaders(session.id) }),
            accessToken: () => (remembered.find(session.id) || {}).token,
          });
          stream.start();
        }

        async function send() {
          if (!usable()) return;
          const id = current.id;
          const path = sessionPath(id) + "/actions" + ($("wait").checked ? "?wait=true" : "");
          $("sendResult").className = "muted";
          $("sendResult").textContent = "sending …";
          try {
            const result = await api("POST", path, { body: $("actionJson").value, headers: sessionHeaders(id) });
            if (!current || current.id !== id) return;
            $("sendResult").textContent = result.version === undefined
              ? "accepted as action " + result.seq
              : "action " + result.seq + " gave version " + result.version;
          } catch (error) {
            if (!current || current.id !== id) return;
            $("sendResult").className = "error";
            $("sendResult").textContent = error.message;
          }
        }

        $("reactor").addEventListener("change", describeReactor);
        $("createForm").addEventListener("submit", async (event) => {
          event.preventDefault();
          const body = { reactor: $("reactor").value };
          const id = $("sessionId").value.trim();
          if (id) body.id = id;
          if (!$("paramsField").hidden && $("params").value.trim()) {
            try { body.params = JSON.parse($("params").value); } catch (error) {
              $("reactorInfo").className = "error";
              $("reactorInfo").textContent = "The params are not JSON: " + error.message;
              return;
            }
          }
          $("reactorInfo").className = "muted";
          $("reactorInfo").textContent = "creating …";
          try {
            const session = await api("POST", "/sessions", { body });
            remembered.remember(session);
            $("sessionId").value = "";
            describeReactor();
            openSession(session.id, true);
          } catch (error) {
            $("reactorInfo").className = "error";
            $("reactorInfo").textContent = "Not created: " + error.message;
          }
        });
        $("openForm").addEventListener("submit", (event) => {
          event.preventDefault();
          const id = $("openId").value.trim();
          if (!id) return;
          $("openId").value = "";
          openSession(id, true);
        });
        $("sendForm").addEventListener("submit", (event) => { event.preventDefault(); send(); });
        $("delete").addEventListener("click", async () => {
          if (!usable()) return;
          const id = current.id;
          try {
            await api("DELETE", sessionPath(id), { headers: sessionHeaders(id) });
            $("sendResult").className = "muted";
            $("sendResult").textContent = "deleted";
          } catch (error) {
            $("sendResult").className = "error";
            $("sendResult").textContent = error.message;
          }
        });
        window.addEventListener("popstate", () => {
          const id = urlSession();
          if (id) {
            openSession(id, false);
          } else {
            clearSession("No session open");
            setStatus($("streamStatus"), "idle", "Create a session or open one.");
            renderList();
          }
        });
        // Another tab opened or forgot a session: show the same list here.
        window.addEventListener("storage", (event) => { if (event.key === remembered.key) renderList(); });

        renderList();
        loadReactors();
        if (urlSession()) openSession(urlSession(), false);
        """#
}
