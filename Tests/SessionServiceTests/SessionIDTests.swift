import Testing

@testable import SessionService

@Suite struct SessionIDTests {
    @Test func randomIDsCarry128BitsAsValidBase64URL() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = SessionID.random()
            #expect(id.utf8.count == 22)  // 128 bits / 6 bits per character, rounded up
            #expect(SessionID.isValid(id))
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    @Test func base64URLMatchesRFC4648Vectors() {
        #expect(SessionID.base64URL(Array("f".utf8)) == "Zg")
        #expect(SessionID.base64URL(Array("fo".utf8)) == "Zm8")
        #expect(SessionID.base64URL(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(SessionID.base64URL([0xFB, 0xFF]) == "-_8")
    }

    @Test(arguments: [
        ("a", true), ("A-z_09", true), (String(repeating: "x", count: 64), true),
        ("", false), (String(repeating: "x", count: 65), false), ("a b", false), ("a/b", false),
        ("é", false), ("a.b", false), ("a%20", false),
    ])
    func validatesClientIDs(id: String, valid: Bool) {
        #expect(SessionID.isValid(id) == valid)
    }
}
