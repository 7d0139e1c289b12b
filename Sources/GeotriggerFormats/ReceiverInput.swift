import GeotriggerCore

// What the decoders of a receiver's output (NMEA 0183, gpsd's reports) share: the one device
// of an input, and resuming by decoding again.

/// The device of every fix of an input that names none (or whose name is overridden): `--device`,
/// else the file name without its extension, `stdin` for standard input. Its bytes are the
/// decoder's own, so every reading can point at them.
struct InputDevice: ~Copyable {
    let bytes: ByteView
    /// Whether `--device` gave it (it then overrides what the input says).
    let given: Bool
    private let copy: PaddedBuffer

    init(_ device: String?, sourceName: String) {
        let name = device ?? (sourceName == "-" ? "stdin" : GPXDecoder.deviceName(fromPath: sourceName))
        let copy = PaddedBuffer(copying: name)
        bytes = copy.view(from: 0, count: name.utf8.count)
        given = device != nil
        self.copy = copy
    }
}

extension ReadingDecoder {
    /// `resume(at:)` for a decoder whose every position is one its `next()` returned: decodes
    /// again up to `target`, returning nothing, so what it carries from record to record (a
    /// receiver's date, the cycle being read, the counts) is rebuilt as it was.
    func decodeAgain(upTo target: InputPosition) -> Bool {
        while position != target && position.offset <= target.offset {
            if next() == .end { break }
        }
        return position == target
    }
}
