@testable import ReactorClient
import Examples
import Reactors
import Testing

/// `pulse(\.$alert)` finds the property the key path names, also among several pulses of the same type.
@Suite struct PulseFieldTests {
    struct Panel: Codable, Sendable {
        var title = "t"
        @Pulse var toast: String? = nil
        var count = 0
        @Pulse var banner: String? = nil
        @Pulse var shake: Bool = false
        var derived: Pulse<String?> { Pulse(wrappedValue: title) }
    }

    @Test func theKeyPathNamesItsProperty() {
        #expect(PulseField.name(of: { $0[keyPath: \TodoReactor.State.$alert] }, in: TodoReactor.State()) == "alert")
        #expect(PulseField.name(of: { $0[keyPath: \Panel.$toast] }, in: Panel()) == "toast")
        #expect(PulseField.name(of: { $0[keyPath: \Panel.$banner] }, in: Panel()) == "banner")
        #expect(PulseField.name(of: { $0[keyPath: \Panel.$shake] }, in: Panel()) == "shake")
    }

    @Test func somethingElseHasNoName() {
        #expect(PulseField.name(of: { $0[keyPath: \Panel.derived] }, in: Panel()) == nil)
        #expect(PulseField.name(of: { _ in Pulse(wrappedValue: 1) }, in: Panel()) == nil)
    }

    @Test func theSampleIsLeftAlone() {
        var panel = Panel()
        panel.toast = "hello"
        _ = PulseField.name(of: { $0[keyPath: \Panel.$toast] }, in: panel)
        #expect(panel.$toast.count == 1)
        #expect(panel.toast == "hello")
    }
}
