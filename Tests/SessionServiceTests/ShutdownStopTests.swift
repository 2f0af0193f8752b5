import Foundation
import Logs
import ReactorServerTesting
import Reactors
import Synchronization
import Testing

@testable import SessionService

/// A latch an effect waits on that ignores cancellation: an effect stuck on something no cancel reaches.
final class StubbornLatch: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Returns once ``open()`` was called, whether or not the calling task was cancelled.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A reactor whose one action starts an effect that waits on a ``StubbornLatch``, then counts.
struct StubbornReactor: Reactor {
    enum Action: Codable, Sendable { case wait }
    enum Mutation: Codable, Sendable { case started, counted }
    struct State: Codable, Sendable, Equatable { var count = 0 }

    let latch: StubbornLatch
    let started: Recorder<Int>
    var initialState: State { State() }

    func mutate(action: Action) -> Effect<Mutation> {
        .concat([
            .just(.started),
            .run { [latch, started] emit in
                started.record(1)
                await latch.wait()
                await emit(.counted)
            },
        ])
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        state.count += 1
        return state
    }
}

/// What shutdown does with effects still running once the HTTP server has stopped: it stops every
/// session, cancels them, and waits (bounded) for their tasks; whatever they emit afterwards is dropped.
@Suite(.offThePool) struct ShutdownStopTests {
    @Test func aCancelledEffectEndsWithinTheBoundAndItsLaterWorkNeverRuns() async throws {
        try await withTemporaryDirectory("shutdown-stop") { directory in
            let server = try TestServer(dataDirectory: directory)
            let id = try server.createSession("fruit")
            #expect(try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"apple"}"#).status == 202)
            // The delayed name sleeps on the test clock: the effect is in flight until the clock moves.
            await server.clock.reactorClock.waitForSleepers(1)
            let store = server.server.service.store
            // It blocks its thread, as at shutdown: not one of the shared pool's.
            let outcome = try await offPool { store.stopAtShutdown(grace: .zero, within: defaultBound) }
            #expect(outcome == ShutdownStop(effectsCutOff: 1, effectsEnded: true))
            #expect(server.clock.reactorClock.sleeperCount == 0, "the cancelled effect no longer sleeps")
            await server.clock.advance(by: .seconds(1))
            #expect(
                server.server.service.store.session(id)?.snapshot().version == 1, "only the spinner, never the name")
            server.stop()

            let restarted = try TestServer(dataDirectory: directory)
            let log =
                try restarted.request(
                    "GET", "/admin/sessions/\(id)/actions",
                    headers: [("Authorization", "Bearer \(TestServer.adminToken)")]
                ).json()["actions"] as? [[String: Any]]
            #expect(log?.map { $0["interrupted"] as? Bool ?? false } == [true])
        }
    }

    @Test func anEffectFinishingWithinTheGraceIsNotCutOff() async throws {
        try await withTemporaryDirectory("shutdown-grace") { directory in
            let server = try TestServer(dataDirectory: directory)
            let id = try server.createSession("fruit")
            #expect(try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"apple"}"#).status == 202)
            await server.clock.reactorClock.waitForSleepers(1)
            let store = server.server.service.store
            // The grace runs on the service's clock: nothing is cut off while the test holds it still.
            async let stop = waitFor("shutdown's stop to return") {
                try await offPool { store.stopAtShutdown(grace: .seconds(17), within: defaultBound) }
            }
            try await server.clock.scheduled.next("the grace to be armed") { $0 == .seconds(17) }
            await server.clock.advance(by: .seconds(1))
            #expect(try await stop == ShutdownStop(effectsCutOff: 0, effectsEnded: true))
            #expect(store.session(id)?.snapshot().version == 3, "the effect finished: spinner, name, spinner off")
            server.stop()

            let restarted = try TestServer(dataDirectory: directory)
            let log =
                try restarted.request(
                    "GET", "/admin/sessions/\(id)/actions",
                    headers: [("Authorization", "Bearer \(TestServer.adminToken)")]
                ).json()["actions"] as? [[String: Any]]
            #expect(log?.map { $0["interrupted"] as? Bool ?? false } == [false])
        }
    }

    @Test func anEffectIgnoringCancellationIsLeftAfterTheBoundAndSaidSo() async throws {
        let latch = StubbornLatch()
        let started = Recorder<Int>()
        let server = try TestServer(catalog: { catalog in
            catalog.register("stubborn") { StubbornReactor(latch: latch, started: started) }
        })
        defer { latch.open() }
        let id = try server.createSession("stubborn")
        #expect(try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"wait"}"#).status == 202)
        try await started.waitForCount(1, "the effect to start waiting")
        let session = try #require(server.server.service.store.session(id))

        let reactorServer = server.server
        try await offPool { reactorServer.stopSessions(within: .milliseconds(100)) }
        let warning = try #require(server.logs.values.first { $0.message.contains("not all of them ended in time") })
        #expect(warning.level == .warning)
        #expect(warning.fields.contains { $0.key == "effects" && $0.value == .int(1) })
        #expect(warning.fields.contains { $0.key == "ended" && $0.value == .bool(false) })

        // Let go, the effect ends; what it emits reaches a stopped runtime and is dropped.
        latch.open()
        try await waitFor("the stubborn effect to end once its latch opens") { await session.waitForEffects() }
        #expect(session.snapshot().version == 1, "its late mutation was dropped")
    }
}
