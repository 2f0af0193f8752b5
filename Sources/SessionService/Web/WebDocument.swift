/// A page served from the binary (the page at `/`, the admin console): HTML whose scripts and styles
/// carry a fresh nonce per response, under a Content-Security-Policy that allows nothing else: no
/// inline event handlers, no `eval`, nothing from another origin.
///
/// ```swift
/// let page = WebDocument(template: "<script nonce=\"__NONCE__\">…</script>")
/// let (body, headers) = page.render()
/// ```
struct WebDocument: Sendable {
    static let contentType = "text/html; charset=utf-8"
    static let placeholder = "__NONCE__"

    /// The template's bytes around each nonce placeholder.
    let parts: [[UInt8]]

    /// A page from HTML in which every `__NONCE__` is replaced by the response's nonce.
    init(template: String) {
        parts = template.split(separator: Self.placeholder, omittingEmptySubsequences: false).map { Array($0.utf8) }
    }

    /// The body and headers of one response, with a nonce no earlier response had.
    func render() -> (body: [UInt8], headers: [(String, String)]) {
        let nonce = Self.makeNonce()
        var body: [UInt8] = []
        body.reserveCapacity(parts.reduce(0) { $0 + $1.count } + parts.count * nonce.utf8.count)
        for (index, part) in parts.enumerated() {
            if index > 0 { body += nonce.utf8 }
            body += part
        }
        return (body, Self.headers(nonce: nonce))
    }

    /// The headers every page carries: the policy, no sniffing, no referrer (a page's URL holds a
    /// session id), and revalidation (each response has its own nonce).
    static func headers(nonce: String) -> [(String, String)] {
        [
            ("Content-Security-Policy", contentSecurityPolicy(nonce: nonce)),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-cache"),
        ]
    }

    /// Scripts and styles only with this response's nonce; requests only to this origin; the icon from here.
    static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; "
            + "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// 128 random bits as hex (hex digits are base64 characters, as CSP wants).
    static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for _ in 0..<2 {
            let word = generator.next() as UInt64
            for shift in stride(from: 60, through: 0, by: -4) {
                text.append(digits[Int((word >> UInt64(shift)) & 0xF)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
