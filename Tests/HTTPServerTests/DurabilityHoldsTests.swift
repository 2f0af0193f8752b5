import Testing

@testable import HTTPServer

/// The bookkeeping behind the output barrier, without sockets: which queued bytes may be written as
/// positions become durable, in order, and which answer a refusal may replace.
@Suite struct DurabilityHoldsTests {
    /// A watermark the test moves.
    static func upTo(_ durable: UInt64) -> (UInt64) -> Bool { { $0 <= durable } }

    @Test func bytesShowingADurablePositionAreNeverHeld() {
        var holds = DurabilityHolds()
        let durable = holds.isDurable(3, Self.upTo(3))
        #expect(durable)
        holds.add(10, position: 2)
        #expect(holds.held == 0)
        #expect(holds.firstPosition == nil)
    }

    @Test func heldBytesGoFrontFirstAsTheirPositionsBecomeDurable() {
        var holds = DurabilityHolds()
        holds.add(10, position: 1)
        holds.add(5, position: 3)
        holds.add(7, position: 2)  // after bytes waiting for 3: it waits for 3 too
        #expect(holds.held == 22)
        holds.release(Self.upTo(0))
        #expect(holds.held == 22)
        holds.release(Self.upTo(2))
        #expect(holds.held == 12, "only the bytes up to the first mark go; the rest waits for 3")
        #expect(holds.firstPosition == 3)
        holds.release(Self.upTo(3))
        #expect(holds.held == 0)
        #expect(holds.firstPosition == nil)
        // What was seen durable is remembered: no need to ask again.
        holds.add(4, position: 3)
        #expect(holds.held == 0)
    }

    @Test func aLaterAnswerNeverOvertakesAnEarlierOneEvenWhenDurableFirst() {
        var holds = DurabilityHolds()
        holds.add(10, position: 5)
        holds.add(10, position: 0)  // shows nothing stored, but is queued behind position 5
        holds.release(Self.upTo(4))
        #expect(holds.held == 20)
        holds.release(Self.upTo(5))
        #expect(holds.held == 0)
    }

    @Test func onlyTheFirstHeldAnswerDecidesWhetherARefusalReplacesIt() {
        var holds = DurabilityHolds()
        holds.add(10, position: 2, refusable: true)
        holds.add(3, position: 2)  // its body: same mark
        #expect(holds.firstIsRefusable)
        holds.add(6, position: 4)
        holds.release(Self.upTo(2))
        #expect(holds.held == 6)
        #expect(!holds.firstIsRefusable, "a stream event or a read after it is not refusable")
        holds.removeAll()
        #expect(holds.held == 0)
        #expect(holds.awaited == nil)
    }
}

/// With a barrier that may lose positions: a later position durable no longer says an earlier one is.
@Suite struct LosableDurabilityHoldsTests {
    static func lost(_ positions: Set<UInt64>) -> (UInt64) -> Bool { { positions.contains($0) } }

    @Test func anExactEarlierPositionQueuedBehindALaterOneKeepsItsOwnMark() {
        var holds = DurabilityHolds()
        holds.losable = true
        holds.add(10, position: 8, exact: true)
        holds.add(5, position: 3, exact: true)
        holds.release(DurabilityHoldsTests.upTo(9), isLost: Self.lost([3]))
        #expect(holds.held == 5, "the bytes showing 3 stay: 3 is lost")
        #expect(holds.firstPosition == 3)
        #expect(holds.firstIsLost(Self.lost([3])))
        #expect(!holds.firstIsLost(Self.lost([])))
    }

    @Test func outputDependingOnEverythingAppendedWaitsForTheWatermarkBehindAnExactMark() {
        var holds = DurabilityHolds()
        holds.losable = true
        holds.add(10, position: 8, exact: true)
        holds.add(5, position: 3)  // not exact: it needs the watermark past 3
        // 8's session is durable, the watermark is at 2: the exact bytes go, the others wait for the watermark.
        holds.release(DurabilityHoldsTests.upTo(2), isLost: Self.lost([]), isDurableExactly: { $0 == 8 })
        #expect(holds.held == 5)
        #expect(holds.firstPosition == 3)
        #expect(!holds.firstIsExact)
        holds.release(DurabilityHoldsTests.upTo(9), isLost: Self.lost([3]))
        #expect(holds.held == 0)
    }

    @Test func anExactMarkGoesWhenItsSessionIsDurableWithoutMovingWhatWasSeenDurable() {
        var holds = DurabilityHolds()
        holds.losable = true
        let exactly: (UInt64) -> Bool = { $0 == 7 }
        holds.add(10, position: 7, exact: true)
        #expect(holds.firstIsExact)
        holds.release(DurabilityHoldsTests.upTo(2), isDurableExactly: { _ in false })
        #expect(holds.held == 10, "neither the watermark nor its session says 7 is durable")
        holds.release(DurabilityHoldsTests.upTo(2), isDurableExactly: exactly)
        #expect(holds.held == 0)
        #expect(holds.durable < 7, "7 durable for its session says nothing of other sessions' records before it")
        // Output depending on everything appended up to 5 is not written at once on the strength of 7.
        let everything = holds.isDurable(5, DurabilityHoldsTests.upTo(2), isDurableExactly: exactly)
        #expect(!everything)
        let itsSession = holds.isDurable(7, exact: true, DurabilityHoldsTests.upTo(2), isDurableExactly: exactly)
        #expect(itsSession)
        // Lost stays lost, however its session's other records went.
        holds.add(3, position: 7, exact: true, isLost: Self.lost([7]))
        holds.release(DurabilityHoldsTests.upTo(2), isLost: Self.lost([7]), isDurableExactly: exactly)
        #expect(holds.held == 3)
    }

    @Test func aBarrierThatNeverLosesIgnoresExactDurability() {
        var holds = DurabilityHolds()
        holds.add(10, position: 7, exact: true)
        holds.release(DurabilityHoldsTests.upTo(2), isDurableExactly: { _ in true })
        #expect(holds.held == 10, "without losses, only the watermark says anything")
    }

    @Test func whatWasSeenDurableDoesNotReleaseALostPosition() {
        var holds = DurabilityHolds()
        holds.losable = true
        let later = holds.isDurable(9, exact: true, DurabilityHoldsTests.upTo(9))
        #expect(later)
        let lostOne = holds.isDurable(3, exact: true, DurabilityHoldsTests.upTo(9), isLost: Self.lost([3]))
        #expect(!lostOne)
        let inexact = holds.isDurable(3, DurabilityHoldsTests.upTo(9), isLost: Self.lost([3]))
        #expect(inexact, "not exact: the watermark is enough")
        holds.add(4, position: 3, exact: true, isLost: Self.lost([3]))
        #expect(holds.held == 4)
        holds.add(4, position: 2, exact: true, isLost: Self.lost([3]))
        holds.release(DurabilityHoldsTests.upTo(9), isLost: Self.lost([3]))
        #expect(holds.held == 8, "nothing passes the lost bytes at the front")
    }

    @Test func aBarrierThatNeverLosesKeepsJoiningMarks() {
        var holds = DurabilityHolds()
        holds.add(10, position: 8, exact: true)
        holds.add(5, position: 3, exact: true)
        holds.release(DurabilityHoldsTests.upTo(8), isLost: Self.lost([3]))
        #expect(holds.held == 0, "without losses, 8 durable says 3 is")
    }
}
