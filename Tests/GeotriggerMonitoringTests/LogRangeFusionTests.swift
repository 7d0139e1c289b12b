@testable import GeotriggerMonitoring
import Testing

/// `SampleWindow.gatedMean` and `PositionFusion.solveLogRange` (tools/ble README, "B. Fused position").
@Suite struct LogRangeFusionTests {
    // MARK: - SampleWindow

    private func window(_ samples: [(Double, Double)]) -> SampleWindow {
        var w = SampleWindow()
        for (t, r) in samples { w.append(rssi: r, at: t) }
        return w
    }

    @Test func gateRemovesAnOutlier() throws {
        // median −70, |x − m| = 1, 0, 1, 2, 0, 20 → MAD = 1 (floor too), limit 4.4478 dB: −50 goes.
        let w = window([(0.1, -71), (0.2, -70), (0.3, -69), (0.4, -72), (0.5, -70), (0.6, -50)])
        let g = try #require(w.gatedMean(since: 0))
        #expect(g.count == 5)
        #expect(abs(g.mean - (-352.0 / 5)) < 1e-12)
    }

    @Test func integerRSSIsUseTheMADFloor() throws {
        // Mostly equal integers: median |x − m| = 0, floored at 1 dB, so ±4 dB stays and ±5 dB goes.
        let w = window([(1, -60), (2, -60), (3, -60), (4, -64), (5, -60), (6, -55), (7, -60)])
        let g = try #require(w.gatedMean(since: 0))
        #expect(g.count == 6)
        #expect(abs(g.mean - (-364.0 / 6)) < 1e-12)
        // Without the floor (MAD = 0) only the five −60s would be kept.
    }

    @Test func evenCountUsesTheMeanOfTheMiddleTwo() throws {
        // median −65 (−66, −64), deviations 1, 1, 5, 5 → MAD 3, limit 13.34: all kept.
        let w = window([(1, -70), (2, -66), (3, -64), (4, -60)])
        let g = try #require(w.gatedMean(since: 0))
        #expect(g.count == 4)
        #expect(abs(g.mean - (-65)) < 1e-12)
    }

    @Test func windowStartIsRespected() throws {
        let w = window([(0.5, -40), (1.0, -41), (1.5, -70), (2.0, -72), (2.5, -71)])
        // (1.0, …]: the sample at exactly 1.0 is out, as in the prototype's (t − W, t].
        let g = try #require(w.gatedMean(since: 1.0))
        #expect(g.count == 3)
        #expect(abs(g.mean - (-71)) < 1e-12)
        #expect(w.gatedMean(since: 2.5) == nil)
        #expect(SampleWindow().gatedMean(since: -1) == nil)

        var d = w
        d.drop(through: 1.0)
        #expect(d.count == 3)
        #expect(d[0] == RSSISample(t: 1.5, rssi: -70))
        let h = try #require(d.gatedMean(since: -.infinity))
        #expect(h.count == g.count && h.mean == g.mean)
        d.drop(through: 10)
        #expect(d.isEmpty)
    }

    @Test func overflowKeepsTheNewest() throws {
        var w = SampleWindow()
        for i in 0..<(SampleWindow.capacity + 9) {
            w.append(rssi: -60 - Double(i % 3), at: Double(i))
        }
        #expect(w.count == SampleWindow.capacity)
        #expect(w[0].t == 9)
        #expect(w.last?.t == Double(SampleWindow.capacity + 8))
        for i in 0..<w.count { #expect(w[i].t == Double(9 + i)) }
        let g = try #require(w.gatedMean(since: -.infinity))
        #expect(g.count == SampleWindow.capacity)
        var expected = 0.0
        for i in 9..<(SampleWindow.capacity + 9) { expected += -60 - Double(i % 3) }
        #expect(abs(g.mean - expected / Double(SampleWindow.capacity)) < 1e-12)
        // Non-finite samples are refused.
        let accepted = w.append(rssi: .nan, at: 100)
        #expect(!accepted)
        #expect(w.last?.t == Double(SampleWindow.capacity + 8))
    }

    // MARK: - solveLogRange

    private func anchors(_ list: [(Double, Double, Double, Double)]) -> FusionAnchors {
        var a = FusionAnchors()
        for (x, y, d, n) in list { a.append(x: x, y: y, distance: d, weight: n) }
        return a
    }

    private func exact(_ beacons: [(Double, Double)], _ tx: Double, _ ty: Double, n: Double = 1) -> FusionAnchors {
        anchors(beacons.map { b in
            let dx = tx - b.0, dy = ty - b.1
            return (b.0, b.1, (dx * dx + dy * dy).squareRoot(), n)
        })
    }

    @Test(arguments: [(3.0, 2.0), (5.0, 4.0), (9.0, 7.5), (1.0, 6.0)])
    func exactDistancesRecoverThePosition(tx: Double, ty: Double) {
        let square = [(0.0, 0.0), (10.0, 0.0), (10.0, 8.0), (0.0, 8.0)]
        let fix = PositionFusion.solveLogRange(exact(square, tx, ty, n: 3))
        #expect(abs(fix.x - tx) < 0.01 && abs(fix.y - ty) < 0.01, "\(fix)")
        #expect(fix.confidence == .good)
        #expect(fix.anchorCount == 4)
        #expect(fix.residual < 0.01)
        #expect(fix.iterations >= 1 && fix.iterations <= PositionFusion.logRangeMaxIterations)
    }

    @Test func convergesFromAFarOffCentroid() {
        // The device is outside the beacons' square: the 1/d² centroid, ≈ (2.0, 5.9), is 10 m off,
        // and steps capped at 2 m still get there within 15 iterations.
        let square = [(0.0, 0.0), (10.0, 0.0), (10.0, 8.0), (0.0, 8.0)]
        let a = exact(square, -6, 12)
        var sw = 0.0, cx = 0.0, cy = 0.0
        for i in 0..<a.count {
            let w = 1 / (a[i].distance * a[i].distance)
            sw += w
            cx += w * a[i].x
            cy += w * a[i].y
        }
        let c = LocalPoint(east: cx / sw, north: cy / sw)
        #expect(c.distance(to: LocalPoint(east: -6, north: 12)) > 9.5)
        let fix = PositionFusion.solveLogRange(a)
        #expect(abs(fix.x + 6) < 0.01 && abs(fix.y - 12) < 0.01, "\(fix)")
        #expect(fix.iterations > 5)
    }

    @Test func collinearAnchorsStayFinite() {
        let line = anchors([(0, 0, 4, 3), (3, 0, 2.5, 2), (7, 0, 3, 4), (12, 0, 7.5, 1)])
        let fix = PositionFusion.solveLogRange(line)
        #expect(fix.x.isFinite && fix.y.isFinite && fix.residual.isFinite)
        #expect(fix.confidence == .low)
        #expect(fix.geometry == 0)
        // Exact ranges from a point on the line: found.
        let on = PositionFusion.solveLogRange(exact([(0, 0), (3, 0), (7, 0), (12, 0)], 5, 0))
        #expect(abs(on.x - 5) < 0.01 && abs(on.y) < 0.01, "\(on)")
        // Two anchors at the same place as the start, one elsewhere: finite.
        let stacked = PositionFusion.solveLogRange(anchors([(0, 0, 1, 1), (0, 0, 1, 1), (0, 0, 2, 1)]))
        #expect(stacked.x.isFinite && stacked.y.isFinite)
    }

    @Test func fewerThanThreeAnchorsGiveNone() {
        for list in [[], [(0.0, 0.0, 2.0, 3.0)], [(0, 0, 2, 3), (5, 0, 3, 2)],
                     [(0, 0, 2, 3), (5, 0, 3, 2), (5, 5, 0, 2)], [(0, 0, 2, 3), (5, 0, 3, 2), (5, 5, 2, 0)]] {
            let fix = PositionFusion.solveLogRange(anchors(list))
            #expect(fix.confidence == .none)
            #expect(fix.x.isNaN && fix.y.isNaN)
            #expect(fix.anchorCount == min(list.count, 2))
        }
    }

    @Test func weightsAreSampleCounts() {
        // Scaling every nᵢ by the same factor changes nothing (the damping is relative to trace A).
        let base: [(Double, Double, Double, Double)] = [(0, 0, 3, 1), (8, 0, 6, 4), (4, 7, 5, 2), (9, 6, 4, 3)]
        let a = PositionFusion.solveLogRange(anchors(base))
        let b = PositionFusion.solveLogRange(anchors(base.map { ($0.0, $0.1, $0.2, $0.3 * 36) }))
        #expect(abs(a.x - b.x) < 1e-9 && abs(a.y - b.y) < 1e-9)
    }

    @Test(arguments: logRangeFixture.indices)
    func matchesThePrototype(index: Int) {
        let c = logRangeFixture[index]
        let fix = PositionFusion.solveLogRange(anchors(c.anchors))
        let err = ((fix.x - c.x) * (fix.x - c.x) + (fix.y - c.y) * (fix.y - c.y)).squareRoot()
        #expect(err < 0.001, "\(c.name): Swift (\(fix.x), \(fix.y)), prototype (\(c.x), \(c.y))")
    }
}
