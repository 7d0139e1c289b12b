import CGEOS

/// One GEOS context handle (`GEOS_init_r`), made when first used and freed once in `deinit`
/// (`GEOS_finish_r`).
///
/// GEOS contexts are not thread-safe: create one per thread and never share it, nor any geometry,
/// prepared geometry or tree made with it. Errors GEOS reports through the message handler are
/// kept in `lastError` so wrappers can put them into the errors they throw.
///
/// Made on first use because GEOS itself is loaded then (CGEOS.h): an index of circles makes a
/// context it never uses, and a replay of circles then never loads GEOS.
public final class GEOSContext {
    /// The handle, made (and GEOS loaded) on the first call.
    var handle: GEOSContextHandle_t { made ?? make() }
    private var made: GEOSContextHandle_t?
    /// The last message GEOS sent to the error handler.
    public internal(set) var lastError: String?

    public init() {}

    private func make() -> GEOSContextHandle_t {
        var reason: UnsafePointer<CChar>?
        guard geotrigger_geos_load(&reason) != 0 else {
            // The tool cannot test a polygon without GEOS, and every caller is past the point of
            // reporting an error: stop with what is missing.
            fatalError("\(reason.map { String(cString: $0) } ?? "GEOS could not be loaded"); polygons and "
                + "--tree geos need it installed (Debian: apt-get install libgeos-c1v5)")
        }
        // GEOS_init_r returns NULL only when it cannot allocate a few hundred bytes.
        guard let handle = GEOS_init_r() else { fatalError("GEOS_init_r failed: out of memory") }
        made = handle
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
        return handle
    }

    deinit {
        if let made { GEOS_finish_r(made) }
    }

    /// Why the library file `name` could not serve as GEOS, or nil when it could: opened on its
    /// own and closed again, whatever this process has loaded.
    public static func problem(loading name: String) -> String? {
        var reason = [CChar](repeating: 0, count: 512)
        guard geotrigger_geos_probe(name, &reason, reason.count) == 0 else { return nil }
        return String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
