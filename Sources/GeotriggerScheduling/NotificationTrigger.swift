import GeotriggerCore

/// When a request fires, as the `UNNotificationTrigger` subclasses.
public enum NotificationTrigger: Hashable, Sendable {
    /// On the enter and/or exit event of a region (geographic or beacon) for the request's device.
    case location(region: String, notifyOnEntry: Bool, notifyOnExit: Bool, repeats: Bool)
    /// `seconds` after the request was added (and every `seconds` after that when repeating).
    case timeInterval(seconds: Double, repeats: Bool)
    /// At the next instant whose local time in `timeZone` matches `components`.
    case calendar(components: CalendarComponents, timeZone: String, repeats: Bool)
    /// On a `push` control record naming the request.
    case push

    public var repeats: Bool {
        switch self {
        case .location(_, _, _, let r), .timeInterval(_, let r), .calendar(_, _, let r): return r
        case .push: return false
        }
    }

    /// The name used in `deliver` events' `trigger` field.
    public var kind: String {
        switch self {
        case .location: return "location"
        case .timeInterval: return "timeInterval"
        case .calendar: return "calendar"
        case .push: return "push"
        }
    }

    /// Reads a `trigger` object and checks it: time intervals > 0 (≥ 60 s when repeating), calendar
    /// components in range with a known time zone, location triggers that notify on something.
    public init(json: JSONValue) throws(RequestError) {
        guard case .object(let o) = json else { throw RequestError("trigger must be an object") }
        guard let type = o["type"]?.stringValue else {
            throw RequestError("trigger.type is missing (location, timeInterval, calendar or push)")
        }
        func flag(_ key: String, default d: Bool) throws(RequestError) -> Bool {
            guard let v = o[key], v != .null else { return d }
            guard let b = v.boolValue else { throw RequestError("trigger.\(key) must be true or false") }
            return b
        }
        let allowed: Set<String>
        switch type {
        case "location":
            allowed = ["type", "region", "notifyOnEntry", "notifyOnExit", "repeats"]
            guard let region = o["region"]?.stringValue, !region.isEmpty else {
                throw RequestError("location trigger needs a region id")
            }
            let entry = try flag("notifyOnEntry", default: true), exit = try flag("notifyOnExit", default: true)
            if !entry && !exit { throw RequestError("location trigger notifies on neither entry nor exit") }
            self = .location(region: region, notifyOnEntry: entry, notifyOnExit: exit, repeats: try flag("repeats", default: false))
        case "timeInterval":
            allowed = ["type", "seconds", "repeats"]
            guard let s = o["seconds"]?.doubleValue, s.isFinite else {
                throw RequestError("timeInterval trigger needs seconds (a number)")
            }
            let repeats = try flag("repeats", default: false)
            if s <= 0 { throw RequestError("time interval must be greater than 0") }
            if repeats && s < 60 { throw RequestError("time interval must be at least 60 seconds when repeating") }
            self = .timeInterval(seconds: s, repeats: repeats)
        case "calendar":
            allowed = ["type", "components", "timeZone", "repeats"]
            guard case .object(let c)? = o["components"] else {
                throw RequestError("calendar trigger needs components (an object)")
            }
            var components = CalendarComponents()
            // In key order: the same bad components are refused for the same reason every time.
            for (key, value) in c.sorted(by: { $0.key < $1.key }) {
                guard let x = value.doubleValue, x == x.rounded(), abs(x) < 1e6 else {
                    throw RequestError("calendar component \(key) must be a whole number")
                }
                let n = Int(x)
                switch key {
                case "year": components.year = n
                case "month": components.month = n
                case "day": components.day = n
                case "hour": components.hour = n
                case "minute": components.minute = n
                case "second": components.second = n
                case "weekday": components.weekday = n
                default: throw RequestError("unknown calendar component \"\(key)\"")
                }
            }
            if let why = ZonedCalendar.validate(components) { throw RequestError(why) }
            let zone: String
            if let z = o["timeZone"], z != .null {
                guard let s = z.stringValue else { throw RequestError("trigger.timeZone must be a string") }
                zone = s
            } else {
                zone = "UTC"
            }
            do { _ = try ZonedCalendar(timeZoneIdentifier: zone) } catch { throw RequestError("\(error)") }
            self = .calendar(components: components, timeZone: zone, repeats: try flag("repeats", default: false))
        case "push":
            allowed = ["type"]
            self = .push
        default:
            throw RequestError("unknown trigger type \"\(type)\" (location, timeInterval, calendar or push)")
        }
        if let extra = o.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw RequestError("unknown field \"\(extra)\" in \(type) trigger")
        }
    }
}

extension NotificationTrigger {
    /// Why `init(json:)` would refuse this trigger (the checks that decide what its timers do), or
    /// nil: a trigger read back from a snapshot is held to them too (a repeating interval of 0 s
    /// would fire forever at one instant). The time zone is `Scheduler.makeStored`'s to check.
    var problem: String? {
        switch self {
        case .location(let region, let entry, let exit, _):
            if region.isEmpty { return "location trigger needs a region id" }
            if !entry && !exit { return "location trigger notifies on neither entry nor exit" }
        case .timeInterval(let seconds, let repeats):
            if !seconds.isFinite { return "timeInterval trigger needs seconds (a number)" }
            if seconds <= 0 { return "time interval must be greater than 0" }
            if repeats && seconds < 60 { return "time interval must be at least 60 seconds when repeating" }
        case .calendar(let components, _, _):
            return ZonedCalendar.validate(components)
        case .push:
            break
        }
        return nil
    }

    /// The trigger as JSON, in the form the requests file uses.
    public var json: JSONValue {
        switch self {
        case .location(let region, let entry, let exit, let repeats):
            return .object(["type": "location", "region": .string(region), "notifyOnEntry": .bool(entry),
                            "notifyOnExit": .bool(exit), "repeats": .bool(repeats)])
        case .timeInterval(let seconds, let repeats):
            return .object(["type": "timeInterval", "seconds": .number(seconds), "repeats": .bool(repeats)])
        case .calendar(let c, let zone, let repeats):
            var components: [String: JSONValue] = [:]
            for (key, value) in [("year", c.year), ("month", c.month), ("day", c.day), ("hour", c.hour),
                                 ("minute", c.minute), ("second", c.second), ("weekday", c.weekday)] {
                if let value { components[key] = .number(Double(value)) }
            }
            return .object(["type": "calendar", "components": .object(components), "timeZone": .string(zone),
                            "repeats": .bool(repeats)])
        case .push:
            return .object(["type": "push"])
        }
    }
}

extension NotificationRequest {
    /// The request as JSON (without `devices`), for `--state-out`.
    public var json: JSONValue {
        .object(["id": .string(id), "content": content.json, "trigger": trigger.json])
    }
}
