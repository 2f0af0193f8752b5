/// The stored form of a ``SessionToken``: SHA-256 over a domain label and the token, never the token.
///
/// Knowing a stored hash (a copy of the journal, a backup) does not let anyone act on the session: the
/// token has 256 random bits, so it cannot be recovered from its hash. The label keeps these hashes
/// apart from any other SHA-256 of the same text the server might compute.
///
/// ```swift
/// let stored = SessionTokenHash(storedText: record.tokenHash)   // nil if the record is damaged
/// if SessionTokenHash.verify(presented: bearer, against: stored) { … }
/// ```
public struct SessionTokenHash: Sendable {
    /// Prepended to every token before hashing (with a NUL after it); a new scheme gets a new label.
    static let domainLabel = Array("reactor-server session token v1".utf8) + [0]
    /// Presented tokens longer than this are refused without hashing (a real one has 43 characters).
    public static let maxPresentedLength = 256

    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// The hash of a token's text as presented (the `Authorization` value or the `access_token` part).
    init(hashing text: some Collection<UInt8>) {
        var hasher = SHA256()
        hasher.update(Self.domainLabel)
        hasher.update(text)
        bytes = hasher.finalize()
    }

    /// A hash read back from storage: exactly 64 lowercase hexadecimal digits, else nil.
    public init?(storedText: String) {
        let digits = Array(storedText.utf8)
        guard digits.count == 2 * SHA256.byteCount else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(SHA256.byteCount)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.hexValue(digits[index]), let low = Self.hexValue(digits[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// The form to store: 64 lowercase hexadecimal digits.
    public var storedText: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(2 * bytes.count)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `presented` is the token this hash was made from, compared in constant time.
    public func matches(_ presented: some StringProtocol) -> Bool {
        let utf8 = presented.utf8
        guard utf8.count <= Self.maxPresentedLength else { return false }
        return ConstantTime.equals(SessionTokenHash(hashing: utf8).bytes, bytes)
    }

    /// Whether `presented` matches `stored`, doing the same work when either is missing, so that an unknown
    /// session (no stored hash) and a wrong token take the same time and get the same answer.
    public static func verify(presented: String?, against stored: SessionTokenHash?) -> Bool {
        let candidate = stored ?? decoy
        guard let presented else {
            _ = candidate.matches("")
            return false
        }
        return candidate.matches(presented) && stored != nil
    }

    /// Compared against when there is nothing to compare with; no text hashes to it in practice.
    static let decoy = SessionTokenHash(hashing: Array("no session".utf8))

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

extension SessionTokenHash: Equatable {
    /// Equal digests, compared in constant time.
    public static func == (lhs: SessionTokenHash, rhs: SessionTokenHash) -> Bool {
        ConstantTime.equals(lhs.bytes, rhs.bytes)
    }
}
