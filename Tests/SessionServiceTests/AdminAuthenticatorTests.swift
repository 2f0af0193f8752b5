import Testing

@testable import SessionService

@Suite struct AdminAuthenticatorTests {
    let auth = AdminAuthenticator(token: "s3cret-token")

    @Test func acceptsTheBearerTokenWithAnySchemeCase() {
        #expect(auth.isAuthorized(authorization: "Bearer s3cret-token"))
        #expect(auth.isAuthorized(authorization: "bearer s3cret-token"))
        #expect(auth.isAuthorized(authorization: "BEARER  s3cret-token "))
    }

    @Test(arguments: [
        nil, "", "Bearer", "Bearer ", "Basic s3cret-token", "Bearer s3cret-toke", "Bearer s3cret-tokenn",
        "Bearer s3cret-tokeN", "Bearer t3cret-token", "s3cret-token", "Bearer s3cret-token x",
    ])
    func rejectsAnythingElse(header: String?) {
        #expect(!auth.isAuthorized(authorization: header))
    }

    @Test func generatedTokensAreLongAndDistinct() {
        let a = AdminAuthenticator.generateToken()
        let b = AdminAuthenticator.generateToken()
        #expect(a.utf8.count == 44)
        #expect(a != b)
    }
}
