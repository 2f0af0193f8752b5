/// Comparisons whose running time does not depend on the contents compared (only on their lengths).
///
/// Use it wherever a secret meets a presented value (token hashes, MACs), so that response time does not
/// tell an attacker how many leading bytes of a guess were right.
///
/// ```swift
/// ConstantTime.equals(expectedMAC, presentedMAC)   // every byte is examined, whatever differs where
/// ```
public enum ConstantTime {
    /// Whether `lhs` and `rhs` hold the same bytes. Different lengths return false at once: the length
    /// of a MAC or a token hash is public, only its contents are secret.
    @inline(never)
    public static func equals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        // OR-accumulating the XOR of every pair has no data-dependent branch; the loop always runs to the end.
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}
