/// The script both pages share: `api()` (JSON calls whose failures read as the API's error or as
/// "server unreachable", never the browser's "Failed to fetch"), `applyJSONPatch()` (RFC 6902) and
/// `SessionStream` (one session's states over Server-Sent Events, as patches after the first, with a
/// status that always says what is true: live, retrying because the server is unreachable, the session
/// deleted or gone, no access).
enum WebScript {
    static let common = #"""
        "use strict";
        const $ = (id) => document.getElementById(id);

        /** An answer the API refused (status, code and message of its error body), or status 0: no answer at all. */
        class APIError extends Error {
          constructor(status, code, message) { super(message); this.status = status; this.code = code; }
        }

        /** Calls the API with JSON in and out; options: headers, body (a string is sent as written). */
        async function api(method, path, options = {}) {
          const headers = Object.assign({}, options.headers || {});
          const init = { method, headers, cache: "no-store" };
          if (options.body !== undefined) {
            headers["Content-Type"] = "application/json";
            init.body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
          }
          let response, text;
          try {
            response = await fetch(path, init);
            text = await response.text();
          } catch (_) {
            throw new APIError(0, "unreachable", "server unreachable");
          }
          let json = null;
          try { json = text ? JSON.parse(text) : null; } catch (_) { json = null; }
          if (!response.ok) {
            if (json && json.error) {
              throw new APIError(response.status, json.error.code, json.error.code + ": " + json.error.message);
            }
            const detail = text ? ": " + text.trim().slice(0, 200) : "";
            throw new APIError(response.status, "http_" + response.status, "HTTP " + response.status + detail);
          }
          return json;
        }

        /** Sets a status element's text and kind (the kind colours its dot: live, retrying, gone, …). */
        function setStatus(node, kind, text) {
          node.dataset.kind = kind;
          node.textContent = text;
        }

        /** A time of day for logs and "updated at" lines. */
        function clockTime(date = new Date()) { return date.toLocaleTimeString(); }

        /** A node with text, for building lists without innerHTML. */
        function node(tag, text, className) {
          const element = document.createElement(tag);
          if (text !== undefined) element.textContent = text;
          if (className) element.className = className;
          return element;
        }

        /** A member set as data, also when its name is "__proto__" (which plain assignment takes for the prototype). */
        function setMember(object, key, value) {
          Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
        }

        function isContainer(value) { return value !== null && typeof value === "object"; }
        function hasMember(object, key) { return Object.prototype.hasOwnProperty.call(object, key); }
        function missing(text) { return new Error(JSON.stringify(text) + " does not exist"); }

        /** RFC 6901: the reference tokens of a JSON pointer ("" is the whole document). */
        function pointerTokens(text) {
          if (typeof text !== "string") throw new Error("a path is a JSON pointer string, not " + JSON.stringify(text));
          if (text === "") return [];
          if (text[0] !== "/") {
            throw new Error("JSON pointer " + JSON.stringify(text) + " must be empty or start with /");
          }
          return text.slice(1).split("/").map((token) => {
            if (/~([^01]|$)/.test(token)) {
              throw new Error("JSON pointer " + JSON.stringify(text) + " has a bad ~ escape");
            }
            return token.replace(/~1/g, "/").replace(/~0/g, "~");
          });
        }

        /** An array index token: digits without a leading zero, below `length` (up to it, or "-", when adding). */
        function arrayIndex(token, length, adding) {
          if (adding && token === "-") return length;
          if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(JSON.stringify(token) + " is not an array index");
          const index = Number(token);
          if (index > length || (!adding && index === length)) {
            throw new Error("index " + index + " is past the end of an array of " + length);
          }
          return index;
        }

        function valueAt(document, tokens, text) {
          let current = document;
          for (const token of tokens) {
            if (Array.isArray(current)) current = current[arrayIndex(token, current.length, false)];
            else if (isContainer(current) && hasMember(current, token)) current = current[token];
            else throw missing(text);
          }
          return current;
        }

        /**
         * A copy of `value` in which the container that holds the pointer's last token went through
         * `change(copy, token)`: only the containers on the way are copied, so the caller's document never changes.
         */
        function changedAt(value, tokens, depth, text, change) {
          if (!isContainer(value)) throw missing(text);
          const copy = Array.isArray(value) ? value.slice() : {};
          if (!Array.isArray(value)) for (const key of Object.keys(value)) setMember(copy, key, value[key]);
          const token = tokens[depth];
          if (depth === tokens.length - 1) {
            change(copy, token);
          } else if (Array.isArray(copy)) {
            const index = arrayIndex(token, copy.length, false);
            copy[index] = changedAt(copy[index], tokens, depth + 1, text, change);
          } else if (hasMember(copy, token)) {
            setMember(copy, token, changedAt(copy[token], tokens, depth + 1, text, change));
          } else {
            throw missing(text);
          }
          return copy;
        }

        /** JSON equality: arrays element by element, objects member by member in any order. */
        function sameJSON(a, b) {
          if (Array.isArray(a) || Array.isArray(b)) {
            return Array.isArray(a) && Array.isArray(b) && a.length === b.length
              && a.every((item, i) => sameJSON(item, b[i]));
          }
          if (isContainer(a) && isContainer(b)) {
            const keys = Object.keys(a);
            return keys.length === Object.keys(b).length
              && keys.every((key) => hasMember(b, key) && sameJSON(a[key], b[key]));
          }
          return a === b;
        }

        function addAt(document, tokens, text, value) {
          if (tokens.length === 0) return value;
          return changedAt(document, tokens, 0, text, (parent, last) => {
            if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true), 0, value);
            else setMember(parent, last, value);
          });
        }

        function removeAt(document, tokens, text) {
          if (tokens.length === 0) throw new Error("the whole document cannot be removed");
          return changedAt(document, tokens, 0, text, (parent, last) => {
            if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, false), 1);
            else if (hasMember(parent, last)) delete parent[last];
            else throw missing(text);
          });
        }

        function replaceAt(document, tokens, text, value) {
          if (tokens.length === 0) return value;
          return changedAt(document, tokens, 0, text, (parent, last) => {
            if (Array.isArray(parent)) parent[arrayIndex(last, parent.length, false)] = value;
            else if (hasMember(parent, last)) setMember(parent, last, value);
            else throw missing(text);
          });
        }

        /** One RFC 6902 operation applied to `document`: the new document (the old one is left as it was). */
        function applyOperation(document, operation) {
          if (!isContainer(operation) || Array.isArray(operation)) throw new Error("an operation is an object");
          const text = operation.path;
          const tokens = pointerTokens(text);
          const value = () => {
            if (!hasMember(operation, "value")) throw new Error(operation.op + " needs a value");
            return operation.value;
          };
          switch (operation.op) {
            case "add": return addAt(document, tokens, text, value());
            case "remove": return removeAt(document, tokens, text);
            case "replace": return replaceAt(document, tokens, text, value());
            case "copy":
              return addAt(document, tokens, text, valueAt(document, pointerTokens(operation.from), operation.from));
            case "move": {
              const from = pointerTokens(operation.from);
              if (tokens.length > from.length && from.every((token, index) => token === tokens[index])) {
                throw new Error("cannot move " + JSON.stringify(operation.from) + " into its own child");
              }
              const moved = valueAt(document, from, operation.from);
              return addAt(removeAt(document, from, operation.from), tokens, text, moved);
            }
            case "test":
              if (sameJSON(valueAt(document, tokens, text), value())) return document;
              throw new Error("test failed at " + JSON.stringify(text));
            default: throw new Error("unknown op " + JSON.stringify(operation.op));
          }
        }

        /**
         * RFC 6902: `document` with every operation of `patch` applied in order; throws at the first one that does
         * not apply, and `document` is left as it was.
         */
        function applyJSONPatch(document, patch) {
          if (!Array.isArray(patch)) throw new Error("a patch is an array of operations");
          let result = document;
          patch.forEach((operation, index) => {
            try {
              result = applyOperation(result, operation);
            } catch (error) {
              throw new Error("operation " + index + ": " + error.message);
            }
          });
          return result;
        }

        /**
         * Follows one session's states over Server-Sent Events. When the stream breaks it asks `probe()` why
         * (a request about the session) and reports the truth through onStatus(kind, text):
         * "live"; "retrying" (server unreachable or failing: tries again, backing off to 5 s); "gone" (404:
         * deleted or expired, no retry); "ended" (deleted while we watched); "denied" (401/403).
         * accessToken() may return a session token (token access mode) for `access_token=`. It asks for patches
         * (delta=json-patch) after the first state and hands onState whole states; a patch that does not apply
         * reopens the stream, which starts with the whole state.
         */
        class SessionStream {
          constructor(id, handlers) {
            this.id = id;
            this.handlers = handlers;
            this.source = null;
            this.timer = null;
            this.failures = 0;
            this.breaks = 0;
            this.patchFailures = 0;
            this.stopped = true;
            // The state the stream's events built (patches apply to it); undefined until a connection's first state.
            this.document = undefined;
            this.version = -1;
          }

          start() { this.stopped = false; this.open(); }

          stop() {
            this.stopped = true;
            clearTimeout(this.timer);
            if (this.source) this.source.close();
            this.source = null;
          }

          status(kind, text) { if (!this.stopped || kind === "ended") this.handlers.onStatus(kind, text); }

          open() {
            if (this.stopped) return;
            let url = "/sessions/" + encodeURIComponent(this.id) + "/events?delta=json-patch";
            const token = this.handlers.accessToken ? this.handlers.accessToken() : null;
            if (token) url += "&access_token=" + encodeURIComponent(token);
            this.status("connecting", "connecting …");
            const source = new EventSource(url);
            this.source = source;
            this.document = undefined;
            source.addEventListener("open", () => {
              if (this.source === source) this.status("live", "live: states arrive as they happen");
            });
            source.addEventListener("state", (event) => {
              this.failures = 0;
              this.breaks = 0;
              this.document = JSON.parse(event.data);
              this.version = Number(event.lastEventId);
              this.handlers.onState(this.version, this.document);
            });
            source.addEventListener("patch", (event) => {
              if (this.source !== source) return;
              const version = Number(event.lastEventId);
              try {
                if (this.document === undefined) throw new Error("no state to apply it to");
                this.document = applyJSONPatch(this.document, JSON.parse(event.data));
              } catch (error) {
                return this.resync(source,
                  "the patch to version " + version + " did not apply (" + error.message + ")");
              }
              this.patchFailures = 0;
              this.version = version;
              this.handlers.onState(version, this.document);
            });
            source.addEventListener("pulse", (event) => {
              if (this.handlers.onPulse) this.handlers.onPulse(JSON.parse(event.data));
            });
            source.addEventListener("end", () => {
              source.close();
              this.source = null;
              this.stopped = true;
              this.handlers.onStatus("ended", "session deleted: its stream has ended");
            });
            // Both the connection's failure and the server's `event: error` (which carries data) land here.
            source.addEventListener("error", (event) => {
              if (this.source !== source) return;
              source.close();
              this.source = null;
              let reason = null;
              if (event.data) { try { reason = JSON.parse(event.data); } catch (_) { reason = null; } }
              this.breaks += 1;
              this.recover(reason);
            });
          }

          /**
           * A patch did not apply: a new stream starts with the whole state (at once the first time, then backing
           * off).
           */
          resync(source, why) {
            source.close();
            this.source = null;
            this.patchFailures += 1;
            const delay = this.patchFailures <= 1 ? 0 : Math.min(500 * 2 ** (this.patchFailures - 2), 5000);
            const when = delay ? " in " + (delay / 1000).toFixed(1) + " s" : "";
            this.status("retrying", why + ": reconnecting for the whole state" + when);
            this.timer = setTimeout(() => this.open(), delay);
          }

          async recover(reason) {
            if (this.stopped) return;
            try {
              await this.handlers.probe();
            } catch (error) {
              if (this.stopped) return;
              if (error.status === 404) {
                return this.status("gone", "session " + this.id + " no longer exists (deleted or expired)");
              }
              if (error.status === 401 || error.status === 403) {
                return this.status("denied", "no access to this session: " + error.message);
              }
              this.failures += 1;
              const delay = Math.min(500 * 2 ** (this.failures - 1), 5000);
              const why = error.status === 0 ? "server unreachable" : error.message;
              this.status("retrying", why + ": retrying in " + (delay / 1000).toFixed(1) + " s");
              this.timer = setTimeout(() => this.recover(reason), delay);
              return;
            }
            if (this.stopped) return;
            // The session is there: reopen at once, but back off if the stream keeps breaking without a state.
            const delay = this.breaks <= 1 ? 0 : Math.min(500 * 2 ** (this.breaks - 2), 5000);
            if (delay === 0) return this.open();
            const why =
              reason && reason.code ? "the server ended the stream (" + reason.code + ")" : "the stream broke";
            this.status("retrying", why + ": reconnecting in " + (delay / 1000).toFixed(1) + " s");
            this.timer = setTimeout(() => this.open(), delay);
          }
        }
        """#
}
