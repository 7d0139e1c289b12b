import CGEOS

/// One GEOS context handle (`GEOS_init_r`), freed once in `deinit` (`GEOS_finish_r`).
///
/// GEOS contexts are not thread-safe: create one per thread and never share it, nor any geometry,
/// prepared geometry or tree made with it. Errors GEOS reports through the message handler are
/// kept in `lastError` so wrappers can put them into the errors they throw.
public final class GEOSContext {
    let handle: GEOSContextHandle_t
    /// The last message GEOS sent to the error handler.
    public internal(set) var lastError: String?

    public init() {
        // GEOS_init_r returns NULL only when it cannot allocate a few hundred bytes.
        guard let handle = GEOS_init_r() else { fatalError("GEOS_init_r failed: out of memory") }
        self.handle = handle
        // The variadic handlers cannot take a Swift closure; this one takes (message, userdata).
        GEOSContext_setErrorMessageHandler_r(
            handle,
            { message, userdata in
                guard let message, let userdata else { return }
                let context = Unmanaged<GEOSContext>.fromOpaque(userdata).takeUnretainedValue()
                context.lastError = String(cString: message)
            },
            Unmanaged.passUnretained(self).toOpaque()
        )
    }

    deinit {
        GEOS_finish_r(handle)
    }

    /// Takes the pending GEOS error message, if any, or the given fallback.
    func takeError(_ fallback: String) -> String {
        defer { lastError = nil }
        return lastError ?? fallback
    }
}

/// A GEOS call failed; `message` is what GEOS said.
public struct GEOSError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { "GEOS: \(message)" }
}
