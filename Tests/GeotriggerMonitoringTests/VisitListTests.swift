@testable import GeotriggerMonitoring
import Testing

/// A device's visits are kept as keys and entry-time codes in two arrays of one buffer that grows
/// and shrinks as the device enters and leaves regions: every move must carry both halves of
/// every visit, or exits would report the wrong entry time.
@Suite("Visit lists")
struct VisitListTests {
    @Test func insertsRemovesAndReplacementsKeepEveryVisitWhole() {
        var values = NeighbourhoodTests.Values(state: 7)
        var list = VisitList()
        var scratch = VisitList()
        defer {
            list.free()
            scratch.free()
        }
        var model: [VisitList.Entry] = []
        func check(_ step: Int) {
            #expect(Int(list.count) == model.count, "step \(step)")
            for i in 0..<min(model.count, Int(list.count)) {
                #expect(list[i].key == model[i].key && list[i].code == model[i].code, "step \(step), visit \(i)")
            }
            // Room follows the list down as well as up.
            #expect(Int(list.room) <= VisitList.grown(model.count) + VisitList.slack, "step \(step): room \(list.room)")
        }
        for step in 0..<3_000 {
            // Grow to about 60 visits, then shrink to a few, then grow again.
            let growing = (step / 500) % 2 == 0
            let choice = values.below(10)
            if model.isEmpty || (growing ? choice < 7 : choice < 3) {
                let region = Int32(values.below(1 << 20))
                let i = list.lowerBound(region, from: 0)
                guard i == model.count || model[i].region != region else { continue }
                let entry = VisitList.Entry(region: region, code: UInt32(truncatingIfNeeded: values.next()),
                                            silent: values.below(2) == 0)
                list.insert(entry, at: i)
                model.insert(entry, at: i)
            } else if choice < 9 {
                let i = values.below(model.count)
                list.remove(at: i)
                model.remove(at: i)
            } else {
                // Replaced whole, as a re-evaluation does: every other visit kept.
                scratch.removeAll()
                let kept = model.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
                for entry in kept { scratch.append(entry) }
                list.assign(scratch)
                model = kept
            }
            check(step)
        }
        // Dwelled marks stay with their visit.
        if !model.isEmpty {
            list.setDwelled(0)
            #expect(list[0].dwelled && list[0].code == model[0].code && list[0].region == model[0].region)
        }
    }
}
