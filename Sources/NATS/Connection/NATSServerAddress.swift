/// One server to connect to, parsed from `nats://[user:password@|token@]host[:port]`.
///
/// Credentials in the URL are kept for the `CONNECT` but never shown: ``description`` is
/// `nats://host:port`, safe for logs and error messages.
///
/// ```swift
/// let servers = try NATSServerAddress.list("nats://app:s3cret@10.0.0.1:4222,nats://10.0.0.2")
/// servers[1].port   // 4222
/// ```
public struct NATSServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// A host name or numeric address (IPv6 without brackets).
    public var host: String
    /// The client port (4222 unless given).
    public var port: Int
    /// The user name, from `user:password@`.
    public var user: String?
    /// The password, from `user:password@`.
    public var password: String?
    /// The token, from `token@`.
    public var token: String?

    /// A server at `host:port` without credentials.
    public init(host: String, port: Int = 4222) {
        self.host = host
        self.port = port
    }

    /// Parses one URL. The scheme may be `nats://` or omitted; `tls://` is refused (TLS is not supported).
    /// `%XX` escapes in the user, password and token are decoded.
    public init(parsing text: String) throws(NATSError) {
        var rest = Substring(text.trimmingBlanks())
        if let schemeEnd = rest.endOfScheme {
            let scheme = rest[..<rest.index(schemeEnd, offsetBy: -3)].lowercased()
            guard scheme == "nats" else {
                throw NATSError.invalidArgument(
                    "unsupported scheme \(scheme):// in NATS server \"\(Self.redacted(text))\" "
                        + "(only nats://; TLS is not supported)"
                )
            }
            rest = rest[schemeEnd...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.percentDecoded(userInfo[..<colon], in: text)
                password = try Self.percentDecoded(userInfo[userInfo.index(after: colon)...], in: text)
            } else {
                token = try Self.percentDecoded(userInfo, in: text)
            }
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw NATSError.invalidArgument("unclosed [ in NATS server \"\(Self.redacted(text))\"")
            }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw NATSError.invalidArgument("unexpected text after ] in NATS server \"\(Self.redacted(text))\"")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        } else {
            host = String(rest)
        }
        port = 4222
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw NATSError.invalidArgument(
                    "invalid port \"\(portText)\" in NATS server \"\(Self.redacted(text))\"")
            }
            port = value
        }
        guard !host.isEmpty else {
            throw NATSError.invalidArgument("no host in NATS server \"\(Self.redacted(text))\"")
        }
    }

    /// Parses a comma-separated list, as `storage.nats.servers` gives it.
    public static func list(_ text: String) throws(NATSError) -> [NATSServerAddress] {
        var servers: [NATSServerAddress] = []
        for part in text.split(separator: ",") where !String(part).trimmingBlanks().isEmpty {
            servers.append(try NATSServerAddress(parsing: String(part)))
        }
        guard !servers.isEmpty else { throw NATSError.invalidArgument("no NATS server given") }
        return servers
    }

    /// `nats://host:port`, without credentials.
    public var description: String {
        host.contains(":") ? "nats://[\(host)]:\(port)" : "nats://\(host):\(port)"
    }

    /// Whether this is the same endpoint as `other`, whatever the credentials.
    func sameEndpoint(as other: NATSServerAddress) -> Bool {
        host == other.host && port == other.port
    }

    /// `text` with anything before an `@` replaced, for error messages.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let schemeEnd = Substring(text).endOfScheme ?? text.startIndex
        return String(text[..<schemeEnd]) + "***" + String(text[at...])
    }

    private static func percentDecoded(_ text: Substring, in url: String) throws(NATSError) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else {
                throw NATSError.invalidArgument(
                    "invalid %-escape in the credentials of NATS server \"\(redacted(url))\"")
            }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Substring {
    /// The index just after `://`, if the text has one.
    var endOfScheme: Index? {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix("://") { return self.index(index, offsetBy: 3) }
            index = self.index(after: index)
        }
        return nil
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    func trimmingBlanks() -> String {
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { !$0.isBlank }), let last = bytes.lastIndex(where: { !$0.isBlank })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
