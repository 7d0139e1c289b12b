/// A JSON value, for files read once (regions, requests) and for payloads echoed verbatim.
///
/// The hot path never builds these: readings are decoded straight from bytes.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}
