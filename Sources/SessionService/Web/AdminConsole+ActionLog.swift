extension AdminConsole {
    /// The console's action log of the selected session: fetched from `since` the last seq seen
    /// (following `next` when a page is full), on every live state, after each send and every 1.5 s
    /// (stubbed actions change no state); the newest 500 rows are kept.
    static let actionLogScript = #"""
        async function loadLog() {
          if (!selected) return;
          if (logBusy) { logAgain = true; return; }
          logBusy = true;
          clearTimeout(logTimer);
          const id = selected.id;
          try {
            for (;;) {
              const page = await adminAPI("GET", adminPath(id, "/actions?since=" + logSince));
              if (!selected || selected.id !== id) return;
              appendLog(page.actions);
              if (page.actions.length) logSince = page.actions[page.actions.length - 1].seq;
              if (page.next === undefined) break;
              logSince = page.next;
            }
            loadTimers();
            $("logNote").className = "muted";
            $("logNote").textContent =
              logCount + (logCount === 1 ? " action" : " actions") + "; updated " + clockTime() + ".";
          } catch (error) {
            if (selected && selected.id === id) {
              $("logNote").className = "error";
              $("logNote").textContent = "Action log: " + error.message;
            }
          } finally {
            logBusy = false;
            if (selected && selected.id === id && selected.usable) {
              if (logAgain) { logAgain = false; loadLog(); }
              else logTimer = setTimeout(loadLog, connected ? 1500 : 4000);
            }
          }
        }

        function appendLog(entries) {
          const box = $("actionLogBox");
          const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
          const body = $("actionLog").tBodies[0];
          for (const entry of entries) {
            const at = node("td", new Date(entry.at).toLocaleTimeString());
            at.title = entry.at;
            const note = entry.crashed ? "crashed" : entry.stubbed ? "stubbed" : entry.interrupted ? "interrupted"
              : entry.timer !== undefined ? "timer " + entry.timer : "";
            const line = node("tr", undefined, entry.crashed ? "crashed" : undefined);
            const noteCell = node("td", note, entry.crashed ? "error" : note ? "stubbed" : "");
            line.append(
              node("td", String(entry.seq), "number"), at, node("td", JSON.stringify(entry.action)), noteCell);
            body.append(line);
            logCount += 1;
          }
          while (body.rows.length > 500) body.deleteRow(0);
          if (atEnd) box.scrollTop = box.scrollHeight;
        }
        """#
}
