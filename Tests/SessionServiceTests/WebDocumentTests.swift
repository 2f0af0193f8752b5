import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// The pages as served: a fresh nonce per response, matching the policy header, no inline event
/// handlers and no placeholder left; and the icon they link.
@Suite(.offThePool) struct WebDocumentTests {
    @Test(arguments: ["/", "/admin/console"])
    func everyResponseHasItsOwnNonceUnderAStrictPolicy(path: String) throws {
        let server = try TestServer()
        var nonces: [String] = []
        for _ in 0..<2 {
            let page = try server.request("GET", path)
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            let policy = try #require(page.header("Content-Security-Policy"))
            #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
            #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"))
            let nonce = try #require(policy.firstMatch(of: /script-src 'nonce-([0-9a-f]{32})'/)?.1)
            #expect(policy.contains("style-src 'nonce-\(nonce)'"))
            #expect(
                page.text.components(separatedBy: "nonce=\"\(nonce)\"").count == 3,
                "the style and the script carry the nonce")
            #expect(!page.text.contains(WebDocument.placeholder))
            #expect(page.text.firstMatch(of: /<[^>]*\son[a-z]+\s*=/) == nil, "no inline event handlers")
            #expect(page.text.contains(#"<link rel="icon" type="image/svg+xml" href="/favicon.ico">"#))
            nonces.append(String(nonce))
        }
        #expect(nonces[0] != nonces[1])
    }

    @Test func theIconIsAnSVG() throws {
        let server = try TestServer()
        let icon = try server.request("GET", "/favicon.ico")
        #expect(icon.status == 200)
        #expect(icon.header("Content-Type") == "image/svg+xml")
        #expect(icon.text.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    }

    @Test func theConsolePageNeedsNoTokenButItsDataDoes() throws {
        let server = try TestServer()
        #expect(try server.request("GET", "/admin/console").status == 200)
        #expect(try server.request("GET", "/admin/sessions").status == 401)
    }
}
