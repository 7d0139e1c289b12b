import GeotriggerCore

/// A button on a notification, as `UNNotificationAction` (or `UNTextInputNotificationAction` when
/// it has `textInput`).
public struct NotificationAction: Hashable, Sendable {
    /// As `UNNotificationActionOptions`.
    public enum Option: String, Hashable, Sendable, CaseIterable {
        /// The app is brought to the foreground to handle the response.
        case foreground
        /// Shown in red.
        case destructive
        /// The device must be unlocked first.
        case authenticationRequired
    }

    /// The text field of a text-input action.
    public struct TextInput: Hashable, Sendable {
        public var button: String
        public var placeholder: String
        public init(button: String, placeholder: String) {
            self.button = button
            self.placeholder = placeholder
        }
    }

    public var id: String
    public var title: String
    public var options: Set<Option>
    public var textInput: TextInput?

    public init(id: String, title: String, options: Set<Option> = [], textInput: TextInput? = nil) {
        self.id = id
        self.title = title
        self.options = options
        self.textInput = textInput
    }

    /// `{"id":…, "title":…, "options":[…], "textInput":{"button":…, "placeholder":…}}`.
    public init(json: JSONValue) throws(RequestError) {
        guard case .object(let o) = json else { throw RequestError("an action must be an object") }
        let id = try identifier(o["id"], "action id")
        guard let title = o["title"]?.stringValue else { throw RequestError("action \"\(id)\" needs a title (a string)") }
        if id == "default" || id == "dismiss" {
            throw RequestError("action id \"\(id)\" is reserved for the default and dismiss responses")
        }
        let options = try optionSet(o["options"], Option.self, "action \"\(id)\" options")
        var textInput: TextInput?
        if let t = o["textInput"], t != .null {
            guard case .object(let f) = t else { throw RequestError("action \"\(id)\" textInput must be an object") }
            let button = f["button"]?.stringValue ?? "Send"
            let placeholder = f["placeholder"]?.stringValue ?? ""
            if let extra = f.keys.sorted().first(where: { !["button", "placeholder"].contains($0) }) {
                throw RequestError("unknown textInput field \"\(extra)\"")
            }
            textInput = TextInput(button: button, placeholder: placeholder)
        }
        if let extra = o.keys.sorted().first(where: { !["id", "title", "options", "textInput"].contains($0) }) {
            throw RequestError("unknown action field \"\(extra)\"")
        }
        self.init(id: id, title: title, options: options, textInput: textInput)
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = ["id": .string(id), "title": .string(title)]
        if !options.isEmpty { o["options"] = optionsJSON(options) }
        if let textInput {
            o["textInput"] = .object(["button": .string(textInput.button), "placeholder": .string(textInput.placeholder)])
        }
        return .object(o)
    }
}

/// A kind of notification and its actions, as `UNNotificationCategory`: a delivered notification
/// whose content names it (`categoryIdentifier`) offers its actions.
public struct NotificationCategory: Hashable, Sendable {
    /// As `UNNotificationCategoryOptions`. Only `customDismissAction` changes what Geotrigger
    /// does (a dismissal then reaches the app as a response); the others are kept and listed.
    public enum Option: String, Hashable, Sendable, CaseIterable {
        case customDismissAction
        case allowInCarPlay
        case hiddenPreviewsShowTitle
        case hiddenPreviewsShowSubtitle
        case allowAnnouncement
    }

    public var id: String
    public var actions: [NotificationAction]
    public var options: Set<Option>

    public init(id: String, actions: [NotificationAction] = [], options: Set<Option> = []) {
        self.id = id
        self.actions = actions
        self.options = options
    }

    /// `{"id":…, "actions":[…], "options":[…]}`; action ids unique within the category.
    public init(json: JSONValue) throws(RequestError) {
        guard case .object(let o) = json else { throw RequestError("a category must be an object") }
        let id = try identifier(o["id"], "category id")
        var actions: [NotificationAction] = []
        if let a = o["actions"], a != .null {
            guard let list = a.arrayValue else { throw RequestError("category \"\(id)\" actions must be an array") }
            for item in list {
                let action = try NotificationAction(json: item)
                if actions.contains(where: { $0.id == action.id }) {
                    throw RequestError("category \"\(id)\" has action \"\(action.id)\" twice")
                }
                actions.append(action)
            }
        }
        let options = try optionSet(o["options"], Option.self, "category \"\(id)\" options")
        if let extra = o.keys.sorted().first(where: { !["id", "actions", "options"].contains($0) }) {
            throw RequestError("unknown category field \"\(extra)\"")
        }
        self.init(id: id, actions: actions, options: options)
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = ["id": .string(id), "actions": .array(actions.map(\.json))]
        if !options.isEmpty { o["options"] = optionsJSON(options) }
        return .object(o)
    }

    /// A `setCategories` record's `categories`: ids unique.
    public static func list(json: JSONValue?) throws(RequestError) -> [NotificationCategory] {
        guard let items = json?.arrayValue else { throw RequestError("setCategories needs categories (an array)") }
        var categories: [NotificationCategory] = []
        for item in items {
            let c = try NotificationCategory(json: item)
            if categories.contains(where: { $0.id == c.id }) { throw RequestError("category \"\(c.id)\" is listed twice") }
            categories.append(c)
        }
        return categories
    }
}

/// What a notification may do to get the user's attention, as `UNAuthorizationOptions` (what the
/// user allowed) and `UNNotificationPresentationOptions` (what `willPresent` returned while the
/// app is in the foreground): SPEC's three, alert standing for banner and list together.
public struct PresentationOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let alert = PresentationOptions(rawValue: 1)
    public static let sound = PresentationOptions(rawValue: 2)
    public static let badge = PresentationOptions(rawValue: 4)
    public static let all: PresentationOptions = [.alert, .sound, .badge]

    static let names: [(String, PresentationOptions)] = [("alert", .alert), ("sound", .sound), ("badge", .badge)]

    /// The names, in the order alert, sound, badge.
    public var names: [String] { Self.names.filter { contains($0.1) }.map(\.0) }

    /// `names` as a JSON array, as records give them and events and `--state-out` write them.
    public var json: JSONValue { .array(names.map { .string($0) }) }

    /// `["alert","sound","badge"]` or a part of it.
    public init(json: JSONValue?, field: String) throws(RequestError) {
        guard let items = json?.arrayValue else { throw RequestError("\(field) must be an array of alert, sound, badge") }
        var set: PresentationOptions = []
        for item in items {
            guard let name = item.stringValue, let option = Self.names.first(where: { $0.0 == name })?.1 else {
                throw RequestError("\(field) may hold alert, sound and badge, not \(item.serialized())")
            }
            set.insert(option)
        }
        self = set
    }

    /// What `content` would use: alert for a title, subtitle or body; sound; badge.
    public init(usedBy content: NotificationContent) {
        var set: PresentationOptions = []
        if content.title != nil || content.subtitle != nil || content.body != nil { set.insert(.alert) }
        if content.sound != nil { set.insert(.sound) }
        if content.badge != nil { set.insert(.badge) }
        self = set
    }
}

/// Whether the app is in the foreground, and what its `willPresent` lets the system show then.
public struct AppState: Hashable, Sendable {
    public var foreground: Bool
    /// While in the foreground: what `userNotificationCenter(_:willPresent:withCompletionHandler:)`
    /// passes to its completion handler ([] = the app shows the notification itself).
    public var presentation: PresentationOptions

    public init(foreground: Bool, presentation: PresentationOptions = []) {
        self.foreground = foreground
        self.presentation = presentation
    }

    public static let background = AppState(foreground: false)
}

/// An identifier field: a non-empty string of at most `InputLimits.identifierBytes` bytes.
func identifier(_ v: JSONValue?, _ what: String) throws(RequestError) -> String {
    guard let s = v?.stringValue, !s.isEmpty else { throw RequestError("\(what) is missing or not a string") }
    guard InputLimits.identifierFits(s) else { throw RequestError(InputLimits.identifierTooLong(what, byteCount: s.utf8.count)) }
    return s
}

/// A set of options as the JSON array of their names, in declaration order.
private func optionsJSON<O: RawRepresentable & CaseIterable & Hashable>(_ options: Set<O>) -> JSONValue where O.RawValue == String {
    .array(O.allCases.filter(options.contains).map { .string($0.rawValue) })
}

private func optionSet<O: RawRepresentable & CaseIterable & Hashable>(_ v: JSONValue?, _: O.Type, _ field: String) throws(RequestError) -> Set<O>
    where O.RawValue == String {
    guard let v, v != .null else { return [] }
    guard let items = v.arrayValue else { throw RequestError("\(field) must be an array") }
    var set = Set<O>()
    for item in items {
        guard let name = item.stringValue, let o = O(rawValue: name) else {
            throw RequestError("\(field): unknown option \(item.serialized()) (known: \(O.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        set.insert(o)
    }
    return set
}
