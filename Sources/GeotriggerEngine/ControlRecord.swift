import GeotriggerCore
import GeotriggerScheduling
import GeotriggerFormats

/// Applies a control record (`add`, `removePending`, `removeDelivered`, the removeAll forms,
/// `push`, and SPEC §5.1's `setCategories`, `respond`, `authorize`, `appState`) to the device's
/// notification center. Control records are rare, so this parses the line as JSON.
enum ControlRecord {
    /// Nil when applied, else why the record cannot be (it is then rejected as a bad control record).
    static func apply(_ op: ControlOp, line: ByteView, t: Double, device d: Int32,
                      to scheduler: Scheduler) -> String? {
        let json: JSONValue
        do { json = try JSONValue.parse(Array(line)) } catch { return "\(error)" }
        func ids() -> [String]? {
            guard let list = json["ids"]?.arrayValue else { return nil }
            let names = list.compactMap(\.stringValue)
            return names.count == list.count ? names : nil
        }
        switch op {
        case .add:
            guard let body = json["request"] else { return "add needs a request" }
            if body["devices"] != nil { return "an add record applies to its own device; remove \"devices\"" }
            do {
                try scheduler.add(NotificationRequest(json: body), device: d, at: t)
            } catch {
                return error.reason
            }
        case .removePending:
            guard let ids = ids() else { return "removePending needs ids (an array of strings)" }
            scheduler.removePending(ids: ids, device: d)
        case .removeDelivered:
            guard let ids = ids() else { return "removeDelivered needs ids (an array of strings)" }
            scheduler.removeDelivered(ids: ids, device: d)
        case .removeAllPending:
            scheduler.removeAllPending(device: d)
        case .removeAllDelivered:
            scheduler.removeAllDelivered(device: d)
        case .push:
            guard let id = json["id"]?.stringValue else { return "push needs an id" }
            if let p = json["payload"], p != .null {
                if let c = json["content"], c != .null { return "a push carries content or an APNs payload, not both" }
                do {
                    scheduler.push(id: id, payload: try RemotePayload(json: p), device: d, at: t)
                } catch {
                    return error.reason
                }
                return nil
            }
            var content: NotificationContent?
            if let c = json["content"], c != .null {
                do { content = try NotificationContent(json: c) } catch { return error.reason }
            }
            if scheduler.push(id: id, content: content, device: d, at: t) == .unknownRequest {
                return "push for \"\(id)\": no pending push request has that id and the record has no content"
            }
        case .setCategories:
            do {
                scheduler.setCategories(try NotificationCategory.list(json: json["categories"]), device: d)
            } catch {
                return error.reason
            }
        case .respond:
            guard let id = json["id"]?.stringValue else { return "respond needs an id" }
            guard let action = json["action"]?.stringValue, !action.isEmpty else {
                return "respond needs an action (default, dismiss or an action id)"
            }
            var text: String?
            if let v = json["text"], v != .null {
                guard let s = v.stringValue else { return "respond: text must be a string" }
                text = s
            }
            do { try scheduler.respond(id: id, action: action, text: text, device: d, at: t) } catch { return error.reason }
        case .authorize:
            guard let granted = json["granted"]?.boolValue else { return "authorize needs granted (true or false)" }
            do {
                let options = try PresentationOptions(json: json["options"] ?? .array([]), field: "authorize options")
                scheduler.authorize(options, granted: granted, device: d)
            } catch {
                return error.reason
            }
        case .appState:
            switch json["state"]?.stringValue {
            case "background":
                scheduler.setAppState(.background, device: d)
            case "foreground":
                // Without a presentation, willPresent's completion handler was called with none.
                do {
                    let presentation = try PresentationOptions(json: json["presentation"] ?? .array([]), field: "appState presentation")
                    scheduler.setAppState(AppState(foreground: true, presentation: presentation), device: d)
                } catch {
                    return error.reason
                }
            default:
                return "appState needs state: foreground or background"
            }
        case .addRegion, .removeRegion:
            return "a region record is device-less (Engine.regionRecord)"
        }
        return nil
    }
}
