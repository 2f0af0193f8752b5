import Heaps
import Testing

@Suite struct MinHeapTests {
    /// A deterministic generator (Knuth's MMIX LCG, high bits folded in), so a failing seed reproduces.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 33)
        }
    }

    @Test(arguments: [(seed: UInt64(1), keys: 4), (2, 16), (3, 1_000), (4, 1)])
    func randomPushesAndPopsMatchASortedArray(seed: UInt64, keys: Int) {
        var random = Seeded(state: seed)
        var heap = MinHeap<Int, Int>()
        // The model: every entry pushed and not popped yet; a pop must return one with the smallest key.
        var model: [(key: Int, value: Int)] = []
        for serial in 0..<5_000 {
            if model.isEmpty || Int.random(in: 0..<5, using: &random) < 3 {
                // Few distinct keys (4, 16) make equal keys common; keys: 1 makes them all equal.
                let key = Int.random(in: 0..<keys, using: &random)
                heap.push(key, serial)
                model.append((key, serial))
            } else {
                let popped = heap.removeFirst()
                let smallest = model.map(\.key).min()
                #expect(popped.key == smallest, "popped key \(popped.key), the smallest pushed is \(smallest ?? -1)")
                let index = model.firstIndex { $0.key == popped.key && $0.value == popped.value }
                #expect(index != nil, "popped (\(popped.key), \(popped.value)), which is not in the heap")
                if let index { model.remove(at: index) }
            }
            #expect(heap.count == model.count)
        }
        // Drained, the rest come out as the sorted array of their keys, each value exactly once.
        var drained: [(key: Int, value: Int)] = []
        while !heap.isEmpty { drained.append(heap.removeFirst()) }
        #expect(drained.map(\.key) == model.map(\.key).sorted())
        #expect(drained.map(\.value).sorted() == model.map(\.value).sorted())
        #expect(heap.first == nil)
    }

    @Test func removeFirstIfAtMostTakesOnlyWhatIsDue() {
        var heap = MinHeap<Int, String>()
        heap.push(30, "c")
        heap.push(10, "a")
        heap.push(20, "b")
        #expect(heap.removeFirst(ifAtMost: 5) == nil)
        #expect(heap.removeFirst(ifAtMost: 20)?.value == "a")
        #expect(heap.removeFirst(ifAtMost: 20)?.value == "b")
        #expect(heap.removeFirst(ifAtMost: 20) == nil)
        #expect(heap.count == 1)
        heap.removeAll()
        #expect(heap.isEmpty)
        #expect(heap.removeFirst(ifAtMost: .max) == nil)
    }
}
