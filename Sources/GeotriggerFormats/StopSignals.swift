import CSignals

/// SIGINT and SIGTERM as a request to stop at the next record (`replay --checkpoint` then writes
/// a snapshot and exits 0). Once caught, a read waiting for input returns rather than waiting on.
public enum StopSignals {
    /// Catches SIGINT and SIGTERM from now on (they no longer end the process at once).
    public static func catchSignals() { geotrigger_catch_stop_signals() }

    /// Whether a stop signal has arrived.
    @inline(__always)
    public static var requested: Bool { geotrigger_stop_requested() != 0 }
}
