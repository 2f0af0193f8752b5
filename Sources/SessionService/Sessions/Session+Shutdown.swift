import Reactors

// How a session ends with the process.
extension Session {
    @usableFromInline
    var runningEffects: Int { runtime.inFlightEffectCount }

    /// At shutdown, after the HTTP server stopped (no request, and no state it could still show,
    /// reaches the session any more): stops the runtime, which cancels every effect still running and
    /// drops whatever mutation they emit from now on. Their actions' completions are not journaled
    /// (a completion reporting `.stopped` never is, see `SessionJournal/ended(_:_:)`), so after a
    /// restart they read as interrupted, exactly as after a crash. Returns how many effect tasks ran.
    @usableFromInline
    func stopAtShutdown() -> Int {
        let running = runtime.inFlightEffectCount
        runtime.stop()
        return running
    }

    /// Returns once every effect task of the stopped runtime has ended (a cancelled effect ends at
    /// its next suspension that honours cancellation), and has returned: an exit right after must
    /// not find one between its last mutation and its end.
    @usableFromInline
    func waitForEffects() async {
        await runtime.waitForEffectTasks()
    }
}
