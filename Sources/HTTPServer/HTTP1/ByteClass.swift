/// The classes of bytes the parser tests one byte at a time, as bits of a 256-entry table: one load
/// and one test per byte, where two 64-bit masks took a compare, a shift and two branches (about
/// half the cost of every field name, measured). picohttpparser keeps its token map the same way.
enum ByteClass {
    /// RFC 9110 `tchar`: a method or field name byte.
    static let token: UInt8 = 1 << 0
    /// RFC 3986 `unreserved` or `sub-delims`: a registered-name byte besides `%` escapes.
    static let registeredName: UInt8 = 1 << 1

    /// Bit `class` of entry `byte` is set when `byte` belongs to `class`. Built once, never freed,
    /// never written after it is built (hence safe to share).
    nonisolated(unsafe) static let table: UnsafePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        table.initialize(repeating: 0, count: 256)
        let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for byte in alphanumerics + Array("!#$%&'*+-.^_`|~".utf8) { table[Int(byte)] |= token }
        for byte in alphanumerics + Array("-._~!$&'()*+,;=".utf8) { table[Int(byte)] |= registeredName }
        return UnsafePointer(table)
    }()
}

extension UInt8 {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")

    /// RFC 9110 `tchar`: the bytes allowed in a method or field name.
    @inline(__always)
    var isTokenCharacter: Bool { ByteClass.table[Int(self)] & ByteClass.token != 0 }

    /// RFC 3986 `unreserved` or `sub-delims`: the bytes of a registered name besides `%` escapes.
    @inline(__always)
    var isRegisteredNameCharacter: Bool { ByteClass.table[Int(self)] & ByteClass.registeredName != 0 }
}
