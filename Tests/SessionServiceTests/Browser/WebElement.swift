import Foundation

/// An element found in the page, by its WebDriver reference; stale once the page replaces it.
struct WebElement: @unchecked Sendable {
    /// The W3C name of an element reference in JSON.
    static let key = "element-6066-11e4-a52e-4f735466cecf"
    /// Keys as WebDriver spells them in text.
    enum Key {
        static let enter = "\u{E007}"
        static let tab = "\u{E004}"
        static let arrowLeft = "\u{E012}"
        static let arrowRight = "\u{E014}"
    }

    let browser: Browser
    let id: String
    /// How it was found, for messages.
    let selector: String

    /// Clicks it as a user would (scrolled into view; fails if something covers it or it is disabled).
    func click() async throws { try await browser.command("POST", "/element/\(id)/click") }

    /// Focuses it and types `text` (which may hold ``Key`` characters).
    func type(_ text: String) async throws { try await browser.command("POST", "/element/\(id)/value", ["text": text]) }

    /// Empties an input or textarea.
    func clear() async throws { try await browser.command("POST", "/element/\(id)/clear") }

    /// Its rendered text.
    func text() async throws -> String { try await browser.command("GET", "/element/\(id)/text") as? String ?? "" }

    /// A DOM property (`value`, `checked`, `disabled` …).
    func property(_ name: String) async throws -> Any? {
        try await browser.command("GET", "/element/\(id)/property/\(name)")
    }

    /// An HTML attribute, nil when absent.
    func attribute(_ name: String) async throws -> String? {
        try await browser.command("GET", "/element/\(id)/attribute/\(name)") as? String
    }

    /// Whether it can be used (not disabled).
    func isEnabled() async throws -> Bool {
        try await browser.command("GET", "/element/\(id)/enabled") as? Bool ?? false
    }
}
