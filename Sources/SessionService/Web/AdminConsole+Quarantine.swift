extension AdminConsole {
    /// A session a crash of its reactor quarantined, in the console: what crashed it (the reason, the
    /// phase, seq or version, signal and time, and the crashed action, marked in the log), time travel
    /// up to its last good version, and what an operator can do: release it (after deploying a fix),
    /// fork it at the last good version, or delete it. Nothing opens its event stream (it answers 409).
    static let quarantineScript = #"""
        /**
         * Shows the selected quarantined session: no stream, no actions; the log, past versions and the three
         * ways out.
         */
        function showQuarantine(row) {
          selected.usable = false;
          selected.quarantined = true;
          setDetailControls(false);
          const crash = row.crash;
          setStatus($("streamStatus"), "error",
            "quarantined: it answers 409 session_unavailable until released or deleted");
          $("quarantine").hidden = false;
          $("quarantineReason").textContent = row.unavailable;
          $("crashFacts").replaceChildren();
          $("releaseResult").textContent = "";
          const releasable = Boolean(crash);
          $("release").disabled = !releasable;
          $("forkGood").disabled = !releasable;
          if (crash) {
            const facts = [["what ran", crash.phase], ["action seq", crash.seq || "—"],
              ["version", crash.version || "—"],
              ["signal", crash.signal], ["when", crash.at], ["crashes", crash.crashes],
              ["last good version", crash.lastGoodVersion]];
            $("crashFacts").replaceChildren(...facts.map(([name, value]) => node("li", name + ": " + value)));
            $("forkGood").textContent = "Fork at version " + crash.lastGoodVersion;
          } else {
            const damaged = "Not a crash of its reactor (its stored history is damaged): only DELETE helps.";
            $("crashFacts").replaceChildren(node("li", damaged));
          }
          $("liveState").textContent = "(not loaded: quarantined)";
          $("liveVersion").textContent = "";
          // Stored versions up to the last good one can still be read back: the slider goes that far.
          if (crash && historyKept) {
            liveVersion = crash.lastGoodVersion;
            for (const id of ["versionSlider", "followLive", "forkId", "fork"]) $(id).disabled = false;
            liveVersionMoved();
          }
        }

        async function quarantineAction(run, done) {
          if (!selected) return;
          const id = selected.id;
          $("releaseResult").className = "muted";
          $("releaseResult").textContent = "…";
          try {
            const message = await run(id);
            await refreshList();
            done(id, message);
          } catch (error) {
            if (!selected || selected.id !== id) return;
            $("releaseResult").className = "error";
            $("releaseResult").textContent = error.message;
          }
        }

        $("release").addEventListener("click", () => quarantineAction(
          async (id) => {
            const session = await adminAPI("POST", adminPath(id, "/release"));
            return "Released: it loads again at version " + session.version + "; its crash records are deleted.";
          },
          (id, message) => {
            select(id);
            $("actionResult").className = "ok";
            $("actionResult").textContent = message;
          }));
        $("forkGood").addEventListener("click", () => quarantineAction(
          async (id) => {
            const row = sessionRows.find((candidate) => candidate.id === id);
            const version = row && row.crash ? row.crash.lastGoodVersion : 0;
            const body = { version };
            if ($("forkId").value.trim()) body.id = $("forkId").value.trim();
            const session = await adminAPI("POST", adminPath(id, "/fork"), body);
            return { id: session.id, text: "Forked from " + id + " at its last good version " + version + "." };
          },
          (_id, fork) => {
            select(fork.id);
            $("forkResult").className = "ok";
            $("forkResult").textContent = fork.text;
          }));
        $("deleteQuarantined").addEventListener("click", () => quarantineAction(
          async (id) => {
            await api("DELETE", "/sessions/" + encodeURIComponent(id), { headers: sessionCredentials(id) });
            return id;
          },
          (id) => {
            selected = null;
            $("cards").hidden = true;
            $("quarantine").hidden = true;
            $("detailTitle").textContent = "No session selected";
            setStatus($("streamStatus"), "idle", "Session " + id + " deleted with its crash records.");
          }));
        """#
}
