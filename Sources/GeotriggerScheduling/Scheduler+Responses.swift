import GeotriggerCore

// What happens after a notification fires (SPEC §5.1): the app's categories of actions, the
// user's response, what the user allowed, what the app lets through while in the foreground,
// remote payloads and the notification service extension. Each rule follows iOS; where the
// README cites the Apple documentation it follows, the comment here says which behaviour.

/// The user's answer to a delivered notification, as `UNNotificationResponse` reaches the
/// delegate's `userNotificationCenter(_:didReceive:withCompletionHandler:)`.
public struct NotificationResponse: Hashable, Sendable {
    public var t: Double
    public var device: Int32
    /// The request's identifier.
    public var id: String
    /// `default` (the notification was opened), `dismiss`, or one of its category's action ids.
    public var action: String
    /// What the user typed, for a text-input action.
    public var text: String?
    /// Whether the app comes to the foreground to handle it: an action with the `foreground`
    /// option, or the default action (opening a notification launches its app).
    public var foreground: Bool
}

/// A push that shows nothing (no alert, sound or badge): only the app hears of it.
public struct SilentPush: Hashable, Sendable {
    public var t: Double
    public var device: Int32
    public var id: String
    public var userInfo: JSONValue?
    /// `content-available: 1`: the app is woken in the background.
    public var contentAvailable: Bool
}

/// What a notification service extension did with a `mutable-content` push (`deliver`'s
/// `extension` field).
public enum ServiceExtensionOutcome: String, Hashable, Sendable {
    /// It answered in time; the content it returned was delivered.
    case modified
    /// It did not answer in time; the original content was delivered.
    case timeout
    /// It failed (exited, closed its output, answered nonsense); the original was delivered.
    case failed
}

/// A notification service extension (`UNNotificationServiceExtension`): asked to rewrite the
/// content of a push before it is shown. It must answer; an implementation that waits on
/// something (a process, the network) bounds the wait itself and says `timeout`.
public protocol NotificationServiceExtension: AnyObject {
    /// The content to deliver instead of `content` (nil unless `.modified`), and what happened.
    func rewrite(_ content: NotificationContent, request: String, device: String) -> (NotificationContent?, ServiceExtensionOutcome)
}

extension NotificationContent {
    /// This content with what a service extension may change taken from `answer`: title,
    /// subtitle, body, badge, sound, userInfo and attachments (the whole of each: a field the
    /// answer leaves out is removed, as the extension hands back a whole content). The category,
    /// thread, interruption level and relevance stay as the push set them, and the request's
    /// identifier and trigger are not content at all.
    public func rewritten(by answer: NotificationContent) -> NotificationContent {
        var c = self
        c.title = answer.title
        c.subtitle = answer.subtitle
        c.body = answer.body
        c.badge = answer.badge
        c.sound = answer.sound
        c.userInfo = answer.userInfo
        c.attachments = answer.attachments
        return c
    }
}

extension Scheduler.Center {
    func category(_ id: String?) -> NotificationCategory? {
        guard let id else { return nil }
        return categories.first { $0.id == id }
    }

    /// What a delivery of `content` shows, and whether it enters the delivered list. The options
    /// the content uses, limited by what the user allowed (`UNNotificationSettings`) and, in the
    /// foreground, by what `willPresent` returned; the list takes it only when alerts are allowed
    /// and, in the foreground, presented (`.list` is part of SPEC's `alert`).
    func presentation(of content: NotificationContent) -> (presented: PresentationOptions, listed: Bool) {
        var allowed = granted
        if app.foreground { allowed.formIntersection(app.presentation) }
        return (PresentationOptions(usedBy: content).intersection(allowed), allowed.contains(.alert))
    }
}

extension Scheduler {
    /// `setCategories`: replaces the device's whole set (as `setNotificationCategories`).
    public func setCategories(_ categories: [NotificationCategory], device d: Int32) {
        ensure(d)
        centers[Int(d)].categories = categories
    }

    /// The device's registered categories.
    public func categories(device d: Int32) -> [NotificationCategory] {
        Int(d) < centers.count ? centers[Int(d)].categories : []
    }

    /// `authorize`: what the user allows from now on (`granted: false`: nothing). Scheduling is
    /// not affected: triggers fire and the pending list behaves as before; what is shown is.
    public func authorize(_ options: PresentationOptions, granted: Bool, device d: Int32) {
        ensure(d)
        centers[Int(d)].granted = granted ? options : []
        centers[Int(d)].authorized = true
    }

    /// What the user allows now, and whether it was ever set.
    public func authorization(device d: Int32) -> (granted: PresentationOptions, set: Bool) {
        guard Int(d) < centers.count else { return (.all, false) }
        return (centers[Int(d)].granted, centers[Int(d)].authorized)
    }

    /// `appState`: the app moves to the foreground (with what its `willPresent` returns) or the
    /// background.
    public func setAppState(_ state: AppState, device d: Int32) {
        ensure(d)
        centers[Int(d)].app = state.foreground ? state : .background
    }

    public func appState(device d: Int32) -> AppState {
        Int(d) < centers.count ? centers[Int(d)].app : .background
    }

    /// `respond`: the user answers notification `id` in the device's delivered list with `action`
    /// (`default`, `dismiss`, or an action of its category), typing `text` for a text-input
    /// action. Whatever the answer, the notification leaves the delivered list (iOS removes a
    /// notification the user acted on). Returns the response the app receives, nil for a
    /// dismissal when the category lacks `customDismissAction` (iOS then tells the app nothing).
    /// Throws, changing nothing, when the notification is not delivered or the action is not
    /// its category's.
    @discardableResult
    public func respond(id: String, action: String, text: String? = nil, device d: Int32, at t: Double) throws(RequestError) -> NotificationResponse? {
        guard Int(d) < centers.count,
              let k = centers[Int(d)].delivered.firstIndex(where: { stored[Int($0.stored)].request.id == id })
        else { throw RequestError("respond: \"\(id)\" is not in the device's delivered notifications") }
        let content = stored[Int(centers[Int(d)].delivered[k].stored)].request.content
        let category = centers[Int(d)].category(content.categoryIdentifier)
        var response: NotificationResponse?
        switch action {
        case "default":
            if text != nil { throw RequestError("respond: text goes with a text-input action, not \"default\"") }
            response = NotificationResponse(t: t, device: d, id: id, action: action, text: nil, foreground: true)
        case "dismiss":
            if text != nil { throw RequestError("respond: text goes with a text-input action, not \"dismiss\"") }
            if category?.options.contains(.customDismissAction) == true {
                response = NotificationResponse(t: t, device: d, id: id, action: action, text: nil, foreground: false)
            }
        default:
            guard let a = category?.actions.first(where: { $0.id == action }) else {
                let offered = category.map { $0.actions.map(\.id) } ?? []
                throw RequestError("respond: \"\(id)\" offers no action \"\(action)\" (it offers default, dismiss"
                                   + offered.map { ", \($0)" }.joined() + ")")
            }
            if a.textInput == nil && text != nil {
                throw RequestError("respond: action \"\(action)\" takes no text")
            }
            response = NotificationResponse(t: t, device: d, id: id, action: action,
                                            text: a.textInput == nil ? nil : (text ?? ""),
                                            foreground: a.options.contains(.foreground))
        }
        centers[Int(d)].delivered.remove(at: k)
        if let response { onResponse?(response) }
        return response
    }

    /// A `push` with an APNs payload: a silent one reaches the app only (`silentPush`; a pending
    /// push request of that id stays pending, as nothing was shown); otherwise it delivers as a
    /// push with content does, after the service extension, if there is one and the payload asks
    /// for it (`mutable-content` with an alert), rewrote it. `id` is the `apns-collapse-id`.
    @discardableResult
    public func push(id: String, payload: RemotePayload, device d: Int32, at t: Double) -> PushOutcome {
        ensure(d)
        if payload.isSilent {
            onSilentPush?(SilentPush(t: t, device: d, id: id, userInfo: payload.content.userInfo,
                                     contentAvailable: payload.contentAvailable))
            return .silent
        }
        var content = payload.content
        var outcome: ServiceExtensionOutcome?
        if payload.wantsExtension, let serviceExtension {
            let (answer, result) = serviceExtension.rewrite(content, request: id, device: devices.name(d))
            outcome = result
            if result == .modified, let answer { content = content.rewritten(by: answer) }
        }
        return push(id: id, content: content, device: d, at: t, serviceExtension: outcome)
    }
}
