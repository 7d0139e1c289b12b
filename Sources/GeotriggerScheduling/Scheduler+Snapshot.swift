import GeotriggerCore
import GeotriggerRuntime

// A checkpoint of the notification centers (`replay --checkpoint`): the requests stored after
// init (added ones, pushes delivered with their own content), every device's center (seen,
// pending, delivered), the time triggers' timers and the instance counter.
//
// Requests are written field by field in binary, not as their JSON: a Double (seconds,
// relevanceScore, a number in userInfo) comes back with its bit pattern, and nothing depends on
// the JSON writer's number format. The init's requests are not written, only their count (the
// restore is into a scheduler built from the same requests); what `store` derives from a request
// (its region's key, its calendar) is derived again and the key checked against the one written.
extension Scheduler {
    package func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("scheduler")
        w.count(storedByInit)
        w.list(stored[storedByInit...]) { w, s in
            w.request(s.request)
            w.i32(s.regionKey)
            w.bool(s.calendar != nil)
        }
        w.tag("centers")
        w.list(centers) { w, c in
            w.bool(c.seen)
            w.list(c.pending) { w, p in
                w.varint(UInt64(UInt32(bitPattern: p.stored)))
                w.u32(p.instance)
            }
            w.list(c.delivered) { w, d in
                w.varint(UInt64(UInt32(bitPattern: d.stored)))
                w.f64(d.t)
            }
            // SPEC §5.1's per-device settings: categories as their JSON (rare, and read back
            // through the same checks as a setCategories record).
            w.json(.array(c.categories.map(\.json)))
            w.u8(c.granted.rawValue)
            w.bool(c.authorized)
            w.bool(c.app.foreground)
            w.u8(c.app.presentation.rawValue)
        }
        w.u32(instanceCounter)
        timers.writeSnapshot(to: &w) { w, timer in
            w.i32(timer.device)
            w.u32(timer.instance)
        }
    }

    /// Restores what `writeSnapshot` wrote into a scheduler built from the same requests, whose
    /// `DeviceTable` has the snapshot's devices interned (in the same order) and that has done
    /// nothing else yet.
    package func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        try r.expect("scheduler")
        let byInit = try r.count()
        guard byInit == storedByInit, stored.count == storedByInit else {
            throw SnapshotError("snapshot has \(byInit) requests from the requests file, the run \(storedByInit)")
        }
        let appended = try r.count()
        var restored: [Stored] = []
        restored.reserveCapacity(appended)
        for _ in 0..<appended {
            let request = try r.request()
            let key = try r.i32()
            let hasCalendar = try r.bool()
            if let why = request.trigger.problem {
                throw SnapshotError("snapshot's request \"\(request.id)\" is not one a requests file or record can add: \(why)")
            }
            let s: Stored
            do { s = try makeStored(request) } catch {
                throw SnapshotError("snapshot's request \"\(request.id)\" cannot be stored here: \(error)")
            }
            guard s.regionKey == key, (s.calendar != nil) == hasCalendar else {
                throw SnapshotError("snapshot's request \"\(request.id)\" names another region than the run's")
            }
            restored.append(s)
        }
        let storedCount = storedByInit + appended
        func storedIndex(_ r: inout SnapshotReader) throws(SnapshotError) -> Int32 {
            let s = try r.varint()
            guard s < UInt64(storedCount) else { throw SnapshotError("snapshot names request \(s) of \(storedCount)") }
            return Int32(s)
        }

        try r.expect("centers")
        let centerCount = try r.count()
        guard centerCount <= devices.count else {
            throw SnapshotError("snapshot has \(centerCount) notification centers for \(devices.count) devices")
        }
        var restoredCenters: [Center] = []
        restoredCenters.reserveCapacity(centerCount)
        for _ in 0..<centerCount {
            var c = Center()
            c.seen = try r.bool()
            c.pending = try r.list { r throws(SnapshotError) in
                Pending(stored: try storedIndex(&r), instance: try r.u32())
            }
            c.delivered = try r.list { r throws(SnapshotError) in
                Delivered(stored: try storedIndex(&r), t: try r.f64())
            }
            let categories = try r.json(depth: 0)
            do { c.categories = try NotificationCategory.list(json: categories) } catch {
                throw SnapshotError("snapshot's categories cannot be read: \(error)")
            }
            func options(_ r: inout SnapshotReader) throws(SnapshotError) -> PresentationOptions {
                let raw = try r.u8()
                guard raw & ~PresentationOptions.all.rawValue == 0 else { throw SnapshotError("bad presentation options \(raw)") }
                return PresentationOptions(rawValue: raw)
            }
            c.granted = try options(&r)
            c.authorized = try r.bool()
            let foreground = try r.bool()
            c.app = AppState(foreground: foreground, presentation: try options(&r))
            restoredCenters.append(c)
        }
        let counter = try r.u32()
        var restoredTimers = TimerQueue<Timer>()
        try restoredTimers.restoreSnapshot(from: &r) { r throws(SnapshotError) in
            let d = try r.i32()
            guard d >= 0, Int(d) < centerCount else { throw SnapshotError("snapshot has a timer of device \(d) without a center") }
            return Timer(device: d, instance: try r.u32())
        }
        // All read: only now is anything changed.
        stored.append(contentsOf: restored)
        centers = restoredCenters
        instanceCounter = counter
        timers = restoredTimers
    }
}

// MARK: Requests in binary

extension SnapshotWriter {
    package mutating func request(_ q: NotificationRequest) {
        tag("request")
        string(q.id)
        content(q.content)
        trigger(q.trigger)
        optional(q.devices) { w, names in w.list(names) { w, name in w.string(name) } }
    }

    package mutating func content(_ c: NotificationContent) {
        for s in [c.title, c.subtitle, c.body, c.sound, c.categoryIdentifier, c.threadIdentifier] {
            optional(s) { w, s in w.string(s) }
        }
        optional(c.badge) { w, n in w.zigzag(Int64(n)) }
        optional(c.userInfo) { w, v in w.json(v) }
        optional(c.interruptionLevel) { w, level in w.string(level.rawValue) }
        optional(c.relevanceScore) { w, x in w.f64(x) }
        optional(c.attachments) { w, list in w.json(.array(list.map(\.json))) }
    }

    mutating func trigger(_ t: NotificationTrigger) {
        switch t {
        case .location(let region, let entry, let exit, let repeats):
            u8(0)
            string(region)
            bool(entry)
            bool(exit)
            bool(repeats)
        case .timeInterval(let seconds, let repeats):
            u8(1)
            f64(seconds)
            bool(repeats)
        case .calendar(let c, let zone, let repeats):
            u8(2)
            for n in [c.year, c.month, c.day, c.hour, c.minute, c.second, c.weekday] {
                optional(n) { w, n in w.zigzag(Int64(n)) }
            }
            string(zone)
            bool(repeats)
        case .push:
            u8(3)
        }
    }

    /// Any JSON value: a kind byte, then the value; an object's members in key order.
    mutating func json(_ v: JSONValue) {
        switch v {
        case .null: u8(0)
        case .bool(let b): u8(b ? 2 : 1)
        case .number(let x):
            u8(3)
            f64(x)
        case .string(let s):
            u8(4)
            string(s)
        case .array(let elements):
            u8(5)
            list(elements) { w, e in w.json(e) }
        case .object(let members):
            u8(6)
            list(members.sorted { $0.key < $1.key }) { w, m in
                w.string(m.key)
                w.json(m.value)
            }
        }
    }
}

extension SnapshotReader {
    package mutating func request() throws(SnapshotError) -> NotificationRequest {
        try expect("request")
        let id = try string()
        let content = try content()
        let trigger = try trigger()
        let devices = try optional { r throws(SnapshotError) in try r.list { r throws(SnapshotError) in try r.string() } }
        return NotificationRequest(id: id, content: content, trigger: trigger, devices: devices)
    }

    package mutating func content() throws(SnapshotError) -> NotificationContent {
        func text(_ r: inout SnapshotReader) throws(SnapshotError) -> String? {
            try r.optional { r throws(SnapshotError) in try r.string() }
        }
        var c = NotificationContent()
        c.title = try text(&self)
        c.subtitle = try text(&self)
        c.body = try text(&self)
        c.sound = try text(&self)
        c.categoryIdentifier = try text(&self)
        c.threadIdentifier = try text(&self)
        c.badge = try optional { r throws(SnapshotError) in try r.int() }
        c.userInfo = try optional { r throws(SnapshotError) in try r.json(depth: 0) }
        c.interruptionLevel = try optional { r throws(SnapshotError) in
            let s = try r.string()
            guard let level = NotificationContent.InterruptionLevel(rawValue: s) else {
                throw SnapshotError("bad interruption level \"\(s)\" at byte \(r.offset)")
            }
            return level
        }
        c.relevanceScore = try optional { r throws(SnapshotError) in try r.f64() }
        c.attachments = try optional { r throws(SnapshotError) in
            let v = try r.json(depth: 0)
            do {
                return try NotificationAttachment.list(json: v)
            } catch {
                throw SnapshotError("bad attachments at byte \(r.offset): \(error)")
            }
        }
        return c
    }

    mutating func trigger() throws(SnapshotError) -> NotificationTrigger {
        switch try u8() {
        case 0:
            return .location(region: try string(), notifyOnEntry: try bool(), notifyOnExit: try bool(), repeats: try bool())
        case 1:
            return .timeInterval(seconds: try f64(), repeats: try bool())
        case 2:
            var n: [Int?] = []
            for _ in 0..<7 { n.append(try optional { r throws(SnapshotError) in try r.int() }) }
            let c = CalendarComponents(year: n[0], month: n[1], day: n[2], hour: n[3], minute: n[4], second: n[5], weekday: n[6])
            return .calendar(components: c, timeZone: try string(), repeats: try bool())
        case 3:
            return .push
        case let k:
            throw SnapshotError("bad trigger kind \(k) at byte \(offset - 1)")
        }
    }

    mutating func int() throws(SnapshotError) -> Int {
        let v = try zigzag()
        guard let n = Int(exactly: v) else { throw SnapshotError("number out of range at byte \(offset)") }
        return n
    }

    /// Nested no deeper than the requests file's parser allows, so a corrupt snapshot cannot
    /// exhaust the stack.
    mutating func json(depth: Int) throws(SnapshotError) -> JSONValue {
        guard depth <= JSONValue.defaultMaxDepth else { throw SnapshotError("JSON nested too deep at byte \(offset)") }
        switch try u8() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .number(try f64())
        case 4: return .string(try string())
        case 5: return .array(try list { r throws(SnapshotError) in try r.json(depth: depth + 1) })
        case 6:
            let n = try count()
            var members: [String: JSONValue] = [:]
            for _ in 0..<n {
                let key = try string()
                members[key] = try json(depth: depth + 1)
            }
            guard members.count == n else { throw SnapshotError("JSON object with a repeated key at byte \(offset)") }
            return .object(members)
        case let k:
            throw SnapshotError("bad JSON kind \(k) at byte \(offset - 1)")
        }
    }
}
