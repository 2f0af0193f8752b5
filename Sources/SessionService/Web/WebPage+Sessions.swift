extension WebPage {
    /// The sessions this browser opened, kept in localStorage (the server lists sessions only to the
    /// admin): their ids, reactors, a token when the access mode hands one out, and whether they were
    /// found gone. Other tabs see changes through the `storage` event.
    static let sessionsScript = #"""
        const remembered = {
          key: "reactor-server.sessions",
          all() {
            try {
              const list = JSON.parse(localStorage.getItem(this.key) || "[]");
              return Array.isArray(list) ? list : [];
            }
            catch (_) { return []; }
          },
          save(list) { localStorage.setItem(this.key, JSON.stringify(list.slice(0, 50))); },
          find(id) { return this.all().find((entry) => entry.id === id); },
          remember(session) {
            const earlier = this.find(session.id) || {};
            const entry = {
              id: session.id, reactor: session.reactor, token: session.token || earlier.token, opened: Date.now(),
            };
            this.save([entry].concat(this.all().filter((other) => other.id !== session.id)));
          },
          mark(id, gone) {
            this.save(this.all().map((entry) => entry.id === id ? Object.assign({}, entry, { gone }) : entry));
          },
          forget(id) { this.save(this.all().filter((entry) => entry.id !== id)); },
        };

        function renderList() {
          const list = remembered.all();
          $("noSessions").classList.toggle("hidden", list.length > 0);
          $("sessionList").replaceChildren(...list.map((entry) => {
            const item = node("li");
            const link = node("a", entry.id);
            link.href = "?session=" + encodeURIComponent(entry.id);
            link.title = entry.id;
            if (urlSession() === entry.id) link.setAttribute("aria-current", "page");
            link.addEventListener("click", (event) => {
              if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
              event.preventDefault();
              openSession(entry.id, true);
            });
            const forget = node("button", "Forget");
            forget.type = "button";
            forget.setAttribute("aria-label", "Forget session " + entry.id);
            forget.addEventListener("click", () => { remembered.forget(entry.id); renderList(); });
            item.append(link, node("span", entry.reactor, "badge"));
            if (entry.gone) item.append(node("span", "gone", "badge gone"));
            item.append(forget);
            return item;
          }));
        }
        """#
}
