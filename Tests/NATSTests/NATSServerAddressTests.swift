import NATS
import Testing

@Suite struct NATSServerAddressTests {
    @Test func parsesHostsPortsAndCredentials() throws {
        let plain = try NATSServerAddress(parsing: "nats://10.0.0.1:4333")
        #expect(plain.host == "10.0.0.1" && plain.port == 4333 && plain.user == nil && plain.token == nil)
        #expect(try NATSServerAddress(parsing: "localhost").port == 4222)
        #expect(try NATSServerAddress(parsing: "NATS://h:1/").host == "h")

        let userPassword = try NATSServerAddress(parsing: "nats://app:p%40ss:word@h:4222")
        #expect(userPassword.user == "app" && userPassword.password == "p@ss:word" && userPassword.token == nil)
        let token = try NATSServerAddress(parsing: "nats://s3cr3t@h")
        #expect(token.token == "s3cr3t" && token.user == nil)

        let ipv6 = try NATSServerAddress(parsing: "nats://[::1]:5222")
        #expect(ipv6.host == "::1" && ipv6.port == 5222 && ipv6.description == "nats://[::1]:5222")
    }

    @Test func descriptionsNeverShowCredentials() throws {
        let address = try NATSServerAddress(parsing: "nats://app:secret@h:4222")
        #expect(address.description == "nats://h:4222")
        do {
            _ = try NATSServerAddress(parsing: "nats://app:secret@h:notaport")
            Issue.record("an invalid port was accepted")
        } catch {
            #expect(!error.description.contains("secret"))
            #expect(error.description.contains("notaport"))
        }
    }

    @Test func parsesACommaSeparatedList() throws {
        let servers = try NATSServerAddress.list("nats://a:1, nats://b:2 ,c")
        #expect(servers.map(\.description) == ["nats://a:1", "nats://b:2", "nats://c:4222"])
    }

    @Test(arguments: [
        "", " , ", "tls://h:4222", "nats://:4222", "nats://h:0", "nats://h:70000", "nats://[::1", "nats://u:%zz@h",
    ])
    func refusesWhatCannotBeUsed(_ text: String) {
        #expect(throws: NATSError.self) { try NATSServerAddress.list(text) }
    }
}
