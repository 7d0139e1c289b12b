import GeotriggerCore
import GeotriggerRuntime

/// A Kafka partition's messages of NMEA 0183 lines or gpsd reports, keyed by device
/// (`geotrigger consume --format nmea|gpsd`), made into readings as `replay` makes them of one
/// receiver's log: one `ReceiverMessages` per input partition, its state per device.
///
/// A message holds one or more lines (a producer may send a log line by line, or a few lines
/// at a time; a line is never split between messages). Its key is its device:
/// - **NMEA**: the key (a message without one is rejected, `missing-device`). Each device's
///   sentences are assembled into cycles of their own (`NMEACycles`), exactly as `replay
///   --device KEY` assembles that device's sentences read from one file: a cycle ends when a
///   sentence of another time arrives for that device, or at `finish()`. Its fix therefore comes
///   out with a later message of the same device (about one cycle late).
/// - **gpsd**: the key, else the report's `device` field (the key is to `consume` what
///   `--device` is to `replay`: it wins); neither is `missing-device`. A TPV that repeats the
///   device's previous fix exactly is passed over (`TPV repeat`), as `replay` passes it over.
///
/// What is open between messages (each device's date and unfinished cycle, its previous TPV)
/// goes into the partition's snapshot (`writeSnapshot`), so a partition resumed elsewhere after
/// a `kill -9` makes the same fixes.
package final class ReceiverMessages {
    package enum Kind: UInt8 {
        case nmea = 1
        case gpsd = 2
    }

    /// One outcome of a message.
    package enum Step {
        /// `current` holds a fix; `lineOffset` is the offset of the message holding the line
        /// that stands for it (an NMEA cycle's position sentence).
        case reading(lineOffset: Int64)
        /// `rejectedLine` (at the message of offset `lineOffset`) is rejected for `reason`.
        case rejected(RejectReason, lineOffset: Int64)
    }

    package let kind: Kind
    /// A line longer than this is rejected (`line-too-long`), as `replay`'s line reader rejects it.
    package let maxLineLength: Int
    /// The devices seen, by id: `states[id]` is the device's.
    private let devices = DeviceTable(capacity: 64)
    private var states: [DeviceState] = []
    /// A gpsd line copied to a padded buffer (the JSON scanner reads words past a line's end),
    /// and the scratch where a `device` with escapes is unescaped.
    private var held = PaddedBuffer(capacity: 512)
    private var scratch = PaddedBuffer(capacity: 256)

    package private(set) var current = Reading()
    package private(set) var rejectedLine = ByteView.empty
    /// The device of the cycle `finish()` ended last (its key, for `GROUP-rejects`).
    package private(set) var finishedDevice = ByteView.empty
    /// Lines passed over, by kind (as the file decoders count them).
    package var passedOver: [String: Int] { passed.dictionary }
    private var passed = PassedOverCounts()

    package init(kind: Kind, maxLineLength: Int = 1 << 20) {
        self.kind = kind
        self.maxLineLength = maxLineLength
        states.reserveCapacity(64)
    }

    /// What one device has open between messages.
    private final class DeviceState {
        /// NMEA: the device's cycles, each cycle's line placed at its message's offset.
        var receiver = NMEAReceiver()
        /// gpsd: the device's last fix.
        var last: (t: Double, latitude: Double, longitude: Double) = (.nan, .nan, .nan)
    }

    /// The device `name`'s state (made on first sight) and its id.
    @inline(__always)
    private func state(of name: ByteView) -> Int32 {
        let (id, isNew) = devices.intern(name)
        if isNew {
            if Int(id) == states.count { states.append(DeviceState()) } else { states[Int(id)] = DeviceState() }
        }
        return id
    }

    /// Decodes the message at `offset` (its `key`, its `value`), calling `body` for every reading
    /// and rejection it makes, in order. `current` and `rejectedLine` are valid during the call.
    package func decode<E: Error>(key: ByteView, value: ByteView, offset: Int64,
                                  _ body: (Step) throws(E) -> Void) throws(E) {
        if key.count > 0 && !InputLimits.identifierFits(byteCount: key.count) {
            rejectedLine = value
            try body(.rejected(.idTooLong, lineOffset: offset))
            return
        }
        var id: Int32 = -1
        if kind == .nmea {
            guard key.count > 0 else {
                // Sentences of no known receiver: no cycle to put them in.
                if Self.hasContent(value) {
                    rejectedLine = value
                    try body(.rejected(.missingDevice, lineOffset: offset))
                }
                return
            }
            id = state(of: key)
        }
        var start = 0
        let n = value.count
        while start < n {
            var end = start
            while end < n && value[end] != 0x0A { end += 1 }
            let line = value[start..<end]
            start = end + 1
            if line.count > maxLineLength {
                rejectedLine = line[0..<maxLineLength]
                try body(.rejected(.lineTooLong, lineOffset: offset))
                continue
            }
            if kind == .nmea {
                try sentence(line, device: id, offset: offset, body)
            } else {
                try report(line, key: key, offset: offset, body)
            }
        }
    }

    /// Whether `value` has anything but blanks and line ends.
    private static func hasContent(_ value: ByteView) -> Bool {
        for b in value where b != 0x0A && b != 0x0D && b != 0x20 && b != 0x09 { return true }
        return false
    }

    // MARK: NMEA

    /// One line of device `d`'s, as `NMEADecoder.next` takes a line.
    @inline(__always)
    private func sentence<E: Error>(_ line: ByteView, device d: Int32, offset: Int64,
                                    _ body: (Step) throws(E) -> Void) throws(E) {
        switch states[Int(d)].receiver.read(line, place: offset) {
        case .blank, .taken:
            return
        case .passedOver(let kind):
            pass(kind)
        case .otherSentence(let type):
            passed.add(type)
        case .badChecksum:
            rejectedLine = line
            try body(.rejected(.badChecksum, lineOffset: offset))
        case .ended(let o, let cycleLine, let cycleOffset):
            try outcome(o, device: d, line: cycleLine, lineOffset: cycleOffset, body)
        }
    }

    private func outcome<E: Error>(_ o: NMEACycles.Outcome, device d: Int32, line: ByteView, lineOffset: Int64,
                                   _ body: (Step) throws(E) -> Void) throws(E) {
        rejectedLine = line
        switch o {
        case .void:
            try body(.rejected(.voidFix, lineOffset: lineOffset))
        case .noDate:
            try body(.rejected(.noDate, lineOffset: lineOffset))
        case .fix(let t, let latitude, let longitude, let accuracy):
            guard InputLimits.timeIsWritable(t) else {
                try body(.rejected(.timeOutOfRange, lineOffset: lineOffset))
                return
            }
            current = .fix(t: t, device: devices.nameBytes(d), latitude: latitude, longitude: longitude,
                           accuracy: accuracy, line: line)
            try body(.reading(lineOffset: lineOffset))
        }
    }

    /// Ends every device's open cycle (the input has ended: `consume --exit-when-idle`), in the
    /// order the devices were first seen; a device's later sentences of that cycle's time are
    /// passed over, as after the end of a live input.
    package func finish<E: Error>(_ body: (Step) throws(E) -> Void) throws(E) {
        guard kind == .nmea else { return }
        for d in 0..<Int32(states.count) where devices.isLive(d) {
            let s = states[Int(d)]
            if let o = s.receiver.finish() {
                finishedDevice = devices.nameBytes(d)
                try outcome(o, device: d, line: s.receiver.line, lineOffset: s.receiver.place, body)
            }
        }
    }

    // MARK: gpsd

    @inline(__always)
    private func report<E: Error>(_ line: ByteView, key: ByteView, offset: Int64,
                                  _ body: (Step) throws(E) -> Void) throws(E) {
        var n = line.count
        if n > 0 && line[n - 1] == 0x0D { n -= 1 }
        let p = held.hold(line[0..<n])
        rejectedLine = p.bytes
        switch GPSDDecoder.parse(p, scratch: &scratch) {
        case .blank:
            return
        case .passedOver(let kind):
            pass(kind)
        case .rejected(let reason):
            try body(.rejected(reason, lineOffset: offset))
        case .fix(let fix):
            let name = key.count > 0 ? key : fix.device ?? ByteView.empty
            guard name.count > 0 else {
                try body(.rejected(.missingDevice, lineOffset: offset))
                return
            }
            guard InputLimits.identifierFits(byteCount: name.count) else {
                try body(.rejected(.idTooLong, lineOffset: offset))
                return
            }
            let d = state(of: name)
            let s = states[Int(d)]
            // gpsd's exact repeat of the device's report before.
            if fix.t == s.last.t && fix.latitude == s.last.latitude && fix.longitude == s.last.longitude {
                pass("TPV repeat")
                return
            }
            s.last = (fix.t, fix.latitude, fix.longitude)
            current = fix.reading(device: devices.nameBytes(d), line: p.bytes)
            try body(.reading(lineOffset: offset))
        }
    }

    private func pass(_ kind: String) {
        passed.add(kind)
    }

    // MARK: Snapshots

    /// Every device's open state: its name, then (NMEA) its cycles and the line standing for the
    /// cycle being read, with its message's offset, or (gpsd) its last fix.
    package func writeSnapshot(to w: inout SnapshotWriter) {
        w.tag("receiver-messages")
        w.u8(kind.rawValue)
        let live = (0..<Int32(states.count)).filter { devices.isLive($0) }
        w.count(live.count)
        for d in live {
            let s = states[Int(d)]
            w.raw(devices.nameBytes(d))
            switch kind {
            case .nmea:
                s.receiver.writeSnapshot(to: &w)
            case .gpsd:
                w.f64(s.last.t)
                w.f64(s.last.latitude)
                w.f64(s.last.longitude)
            }
        }
    }

    /// Restores `writeSnapshot`'s state into this new instance (nothing decoded yet).
    package func restoreSnapshot(from r: inout SnapshotReader) throws(SnapshotError) {
        try r.expect("receiver-messages")
        let k = try r.u8()
        guard k == kind.rawValue else { throw SnapshotError("receiver messages of kind \(k), not \(kind.rawValue)") }
        guard states.isEmpty else { throw SnapshotError("receiver messages restored after use") }
        let n = try r.count()
        for _ in 0..<n {
            let name = try r.raw()
            guard !name.isEmpty, InputLimits.identifierFits(byteCount: name.count) else {
                throw SnapshotError("a receiver's device name of \(name.count) bytes")
            }
            let d = name.withUnsafeBytes { state(of: ByteView(unsafe: $0)) }
            guard Int(d) == states.count - 1 else { throw SnapshotError("a receiver's device twice") }
            let s = states[Int(d)]
            switch kind {
            case .nmea:
                try s.receiver.restoreSnapshot(from: &r)
            case .gpsd:
                s.last = (try r.f64(), try r.f64(), try r.f64())
            }
        }
    }
}
