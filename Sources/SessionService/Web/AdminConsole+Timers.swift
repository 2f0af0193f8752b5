extension AdminConsole {
    /// The console's pending timers of the selected session (`GET …/timers`), read with its action log, each
    /// with a button that cancels it (`DELETE …/timers/{name}`).
    static let timersScript = #"""
        async function loadTimers() {
          if (!selected) return;
          const id = selected.id;
          // A quarantined session answers 409 to everything but its log: its timers wait until it is released.
          const row = sessionRows.find((candidate) => candidate.id === id);
          if (selected.quarantined || (row && row.unavailable)) {
            $("timers").tBodies[0].replaceChildren();
            $("timersNote").className = "muted";
            $("timersNote").textContent = "Quarantined: its timers fire once it is released.";
            return;
          }
          try {
            const answer = await adminAPI("GET", adminPath(id, "/timers"));
            if (!selected || selected.id !== id) return;
            renderTimers(answer.timers);
          } catch (error) {
            if (!selected || selected.id !== id) return;
            $("timersNote").className = "error";
            $("timersNote").textContent = "Timers: " + error.message;
          }
        }

        function renderTimers(timers) {
          $("timers").tBodies[0].replaceChildren(...timers.map((timer) => {
            const at = node("td", new Date(timer.at).toLocaleTimeString());
            at.title = timer.at;
            const cancel = node("button", "Cancel");
            cancel.type = "button";
            cancel.disabled = !selected.usable;
            cancel.setAttribute("aria-label", "Cancel timer " + timer.name);
            cancel.addEventListener("click", () => cancelTimer(timer.name));
            const cell = node("td");
            cell.append(cancel);
            const line = node("tr");
            line.append(node("td", timer.name), at, node("td", JSON.stringify(timer.action)), cell);
            return line;
          }));
          if ($("timersNote").className !== "error" || timers.length) {
            $("timersNote").className = "muted";
            $("timersNote").textContent = timers.length === 1 ? "1 pending timer."
              : timers.length ? timers.length + " pending timers." : "No pending timers.";
          }
        }

        async function cancelTimer(name) {
          if (!selected) return;
          const id = selected.id;
          try {
            await adminAPI("DELETE", adminPath(id, "/timers/" + encodeURIComponent(name)));
            if (!selected || selected.id !== id) return;
            await loadTimers();
            $("timersNote").className = "muted";
            $("timersNote").textContent = "Cancelled timer " + name + ".";
          } catch (error) {
            if (!selected || selected.id !== id) return;
            $("timersNote").className = "error";
            $("timersNote").textContent = "Cancel " + name + ": " + error.message;
            loadTimers();
          }
        }
        """#
}
