import ReactorServerTesting
import Reactors
import ReactorsTesting
import Synchronization
import Testing

@Suite(.offThePool) struct EffectTests {
    @Test func concatKeepsOrderAcrossAsyncParts() async throws {
        let runtime = ReactorRuntimeBox.make()
        let snapshot = try await runtime.sendAndWait(
            .effect { _ in
                .concat([
                    .just(.append(1)),
                    .run { emit in
                        await emit(.append(2))
                        await emit(.append(3))
                    },
                    .just(.append(4)),
                ])
            })
        #expect(snapshot.state.values == [1, 2, 3, 4])
        #expect(snapshot.version == 4)
    }

    @Test func emitReturnsOnlyAfterTheMutationIsReduced() async throws {
        let runtime = ReactorRuntimeBox.make()
        let seen = Mutex<[[Int]]>([])
        _ = try await runtime.sendAndWait(
            .effect { box in
                .run { emit in
                    await emit(.append(1))
                    seen.withLock { $0.append(box.runtime.currentState.values) }
                    await emit(.append(2))
                    seen.withLock { $0.append(box.runtime.currentState.values) }
                }
            })
        #expect(seen.withLock { $0 } == [[1], [1, 2]])
    }

    @Test func mergeRunsSynchronousPartsInlineAndAsyncPartsConcurrently() async throws {
        let runtime = ReactorRuntimeBox.make()
        let gate = Gate()
        let snapshot = try await runtime.sendAndWait(
            .effect { _ in
                .merge([
                    .run { emit in
                        try await gate.wait()
                        await emit(.append(3))
                    },
                    .just(.append(1)),
                    .run { emit in
                        await emit(.append(2))
                        gate.open()
                    },
                ])
            })
        #expect(snapshot.state.values == [1, 2, 3])
    }

    @Test func errorInOneEffectIsIsolated() async throws {
        let runtime = ReactorRuntimeBox.make()
        let errors = Mutex<[String]>([])
        runtime.setErrorHandler { error in errors.withLock { $0.append("\(error)") } }
        let snapshot = try await runtime.sendAndWait(
            .effect { _ in
                .merge([
                    .run { emit in
                        await emit(.append(1))
                        throw TestFailure("boom")
                    },
                    .run { emit in
                        await emit(.append(2))
                        await emit(.append(3))
                    },
                ])
            })
        #expect(snapshot.state.values.sorted() == [1, 2, 3])
        #expect(errors.withLock { $0 } == ["boom"])
        // The runtime lives on.
        try runtime.send(.set(4))
        #expect(runtime.currentState.values.last == 4)
    }

    @Test func cancelInFlightReplacesThePreviousEffect() async throws {
        let runtime = ReactorRuntimeBox.make()
        let firstStarted = Gate()
        let release = Gate()
        try runtime.send(
            .effect { _ in
                Effect.run { emit in
                    firstStarted.open()
                    try await release.wait()
                    await emit(.append(1))
                }.cancellable(id: "search", cancelInFlight: true)
            })
        try await firstStarted.wait()
        #expect(runtime.inFlightEffectCount == 1)
        let snapshot = try await runtime.sendAndWait(
            .effect { _ in
                Effect.run { emit in await emit(.append(2)) }.cancellable(id: "search", cancelInFlight: true)
            })
        release.open()
        try await runtime.settle()
        #expect(snapshot.state.values == [2])
        #expect(runtime.currentState.values == [2])
        #expect(runtime.inFlightEffectCount == 0)
    }

    @Test func cancelByIDDropsLaterMutations() async throws {
        let runtime = ReactorRuntimeBox.make()
        let started = Gate()
        let release = Gate()
        try runtime.send(
            .effect { _ in
                Effect.run { emit in
                    await emit(.append(1))
                    started.open()
                    try await release.wait()
                    await emit(.append(2))
                }.cancellable(id: 7)
            })
        try await started.wait()
        try runtime.send(.effect { _ in .cancel(id: 7) })
        release.open()
        try await runtime.settle()
        #expect(runtime.currentState.values == [1])
    }

    @Test func delayWaitsOnTheInjectedClock() async throws {
        let clock = TestClock()
        let runtime = ReactorRuntimeBox.make()
        try runtime.send(
            .effect { _ in
                .concat([.just(.append(1)), Effect.just(.append(2)).delay(for: .seconds(1), clock: clock)])
            })
        #expect(runtime.currentState.values == [1])
        await clock.waitForSleepers()
        await clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 1, "the delay ended before its second")
        #expect(runtime.currentState.values == [1])
        await clock.advance(by: .milliseconds(1))
        try await runtime.settle()
        #expect(runtime.currentState.values == [1, 2])
    }

    @Test func mapTransformsEveryMutation() async throws {
        let base: Effect<Int> = .concat([.just(1), .run { emit in await emit(2) }])
        let runtime = ReactorRuntimeBox.make()
        let snapshot = try await runtime.sendAndWait(.effect { _ in base.map { .append($0 * 10) } })
        #expect(snapshot.state.values == [10, 20])
    }

    @Test func completionWaitsForAsyncEffects() async throws {
        let runtime = ReactorRuntimeBox.make()
        let gate = Gate()
        let completed = Mutex<Snapshot<ScriptReactor.State>?>(nil)
        try runtime.send(
            .effect { _ in
                .concat([
                    .just(.append(1)),
                    .run { emit in
                        try await gate.wait()
                        await emit(.append(2))
                    },
                ])
            }
        ) { result in completed.withLock { $0 = try? result.get() } }
        #expect(completed.withLock { $0 } == nil)
        gate.open()
        try await runtime.settle()
        #expect(completed.withLock { $0 } == Snapshot(version: 2, state: .init(values: [1, 2])))
    }
}
