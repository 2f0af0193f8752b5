/// The page at `/`: try the service from a browser with no tooling. It creates or opens a session
/// (the open one lives in the URL, `/?session=ID`, so reload, a second tab and a shared link reopen
/// it), remembers the sessions this browser opened (in the browser only: the server never lists
/// sessions to the public), sends actions, and shows the live state beside the buttons. It shows one
/// session live at a time, so it follows that one over its own stream (`/sessions/{id}/events`, which
/// also carries the pulses it shows); the remembered list holds no live value and opens no stream.
/// Plain HTML and JavaScript served from the binary; the scripts are in `WebPage+Sessions.swift` and
/// `WebPage+Script.swift`.
enum WebPage {
    static let document = WebDocument(template: html)

    static let style = #"""
        .layout { display: grid; grid-template-columns: minmax(16rem, 22rem) 1fr; gap: 1rem; align-items: start; }
        @media (max-width: 52rem) { .layout { grid-template-columns: 1fr; } }
        .play { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; align-items: start; }
        @media (max-width: 64rem) { .play { grid-template-columns: 1fr; } }
        #sessionList { list-style: none; padding: 0; margin: .3rem 0; }
        #sessionList li { display: flex; align-items: center; gap: .4rem; padding: .25rem 0;
          border-bottom: 1px solid #eee; }
        #sessionList li a { font: 13px ui-monospace, monospace; flex: 1 1 0; min-width: 0; overflow: hidden;
          text-overflow: ellipsis; white-space: nowrap; }
        #sessionList li a[aria-current="page"] { font-weight: 700; }
        #sessionList li button { padding: .05rem .5rem; font-size: .8rem; margin: 0; }
        .badge { font-size: .75rem; padding: 0 .4rem; border-radius: 4px; background: #eee; color: var(--muted); }
        .badge.gone { background: #fde7ea; color: var(--bad); }
        #stateBox { border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; }
        #stateBox.stale pre { color: var(--muted); }
        textarea:disabled { background: var(--soft); color: var(--muted); }
        #stateHead { display: flex; align-items: center; gap: .6rem; min-height: 1.6rem; }
        #stateError { margin: .4rem 0; padding: .4rem .6rem; border-radius: 6px; background: #fde7ea; }
        #buttons button { font-family: ui-monospace, monospace; font-size: 13px; }
        #sessionTitle code { font-size: 1rem; }
        """#

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>reactor-server</title>
        <link rel="icon" type="image/svg+xml" href="/favicon.ico">
        <style nonce="__NONCE__">
        """# + WebStyle.common + "\n" + style + #"""
            </style>
            </head>
            <body>
            <header class="bar">
              <h1><img src="/favicon.ico" alt=""> reactor-server</h1>
              <span class="muted">One reactor per session: send actions,
                watch states arrive over Server-Sent Events.</span>
              <nav aria-label="Elsewhere">
                <a href="/openapi.json">API (OpenAPI)</a><a href="/admin/console">Admin console</a>
              </nav>
            </header>
            <main class="layout">
              <div>
                <section class="card" aria-labelledby="newHeading">
                  <h2 id="newHeading">New session</h2>
                  <form id="createForm">
                    <label class="block" for="reactor">Reactor</label>
                    <select id="reactor" disabled><option>loading …</option></select>
                    <label class="block" for="sessionId">Id
                      <span class="muted">(optional: the server picks one)</span></label>
                    <input id="sessionId" size="22" autocomplete="off" spellcheck="false"
                      pattern="[A-Za-z0-9_\-]{1,64}">
                    <div id="paramsField" hidden>
                      <label class="block" for="params">Params
                        <span class="muted">(JSON: this reactor's sessions take them)</span></label>
                      <input id="params" size="22" autocomplete="off" spellcheck="false">
                    </div>
                    <div class="row"><button class="primary" id="create" type="submit" disabled>Create</button></div>
                  </form>
                  <p id="reactorInfo" class="muted" aria-live="polite">Loading the reactors …</p>
                </section>
                <section class="card" aria-labelledby="openHeading">
                  <h2 id="openHeading">Open a session</h2>
                  <form id="openForm" class="row">
                    <label for="openId" class="sr-only">Session id</label>
                    <input id="openId" placeholder="session id" size="18" autocomplete="off" spellcheck="false"
                      required>
                    <button type="submit" id="open">Open</button>
                  </form>
                  <h3>Opened in this browser</h3>
                  <p class="muted">Kept in this browser only;
                    the server does not list sessions to anyone without the admin token.</p>
                  <ul id="sessionList" aria-label="Sessions opened in this browser"></ul>
                  <p id="noSessions" class="muted">None yet.</p>
                </section>
              </div>
              <section class="card" id="sessionPanel" aria-labelledby="sessionTitle">
                <h2 id="sessionTitle">No session open</h2>
                <p><span id="streamStatus" class="status" data-kind="idle" role="status"
                  aria-live="polite">Create a session or open one.</span></p>
                <div id="sessionBody" hidden>
                <div class="play">
                  <div>
                    <h3 id="actionsHeading">Actions</h3>
                    <div id="buttons" class="row" role="group" aria-labelledby="actionsHeading"></div>
                    <form id="sendForm">
                      <label class="block" for="actionJson">Action JSON</label>
                      <textarea id="actionJson" spellcheck="false" disabled></textarea>
                      <div class="row">
                        <button class="primary" id="send" type="submit" disabled>Send action</button>
                        <label><input type="checkbox" id="wait"><span>wait for its state
                          (<code>?wait=true</code>)</span></label>
                      </div>
                    </form>
                    <p id="sendResult" class="muted" aria-live="polite"></p>
                    <div class="row">
                      <button class="danger" id="delete" type="button" disabled>Delete session</button>
                    </div>
                  </div>
                  <div id="stateBox" aria-labelledby="stateHeading">
                    <div id="stateHead">
                      <h3 id="stateHeading">Live state</h3>
                      <span id="version" class="muted"></span>
                      <span id="spinner" class="spinner hidden" role="status" aria-label="loading"></span>
                    </div>
                    <p id="stateError" class="error hidden" role="alert"></p>
                    <pre id="state" aria-live="polite">—</pre>
                  </div>
                </div>
                <h3>Events</h3>
                <div id="log" class="log" aria-label="States and pulses, newest first"></div>
                </div>
              </section>
            </main>
            <script nonce="__NONCE__">
            """# + [WebScript.common, sessionsScript, script].joined(separator: "\n") + #"""
            </script>
            </body>
            </html>
            """#
}
