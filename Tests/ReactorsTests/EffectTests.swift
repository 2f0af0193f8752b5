import Reactors
import Synchronization
import Testing

@Suite struct EffectTests {
    @Test func concatKeepsOrderAcrossAsyncParts() async throws {
        let runtime = ReactorRuntimeBox.make()
        let snapshot = try await runtime.sendAndWait(.effect { _ in
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
        _ = try await runtime.sendAndWait(.effect { box in
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
        let snapshot = try await runtime.sendAndWait(.effect { _ in
            .merge([
                .run { emit in
                    await gate.wait()
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
        let snapshot = try await runtime.sendAndWait(.effect { _ in
            .merge([
                .run { emit in
                    await emit(.append(1))
                    throw TestFailure(reason: "boom")
                },
                .run { emit in
                    await emit(.append(2))
                    await emit(.append(3))
                },
            ])
        })
        #expect(snapshot.state.values.sorted() == [1, 2, 3])
        #expect(errors.withLock { $0 } == [#"TestFailure(reason: "boom")"#])
        // The runtime lives on.
        try runtime.send(.set(4))
        #expect(runtime.currentState.values.last == 4)
    }

    @Test func cancelInFlightReplacesThePreviousEffect() async throws {
        let runtime = ReactorRuntimeBox.make()
        let firstStarted = Gate()
        let release = Gate()
        try runtime.send(.effect { _ in
            Effect.run { emit in
                firstStarted.open()
                await release.wait()
                await emit(.append(1))
            }.cancellable(id: "search", cancelInFlight: true)
        })
        await firstStarted.wait()
        #expect(runtime.inFlightEffectCount == 1)
        let snapshot = try await runtime.sendAndWait(.effect { _ in
            Effect.run { emit in await emit(.append(2)) }.cancellable(id: "search", cancelInFlight: true)
        })
        release.open()
        await runtime.waitForEffects()
        #expect(snapshot.state.values == [2])
        #expect(runtime.currentState.values == [2])
        #expect(runtime.inFlightEffectCount == 0)
    }

    @Test func cancelByIDDropsLaterMutations() async throws {
        let runtime = ReactorRuntimeBox.make()
        let started = Gate()
        let release = Gate()
        try runtime.send(.effect { _ in
            Effect.run { emit in
                await emit(.append(1))
                started.open()
                await release.wait()
                await emit(.append(2))
            }.cancellable(id: 7)
        })
        await started.wait()
        try runtime.send(.effect { _ in .cancel(id: 7) })
        release.open()
        await runtime.waitForEffects()
        #expect(runtime.currentState.values == [1])
    }

    @Test func delayWaitsOnTheInjectedClock() async throws {
        let clock = ManualClock()
        let runtime = ReactorRuntimeBox.make()
        try runtime.send(.effect { _ in
            .concat([.just(.append(1)), Effect.just(.append(2)).delay(for: .seconds(1), clock: clock)])
        })
        #expect(runtime.currentState.values == [1])
        await clock.waitForSleeper()
        #expect(runtime.currentState.values == [1])
        clock.fire()
        await runtime.waitForEffects()
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
        try runtime.send(.effect { _ in
            .concat([.just(.append(1)), .run { emit in
                await gate.wait()
                await emit(.append(2))
            }])
        }) { result in completed.withLock { $0 = try? result.get() } }
        #expect(completed.withLock { $0 } == nil)
        gate.open()
        await runtime.waitForEffects()
        #expect(completed.withLock { $0 } == Snapshot(version: 2, state: .init(values: [1, 2])))
    }
}

/// A clock with one sleeper that a test fires by hand (the `TestClock` of ReactorsTesting is tested separately).
final class ManualClock: Clock, Sendable {
    private let state = Mutex<(sleeper: CheckedContinuation<Void, Never>?, waiter: CheckedContinuation<Void, Never>?)>((nil, nil))
    var now: ContinuousClock.Instant { ContinuousClock.now }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { continuation in
            let waiter = state.withLock { state in
                state.sleeper = continuation
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    func waitForSleeper() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.sleeper != nil { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func fire() {
        state.withLock { state in
            defer { state.sleeper = nil }
            return state.sleeper
        }?.resume()
    }
}
