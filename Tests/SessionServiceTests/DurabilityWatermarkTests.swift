import Synchronization
import Testing

@testable import SessionService

/// The NATS backend's watermark: positions resolved out of order, and positions lost.
@Suite struct DurabilityWatermarkTests {
    @Test func theWatermarkMovesOverResolvedPositionsOnlyWhenNothingBeforeThemIsInFlight() {
        let watermark = DurabilityWatermark()
        let first = watermark.allocate()
        let second = watermark.allocate()
        let woken = Atomic<Int>(0)
        watermark.whenDurable(second) { woken.add(1, ordering: .relaxed) }
        watermark.resolve([second])
        #expect(watermark.durablePosition == 0)
        #expect(woken.load(ordering: .relaxed) == 0)
        watermark.resolve([first])
        #expect(watermark.durablePosition == 2)
        #expect(woken.load(ordering: .relaxed) == 1)
    }

    @Test func aPositionResolvedExactlyIsDurableForItsSessionBeforeTheWatermarkReachesIt() {
        let watermark = DurabilityWatermark()
        let otherSession = watermark.allocate()
        let exact = watermark.allocate()
        let inexact = watermark.allocate()
        let exactWoken = Atomic<Int>(0)
        let wholeWoken = Atomic<Int>(0)
        watermark.whenDurableExactly(exact) { exactWoken.add(1, ordering: .relaxed) }
        watermark.whenDurable(exact) { wholeWoken.add(1, ordering: .relaxed) }
        watermark.resolve([exact], exactly: true)
        watermark.resolve([inexact])
        #expect(watermark.isDurableExactly(exact))
        #expect(!watermark.isDurable(exact), "a record of another session before it is in flight")
        #expect(!watermark.isDurableExactly(inexact), "resolved without its session's word: the watermark decides")
        #expect(exactWoken.load(ordering: .relaxed) == 1)
        #expect(wholeWoken.load(ordering: .relaxed) == 0)
        // Asked once it is resolved: at once.
        watermark.whenDurableExactly(exact) { exactWoken.add(1, ordering: .relaxed) }
        #expect(exactWoken.load(ordering: .relaxed) == 2)
        watermark.resolve([otherSession])
        #expect(watermark.durablePosition == inexact)
        #expect(wholeWoken.load(ordering: .relaxed) == 1)
        #expect(watermark.isDurableExactly(inexact))
    }

    @Test func aLostPositionIsPassedAndNamedWhileOthersStayDurable() {
        let watermark = DurabilityWatermark()
        let kept = watermark.allocate()
        let lost = watermark.allocate()
        let after = watermark.allocate()
        let woken = Atomic<Int>(0)
        watermark.whenDurable(after) { woken.add(1, ordering: .relaxed) }
        watermark.resolve([kept, after])
        #expect(woken.load(ordering: .relaxed) == 0, "the lost one is still in flight")
        #expect(watermark.lossReason(lost) == nil)
        watermark.markLost([lost], reason: "session s was taken over")
        #expect(woken.load(ordering: .relaxed) == 1)
        #expect(watermark.isDurable(after))
        #expect(watermark.lossReason(lost) == "session s was taken over")
        #expect(watermark.lossReason(kept) == nil)
        #expect(watermark.lossReason(after) == nil)
    }

    @Test func onlyTheNewestLostPositionsAreRemembered() {
        let watermark = DurabilityWatermark()
        let count = DurabilityWatermark.lostCapacity + 10
        let positions = (0..<count).map { _ in watermark.allocate() }
        for position in positions { watermark.markLost([position], reason: "gone") }
        #expect(watermark.durablePosition == UInt64(count))
        #expect(watermark.lossReason(positions[0]) == nil, "the oldest are forgotten")
        #expect(watermark.lossReason(positions[count - 1]) == "gone")
        #expect(watermark.lossReason(positions[10]) == "gone")
        #expect(watermark.lossReason(positions[9]) == nil)
    }
}
