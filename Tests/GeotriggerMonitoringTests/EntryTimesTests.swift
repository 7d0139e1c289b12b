import GeotriggerCore
import GeotriggerGeometry
@testable import GeotriggerMonitoring
import Testing

/// Visits keep their entry time in 4 bytes; the time read back (an exit's `enteredAt`, the dwell
/// time, `--state-out`) must be the one read from the input, bit for bit, whatever it was.
@Suite("Entry times")
struct EntryTimesTests {
    static let origin = 1_700_000_000.0

    /// Times that have an offset: whole seconds and milliseconds, before and after the origin.
    static let offsetTimes: [Double] = [
        origin, origin + 1, origin - 1, origin + 86_400 * 365 * 8, origin - 86_400 * 365 * 8,
        origin + 0.001, origin + 0.5, origin + 3_600.123, origin - 0.999, origin + 86_400 * 3 + 0.25,
    ]
    /// Times that have none once the second origin is taken (by `secondOrigin`): finer than a
    /// millisecond, milliseconds too far from both, seconds beyond 8.5 years of both.
    static let wholeTimes: [Double] = [
        origin + 0.0001, origin + 1e-6, origin + 86_400 * 4 + 0.5, origin + 6e8, -origin,
        0.1, 1e300, -0.0, origin.nextUp, origin + 0.1234567,
    ]
    static let secondOrigin = 4e9

    @Test func timesWithAnOffsetComeBackExactlyAndHoldNoSlot() {
        var times = EntryTimes()
        defer { times.free() }
        // The first time sets the origin: whole seconds below it.
        #expect(times.code(Self.origin + 0.75) & EntryTimes.slotFlag == 0)
        #expect(times.origins.0 == Self.origin)
        for t in Self.offsetTimes {
            let code = times.code(t)
            #expect(times.time(code).bitPattern == t.bitPattern, "\(t)")
            #expect(code & EntryTimes.slotFlag == 0, "\(t) took a slot")
        }
        #expect(times.slotsInUse == 0)
    }

    @Test func otherTimesAreHeldWholeAndTheirSlotsReused() {
        var times = EntryTimes()
        defer { times.free() }
        _ = times.code(Self.origin)
        #expect(times.code(Self.secondOrigin) & (EntryTimes.slotFlag | EntryTimes.secondOriginFlag) == EntryTimes.secondOriginFlag)
        let codes = Self.wholeTimes.map { times.code($0) }
        for (t, code) in zip(Self.wholeTimes, codes) {
            #expect(code & EntryTimes.slotFlag != 0, "\(t) was given an offset")
            #expect(times.time(code).bitPattern == t.bitPattern, "\(t)")
        }
        #expect(times.slotsInUse == Self.wholeTimes.count)
        // A slot given back is taken again, and the times still held are untouched.
        times.release(codes[3])
        times.release(times.code(Self.origin + 5))  // an offset: nothing to give back
        #expect(times.slotsInUse == Self.wholeTimes.count - 1)
        let again = times.code(Self.origin + 0.00025)
        #expect(again == codes[3])
        #expect(times.time(again) == Self.origin + 0.00025)
        for (i, (t, code)) in zip(Self.wholeTimes, codes).enumerated() where i != 3 {
            #expect(times.time(code).bitPattern == t.bitPattern, "\(t)")
        }
        #expect(times.slotsInUse == Self.wholeTimes.count)
    }

    /// One stray time first (a receiver without a time lock stamps 1970) must not push every later
    /// time into the side table: the first later time far from it starts a second origin.
    @Test func aStrayFirstTimeLeavesLaterTimesOffsets() {
        var times = EntryTimes()
        defer { times.free() }
        let stray = times.code(0)
        let later = [Self.origin + 0.25, Self.origin + 3_600, Self.origin - 86_400 * 365, Self.origin + 10.5]
        let codes = later.map { times.code($0) }
        #expect(times.slotsInUse == 0)
        #expect(times.time(stray) == 0)
        for (t, code) in zip(later, codes) {
            #expect(code & EntryTimes.secondOriginFlag != 0, "\(t)")
            #expect(times.time(code).bitPattern == t.bitPattern, "\(t)")
        }
        // Times near neither origin are still exact, held whole.
        let far = times.code(Self.origin + 86_400 * 365 * 20)
        #expect(far & EntryTimes.slotFlag != 0 && times.time(far) == Self.origin + 86_400 * 365 * 20)
    }

    /// Through the monitor: exits and dwells report the entry time read, whether it had an offset
    /// or was held whole, and a visit's slot is given back when it ends.
    @Test(arguments: [1_700_000_000.0, 1_700_000_000.123, 1_700_000_000.000_25, 2e9 + 0.5])
    func exitsAndDwellsReportTheEntryTimeExactly(entered: Double) throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(dwell: 2.5))
        // Another device sets the origin (a second is an offset, a quarter millisecond is not).
        h.feed(1_699_999_000, north(of: 48.2, 16.37, metres: 500), device: h.monitor.device("early"))
        for (k, metres) in [50.0, 60, 300].enumerated() {
            h.feed(entered + Double(k) * 10, north(of: 48.2, 16.37, metres: metres))
        }
        #expect(h.recorder.kinds == "enter,dwell,exit")
        #expect(h.recorder.events[1].t == entered + 2.5 && h.recorder.events[1].enteredAt.bitPattern == entered.bitPattern)
        #expect(h.recorder.events[2].enteredAt.bitPattern == entered.bitPattern)
        #expect(h.monitor.heldEntryTimes == 0)
    }
}
