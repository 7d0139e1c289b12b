import GeotriggerCore

/// What a notification shows, as `UNNotificationContent`.
public struct NotificationContent: Hashable, Sendable {
    public enum InterruptionLevel: String, Sendable, CaseIterable {
        case passive, active, timeSensitive, critical
    }

    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var badge: Int?
    public var sound: String?
    public var categoryIdentifier: String?
    public var threadIdentifier: String?
    /// Any JSON, passed through to deliveries unchanged.
    public var userInfo: JSONValue?
    public var interruptionLevel: InterruptionLevel?
    /// 0…1, used to rank notifications in a summary.
    public var relevanceScore: Double?
    /// Media shown with the notification (what a service extension typically adds).
    public var attachments: [NotificationAttachment]?

    public init(title: String? = nil, subtitle: String? = nil, body: String? = nil, badge: Int? = nil,
                sound: String? = nil, categoryIdentifier: String? = nil, threadIdentifier: String? = nil,
                userInfo: JSONValue? = nil, interruptionLevel: InterruptionLevel? = nil, relevanceScore: Double? = nil,
                attachments: [NotificationAttachment]? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.categoryIdentifier = categoryIdentifier
        self.threadIdentifier = threadIdentifier
        self.userInfo = userInfo
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.attachments = attachments
    }

    /// Reads a `content` object; unknown fields are refused so a typo does not pass unnoticed.
    public init(json: JSONValue) throws(RequestError) {
        guard case .object(let fields) = json else { throw RequestError("content must be an object") }
        self.init()
        // In key order: the same bad content is refused for the same reason every time.
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            if value == .null { continue }
            switch key {
            case "title": title = try string(value, key)
            case "subtitle": subtitle = try string(value, key)
            case "body": body = try string(value, key)
            case "sound": sound = try string(value, key)
            case "categoryIdentifier": categoryIdentifier = try string(value, key)
            case "threadIdentifier": threadIdentifier = try string(value, key)
            case "userInfo": userInfo = value
            case "badge":
                guard let n = value.doubleValue, n >= 0, n == n.rounded(), n < 1e9 else {
                    throw RequestError("content.badge must be a whole number ≥ 0")
                }
                badge = Int(n)
            case "interruptionLevel":
                guard let s = value.stringValue, let level = InterruptionLevel(rawValue: s) else {
                    throw RequestError("content.interruptionLevel must be one of passive, active, timeSensitive, critical")
                }
                interruptionLevel = level
            case "relevanceScore":
                guard let x = value.doubleValue, x >= 0, x <= 1 else {
                    throw RequestError("content.relevanceScore must be a number from 0 to 1")
                }
                relevanceScore = x
            case "attachments":
                attachments = try NotificationAttachment.list(json: value)
            default:
                throw RequestError("unknown content field \"\(key)\"")
            }
        }
    }

    /// The content as JSON, with only the fields that are set.
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let title { o["title"] = .string(title) }
        if let subtitle { o["subtitle"] = .string(subtitle) }
        if let body { o["body"] = .string(body) }
        if let badge { o["badge"] = .number(Double(badge)) }
        if let sound { o["sound"] = .string(sound) }
        if let categoryIdentifier { o["categoryIdentifier"] = .string(categoryIdentifier) }
        if let threadIdentifier { o["threadIdentifier"] = .string(threadIdentifier) }
        if let userInfo { o["userInfo"] = userInfo }
        if let interruptionLevel { o["interruptionLevel"] = .string(interruptionLevel.rawValue) }
        if let relevanceScore { o["relevanceScore"] = .number(relevanceScore) }
        if let attachments { o["attachments"] = .array(attachments.map(\.json)) }
        return .object(o)
    }
}

/// A file shown with a notification, as `UNNotificationAttachment`: an identifier and the file's
/// URL (Geotrigger does not read the file).
public struct NotificationAttachment: Hashable, Sendable {
    public var identifier: String
    public var url: String

    public init(identifier: String, url: String) {
        self.identifier = identifier
        self.url = url
    }

    /// `{"identifier":…, "url":…}`.
    public init(json: JSONValue) throws(RequestError) {
        guard case .object(let o) = json, let url = o["url"]?.stringValue else {
            throw RequestError("an attachment must be an object with a url (a string)")
        }
        let id = o["identifier"]?.stringValue ?? ""
        if let extra = o.keys.sorted().first(where: { !["identifier", "url"].contains($0) }) {
            throw RequestError("unknown attachment field \"\(extra)\"")
        }
        self.init(identifier: id, url: url)
    }

    public var json: JSONValue { .object(["identifier": .string(identifier), "url": .string(url)]) }

    /// A content's `attachments`: an array of them.
    public static func list(json: JSONValue) throws(RequestError) -> [NotificationAttachment] {
        guard let items = json.arrayValue else { throw RequestError("content.attachments must be an array") }
        var list: [NotificationAttachment] = []
        for item in items { list.append(try NotificationAttachment(json: item)) }
        return list
    }
}

private func string(_ v: JSONValue, _ key: String) throws(RequestError) -> String {
    guard let s = v.stringValue else { throw RequestError("content.\(key) must be a string") }
    return s
}

/// Why a request (or a control record) cannot be used.
public struct RequestError: Error, CustomStringConvertible, Equatable, Sendable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
