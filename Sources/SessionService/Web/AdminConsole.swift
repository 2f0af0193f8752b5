/// The admin console at `/admin/console`, for operators: the live session list, and per session its
/// live state, action log, actions (buttons or JSON), stub mode, forced states, time travel with
/// what changed, and fork. The page itself holds no secret; the operator types the admin token,
/// which stays in this tab (sessionStorage) and travels only in `Authorization` headers, never in a
/// URL. Scripts: `AdminConsole+Script.swift` (state, token, reading the list), `AdminConsole+SessionList.swift`
/// (the table, its versions live over one `/events` stream), `AdminConsole+ListStream.swift` (that stream),
/// `AdminConsole+Session.swift`, `AdminConsole+ActionLog.swift`, `AdminConsole+TimeTravel.swift` and
/// `AdminConsole+Quarantine.swift` (a session a crash of its reactor quarantined).
enum AdminConsole {
    static let document = WebDocument(template: html)

    static let style = #"""
        .cards { display: grid; grid-template-columns: repeat(6, minmax(0, 1fr)); gap: 1rem; align-items: start; }
        .cards > section.card { margin-bottom: 0; grid-column: span 2; }
        .cards > section.card.half { grid-column: span 3; }
        @media (max-width: 72rem) { .cards > section.card, .cards > section.card.half { grid-column: span 3; } }
        @media (max-width: 48rem) { .cards > section.card, .cards > section.card.half { grid-column: 1 / -1; } }
        table { border-collapse: collapse; width: 100%; font-size: .9rem; }
        th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #eee; vertical-align: top; }
        th { font-size: .8rem; color: var(--muted); font-weight: 600; position: sticky; top: 0; background: #fff; }
        td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
        #sessionsBox { max-height: 13.5rem; overflow: auto; }
        #sessions button.pick { border: none; background: none; padding: 0; margin: 0; color: var(--accent);
          text-decoration: underline; font: 13px ui-monospace, monospace; word-break: break-all; text-align: left; }
        #sessions tr.selected { background: #e8f0fd; }
        #sessions tr.selected button.pick { font-weight: 700; }
        #tokenForm { margin-bottom: 1rem; }
        #tokenForm input { width: 18rem; }
        #sessionsHead { display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; }
        #sessionsHead h2 { margin: 0; }
        #detailHead { display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; margin: 1.2rem 0 .8rem; }
        #detailHead h2 { margin: 0; }
        #versionSlider { width: 100%; }
        #diff { list-style: none; padding: 0; margin: .3rem 0; font: 12.5px/1.45 ui-monospace, monospace; }
        #diff li { padding: .1rem .3rem; border-radius: 4px; margin: .1rem 0; word-break: break-all; }
        #diff li.added { background: #e6f4ea; }
        #diff li.removed { background: #fde7ea; }
        #diff li.changed { background: #fff4d6; }
        #diff li.note { font: .9rem system-ui, sans-serif; color: var(--muted); padding: 0; }
        #actionLog td { font: 12.5px ui-monospace, monospace; word-break: break-all; }
        #actionLogBox { max-height: 22rem; overflow: auto; }
        #sessions td.stale { color: var(--muted); font-style: italic; }
        .stubbed { color: var(--warn); font-weight: 600; }
        #quarantine { border-color: var(--bad); }
        #quarantine h3 { color: var(--bad); }
        #crashFacts { margin: .3rem 0; padding-left: 1.2rem; font-size: .9rem; }
        #actionLog tr.crashed td { background: #fde7ea; }
        """#

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>admin console · reactor-server</title>
        <link rel="icon" type="image/svg+xml" href="/favicon.ico">
        <style nonce="__NONCE__">
        """# + WebStyle.common + "\n" + style + #"""
            </style>
            </head>
            <body>
            <header class="bar">
              <h1><img src="/favicon.ico" alt=""> reactor-server · admin console</h1>
              <span id="connection" class="status" data-kind="idle" role="status"
                aria-live="polite">not connected</span>
              <nav aria-label="Elsewhere"><a href="/">Try the service</a><a href="/openapi.json">API (OpenAPI)</a></nav>
            </header>
            <main>
              <form id="tokenForm" class="row" aria-label="Admin token">
                <label for="token">Admin token</label>
                <input id="token" type="password" autocomplete="off" spellcheck="false" required autofocus
                  aria-describedby="tokenNote">
                <button class="primary" type="submit" id="connect">Connect</button>
                <button type="button" id="forget">Forget token</button>
                <span id="tokenNote" class="muted">Printed by the server at start.
                  Kept in this tab only, never put in a URL.</span>
              </form>
              <section class="card" aria-labelledby="sessionsHeading">
                <div id="sessionsHead">
                  <h2 id="sessionsHeading">Sessions</h2>
                  <label for="filter">Filter by id</label>
                  <input id="filter" size="14" autocomplete="off" spellcheck="false">
                  <button type="button" id="refresh">Refresh list</button>
                  <span id="sessionsNote" class="muted" aria-live="polite">Connect to list the sessions.</span>
                </div>
                <div id="sessionsBox">
                  <table id="sessions" aria-labelledby="sessionsHeading">
                    <thead><tr>
                      <th scope="col">id</th><th scope="col">reactor</th><th scope="col" class="number">version</th>
                      <th scope="col" class="number"
                        title="Streams following the session, this console's own included">subscribers</th>
                      <th scope="col">stub</th>
                    </tr></thead>
                    <tbody></tbody>
                  </table>
                </div>
              </section>
              <section id="detail" aria-labelledby="detailTitle">
                <div id="detailHead">
                  <h2 id="detailTitle">No session selected</h2>
                  <span id="streamStatus" class="status" data-kind="idle" role="status"
                    aria-live="polite">Connect, then pick a session from the list.</span>
                </div>
                <section id="quarantine" class="card" aria-labelledby="quarantineHeading" hidden>
                  <h3 id="quarantineHeading">Quarantined: its reactor crashed the server</h3>
                  <p id="quarantineReason"></p>
                  <ul id="crashFacts" aria-label="The latest crash"></ul>
                  <p class="muted">The action that was running is marked <strong>crashed</strong> in the action log.
                    Deploy a fixed reactor, then release it; or fork it at its last good version (the new id below,
                    under time travel, is used if given); or delete it.</p>
                  <div class="row" role="group" aria-labelledby="quarantineHeading">
                    <button type="button" class="primary" id="release">Release (load it again)</button>
                    <button type="button" id="forkGood">Fork at the last good version</button>
                    <button type="button" id="deleteQuarantined">Delete the session</button>
                  </div>
                  <p id="releaseResult" class="muted" aria-live="polite"></p>
                </section>
                <div class="cards" id="cards" hidden>
                  <section class="card" aria-labelledby="liveHeading">
                    <h3 id="liveHeading">Live state <span id="liveVersion" class="muted"></span></h3>
                    <pre id="liveState">—</pre>
                  </section>
                  <section class="card" aria-labelledby="sendHeading">
                    <h3 id="sendHeading">Send an action</h3>
                    <div id="exampleActions" class="row" role="group" aria-labelledby="sendHeading"></div>
                    <form id="actionForm">
                      <label class="block" for="actionEditor">Action JSON</label>
                      <textarea id="actionEditor" spellcheck="false"></textarea>
                      <button class="primary" type="submit" id="sendAction">Send</button>
                    </form>
                    <p id="actionResult" class="muted" aria-live="polite"></p>
                  </section>
                  <section class="card" aria-labelledby="stubHeading">
                    <h3 id="stubHeading">Stub mode</h3>
                    <label><input type="checkbox" id="stub"> Stub mode: actions are recorded, not run</label>
                    <form id="forceForm">
                      <label class="block" for="stateEditor">Forced state (JSON)</label>
                      <textarea id="stateEditor" spellcheck="false"></textarea>
                      <button type="submit" id="forceState">Force this state</button>
                    </form>
                    <p id="stubResult" class="muted" aria-live="polite"></p>
                  </section>
                  <section class="card half" aria-labelledby="travelHeading">
                    <h3 id="travelHeading">Time travel</h3>
                    <label class="block" for="versionSlider">Version
                      <output id="versionLabel" for="versionSlider"></output></label>
                    <input type="range" id="versionSlider" min="0" max="0" value="0" step="1">
                    <label><input type="checkbox" id="followLive" checked> follow the live version</label>
                    <pre id="versionState" aria-live="polite">—</pre>
                    <h3 id="diffHeading">What changed</h3>
                    <ul id="diff" aria-labelledby="diffHeading"></ul>
                    <form id="forkForm" class="row">
                      <label for="forkId">New id <span class="muted">(optional)</span></label>
                      <input id="forkId" size="14" autocomplete="off" spellcheck="false" pattern="[A-Za-z0-9_\-]{1,64}">
                      <button type="submit" id="fork">Fork at this version</button>
                    </form>
                    <p id="forkResult" class="muted" aria-live="polite"></p>
                  </section>
                  <section class="card half" aria-labelledby="logHeading">
                    <h3 id="logHeading">Action log</h3>
                    <div id="actionLogBox">
                      <table id="actionLog" aria-labelledby="logHeading">
                        <thead><tr>
                          <th scope="col" class="number">seq</th><th scope="col">accepted at</th>
                          <th scope="col">action</th><th scope="col">note</th>
                        </tr></thead>
                        <tbody></tbody>
                      </table>
                    </div>
                    <p id="logNote" class="muted"></p>
                  </section>
                  <section class="card half" aria-labelledby="timersHeading">
                    <h3 id="timersHeading">Pending timers</h3>
                    <table id="timers" aria-labelledby="timersHeading">
                      <thead><tr>
                        <th scope="col">name</th><th scope="col">due at</th><th scope="col">action</th>
                        <th scope="col"></th>
                      </tr></thead>
                      <tbody></tbody>
                    </table>
                    <p id="timersNote" class="muted" aria-live="polite"></p>
                  </section>
                </div>
              </section>
            </main>
            <script nonce="__NONCE__">
            """#
        + [
            WebScript.common, listStreamScript, script, sessionListScript, sessionScript, actionLogScript, timersScript,
            timeTravelScript, quarantineScript,
        ].joined(separator: "\n") + #"""

            // Everything is defined: connect (when this tab holds a token).
            refreshList();
            </script>
            </body>
            </html>
            """#
}
