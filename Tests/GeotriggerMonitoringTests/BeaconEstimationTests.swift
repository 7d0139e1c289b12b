import GeotriggerCore
import GeotriggerGeometry
@testable import GeotriggerMonitoring
import Testing
import Foundation

/// SplitMix64 with Box–Muller normals: a fixed-seed generator so every run sees the same data.
struct SeededNoise {
    var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { generator.next() }

    /// Uniform in (0, 1).
    mutating func uniform() -> Double { (Double(next() >> 11) + 0.5) / 9_007_199_254_740_992 }

    mutating func normal() -> Double {
        (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform())
    }
}

/// Beacon estimation: RSSI smoothing, the distance model, proximity, the local frame and fusion.
@Suite struct BeaconEstimationTests {
    // MARK: - RSSIFilter

    @Suite struct RSSIFilterTests {
        @Test func firstSampleInitialisesExactly() {
            var f = RSSIFilter()
            #expect(!f.isInitialized)
            #expect(f.update(rssi: -63.7, at: 5) == -63.7)
            #expect(f.estimate == -63.7)
            #expect(f.variance.isFinite && f.variance > 0)
        }

        @Test(arguments: [-70.0, -70.4, -91.6])
        func constantSignalHasNoBias(level: Double) {
            var f = RSSIFilter()
            var last = 0.0
            for i in 0..<1000 { last = f.update(rssi: level, at: Double(i) * 0.5) }  // 2 Hz
            // Exact: no integer truncation (AltBeacon's ARMA filter would give -70 for -70.4).
            #expect(abs(last - level) <= 1e-9)
            #expect(abs(f.estimate - level) <= 1e-9)
        }

        /// With q = 15 dB²/s and R = 36 dB², at 2 Hz the steady-state gain is about 0.36: a 6 dB step
        /// is smoothed (over 2 dB left after the first sample) and followed within 0.6 dB in 5 s.
        @Test(arguments: [1.0, 2.0, 10.0])
        func stepIsFollowed(rate: Double) {
            var f = RSSIFilter()
            let dt = 1 / rate
            var t = 0.0
            for _ in 0..<Int(30 * rate) { f.update(rssi: -70, at: t); t += dt }
            let stepAt = t
            let first = abs(f.update(rssi: -64, at: t) + 64)
            var errorAfter5s = Double.nan
            t += dt
            while t <= stepAt + 5 + 1e-9 {
                let e = abs(f.update(rssi: -64, at: t) + 64)
                if abs(t - stepAt - 5) < 1e-9 { errorAfter5s = e }
                t += dt
            }
            #expect(first > 2, "smoothed, not copied: \(first)")
            #expect(errorAfter5s < 0.6, "followed: \(errorAfter5s)")
        }

        @Test func tenDecibelStepReachedWithinSixSeconds() {
            var f = RSSIFilter()
            var t = 0.0
            for _ in 0..<60 { f.update(rssi: -70, at: t); t += 0.5 }
            let stepAt = t
            var reached = Double.nan
            while t < stepAt + 20 {
                if abs(f.update(rssi: -60, at: t) + 60) < 1, reached.isNaN { reached = t - stepAt }
                t += 0.5
            }
            #expect(reached <= 6, "within 1 dB after \(reached) s")
        }

        /// A spike beyond 3 predicted σ (√(p + R) ≈ 7 dB at 2 Hz) is skipped outright.
        @Test func largeSpikeIsSkipped() {
            var f = RSSIFilter()
            var t = 0.0
            for _ in 0..<40 { f.update(rssi: -70, at: t); t += 0.5 }
            let spiked = f.update(rssi: -100, at: t)
            #expect(spiked == -70)
            t += 0.5
            for _ in 0..<10 { f.update(rssi: -70, at: t); t += 0.5 }
            #expect(abs(f.estimate + 70) < 1e-9)
        }

        /// A smaller one inside the gate moves the estimate only by the Kalman gain (< 40 %).
        @Test func spikeInsideTheGateIsDamped() {
            var f = RSSIFilter()
            var t = 0.0
            for _ in 0..<40 { f.update(rssi: -70, at: t); t += 0.5 }
            let after = f.update(rssi: -80, at: t)
            #expect(after < -70 && after > -74, "\(after)")
        }

        @Test func sustainedChangeIsFollowed() {
            var f = RSSIFilter()
            var t = 0.0
            for _ in 0..<40 { f.update(rssi: -70, at: t); t += 0.5 }
            let first = f.update(rssi: -95, at: t)
            #expect(first == -70)  // one sample: skipped by the gate
            t += 0.5
            var estimate = first
            for _ in 0..<12 { estimate = f.update(rssi: -95, at: t); t += 0.5 }
            #expect(abs(estimate + 95) < 1, "a sustained change gets through: \(estimate)")
        }

        @Test func longGaussianStreamIsUnbiased() {
            var noise = SeededNoise(seed: 42)
            var f = RSSIFilter()
            var t = 0.0
            var sum = 0.0, sumSquares = 0.0
            let n = 20_000, warmUp = 100
            for i in 0..<n {
                t += 0.1 + 0.9 * noise.uniform()  // irregular intervals, 1–10 Hz
                let e = f.update(rssi: -70 + 4 * noise.normal(), at: t)
                if i >= warmUp {
                    sum += e
                    sumSquares += (e + 70) * (e + 70)
                }
            }
            let mean = sum / Double(n - warmUp)
            #expect(abs(mean + 70) < 0.3, "mean \(mean)")
            // And it does smooth: the estimates' spread is well below the samples' 4 dB.
            let rms = (sumSquares / Double(n - warmUp)).squareRoot()
            #expect(rms < 2.5, "rms \(rms)")
        }

        @Test func silenceWidensTheGateAndTheVariance() {
            var f = RSSIFilter()
            f.update(rssi: -70, at: 0)
            let v1 = f.variance
            var t = 0.5
            for _ in 0..<20 { f.update(rssi: -70, at: t); t += 0.5 }
            #expect(f.variance < v1)
            #expect(abs(f.predictedVariance(at: f.lastTime + 60) - (f.variance + 15 * 60)) < 1e-9)
            // After a minute of silence a new level is taken almost at once, not gated.
            let e = f.update(rssi: -85, at: t + 60)
            #expect(abs(e + 85) < 0.6, "\(e)")
        }
    }

    // MARK: - Distance model and proximity

    @Suite struct DistanceModelTests {
        @Test func logDistanceValues() {
            #expect(abs(DistanceModel.distance(rssi: -59, measuredPower: -59, pathLossExponent: 2) - 1) < 1e-12)
            #expect(abs(DistanceModel.distance(rssi: -79, measuredPower: -59, pathLossExponent: 2) - 10) < 1e-12)
            #expect(abs(DistanceModel.distance(rssi: -99, measuredPower: -59, pathLossExponent: 2) - 100) < 1e-10)
            // 10^(10/25) = 10^0.4
            #expect(abs(DistanceModel.distance(rssi: -69, measuredPower: -59, pathLossExponent: 2.5) - 2.51188643150958) < 1e-12)
            // Stronger than the 1 m power: closer than 1 m, 10^(-0.5).
            #expect(abs(DistanceModel.distance(rssi: -49, measuredPower: -59, pathLossExponent: 2) - 0.316227766016838) < 1e-12)
        }

        @Test func powerAndExponentResolution() {
            #expect(DistanceModel.resolvePower(tx: -65, regionMeasuredPower: -70) == -65)  // tx beats region
            #expect(DistanceModel.resolvePower(tx: .nan, regionMeasuredPower: -70) == -70)  // region beats default
            #expect(DistanceModel.resolvePower(tx: .nan, regionMeasuredPower: nil) == -59)
            #expect(DistanceModel.resolvePower(tx: -65, regionMeasuredPower: nil) == -65)
            #expect(DistanceModel.resolveExponent(regionPathLossExponent: 3) == 3)
            #expect(DistanceModel.resolveExponent(regionPathLossExponent: nil) == 2)

            let region = BeaconRegion(identity: BeaconID(), measuredPower: -65, pathLossExponent: 3)
            // tx -60, n 3: 10^((-60 + 90)/30) = 10
            #expect(abs(DistanceModel.distance(rssi: -90, tx: -60, region: region) - 10) < 1e-12)
            // region's -65, n 3: 10^((-65 + 95)/30) = 10
            #expect(abs(DistanceModel.distance(rssi: -95, tx: .nan, region: region) - 10) < 1e-12)
            // defaults -59, 2: 10^((-59 + 79)/20) = 10
            #expect(abs(DistanceModel.distance(rssi: -79, tx: .nan, region: BeaconRegion(identity: BeaconID())) - 10) < 1e-12)
        }

        @Test func proximityBoundaries() {
            let cases: [(Double, Proximity)] = [
                (0, .immediate), (0.4999, .immediate), (0.5, .near), (2.9999, .near), (3, .far), (1000, .far),
                (.infinity, .far), (.nan, .unknown), (-1, .unknown),
            ]
            for (d, p) in cases { #expect(Proximity.classify(distance: d) == p, "\(d)") }
            #expect(Proximity.allCases.map(\.name) == ["immediate", "near", "far", "unknown"])
        }

        private func sequence(_ distances: [Double], hysteresis: Double = 0.15) -> String {
            var state = ProximityState(hysteresis: hysteresis)
            return distances.map { state.update(distance: $0).name }.joined(separator: ",")
        }

        @Test func proximityHysteresis() {
            // 0.6 > 0.5·1.15 = 0.575 → near; 3.2 ≤ 3·1.15 = 3.45 stays near; 3.5 > 3.45 → far; 2.8 < 3 → near.
            #expect(sequence([0.4, 0.6, 2.9, 3.2, 3.5, 2.8]) == "immediate,near,near,near,far,near")
            // The inner band: 0.55 ≤ 0.575 stays immediate; 0.58 leaves; 0.52 ≥ 0.5 stays near; 0.49 enters.
            #expect(sequence([0.3, 0.55, 0.45, 0.58, 0.52, 0.49]) == "immediate,immediate,immediate,near,near,immediate")
            // Outward past both boundaries at once; inward straight to immediate.
            #expect(sequence([0.2, 3.5, 0.2]) == "immediate,far,immediate")
            #expect(sequence([0.2, 3.4]) == "immediate,near")
            // No estimate resets; the next distance classifies plainly.
            #expect(sequence([3.5, .nan, 3.2]) == "far,unknown,far")
            // h = 0 is the plain classification.
            #expect(sequence([0.4, 0.55, 3.1, 2.9], hysteresis: 0) == "immediate,near,far,near")
        }
    }

    // MARK: - Local frame

    @Suite struct LocalFrameTests {
        @Test func equatorScales() {
            // 1° of latitude at the equator is a(1 − e²)·π/180 = 110 574.276 m, 1° of longitude a·π/180 = 111 319.491 m.
            let frame = LocalFrame(origin: Coordinate(latitude: 0, longitude: 10))
            let n = frame.point(Coordinate(latitude: 0.001, longitude: 10))
            #expect(abs(n.north - 110.574276) < 1e-6)
            #expect(abs(n.east) < 1e-12)
            let e = frame.point(Coordinate(latitude: 0, longitude: 10.001))
            #expect(abs(e.east - 111.319491) < 1e-6)
            #expect(abs(e.north) < 1e-12)
        }

        @Test func radiiOfCurvatureAt45() {
            // At 45°: N = a / √(1 − e²/2), M = a(1 − e²) / (1 − e²/2)^1.5.
            let a = 6_378_137.0, f = 1 / 298.257223563, e2 = f * (2 - f)
            let frame = LocalFrame(origin: Coordinate(latitude: 45, longitude: 0))
            #expect(abs(frame.primeVerticalRadius - a / (1 - e2 / 2).squareRoot()) < 1e-6)
            #expect(abs(frame.meridianRadius - a * (1 - e2) / pow(1 - e2 / 2, 1.5)) < 1e-6)
            #expect(abs(frame.primeVerticalRadius - 6_388_838.29) < 0.01)
            #expect(abs(frame.meridianRadius - 6_367_381.82) < 0.01)
        }

        @Test(arguments: [0.0, 48.2082, -33.9, 70.0, 85.0])
        func roundTrip(latitude: Double) {
            var noise = SeededNoise(seed: UInt64(latitude.magnitude * 1000) + 1)
            let frame = LocalFrame(origin: Coordinate(latitude: latitude, longitude: 16.3738))
            for _ in 0..<200 {
                let p = LocalPoint(east: 200 * noise.uniform() - 100, north: 200 * noise.uniform() - 100)
                let c = frame.coordinate(p)
                let back = frame.point(c)
                #expect(back.distance(to: p) < 1e-9)
                let again = frame.coordinate(back)
                #expect(abs(again.latitude - c.latitude) < 1e-13 && abs(again.longitude - c.longitude) < 1e-13)
            }
        }

        /// Distances in the frame against Karney's geodesic (GeotriggerGeometry): under 0.01 mm within 100 m
        /// (the first-order map alone is off by 0.7–7 mm here).
        @Test(arguments: [0.0, 48.2082, -33.9, 70.0, 80.0])
        func distancesMatchGeodesic(latitude: Double) {
            var noise = SeededNoise(seed: UInt64(latitude.magnitude * 1000) + 2)
            let origin = Coordinate(latitude: latitude, longitude: 16.3738)
            let frame = LocalFrame(origin: origin)
            var worst = 0.0
            // Random coordinates within about 70 m of the origin each way, mapped forward.
            let dLat = 70 / 111_000.0, dLon = 70 / (111_000 * cos(latitude * .pi / 180))
            func random() -> Coordinate {
                Coordinate(latitude: origin.latitude + dLat * (2 * noise.uniform() - 1),
                           longitude: origin.longitude + dLon * (2 * noise.uniform() - 1))
            }
            for _ in 0..<300 {
                let c1 = random(), c2 = random()
                let p = frame.point(c1), q = frame.point(c2)
                worst = max(worst, abs(p.distance(to: q) - Geodesic.distance(c1, c2)))
                worst = max(worst, abs(p.distance(to: LocalPoint(east: 0, north: 0)) - Geodesic.distance(origin, c1)))
            }
            #expect(worst < 1e-5, "worst \(worst) m")
        }

        @Test func antimeridian() {
            let frame = LocalFrame(origin: Coordinate(latitude: 0, longitude: 179.9995))
            let p = frame.point(Coordinate(latitude: 0, longitude: -179.9995))
            #expect(abs(p.east - 111.319491) < 1e-6)
            let c = frame.coordinate(LocalPoint(east: 111.319491, north: 0))
            #expect(abs(c.longitude + 179.9995) < 1e-9)
        }
    }

    // MARK: - Position fusion

    @Suite struct PositionFusionTests {
        static let square = [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)]

        private func anchors(_ points: [(Double, Double)], truth: (Double, Double)) -> FusionAnchors {
            var a = FusionAnchors()
            for (x, y) in points { a.append(x: x, y: y, distance: hypot(truth.0 - x, truth.1 - y)) }
            return a
        }

        /// Inside and just outside the square the anchors surround the fix (`good`); 40 m away they
        /// are all in one direction (`low`), but exact ranges still give the position.
        @Test(arguments: [
            (3.0, 4.0, FusionFix.Confidence.good), (5.0, 5.0, .good), (9.5, 0.5, .good), (14.0, -3.0, .good),
            (-20.0, 35.0, .low),
        ])
        func exactDistancesRecoverThePosition(x: Double, y: Double, confidence: FusionFix.Confidence) {
            let truth = (x, y)
            let fix = PositionFusion.solve(anchors(Self.square, truth: truth))
            #expect(hypot(fix.x - truth.0, fix.y - truth.1) < 1e-3, "\(fix)")
            #expect(fix.residual < 1e-6)
            #expect(fix.anchorCount == 4)
            #expect(fix.confidence == confidence, "geometry \(fix.geometry)")
        }

        /// RSSI noise of 2 dB (smoothed, 1 Hz) at n = 2: log-normal distances, ±23 %, five beacons
        /// around a 10 m square. Simulation gives an RMS error of 1.45–1.6 m (median ≈ 1.05 m); the
        /// weighted centroid alone, the naive estimate, ≈ 1.74 m.
        @Test func noisyDistancesStayClose() {
            var noise = SeededNoise(seed: 2024)
            let beacons = Self.square + [(5.0, -2.0)]
            var errors: [Double] = []
            var centroidSquares = 0.0
            let trials = 500
            for _ in 0..<trials {
                let truth = (10 * noise.uniform(), 10 * noise.uniform())
                var a = FusionAnchors()
                var sw = 0.0, cx = 0.0, cy = 0.0
                for (x, y) in beacons {
                    let d = hypot(truth.0 - x, truth.1 - y) * pow(10, 2 * noise.normal() / 20)
                    a.append(x: x, y: y, distance: d)
                    sw += 1 / (d * d)
                    cx += x / (d * d)
                    cy += y / (d * d)
                }
                let fix = PositionFusion.solve(a)
                let e = hypot(fix.x - truth.0, fix.y - truth.1)
                #expect(e.isFinite)
                errors.append(e)
                centroidSquares += pow(cx / sw - truth.0, 2) + pow(cy / sw - truth.1, 2)
            }
            let rms = (errors.map { $0 * $0 }.reduce(0, +) / Double(trials)).squareRoot()
            let median = errors.sorted()[trials / 2]
            let centroidRMS = (centroidSquares / Double(trials)).squareRoot()
            #expect(rms < 1.8, "rms \(rms) m")
            #expect(median < 1.3, "median \(median) m")
            #expect(rms < centroidRMS, "rms \(rms) m, centroid \(centroidRMS) m")
        }

        /// The fit is a minimum of the weighted cost: no point of a 1 cm grid within 0.5 m of it does
        /// better (noisy ranges, so the minimum is not the truth).
        @Test func fitIsAMinimumOfTheCost() {
            var noise = SeededNoise(seed: 99)
            let beacons = Self.square + [(5.0, -2.0)]
            var worse = 0
            for _ in 0..<40 {
                let truth = (10 * noise.uniform(), 10 * noise.uniform())
                var a = FusionAnchors()
                for (x, y) in beacons {
                    a.append(x: x, y: y, distance: hypot(truth.0 - x, truth.1 - y) * pow(10, 2 * noise.normal() / 20))
                }
                let fix = PositionFusion.solve(a)
                var gridBest = Double.infinity
                for i in -50...50 {
                    for j in -50...50 {
                        gridBest = min(gridBest, PositionFusion.cost(&a, fix.x + 0.01 * Double(i), fix.y + 0.01 * Double(j)))
                    }
                }
                let fitted = PositionFusion.cost(&a, fix.x, fix.y)
                if fitted > gridBest + 1e-12 { worse += 1 }
            }
            #expect(worse == 0)
        }

        @Test func oneAnchor() {
            var a = FusionAnchors()
            a.append(x: 2, y: 3, distance: 4)
            let fix = PositionFusion.solve(a)
            #expect(fix.x == 2 && fix.y == 3)
            #expect(fix.residual == 4)
            #expect(fix.confidence == .low)
        }

        @Test func twoAnchors() {
            var a = FusionAnchors()
            a.append(x: 0, y: 0, distance: 3)
            a.append(x: 10, y: 0, distance: 7)
            var fix = PositionFusion.solve(a)
            #expect(abs(fix.x - 3) < 1e-12 && abs(fix.y) < 1e-12)
            #expect(fix.confidence == .low)
            // Inconsistent ranges: weighted (1/d²) point between. d 1 and 3 on a 10 m segment:
            // t = (1·1 + (1/9)·(10 − 3)) / (1 + 1/9) = 1.6.
            a.removeAll()
            a.append(x: 0, y: 0, distance: 1)
            a.append(x: 0, y: 10, distance: 3)
            fix = PositionFusion.solve(a)
            #expect(abs(fix.x) < 1e-12 && abs(fix.y - 1.6) < 1e-12)
            // Ranges beyond the segment clamp to an end.
            a.removeAll()
            a.append(x: 0, y: 0, distance: 20)
            a.append(x: 10, y: 0, distance: 20, weight: 0.0001)
            fix = PositionFusion.solve(a)
            #expect(fix.x == 10 && fix.y == 0)
        }

        @Test func threeAnchors() {
            let fix = PositionFusion.solve(anchors([(0, 0), (10, 0), (0, 10)], truth: (2, 7)))
            #expect(hypot(fix.x - 2, fix.y - 7) < 1e-3)
            #expect(fix.confidence == .good)
        }

        @Test func collinearAnchorsGiveAFiniteLowConfidenceFix() {
            let fix = PositionFusion.solve(anchors([(0, 0), (5, 0), (10, 0)], truth: (4, 3)))
            #expect(fix.x.isFinite && fix.y.isFinite && fix.residual.isFinite)
            #expect(fix.confidence == .low)
            #expect(fix.geometry < PositionFusion.minimumGeometry)
            // All anchors at one point.
            var a = FusionAnchors()
            for d in [1.0, 2.0, 3.0] { a.append(x: 1, y: 1, distance: d) }
            let same = PositionFusion.solve(a)
            #expect(same.x.isFinite && same.y.isFinite && same.confidence == .low)
        }

        @Test func unusableAnchorsAreSkipped() {
            var a = FusionAnchors()
            #expect(PositionFusion.solve(a).confidence == .none)
            #expect(PositionFusion.solve(a).x.isNaN)
            a.append(x: .nan, y: 0, distance: 1)
            a.append(x: 0, y: 0, distance: .infinity)
            a.append(x: 0, y: 0, distance: 1, weight: 0)
            #expect(PositionFusion.solve(a).confidence == .none)
            a.append(x: 5, y: 5, distance: 1)
            let fix = PositionFusion.solve(a)
            #expect(fix.anchorCount == 1 && fix.x == 5 && fix.y == 5)
        }

        @Test func capacityKeepsTheHeaviest() {
            var a = FusionAnchors()
            for i in 0..<20 { a.append(x: Double(i), y: 0, distance: Double(20 - i)) }  // later ones nearer, heavier
            #expect(a.count == FusionAnchors.capacity)
            var kept: [Double] = []
            for i in 0..<a.count { kept.append(a[i].x) }
            #expect(kept.sorted() == (4..<20).map(Double.init))
            #expect(FusionAnchor(x: 0, y: 0, distance: 2).weight == 0.25)
            #expect(abs(FusionAnchor(x: 0, y: 0, distance: 0).weight - 100) < 1e-9)
        }

        @Test func geographicFusion() {
            let truth = Coordinate(latitude: 48.20849, longitude: 16.37208)
            let frame = LocalFrame(origin: truth)
            let beacons = [(-8.0, -6.0), (9.0, -5.0), (7.0, 8.0), (-6.0, 9.0)].map { frame.coordinate(east: $0.0, north: $0.1) }
            let anchors = beacons.map { (position: $0, distance: Geodesic.distance($0, truth)) }
            let fused = PositionFusion.fuse(anchors)
            #expect(fused != nil)
            if let fused { #expect(Geodesic.distance(fused, truth) < 1e-3) }
            #expect(PositionFusion.fuse([(position: Coordinate, distance: Double)]()) == nil)
        }
    }
}
