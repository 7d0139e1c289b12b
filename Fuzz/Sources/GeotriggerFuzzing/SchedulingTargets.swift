import Geotrigger
import GeotriggerConsume
import GeotriggerRuntime
import GeotriggerScheduling
import GeotriggerCore

/// The scheduling core's inputs: requests files, control records (SPEC §5.1, §7), APNs payloads.
enum SchedulingTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(
            name: "requests-json",
            about: "A --requests file (RequestsFile.parse, as Replay.loadRequests reads it): read twice the same; a "
                + "refusal has a reason; each request read, written back as JSON (its `json`, devices added) and in "
                + "the checkpoint's binary form, reads back the same, and the whole file written back reads the same; "
                + "a Scheduler takes every request, and a device's first reading makes its requests pending",
            check: { requests($0) }),
        FuzzTarget(
            name: "control-records",
            about: "NDJSON records as `consume` takes them (NDJSONDecoder.decode(record:), each line lent at its exact "
                + "length, then PartitionEngine.apply: control records, region records, fixes): every non-blank line "
                + "is a reading or a rejection, a bad control record has a reason; a partition restored from a snapshot "
                + "taken halfway goes on with the same outcomes, events and final snapshot, which restores and "
                + "re-encodes to the same bytes (records more than a day from the first are skipped)",
            check: { controlRecords($0) }),
        FuzzTarget(
            name: "apns-payload",
            about: "An APNs payload (RemotePayload(json:)): read twice the same; a refusal has a reason; its content, "
                + "written as a deliver event writes it and in the checkpoint's binary form, reads back the same; "
                + "written back as an APNs payload it reads the same; pushed to a notification center it is a silent "
                + "push or a delivery of exactly its content",
            check: { payload($0) }),
        FuzzTarget(
            name: "tzif-zone",
            about: "A TZif time zone file (ZoneRules(tzif:), as calendar triggers read the system's database): read "
                + "twice the same; a refusal has a reason; at instants around every transition, across the footer's "
                + "rule and far out, the offset is within ±26 h, the next change is later, changes the offset and "
                + "nothing changes before it; a calendar in the zone finds each next date after the instant it is asked from",
            check: { zone($0) }),
    ]

    // MARK: Time zone files

    static func zone(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        func read() -> Result<ZoneRules, ZoneDataError> { Result { () throws(ZoneDataError) in try ZoneRules(tzif: bytes) } }
        let z: ZoneRules
        switch (read(), read()) {
        case (.failure(let a), .failure(let b)):
            findings.expect(a == b, "read twice, refused for \(a), then for \(b)")
            findings.expect(!a.description.isEmpty, "refused with no reason")
            return findings.problems
        case (.success(let a), .success(let b)):
            findings.expect(a.times == b.times && a.offsets == b.offsets && a.initial == b.initial && a.rule == b.rule,
                            "read twice, read differently")
            z = a
        case (let a, let b):
            findings.add("read twice: \(a) then \(b)")
            return findings.problems
        }
        var probes = [-62_135_596_800, -1, 0, 2_147_483_647, 4_102_444_800, 253_402_300_799]
        for t in z.times.prefix(64) + z.times.suffix(64) { probes += [t - 1, t, t + 1] }
        if let last = z.times.last { probes += (1...24).map { last + $0 * 15 * 86_400 } }
        for t in probes {
            let offset = z.secondsFromUTC(at: t)
            findings.expect(abs(offset) <= ZoneRules.maximumOffset, "offset \(offset) at \(t)")
            guard let next = z.nextChange(after: t) else { continue }
            guard next > t else {
                findings.add("next change after \(t) at \(next)")
                continue
            }
            findings.expect(z.secondsFromUTC(at: next) != z.secondsFromUTC(at: next - 1), "no change at \(next) (after \(t))")
            if next > t + 1 {
                findings.expect(z.secondsFromUTC(at: t + 1) == offset, "a change at \(t + 1) before the next, \(next)")
                findings.expect(z.secondsFromUTC(at: t + (next - t) / 2) == offset
                                    && z.secondsFromUTC(at: next - 1) == offset, "a change between \(t) and \(next)")
            }
        }
        let calendar = ZonedCalendar(timeZoneIdentifier: "Fuzz/Zone", zone: z)
        for t in probes.prefix(8) {
            for c in [CalendarComponents(hour: 2, minute: 30), CalendarComponents(month: 3, day: 31, hour: 2)] {
                if let d = calendar.nextDate(after: Double(t), matching: c) {
                    findings.expect(d > Double(t), "next date \(d) for \(c) not after \(t)")
                }
            }
        }
        return findings.problems
    }

    // MARK: Requests files

    /// The region ids a location trigger may name: the two fuzz worlds' regions.
    static let regionKeys: [String: Int32] = {
        var keys: [String: Int32] = [:]
        for r in World.cerknica.regions + World.lobby.regions where keys[r.id] == nil { keys[r.id] = Int32(keys.count) }
        return keys
    }()

    static func requests(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        let array = Array(bytes)
        func parse(_ b: [UInt8]) -> Result<[NotificationRequest], RequestFileError> {
            Result { () throws(RequestFileError) in
                try RequestsFile.parse(bytes: b, fileName: "fuzz.json", knownRegion: { regionKeys[$0] != nil })
            }
        }
        let first = parse(array), second = parse(array)
        let list: [NotificationRequest]
        switch (first, second) {
        case (.failure(let a), .failure(let b)):
            findings.expect(a.description == b.description, "read twice, refused for \(a), then for \(b)")
            findings.expect(!a.reason.isEmpty, "refused with no reason: \(a)")
            return findings.problems
        case (.success(let a), .success(let b)):
            findings.expect(a == b, "read twice, read differently")
            list = a
        default:
            findings.add("read twice: \(first) then \(second)")
            return findings.problems
        }
        findings.expect(Set(list.map(\.id)).count == list.count, "ids repeat in \(list.map(\.id))")
        var texts: [String] = []
        for (k, request) in list.enumerated() {
            // As JSON, the form `--state-out` writes (without devices, added back here).
            var json = request.json
            if let devices = request.devices, case .object(var o) = json {
                o["devices"] = .array(devices.map { .string($0) })
                json = .object(o)
            }
            let text = json.serialized()
            texts.append(text)
            do {
                let again = try NotificationRequest(json: JSONValue.parse(text))
                findings.expect(again == request, "request \(k) written as `\(quoted(text.utf8))` reads back as \(again)")
            } catch {
                findings.add("request \(k) written as `\(quoted(text.utf8))` is refused: \(error)")
            }
            // As a checkpoint writes a stored request.
            var w = SnapshotWriter()
            w.request(request)
            var r = SnapshotReader(w.bytes)
            do {
                let again = try r.request()
                findings.expect(again == request && r.isAtEnd, "request \(k) in binary reads back as \(again)")
            } catch {
                findings.add("request \(k) in binary is refused: \(error.message)")
            }
        }
        let file = "[" + texts.joined(separator: ",") + "]"
        switch parse(Array(file.utf8)) {
        case .success(let again): findings.expect(again == list, "the file written back `\(quoted(file.utf8))` reads differently")
        case .failure(let e): findings.add("the file written back `\(quoted(file.utf8))` is refused: \(e)")
        }
        // The run's scheduler takes what the file's reader took ("cannot refuse them").
        do {
            let scheduler = try Scheduler(requests: list, regionKeys: regionKeys)
            let name = list.lazy.compactMap { $0.devices?.first }.first ?? "phone"
            let d = scheduler.device(name)
            scheduler.deviceSeen(d, at: 1_700_000_000)
            let expected = list.filter { $0.devices == nil } + list.filter { $0.devices?.contains(name) == true }
            let pending = scheduler.pending(device: d)
            findings.expect(pending.map(\.id) == expected.map(\.id),
                            "device \(name)'s first reading made \(pending.map(\.id)) pending, not \(expected.map(\.id))")
        } catch {
            findings.add("the scheduler refuses requests the file's reader took: \(error)")
        }
        return findings.problems
    }

    // MARK: Control records

    /// Records more than this from the first record's time are skipped: a repeating trigger fires
    /// every minute at most, so a day is at most 1,440 firings per pending request.
    static let window = 86_400.0

    static func controlRecords(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var findings = Findings()
        let world = World.cerknica
        let lines = ReadingsTargets.lines(of: bytes)
        let decoder = NDJSONDecoder(recordsNamed: World.topic)
        let a = world.partition()
        var b: PartitionEngine?
        let split = lines.count / 2
        var firstT: Double?
        for (k, line) in lines.enumerated() {
            let offset = Int64(k)
            if k == split {
                // A snapshot halfway, restored into a new partition that goes on beside the first.
                let s = a.snapshot(identity: world.identity, topic: World.topic)
                _ = SnapshotTargets.events(of: a)
                let fresh = world.partition()
                do {
                    try fresh.restore(s, identity: world.identity, topic: World.topic)
                    b = fresh
                } catch {
                    findings.add("the snapshot after record \(k) (\(s.count) bytes) is refused: \(error)")
                    return findings.problems
                }
            }
            var engines = [a]
            if let b { engines.append(b) }
            for p in engines { p.nextOffset = offset + 1 }
            // Lent as a Kafka message: the bytes end at the record's last byte, and stay valid
            // while the record is applied (the reading points into them).
            let own = UnsafeMutableRawBufferPointer.allocate(byteCount: line.count, alignment: 1)
            defer { own.deallocate() }
            if !line.isEmpty { line.withUnsafeBytes { own.copyMemory(from: $0) } }
            switch decoder.decode(record: ByteView(unsafe: UnsafeRawBufferPointer(own))) {
            case .end:
                findings.expect(line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D },
                                "line \(k + 1) `\(quoted(line))` is neither a reading, a rejection nor blank")
                for p in engines { p.skip(offset: offset) }
            case .rejected:
                for p in engines { p.skip(offset: offset) }
            case .reading:
                let r = decoder.current
                if let t0 = firstT, !(abs(r.t - t0) <= window) {
                    for p in engines { p.skip(offset: offset) }
                    continue
                }
                if firstT == nil { firstT = r.t }
                var outcomes: [String] = []
                for p in engines {
                    let outcome = p.apply(r, offset: offset)
                    if let (reason, detail) = outcome, reason == .badControl {
                        findings.expect(detail.map { !$0.isEmpty } ?? false,
                                        "line \(k + 1) `\(quoted(line))`: a bad control record with no reason")
                    }
                    outcomes.append(outcome.map { "\($0.0.rawValue): \($0.1 ?? "-")" } ?? "applied")
                }
                if outcomes.count == 2 {
                    findings.expect(outcomes[0] == outcomes[1],
                                    "line \(k + 1) `\(quoted(line))`: \(outcomes[0]) in the partition that ran on, "
                                        + "\(outcomes[1]) in the one restored at line \(split + 1)")
                }
            }
        }
        guard let b else { return findings.problems }
        SnapshotTargets.expectSame(SnapshotTargets.events(of: a), "the events after line \(split)",
                                   SnapshotTargets.events(of: b), "those of the partition restored there", &findings)
        let s1 = a.snapshot(identity: world.identity, topic: World.topic)
        SnapshotTargets.expectSame(s1, "the final snapshot", b.snapshot(identity: world.identity, topic: World.topic),
                                   "the restored partition's", &findings)
        let c = world.partition()
        do {
            try c.restore(s1, identity: world.identity, topic: World.topic)
            SnapshotTargets.expectSame(s1, "the final snapshot", c.snapshot(identity: world.identity, topic: World.topic),
                                       "it restored and written again", &findings)
        } catch {
            findings.add("the final snapshot (\(s1.count) bytes) is refused: \(error)")
        }
        return findings.problems
    }

    // MARK: APNs payloads

    static func payload(_ bytes: UnsafeRawBufferPointer) -> [String] {
        guard let json = try? JSONValue.parse(Array(bytes)) else { return [] }
        var findings = Findings()
        func read(_ j: JSONValue) -> Result<RemotePayload, RequestError> {
            Result { () throws(RequestError) in try RemotePayload(json: j) }
        }
        let payload: RemotePayload
        switch (read(json), read(json)) {
        case (.failure(let a), .failure(let b)):
            findings.expect(a == b, "read twice, refused for \(a), then for \(b)")
            findings.expect(!a.reason.isEmpty, "refused with no reason")
            return findings.problems
        case (.success(let a), .success(let b)):
            findings.expect(a == b, "read twice, read differently")
            payload = a
        case (let a, let b):
            findings.add("read twice: \(a) then \(b)")
            return findings.problems
        }
        let content = payload.content
        // As a deliver event writes the content, read as a push record's content.
        var written: [UInt8] = []
        content.json.write(into: &written)
        do {
            let again = try NotificationContent(json: JSONValue.parse(written))
            findings.expect(again == content, "its content written as `\(quoted(written))` reads back as \(again)")
        } catch {
            findings.add("its content written as `\(quoted(written))` is refused: \(error)")
        }
        // As a checkpoint writes a delivered push's content.
        var w = SnapshotWriter()
        w.content(content)
        var r = SnapshotReader(w.bytes)
        do {
            let again = try r.content()
            findings.expect(again == content && r.isAtEnd, "its content in binary reads back as \(again)")
        } catch {
            findings.add("its content in binary is refused: \(error.message)")
        }
        // Written back as APNs would send it.
        let apns = apnsJSON(payload)
        switch read(apns) {
        case .success(let again):
            findings.expect(again == payload, "written back as `\(quoted(apns.serialized().utf8))` it reads as \(again)")
        case .failure(let e):
            findings.add("written back as `\(quoted(apns.serialized().utf8))` it is refused: \(e)")
        }
        // Pushed to a notification center that allows everything, with no service extension.
        do {
            let scheduler = try Scheduler(requests: [], regionKeys: [:])
            var delivered: [Delivery] = [], silent: [SilentPush] = []
            scheduler.onDeliver = { delivered.append($0) }
            scheduler.onSilentPush = { silent.append($0) }
            let d = scheduler.device("phone")
            let outcome = scheduler.push(id: "fuzz", payload: payload, device: d, at: 1_700_000_000)
            if payload.isSilent {
                findings.expect(outcome == .silent && delivered.isEmpty && silent.count == 1
                                    && silent.first?.userInfo == content.userInfo
                                    && silent.first?.contentAvailable == payload.contentAvailable,
                                "a silent payload pushed: \(outcome), \(delivered.count) deliveries, \(silent)")
            } else {
                findings.expect(outcome == .deliveredContent && silent.isEmpty && delivered.count == 1
                                    && delivered.first?.content == content,
                                "a payload pushed: \(outcome), \(silent.count) silent pushes, "
                                    + "\(delivered.map(\.content)) delivered, not \(content)")
                let listed = scheduler.delivered(device: d)
                findings.expect(listed.count == 1 && listed.first?.request.content == content,
                                "the delivered list after the push holds \(listed.map(\.request))")
            }
        } catch {
            findings.add("no scheduler: \(error)")
        }
        return findings.problems
    }

    /// A payload as APNs sends it (Apple's "Generating a remote notification"): `aps` with the
    /// alert as a string when it is only a body, else a dictionary; the app's keys beside it.
    static func apnsJSON(_ p: RemotePayload) -> JSONValue {
        let c = p.content
        var aps: [String: JSONValue] = [:]
        if c.title != nil || c.subtitle != nil {
            var alert: [String: JSONValue] = [:]
            if let s = c.title { alert["title"] = .string(s) }
            if let s = c.subtitle { alert["subtitle"] = .string(s) }
            if let s = c.body { alert["body"] = .string(s) }
            aps["alert"] = .object(alert)
        } else if let body = c.body {
            aps["alert"] = .string(body)
        }
        if let n = c.badge { aps["badge"] = .number(Double(n)) }
        if let s = c.sound { aps["sound"] = .string(s) }
        if let s = c.categoryIdentifier { aps["category"] = .string(s) }
        if let s = c.threadIdentifier { aps["thread-id"] = .string(s) }
        if let level = c.interruptionLevel {
            let names: [NotificationContent.InterruptionLevel: String] = [
                .passive: "passive", .active: "active", .timeSensitive: "time-sensitive", .critical: "critical",
            ]
            aps["interruption-level"] = .string(names[level]!)
        }
        if let x = c.relevanceScore { aps["relevance-score"] = .number(x) }
        if p.mutableContent { aps["mutable-content"] = .number(1) }
        if p.contentAvailable { aps["content-available"] = .number(1) }
        var top: [String: JSONValue] = [:]
        if case .object(let others)? = c.userInfo { top = others }
        top["aps"] = .object(aps)
        return .object(top)
    }
}
