import GeotriggerCore

/// A notification request: identifier, content and trigger, as `UNNotificationRequest`.
public struct NotificationRequest: Hashable, Sendable {
    public var id: String
    public var content: NotificationContent
    public var trigger: NotificationTrigger
    /// Devices this request is for; nil means every device, each getting it at its first reading.
    public var devices: [String]?

    public init(id: String, content: NotificationContent, trigger: NotificationTrigger, devices: [String]? = nil) {
        self.id = id
        self.content = content
        self.trigger = trigger
        self.devices = devices
    }

    public init(json: JSONValue) throws(RequestError) {
        guard case .object(let o) = json else { throw RequestError("a request must be an object") }
        guard let id = o["id"]?.stringValue, !id.isEmpty else { throw RequestError("request id is missing or not a string") }
        guard InputLimits.identifierFits(id) else {
            throw RequestError(InputLimits.identifierTooLong("the request id", byteCount: id.utf8.count))
        }
        guard let trigger = o["trigger"] else { throw RequestError("request \"\(id)\" has no trigger") }
        let content = try NotificationContent(json: o["content"] ?? .object([:]))
        var devices: [String]?
        if let d = o["devices"], d != .null {
            guard let list = d.arrayValue, let names = Optional(list.compactMap(\.stringValue)), names.count == list.count,
                  !names.isEmpty
            else { throw RequestError("devices must be a non-empty array of device ids") }
            if let long = names.first(where: { !InputLimits.identifierFits($0) }) {
                throw RequestError(InputLimits.identifierTooLong("a device id in devices", byteCount: long.utf8.count))
            }
            devices = names
        }
        if let extra = o.keys.sorted().first(where: { !["id", "content", "trigger", "devices"].contains($0) }) {
            throw RequestError("unknown request field \"\(extra)\"")
        }
        self.init(id: id, content: content, trigger: try NotificationTrigger(json: trigger), devices: devices)
    }
}

/// A `--requests` file that cannot be used: names the file, the request and the reason (exit 65).
public struct RequestFileError: Error, CustomStringConvertible, Sendable {
    public var file: String
    public var index: Int?
    public var id: String?
    public var reason: String

    public var description: String {
        var place = file
        if let index { place += ": request \(index)" }
        if let id { place += " (id \"\(id)\")" }
        return "\(place): \(reason)"
    }
}

/// Reads a `--requests` file: a JSON array of requests.
public enum RequestsFile {
    /// Parses and checks every request: well-formed, ids unique, location regions known.
    public static func parse(bytes: [UInt8], fileName: String, knownRegion: (String) -> Bool) throws(RequestFileError) -> [NotificationRequest] {
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch {
            throw RequestFileError(file: fileName, reason: "not valid JSON: \(error)")
        }
        guard case .array(let items) = json else {
            throw RequestFileError(file: fileName, reason: "expected a JSON array of requests")
        }
        var seen: [String: Int] = [:]
        var requests: [NotificationRequest] = []
        for (i, item) in items.enumerated() {
            // Named in errors unless it is itself the problem (too long to quote).
            let id = item["id"]?.stringValue.flatMap { InputLimits.identifierFits($0) ? $0 : nil }
            let request: NotificationRequest
            do { request = try NotificationRequest(json: item) } catch {
                throw RequestFileError(file: fileName, index: i, id: id, reason: error.reason)
            }
            if let first = seen[request.id] {
                throw RequestFileError(file: fileName, index: i, id: id, reason: "duplicate id (first used by request \(first))")
            }
            seen[request.id] = i
            if case .location(let region, _, _, _) = request.trigger, !knownRegion(region) {
                throw RequestFileError(file: fileName, index: i, id: id, reason: "unknown region \"\(region)\"")
            }
            requests.append(request)
        }
        return requests
    }
}
