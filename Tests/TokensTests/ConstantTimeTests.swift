import Testing

@testable import Tokens

@Suite struct ConstantTimeTests {
    @Test func equalContents() {
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        #expect(ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(ConstantTime.equals(Array("abc".utf8), "abc".utf8))
        #expect(ConstantTime.equals([9, 1, 2, 3][1...] as ArraySlice<UInt8>, [1, 2, 3] as [UInt8]))
    }

    /// A difference of any single bit at any position is found (the accumulator must not drop bits).
    @Test(arguments: 0..<32)
    func differenceAtEveryPosition(position: Int) {
        let base = (0..<32).map { UInt8($0 * 7) }
        for bit in 0..<8 {
            var other = base
            other[position] ^= 1 << bit
            #expect(!ConstantTime.equals(base, other), "bit \(bit)")
        }
    }

    @Test func differentLengths() {
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(!ConstantTime.equals([UInt8](), [0] as [UInt8]))
        #expect(!ConstantTime.equals([0, 0] as [UInt8], [0] as [UInt8]))
    }
}
