import Examples
import Foundation
import JSONCodec
import Reactors
import ReactorsTesting
import Testing

/// The `reminders` example on the tester's virtual clock: a reminder's timer sends `due` once its time comes,
/// a reminder asked again is rescheduled (one timer, one entry), a cancelled one never fires, and the wire
/// checks its bounds.
@Suite struct RemindersReactorTests {
    @Test func aReminderFiresOnceAtItsTime() async {
        let clock = TestClock()
        let tester = ReactorTester(RemindersReactor(), clock: clock)
        await tester.send(.remind(text: "tea", afterSeconds: 60)) { $0.pending = ["tea"] }
        #expect(tester.pendingTimers.map(\.name) == ["tea"])
        #expect(tester.pendingTimers.first?.at == .seconds(60))
        await tester.advance(by: .seconds(59))
        await tester.receive(.fire("tea"), timeout: .seconds(1)) {
            $0.pending = []
            $0.fired = ["tea"]
        }
        #expect(clock.now.offset == .seconds(60))
        #expect(tester.pendingTimers.isEmpty)
        await tester.advance(by: .seconds(3600))
        await tester.finish()
    }

    @Test func rescheduledOnceAndCancelledNever() async {
        let tester = ReactorTester(RemindersReactor(), clock: TestClock())
        await tester.send(.remind(text: "tea", afterSeconds: 10)) { $0.pending = ["tea"] }
        await tester.send(.remind(text: "post", afterSeconds: 20)) { $0.pending = ["tea", "post"] }
        // Asked again: still pending once, and its one timer moves to the new time.
        await tester.send(.remind(text: "tea", afterSeconds: 100)) { _ in }
        #expect(tester.pendingTimers.map(\.name) == ["post", "tea"])
        await tester.send(.cancel(text: "post")) { $0.pending = ["tea"] }
        #expect(tester.pendingTimers.map(\.name) == ["tea"])
        await tester.advance(by: .seconds(99))
        #expect(tester.state.fired == [])
        await tester.receive(.fire("tea"), timeout: .seconds(1)) {
            $0.pending = []
            $0.fired = ["tea"]
        }
        // A due for a reminder no longer pending (cancelled as it fell due) changes nothing.
        await tester.send(.due(text: "post"))
        await tester.finish()
    }

    @Test(arguments: [
        (#"{"type":"remind","text":"a","afterSeconds":1}"#, true),
        (#"{"type":"remind","text":"a","afterSeconds":86400}"#, true),
        (#"{"type":"remind","text":"a","afterSeconds":0}"#, false),
        (#"{"type":"remind","text":"a","afterSeconds":86401}"#, false),
        (#"{"type":"remind","text":"a","afterSeconds":1.5}"#, false),
        (#"{"type":"remind","text":"","afterSeconds":5}"#, false),
        (#"{"type":"cancel","text":"a"}"#, true),
    ])
    func wireBounds(body: String, decodes: Bool) {
        let action = try? JSONValueDecoder().decode(RemindersReactor.Action.self, from: Array(body.utf8))
        #expect((action != nil) == decodes, "\(body)")
    }

    @Test func onlyTheTimerSendsDue() {
        #expect(!RemindersReactor.acceptsFromOutside(.due(text: "a")))
        #expect(RemindersReactor.acceptsFromOutside(.remind(text: "a", afterSeconds: 1)))
        #expect(RemindersReactor.acceptsFromOutside(.cancel(text: "a")))
    }
}
