import Testing
import GeotriggerCore
@testable import GeotriggerFormats

/// The merge's order of sources (`SourceHeap`: a sorted run, the next run queued behind it, a
/// heap for the rest) against the order it must give, worked out by sorting.
@Suite struct SourceHeapTests {
    /// Sources in step (every one a fix a second), at rates of their own, starting and ending at
    /// random, with ties, gaps and negative times: every top is the earliest (time, index) of
    /// the sources' heads, as a sort of them says.
    @Test func theTopIsAlwaysTheEarliestHeadTiesToTheLowerIndex() {
        var generator = SplitMix64(seed: 4_096)
        for round in 0..<60 {
            let n = Int.random(in: 1...300, using: &generator)
            let heap = SourceHeap(sources: n)
            var heads: [Int: Double] = [:]
            // Each source's period: most in step at 1 s, some faster, some with jitter.
            let periods = (0..<n).map { _ -> Double in
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: 0.1
                case 1: 0.5 + Double.random(in: 0..<1, using: &generator)
                default: 1
                }
            }
            for i in 0..<n {
                let t = round % 3 == 0 ? Double(Int.random(in: -5..<5, using: &generator)) : 0
                heap.insert(i, at: t)
                heads[i] = t
            }
            var taken = 0
            while !heap.isEmpty {
                #expect(heap.count == heads.count)
                let expected = heads.min { a, b in a.value != b.value ? a.value < b.value : a.key < b.key }!.key
                let top = heap.top
                #expect(top == expected, "round \(round), step \(taken)")
                guard top == expected else { return }
                taken += 1
                if Int.random(in: 0..<200, using: &generator) == 0 || taken > 40 * n {
                    heap.removeTop()
                    heads[top] = nil
                } else {
                    let gap = Int.random(in: 0..<20, using: &generator) == 0 ? Double(Int.random(in: 0..<4, using: &generator)) : 0
                    let t = heads[top]! + periods[top] + gap
                    heap.replaceTop(at: t)
                    heads[top] = t
                }
            }
        }
    }
}
