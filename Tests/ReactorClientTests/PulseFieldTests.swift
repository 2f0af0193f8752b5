import Examples
import Reactors
import Testing

@testable import ReactorClient

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

    struct Cursor: Codable, Sendable {
        var line = 0
        @Pulse var flash = false
    }

    struct Editor: Codable, Sendable {
        var text = ""
        @Pulse var alert: String? = nil
        var cursor = Cursor()
    }

    struct Document: Codable, Sendable {
        @Pulse var alert: String? = nil
        var editor = Editor()
        var other = Editor()
        var draft: Editor? = nil
    }

    @Test func aKeyPathThroughNestedStructsNamesThePulseByItsPath() {
        #expect(PulseField.name(of: { $0[keyPath: \Document.$alert] }, in: Document()) == "alert")
        #expect(PulseField.name(of: { $0[keyPath: \Document.editor.$alert] }, in: Document()) == "editor.alert")
        #expect(PulseField.name(of: { $0[keyPath: \Document.other.$alert] }, in: Document()) == "other.alert")
        let flash = PulseField.name(of: { $0[keyPath: \Document.editor.cursor.$flash] }, in: Document())
        #expect(flash == "editor.cursor.flash")
        // The server never delivers a pulse inside an optional: there is no name to follow.
        let draft = PulseField.name(of: { $0.draft?.$alert ?? Pulse(wrappedValue: nil) }, in: Document(draft: Editor()))
        #expect(draft == nil)
    }

    @Test func theSampleIsLeftAlone() {
        var panel = Panel()
        panel.toast = "hello"
        _ = PulseField.name(of: { $0[keyPath: \Panel.$toast] }, in: panel)
        #expect(panel.$toast.count == 1)
        #expect(panel.toast == "hello")
    }
}
