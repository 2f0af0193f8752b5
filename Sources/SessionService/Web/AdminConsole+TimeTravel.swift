extension AdminConsole {
    /// The console's time travel: a slider over the selected session's versions showing the state at
    /// each (`GET /admin/sessions/{id}/versions/{v}`, cached: a past version never changes) and what
    /// changed from the version before (a small JSON diff by JSON pointer), and fork at that version.
    static let timeTravelScript = #"""
        const versionCache = new Map();
        let versionRequest = 0;
        // Versions below this are not kept (a fork starts at its source's version; compaction drops old ones).
        let oldestKept = 0;
        // False once the server said it keeps no history at all (storage.memoryOnly): then nothing is asked again.
        let historyKept = true;

        function resetTimeTravel() {
          versionCache.clear();
          versionRequest += 1;
          oldestKept = 0;
          $("versionSlider").min = "0";
          $("versionSlider").max = "0";
          $("versionSlider").value = "0";
          $("followLive").checked = true;
          $("versionLabel").textContent = "";
          $("versionState").textContent = "—";
          $("diff").replaceChildren();
          $("fork").textContent = "Fork at this version";
        }

        function rememberVersion(version, state) {
          if (versionCache.size >= 500) versionCache.delete(versionCache.keys().next().value);
          versionCache.set(version, state);
        }

        /** A new live version: the slider reaches it, and moves along while "follow" is on. */
        function liveVersionMoved() {
          const slider = $("versionSlider");
          slider.max = String(Math.max(liveVersion, 0));
          if ($("followLive").checked) slider.value = String(liveVersion);
          showVersion(Number(slider.value));
        }

        async function stateAt(id, version) {
          if (versionCache.has(version)) return versionCache.get(version);
          if (version < oldestKept) throw new APIError(410, "version_gone", "version " + version + " is not kept");
          let answer;
          try {
            answer = await adminAPI("GET", adminPath(id, "/versions/" + version));
          } catch (error) {
            if (error.code === "memory_only") noHistory(error.message);
            if (error.status === 410 && selected && selected.id === id && version >= oldestKept) {
              oldestKept = version + 1;
              $("versionSlider").min = String(Math.min(oldestKept, Math.max(liveVersion, 0)));
            }
            throw error;
          }
          if (selected && selected.id === id) rememberVersion(version, answer.state);
          return answer.state;
        }

        function noHistory(message) {
          historyKept = false;
          for (const id of ["versionSlider", "followLive", "forkId", "fork"]) $(id).disabled = true;
          $("versionState").textContent = message;
          $("diff").replaceChildren(node("li", "Time travel and fork need the journal.", "note"));
        }

        async function showVersion(version) {
          if (!selected || version < 0) return;
          if (!historyKept) return noHistory("time travel needs the journal; this server runs with storage.memoryOnly");
          const id = selected.id, request = ++versionRequest;
          const latest = selected.quarantined ? " (the last good one)" : " (live)";
          $("versionLabel").textContent = version === liveVersion ? version + latest : version + " of " + liveVersion;
          $("fork").textContent = "Fork at version " + version;
          let state, before, beforeGone = false;
          try {
            state = await stateAt(id, version);
            if (version > 0) {
              try { before = await stateAt(id, version - 1); }
              catch (error) { if (error.status !== 410) throw error; beforeGone = true; }
            }
          } catch (error) {
            if (request !== versionRequest) return;
            $("versionState").textContent = error.status === 410
              ? "Version " + version + " is older than the history the server keeps "
                + "(from version " + oldestKept + " on)."
              : error.message;
            $("diff").replaceChildren();
            return;
          }
          if (request !== versionRequest) return;
          $("versionState").textContent = JSON.stringify(state, null, 2);
          if (version === 0) return $("diff").replaceChildren(node("li", "The initial state.", "note"));
          if (beforeGone) {
            const gone = "Version " + (version - 1) + " is no longer kept: nothing to compare with.";
            return $("diff").replaceChildren(node("li", gone, "note"));
          }
          const changes = jsonDiff(before, state, "", []);
          if (!changes.length) {
            const same = "Nothing changed since version " + (version - 1) + ".";
            return $("diff").replaceChildren(node("li", same, "note"));
          }
          $("diff").replaceChildren(...changes.slice(0, 200).map(describeChange));
        }

        function describeChange(change) {
          const where = change.path || "(the whole state)";
          if (change.kind === "added") return node("li", "+ " + where + ": " + JSON.stringify(change.after), "added");
          if (change.kind === "removed") {
            return node("li", "− " + where + ": " + JSON.stringify(change.before), "removed");
          }
          const text = where + ": " + JSON.stringify(change.before) + " → " + JSON.stringify(change.after);
          return node("li", text, "changed");
        }

        /** The differences between two JSON values, as changes at JSON pointers (RFC 6901). */
        function jsonDiff(before, after, path, out) {
          const composite = (value) => value !== null && typeof value === "object";
          if (composite(before) && composite(after) && Array.isArray(before) === Array.isArray(after)) {
            const keys = Array.isArray(after)
              ? Array.from({ length: Math.max(before.length, after.length) }, (_, index) => String(index))
              : Array.from(new Set(Object.keys(before).concat(Object.keys(after))));
            for (const key of keys) {
              const child = path + "/" + key.replace(/~/g, "~0").replace(/\//g, "~1");
              const had = Object.prototype.hasOwnProperty.call(before, key);
              const has = Object.prototype.hasOwnProperty.call(after, key);
              if (!has) out.push({ kind: "removed", path: child, before: before[key] });
              else if (!had) out.push({ kind: "added", path: child, after: after[key] });
              else jsonDiff(before[key], after[key], child, out);
            }
            return out;
          }
          if (JSON.stringify(before) !== JSON.stringify(after)) out.push({ kind: "changed", path, before, after });
          return out;
        }

        $("versionSlider").addEventListener("input", () => {
          const version = Number($("versionSlider").value);
          $("followLive").checked = version === liveVersion;
          showVersion(version);
        });
        $("followLive").addEventListener("change", () => {
          if (!$("followLive").checked) return;
          $("versionSlider").value = String(liveVersion);
          showVersion(liveVersion);
        });
        $("forkForm").addEventListener("submit", async (event) => {
          event.preventDefault();
          const source = selected.id, version = Number($("versionSlider").value);
          const body = { version };
          if ($("forkId").value.trim()) body.id = $("forkId").value.trim();
          try {
            const session = await adminAPI("POST", adminPath(source, "/fork"), body);
            $("forkId").value = "";
            await refreshList();
            select(session.id);
            $("forkResult").className = "ok";
            $("forkResult").textContent = "Forked from " + source + " at version " + version + ".";
          } catch (error) {
            if (!selected || selected.id !== source) return;
            $("forkResult").className = "error";
            $("forkResult").textContent = error.message;
          }
        });
        """#
}
