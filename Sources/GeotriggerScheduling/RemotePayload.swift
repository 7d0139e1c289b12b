import GeotriggerCore

/// A remote notification's payload as APNs delivers it: the `aps` dictionary, and the app's own
/// keys beside it, which become the content's `userInfo` (SPEC §5.1).
///
/// Read as iOS reads it: `alert` is a string (the body) or a dictionary (`title`, `subtitle`,
/// `body`; the localization keys are accepted and not resolved); `sound` is a name or a critical
/// sound's dictionary (its `name` is kept); `category` and `thread-id` name the category and the
/// thread; `interruption-level` and `relevance-score` as their content fields. Keys of `aps` that
/// Apple defines for other purposes (`target-content-id`, `timestamp`, `event`, …) are ignored, as
/// the device ignores what it does not use; a known key of the wrong type refuses the payload.
public struct RemotePayload: Hashable, Sendable {
    public var content: NotificationContent
    /// `mutable-content: 1`: a notification service extension may rewrite the content.
    public var mutableContent: Bool
    /// `content-available: 1`: the app is woken in the background to fetch.
    public var contentAvailable: Bool

    public init(content: NotificationContent, mutableContent: Bool = false, contentAvailable: Bool = false) {
        self.content = content
        self.mutableContent = mutableContent
        self.contentAvailable = contentAvailable
    }

    /// No alert, sound or badge: nothing is shown; the app alone hears of it (`silentPush`).
    public var isSilent: Bool { PresentationOptions(usedBy: content).isEmpty }

    /// Whether a service extension is asked to rewrite it: an alert and `mutable-content`, as iOS
    /// runs the extension only for payloads that show an alert.
    public var wantsExtension: Bool { mutableContent && PresentationOptions(usedBy: content).contains(.alert) }

    public init(json: JSONValue) throws(RequestError) {
        guard case .object(let top) = json else { throw RequestError("payload must be an object") }
        guard case .object(let aps)? = top["aps"] else { throw RequestError("payload needs an \"aps\" object") }
        var c = NotificationContent()
        switch aps["alert"] {
        case nil, .null?:
            break
        case .string(let body)?:
            c.body = body
        case .object(let alert)?:
            for key in ["title", "subtitle", "body"] {
                guard let v = alert[key], v != .null else { continue }
                guard let s = v.stringValue else { throw RequestError("aps.alert.\(key) must be a string") }
                switch key {
                case "title": c.title = s
                case "subtitle": c.subtitle = s
                default: c.body = s
                }
            }
        default:
            throw RequestError("aps.alert must be a string or an object")
        }
        if let v = aps["badge"], v != .null {
            guard let n = v.doubleValue, n >= 0, n == n.rounded(), n < 1e9 else {
                throw RequestError("aps.badge must be a whole number ≥ 0")
            }
            c.badge = Int(n)
        }
        switch aps["sound"] {
        case nil, .null?: break
        case .string(let name)?: c.sound = name
        case .object(let critical)?:
            guard let name = critical["name"]?.stringValue else { throw RequestError("aps.sound.name must be a string") }
            c.sound = name
        default: throw RequestError("aps.sound must be a string or an object")
        }
        c.categoryIdentifier = try optionalString(aps["category"], "aps.category")
        c.threadIdentifier = try optionalString(aps["thread-id"], "aps.thread-id")
        if let level = try optionalString(aps["interruption-level"], "aps.interruption-level") {
            let levels: [String: NotificationContent.InterruptionLevel] = [
                "passive": .passive, "active": .active, "time-sensitive": .timeSensitive, "critical": .critical,
            ]
            guard let l = levels[level] else {
                throw RequestError("aps.interruption-level must be passive, active, time-sensitive or critical")
            }
            c.interruptionLevel = l
        }
        if let v = aps["relevance-score"], v != .null {
            guard let x = v.doubleValue, x >= 0, x <= 1 else { throw RequestError("aps.relevance-score must be a number from 0 to 1") }
            c.relevanceScore = x
        }
        var others = top
        others["aps"] = nil
        if !others.isEmpty { c.userInfo = .object(others) }
        self.init(content: c, mutableContent: try flag(aps["mutable-content"], "aps.mutable-content"),
                  contentAvailable: try flag(aps["content-available"], "aps.content-available"))
    }
}

private func optionalString(_ v: JSONValue?, _ key: String) throws(RequestError) -> String? {
    guard let v, v != .null else { return nil }
    guard let s = v.stringValue else { throw RequestError("\(key) must be a string") }
    return s
}

/// APNs flags are the number 1 (0 or absent: off); true and false are taken too.
private func flag(_ v: JSONValue?, _ key: String) throws(RequestError) -> Bool {
    guard let v, v != .null else { return false }
    if let b = v.boolValue { return b }
    guard let n = v.doubleValue, n == 0 || n == 1 else { throw RequestError("\(key) must be 1 or 0") }
    return n == 1
}
