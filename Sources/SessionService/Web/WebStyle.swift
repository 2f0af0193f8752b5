/// The style both pages share (the page at `/` and the admin console): plain CSS, system fonts, no
/// external resources; each page adds a few rules of its own.
enum WebStyle {
    static let common = #"""
        :root { --ink: #1d1d1f; --muted: #5f5f66; --line: #d7d7dc; --soft: #f5f5f7; --accent: #0a64d8; --bad: #b00020;
          --good: #137333; --warn: #8a5a00; }
        * { box-sizing: border-box; }
        body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: var(--ink); background: #fff; }
        header.bar { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; padding: .6rem 1.5rem;
          border-bottom: 1px solid var(--line); background: var(--soft); }
        header.bar h1 { font-size: 1.15rem; margin: 0; display: flex; align-items: center; gap: .5rem; }
        header.bar h1 img { width: 22px; height: 22px; }
        header.bar nav { margin-left: auto; display: flex; gap: 1rem; }
        main { padding: 1rem 1.5rem 2rem; max-width: 78rem; margin: 0 auto; }
        h2 { font-size: 1.05rem; margin: 0 0 .6rem; }
        h3 { font-size: .95rem; margin: .8rem 0 .4rem; }
        section.card { border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; margin-bottom: 1rem;
          background: #fff; }
        a { color: var(--accent); }
        button { font: inherit; padding: .3rem .8rem; margin: .15rem .3rem .15rem 0; border-radius: 6px;
          border: 1px solid #8e8e93; background: var(--soft); color: var(--ink); cursor: pointer; }
        button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
        button.danger { color: var(--bad); border-color: var(--bad); background: #fff; }
        button:disabled { opacity: .45; cursor: not-allowed; }
        button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible,
          a:focus-visible { outline: 3px solid #7fb0f5; outline-offset: 1px; }
        input, select, textarea { font: 14px ui-monospace, SFMono-Regular, Menlo, monospace; padding: .3rem .4rem;
          border: 1px solid #9a9aa0; border-radius: 6px; background: #fff; color: var(--ink); }
        textarea { width: 100%; min-height: 4.5rem; resize: vertical; }
        label { display: inline-flex; gap: .35rem; align-items: center; }
        label.block { display: block; margin: .4rem 0 .2rem; font-weight: 600; font-size: .9rem; }
        pre { background: var(--soft); border-radius: 6px; padding: .6rem; overflow: auto; margin: .3rem 0;
          font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap;
          overflow-wrap: anywhere; }
        .row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
        .muted { color: var(--muted); font-size: .9rem; }
        .error { color: var(--bad); }
        .ok { color: var(--good); }
        .hidden { display: none !important; }
        [hidden] { display: none !important; }
        .status { display: inline-flex; align-items: center; gap: .4rem; font-size: .9rem; }
        .status::before { content: ""; width: .65rem; height: .65rem; border-radius: 50%; background: #9a9aa0;
          flex: none; }
        .status[data-kind="live"]::before, .status[data-kind="connected"]::before,
          .status[data-kind="polled"]::before { background: #1e9e3e; }
        .status[data-kind="connecting"]::before, .status[data-kind="retrying"]::before,
          .status[data-kind="unreachable"]::before { background: #e0a800; }
        .status[data-kind="gone"]::before, .status[data-kind="ended"]::before, .status[data-kind="denied"]::before,
          .status[data-kind="refused"]::before, .status[data-kind="error"]::before { background: var(--bad); }
        .spinner { width: 1.1rem; height: 1.1rem; border: 3px solid #c9d8f2; border-top-color: var(--accent);
          border-radius: 50%; animation: spin .8s linear infinite; display: inline-block; vertical-align: middle; }
        @keyframes spin { to { transform: rotate(360deg); } }
        @media (prefers-reduced-motion: reduce) { .spinner { animation-duration: 2.4s; } }
        .log { max-height: 16rem; overflow: auto; font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
        .log div { border-bottom: 1px solid #eee; padding: .15rem 0; word-break: break-all; }
        .log .pulse { color: #7a2bc2; }
        .log .error { color: var(--bad); }
        .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
          white-space: nowrap; }
        """#
}
