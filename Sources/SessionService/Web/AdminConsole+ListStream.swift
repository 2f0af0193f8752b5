extension AdminConsole {
    /// The live part of the console's session list: ONE `GET /events?sessions=…` (API.md "Many sessions
    /// over one stream") over the resident sessions it shows, read with `fetch` and parsed by the
    /// WHATWG event-stream rules, so that it re-opens with the stream's cursor in `Last-Event-ID` and
    /// learns why a request was refused (EventSource can do neither).
    ///
    /// It sends no credential: the admin token never goes to a session route, and the console holds no
    /// session's token or JWT. So it streams only in the open access mode; in token and jwt modes (read
    /// from `/openapi.json`, with the stream's session limit) the list is re-read through the admin API.
    static let listStreamScript = #"""
        /** Splits an event stream into events (WHATWG rules: CR, LF or CRLF; comments; data lines joined; id kept). */
        class EventStreamParser {
          constructor(onEvent) {
            this.onEvent = onEvent; this.pending = ""; this.type = ""; this.data = []; this.lastId = "";
            this.started = false; this.afterCR = false;
          }

          push(text) {
            if (!text.length) return;
            if (!this.started) { this.started = true; if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); }
            // A chunk that ended in CR ended its line then and there; an LF opening the next one is its CRLF's half.
            if (this.afterCR && text[0] === "\n") text = text.slice(1);
            this.pending += text;
            this.afterCR = this.pending.endsWith("\r");
            const lines = this.pending.split(/\r\n|\r|\n/);
            this.pending = lines.pop();
            for (const line of lines) this.line(line);
          }

          line(line) {
            if (line === "") {
              if (this.data.length) {
                this.onEvent({ type: this.type || "message", data: this.data.join("\n"), id: this.lastId });
              }
              this.type = "";
              this.data = [];
              return;
            }
            if (line[0] === ":") return;
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            let value = colon < 0 ? "" : line.slice(colon + 1);
            if (value[0] === " ") value = value.slice(1);
            if (field === "event") this.type = value;
            else if (field === "data") this.data.push(value);
            else if (field === "id" && !value.includes("\0")) this.lastId = value;
          }
        }

        /**
         * Follows a list of sessions over one `/events` stream. follow(ids) re-opens only when the set changes
         * (from the current states: a cursor belongs to its list), after the stream broke or when a part it
         * wants has ended (with the cursor, so no version already seen comes again), and says whether it
         * opened a stream. Handlers: onLive(), onState(id, version), onEnd(id, reason or error code),
         * onBroken(why).
         */
        class ListStream {
          constructor(handlers) {
            this.handlers = handlers;
            this.ids = [];
            this.key = "";
            this.cursor = "";
            this.controller = null;
            this.state = "idle";
            this.resumed = false;
            // Parts of the open stream that have ended, with why: they need a new stream to be followed again.
            this.ended = new Map();
          }

          follow(ids) {
            const key = ids.join(",");
            const open = this.state === "live" || this.state === "connecting";
            if (key === this.key && open && !ids.some((id) => this.ended.has(id))) return false;
            if (key !== this.key) this.cursor = "";
            this.stop();
            this.ids = ids;
            this.key = key;
            if (ids.length) this.open();
            return ids.length > 0;
          }

          stop() {
            const controller = this.controller;
            this.controller = null;
            this.state = "idle";
            if (controller) controller.abort();
          }

          async open() {
            const controller = new AbortController();
            this.controller = controller;
            this.state = "connecting";
            this.ended.clear();
            // Resuming sends the stream's cursor: the server sends only versions newer than those already seen.
            this.resumed = this.cursor !== "";
            const headers = this.resumed ? { "Last-Event-ID": this.cursor } : {};
            let response;
            try {
              // Patches: the list needs only each session's version, which a patch carries as a state does,
              // in fewer bytes.
              const path = "/events?delta=json-patch&sessions=" + this.ids.map(encodeURIComponent).join(",");
              response = await fetch(path, { headers, signal: controller.signal, cache: "no-store" });
            } catch (_) {
              return this.broke(controller, "server unreachable");
            }
            if (this.controller !== controller) return;
            if (!response.ok) {
              let why = "HTTP " + response.status;
              try {
                const body = await response.json();
                why = body.error.code + ": " + body.error.message;
              } catch (_) { /* not the API's error body */ }
              return this.broke(controller, why);
            }
            this.state = "live";
            this.handlers.onLive();
            const parser = new EventStreamParser((event) => this.dispatch(event));
            const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
            try {
              for (;;) {
                const { value, done } = await reader.read();
                if (done || this.controller !== controller) break;
                parser.push(value);
              }
            } catch (_) {
              // Aborted, or the connection broke: told below.
            }
            this.broke(controller, "the stream ended");
          }

          broke(controller, why) {
            if (this.controller !== controller) return;
            this.controller = null;
            this.state = "broken";
            this.handlers.onBroken(why);
          }

          dispatch(event) {
            this.cursor = event.id;
            let data;
            try { data = JSON.parse(event.data); } catch (_) { return; }
            if (event.type === "state" || event.type === "patch") {
              return this.handlers.onState(data.session, data.version);
            }
            if (event.type === "end") this.ended.set(data.session, data.reason);
            else if (event.type === "error" && data.session) this.ended.set(data.session, data.code);
            else return;
            this.handlers.onEnd(data.session, this.ended.get(data.session));
          }
        }
        """#
}
