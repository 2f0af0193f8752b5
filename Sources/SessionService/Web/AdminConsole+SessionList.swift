extension AdminConsole {
    /// The console's session list: which rows the one `/events` stream follows (in memory, shown, within
    /// `sse.maxSessionsPerStream` and the request line), what its events do to the rows (a new version, a
    /// deleted session leaving), recovery when it breaks, and the table, updated in place.
    static let sessionListScript = #"""
        /** The stream's limit (sse.maxSessionsPerStream) and whether /events needs a session credential here. */
        async function loadStreamFacts() {
          const description = await api("GET", "/openapi.json");
          try {
            return streamFactsIn(description);
          } catch (_) {
            // A description without what the console looks for: read the list, do not stream.
            return { limit: 0, streamable: false };
          }
        }

        function streamFactsIn(description) {
          // Parameters may be written in place or as a $ref to #/components/parameters.
          const parameters = description.paths["/events"].get.parameters.map((parameter) =>
            parameter.$ref ? description.components.parameters[parameter.$ref.split("/").pop()] : parameter);
          const sessions = parameters.find((parameter) => parameter.name === "sessions");
          const schemes = Object.keys(description.components.securitySchemes || {});
          return { limit: sessions.schema.maxItems, streamable: schemes.every((name) => name === "adminToken") };
        }

        /** Rows the stream can follow: in memory (a stored-only session would be loaded back by it) and readable. */
        function followable(row) { return row.resident !== false && !row.unavailable; }

        /** The rows shown (filtered, at most 200), in order. */
        function shownRows() {
          const filter = $("filter").value.trim();
          const matching = filter ? sessionRows.filter((row) => row.id.includes(filter)) : sessionRows;
          return { matching, shown: matching.slice(0, 200) };
        }

        /** Follows the first sse.maxSessionsPerStream followable rows shown over the one stream. */
        function followShown() {
          if (!connected || !streamFacts || !streamFacts.streamable || document.hidden) return listStream.stop();
          const ids = [];
          let length = 0;
          for (const row of shownRows().shown) {
            if (ids.length === streamFacts.limit) break;
            if (!followable(row)) continue;
            // The request line must fit http.maxRequestLineBytes (8 KiB by default, else 414): ids of up to 64
            // characters fill ~6.5 KB at the default 100 sessions.
            length += encodeURIComponent(row.id).length + 1;
            if (length > 7000) break;
            ids.push(row.id);
          }
          if (listStream.follow(ids)) listReadWhileLive = false;
          if (!ids.length) setConnection("connected", "connected: no session in memory to follow");
          else if (listStream.state === "connecting") {
            setConnection("connecting", "connected: opening the list's stream …");
          }
          renderSessions();
        }

        function listLive() {
          // Read once more with the stream open, so that every subscriber count includes this console's own.
          if (!listReadWhileLive) refreshList(); else renderSessions();
          const count = listStream.ids.length + (listStream.ids.length === 1 ? " session" : " sessions");
          setConnection("connected", "connected: versions live over one stream ("
            + count + (listStream.resumed ? ", resumed where it was)" : ")"));
        }

        function listState(id, version) {
          streamBreaks = 0;
          streamed.set(id, version);
          const row = sessionRows.find((candidate) => candidate.id === id);
          if (!row || version < row.version) return;
          row.version = version;
          row.via = "stream";
          scheduleRender();
        }

        /**
         * A part ended: a deleted (or vanished) session leaves the list at once, and the note says so; one ended
         * by an error (it left memory, moved, storage failed) shows why until the next read of the list, which
         * follows it again on a new stream if it is still listed in memory.
         */
        function listEnded(id, reason) {
          streamed.delete(id);
          if (reason === "session deleted" || reason === "unknown_session") {
            sessionRows = sessionRows.filter((candidate) => candidate.id !== id);
            listNews = "session " + id + (reason === "session deleted" ? " deleted at " : " gone at ") + clockTime();
          }
          scheduleRender();
        }

        /** The stream broke (server restart, refusal): read the list again, which re-opens it with its cursor. */
        function listBroken(why) {
          renderSessions();
          if (!connected) return;
          streamBreaks += 1;
          const delay = streamBreaks <= 1 ? 0 : Math.min(1000 * 2 ** (streamBreaks - 2), 10000);
          setConnection("retrying",
            "list stream: " + why + (delay ? ": again in " + delay / 1000 + " s" : ": reconnecting …"));
          clearTimeout(pollTimer);
          pollTimer = setTimeout(refreshList, delay);
        }

        function scheduleRender() {
          if (renderTimer === null) renderTimer = setTimeout(() => { renderTimer = null; renderSessions(); }, 50);
        }

        /**
         * The table's row elements by session id: kept across renders, so a row being clicked or focused stays the
         * same element.
         */
        const rowElements = new Map();

        function renderSessions() {
          clearTimeout(renderTimer);
          renderTimer = null;
          const { matching, shown } = shownRows();
          const live = new Set(listStream.state === "live" ? listStream.ids : []);
          let liveShown = 0;
          const lines = shown.map((row) => {
            // A part of the stream that ended says why until a new stream follows the session again.
            const ended = live.has(row.id) ? listStream.ended.get(row.id) : undefined;
            const followed = live.has(row.id) && !ended;
            if (followed) liveShown += 1;
            return renderRow(row, followed, ended);
          });
          const body = $("sessions").tBodies[0];
          const kept = new Set(shown.map((row) => row.id));
          for (const id of rowElements.keys()) if (!kept.has(id)) rowElements.delete(id);
          // Moving a focused row would take the keyboard focus away: the rows move only when the list changed.
          if (lines.length !== body.rows.length || lines.some((line, index) => body.rows[index] !== line)) {
            const active = document.activeElement;
            const focused = active && active.dataset ? active.dataset.session : undefined;
            body.replaceChildren(...lines);
            if (focused) {
              const again = body.querySelector("button[data-session=\"" + CSS.escape(focused) + "\"]");
              if (again) again.focus();
            }
          }
          let note = sessionRows.length + (sessionRows.length === 1 ? " session" : " sessions");
          if ($("filter").value.trim()) note += ", " + matching.length + " matching";
          if (shown.length < matching.length) note += ", showing the first " + shown.length;
          if (streamFacts && !streamFacts.streamable) {
            note += "; read every 2 s (in this access mode a stream needs each session's own credential)";
          } else if (liveShown) {
            note += "; " + liveShown + " live over one stream (counted among their subscribers)";
            const left = shown.filter(followable).length - liveShown;
            if (left > 0) {
              note += "; " + left + " more read every 10 s: a stream follows at most " + streamFacts.limit
                + " (sse.maxSessionsPerStream), filter to follow others";
            }
          }
          const news = listNews ? " " + listNews[0].toUpperCase() + listNews.slice(1) + "." : "";
          $("sessionsNote").textContent = note + "; list read " + lastUpdated + "." + news;
        }

        /** The row of one session, made once and updated in place; `ended`: why its part of the stream ended. */
        function renderRow(row, live, ended) {
          let line = rowElements.get(row.id);
          if (!line) {
            line = node("tr");
            line.dataset.session = row.id;
            const pick = node("button", row.id, "pick");
            pick.type = "button";
            pick.dataset.session = row.id;
            pick.setAttribute("aria-label", "Open session " + row.id);
            pick.addEventListener("click", () => select(row.id));
            const idCell = node("td");
            idCell.append(pick, node("div"));
            line.append(idCell, node("td"), node("td", "", "number"), node("td", "", "number"), node("td"));
            rowElements.set(row.id, line);
          }
          const [idCell, reactor, version, subscribers, stub] = line.cells;
          const isSelected = Boolean(selected && selected.id === row.id);
          line.className = isSelected ? "selected" : "";
          if (isSelected) idCell.firstChild.setAttribute("aria-current", "true");
          else idCell.firstChild.removeAttribute("aria-current");
          const note = idCell.lastChild;
          note.className = row.unavailable ? "error" : "muted";
          note.textContent =
            row.unavailable ? "unavailable: " + row.unavailable : ended ? "not followed: " + ended : "";
          reactor.textContent = row.reactor;
          version.textContent = String(row.version);
          version.dataset.via = row.via || "list";
          version.className = live ? "number" : "number stale";
          if (live) version.dataset.live = "true"; else delete version.dataset.live;
          version.title = live ? "live over the console's stream"
            : row.resident === false ? "not in memory, so it cannot change until used: read with the list"
            : "read with the list";
          subscribers.textContent = String(row.subscribers);
          stub.textContent = row.stub ? "on" : "";
          stub.className = row.stub ? "stubbed" : "";
          return line;
        }
        """#
}
