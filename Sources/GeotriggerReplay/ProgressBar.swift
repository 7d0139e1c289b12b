import GeotriggerCore
/// A one-line progress bar on stderr: share of input bytes read, records and records/s.
///
/// Redraws at most every 0.2 s; the caller decides whether stderr is a terminal.
final class ProgressBar {
    let totalBytes: Int
    let write: (String) -> Void
    let started = monotonicSeconds()
    private var lastDraw = 0.0
    private var drawn = false

    init(totalBytes: Int, write: @escaping (String) -> Void) {
        self.totalBytes = totalBytes
        self.write = write
    }

    func update(bytes: Int, records: Int) {
        let now = monotonicSeconds()
        guard now - lastDraw >= 0.2 else { return }
        lastDraw = now
        drawn = true
        let fraction = min(1, Double(bytes) / Double(max(1, totalBytes)))
        let width = 30
        let filled = Int(fraction * Double(width))
        let rate = Double(records) / max(1e-9, now - started)
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        write("\r\(bar) \(Int(fraction * 100))%  \(grouped(records)) records  \(grouped(Int(rate))) records/s \u{1B}[K")
    }

    func finish() {
        if drawn { write("\r\u{1B}[K") }
    }
}
