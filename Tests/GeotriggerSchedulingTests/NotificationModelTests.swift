import GeotriggerCore
@testable import GeotriggerScheduling
import Testing
import GeotriggerRuntime

// SPEC §5.1, one rule per test, with expectations worked out by hand from the rule.

private func categories(_ json: String) throws -> [NotificationCategory] {
    try NotificationCategory.list(json: JSONValue.parse(json))
}

private func payload(_ json: String) throws -> RemotePayload {
    try RemotePayload(json: JSONValue.parse(json))
}

private let invite = #"""
    [{"id":"invite","actions":[{"id":"accept","title":"Accept","options":["foreground"]},
      {"id":"decline","title":"Decline","options":["destructive"]},
      {"id":"reply","title":"Reply","textInput":{"button":"Send","placeholder":"Message"}}],
      "options":["customDismissAction"]},
     {"id":"plain","actions":[{"id":"ok","title":"OK"}]}]
    """#

/// A scheduler with one device, its responses and silent pushes recorded beside the deliveries.
private final class Harness {
    let scheduler: Scheduler
    let inbox: Inbox
    var responses: [NotificationResponse] = []
    var silent: [SilentPush] = []
    let d: Int32

    init() throws {
        (scheduler, inbox) = try makeScheduler()
        d = scheduler.device("d1")
        scheduler.onResponse = { [unowned self] in responses.append($0) }
        scheduler.onSilentPush = { [unowned self] in silent.append($0) }
    }

    /// Delivers `id` now through a push with `content`.
    func deliver(_ id: String, _ content: String, at t: Double = 10) throws {
        scheduler.push(id: id, content: try NotificationContent(json: JSONValue.parse(content)), device: d, at: t)
    }

    var delivered: [String] { scheduler.delivered(device: d).map(\.request.id) }
    var last: Delivery { inbox.deliveries.last! }
}

@Suite("Notification model (SPEC §5.1)")
struct NotificationModelTests {
    // MARK: Categories

    @Test("deliver lists the action ids of the content's registered category, in order; [] for an unregistered one")
    func actionsOfCategory() throws {
        let h = try Harness()
        h.scheduler.setCategories(try categories(invite), device: h.d)
        try h.deliver("a", #"{"title":"Party","categoryIdentifier":"invite"}"#)
        #expect(h.last.actions == ["accept", "decline", "reply"])
        try h.deliver("b", #"{"title":"Party","categoryIdentifier":"nonesuch"}"#)
        #expect(h.last.actions == [])
        try h.deliver("c", #"{"title":"No category"}"#)
        #expect(h.last.actions == [])
    }

    @Test("setCategories replaces the whole set: a category left out offers nothing afterwards")
    func categoriesReplaced() throws {
        let h = try Harness()
        h.scheduler.setCategories(try categories(invite), device: h.d)
        h.scheduler.setCategories(try categories(#"[{"id":"plain","actions":[{"id":"yes","title":"Yes"}]}]"#), device: h.d)
        try h.deliver("a", #"{"title":"x","categoryIdentifier":"invite"}"#)
        #expect(h.last.actions == [])
        try h.deliver("b", #"{"title":"x","categoryIdentifier":"plain"}"#)
        #expect(h.last.actions == ["yes"])
        #expect(h.scheduler.categories(device: h.d).map(\.id) == ["plain"])
    }

    @Test("bad categories are refused with a reason", arguments: [
        (#"[{"id":"c","actions":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}]"#, "action \"a\" twice"),
        (#"[{"id":"c"},{"id":"c"}]"#, "listed twice"),
        (#"[{"id":"c","actions":[{"id":"a"}]}]"#, "needs a title"),
        (#"[{"id":"c","actions":[{"id":"a","title":"A","options":["loud"]}]}]"#, "unknown option \"loud\""),
        (#"[{"id":"c","options":["customDismiss"]}]"#, "unknown option"),
        (#"[{"id":"c","actions":[{"id":"dismiss","title":"X"}]}]"#, "reserved"),
        (#"[{"actions":[]}]"#, "category id is missing"),
        (#"{"id":"c"}"#, "needs categories"),
    ])
    func badCategories(json: String, reason: String) throws {
        #expect {
            try NotificationCategory.list(json: JSONValue.parse(json))
        } throws: { ($0 as? RequestError)?.reason.contains(reason) == true }
    }

    // MARK: Responses

    @Test("default: the app hears of it (in the foreground) and the notification leaves the delivered list")
    func defaultResponse() throws {
        let h = try Harness()
        try h.deliver("a", #"{"title":"x"}"#)
        try h.deliver("b", #"{"title":"y"}"#)
        let r = try h.scheduler.respond(id: "a", action: "default", device: h.d, at: 20)
        #expect(r == NotificationResponse(t: 20, device: h.d, id: "a", action: "default", text: nil, foreground: true))
        #expect(h.responses == [r!])
        #expect(h.delivered == ["b"])
    }

    @Test("dismiss: removed either way; a response only with customDismissAction")
    func dismiss() throws {
        let h = try Harness()
        h.scheduler.setCategories(try categories(invite), device: h.d)
        try h.deliver("plain", #"{"title":"x","categoryIdentifier":"plain"}"#)
        try h.deliver("invite", #"{"title":"x","categoryIdentifier":"invite"}"#)
        #expect(try h.scheduler.respond(id: "plain", action: "dismiss", device: h.d, at: 20) == nil)
        #expect(h.responses.isEmpty)
        #expect(h.delivered == ["invite"])
        let r = try h.scheduler.respond(id: "invite", action: "dismiss", device: h.d, at: 21)
        #expect(r?.action == "dismiss" && r?.foreground == false && r?.text == nil)
        #expect(h.responses.count == 1)
        #expect(h.delivered.isEmpty)
    }

    @Test("a custom action: foreground as its options say; a text-input action carries the text (\"\" when none)")
    func customActions() throws {
        let h = try Harness()
        h.scheduler.setCategories(try categories(invite), device: h.d)
        for id in ["a", "b", "c", "d"] { try h.deliver(id, #"{"title":"x","categoryIdentifier":"invite"}"#) }
        let accept = try h.scheduler.respond(id: "a", action: "accept", device: h.d, at: 20)
        #expect(accept?.foreground == true && accept?.text == nil)
        let decline = try h.scheduler.respond(id: "b", action: "decline", device: h.d, at: 21)
        #expect(decline?.foreground == false)
        let reply = try h.scheduler.respond(id: "c", action: "reply", text: "On my way", device: h.d, at: 22)
        #expect(reply?.text == "On my way" && reply?.foreground == false)
        let empty = try h.scheduler.respond(id: "d", action: "reply", device: h.d, at: 23)
        #expect(empty?.text == "")
        #expect(h.responses.map(\.action) == ["accept", "decline", "reply", "reply"])
        #expect(h.delivered.isEmpty)
    }

    @Test("a response to what is not delivered, or naming an action the category lacks, is refused and changes nothing",
          arguments: [
              ("zzz", "default", nil as String?, "not in the device's delivered notifications"),
              ("a", "accept", nil, "offers no action \"accept\""),
              ("b", "launch", nil, "offers no action \"launch\""),
              ("b", "accept", "hi", "takes no text"),
              ("b", "default", "hi", "text goes with a text-input action"),
          ])
    func refusedResponses(id: String, action: String, text: String?, reason: String) throws {
        let h = try Harness()
        h.scheduler.setCategories(try categories(invite), device: h.d)
        try h.deliver("a", #"{"title":"x"}"#)
        try h.deliver("b", #"{"title":"x","categoryIdentifier":"invite"}"#)
        #expect {
            try h.scheduler.respond(id: id, action: action, text: text, device: h.d, at: 20)
        } throws: { ($0 as? RequestError)?.reason.contains(reason) == true }
        #expect(h.delivered == ["a", "b"])
        #expect(h.responses.isEmpty)
    }

    @Test("a notification already answered cannot be answered again")
    func answeredOnce() throws {
        let h = try Harness()
        try h.deliver("a", #"{"title":"x"}"#)
        try h.scheduler.respond(id: "a", action: "default", device: h.d, at: 20)
        #expect(throws: RequestError.self) { try h.scheduler.respond(id: "a", action: "default", device: h.d, at: 21) }
    }

    // MARK: Authorization and presentation

    @Test("until the first authorize everything is granted: presented is what the content uses")
    func everythingByDefault() throws {
        let h = try Harness()
        try h.deliver("a", #"{"title":"x","sound":"default","badge":2}"#)
        #expect(h.last.presented == [.alert, .sound, .badge] && h.last.listed)
        try h.deliver("b", #"{"badge":1}"#)
        #expect(h.last.presented == [.badge])
        try h.deliver("c", #"{"subtitle":"s","sound":"ping"}"#)
        #expect(h.last.presented.names == ["alert", "sound"])
    }

    @Test("authorization gates presentation, not scheduling: triggers fire and pending behaves as before")
    func authorizationGatesPresentation() throws {
        let h = try Harness()
        h.scheduler.authorize([.sound], granted: true, device: h.d)
        try h.scheduler.add(request(#"{"id":"t","content":{"title":"Tea","sound":"kettle"},"trigger":{"type":"timeInterval","seconds":30}}"#),
                            device: h.d, at: 100)
        #expect(h.scheduler.pending(device: h.d).map(\.id) == ["t"])
        h.scheduler.advance(to: 130)
        #expect(h.inbox.log == "t@130")
        #expect(h.last.presented == [.sound])
        #expect(!h.last.listed)
        #expect(h.scheduler.pending(device: h.d).isEmpty)
        // Not in the delivered list, so nothing to answer.
        #expect(h.delivered.isEmpty)
        #expect(throws: RequestError.self) { try h.scheduler.respond(id: "t", action: "default", device: h.d, at: 131) }
    }

    @Test("granted false allows nothing; a later authorize replaces the earlier one (the user in Settings)")
    func authorizeReplaced() throws {
        let h = try Harness()
        h.scheduler.authorize([.alert, .sound], granted: false, device: h.d)
        try h.deliver("a", #"{"title":"x","sound":"s","badge":1}"#)
        #expect(h.last.presented == [] && !h.last.listed)
        h.scheduler.authorize([.alert, .badge], granted: true, device: h.d)
        try h.deliver("b", #"{"title":"x","sound":"s","badge":1}"#)
        #expect(h.last.presented == [.alert, .badge] && h.last.listed)
        #expect(h.delivered == ["b"])
        #expect(h.scheduler.authorization(device: h.d) == ([.alert, .badge], true))
    }

    @Test("in the foreground, presented is further limited to what willPresent returned; without alert it is not listed")
    func foreground() throws {
        let h = try Harness()
        h.scheduler.authorize([.alert, .sound], granted: true, device: h.d)
        h.scheduler.setAppState(AppState(foreground: true, presentation: [.sound, .badge]), device: h.d)
        try h.deliver("a", #"{"title":"x","sound":"s","badge":1}"#)
        // used {alert, sound, badge} ∩ granted {alert, sound} ∩ presentation {sound, badge}
        #expect(h.last.presented == [.sound] && !h.last.listed)
        h.scheduler.setAppState(AppState(foreground: true, presentation: []), device: h.d)
        try h.deliver("b", #"{"title":"x","sound":"s"}"#)
        #expect(h.last.presented == [] && !h.last.listed)
        h.scheduler.setAppState(AppState(foreground: true, presentation: [.alert, .badge]), device: h.d)
        try h.deliver("c", #"{"title":"x","sound":"s","badge":1}"#)
        #expect(h.last.presented == [.alert] && h.last.listed)
        h.scheduler.setAppState(.background, device: h.d)
        try h.deliver("d", #"{"title":"x","sound":"s","badge":1}"#)
        #expect(h.last.presented == [.alert, .sound] && h.last.listed)
        #expect(h.delivered == ["c", "d"])
    }

    @Test("a delivery kept out of the list leaves an earlier notification with its identifier in place")
    func unlistedDoesNotReplace() throws {
        let h = try Harness()
        try h.deliver("a", #"{"title":"first"}"#, at: 10)
        h.scheduler.setAppState(AppState(foreground: true, presentation: []), device: h.d)
        try h.deliver("a", #"{"title":"second"}"#, at: 20)
        #expect(h.scheduler.delivered(device: h.d).map { "\($0.request.content.title!)@\(Int($0.date))" } == ["first@10"])
    }

    // MARK: Remote payloads

    @Test("an APNs payload becomes content: alert string or dictionary, badge, sound, category, thread; other keys userInfo")
    func payloadContent() throws {
        let p = try payload(#"""
            {"aps":{"alert":{"title":"T","subtitle":"S","body":"B","loc-key":"K"},"badge":3,"sound":{"critical":1,"name":"siren","volume":1},
             "category":"invite","thread-id":"chat-7","interruption-level":"time-sensitive","relevance-score":0.5,
             "mutable-content":1,"target-content-id":"x"},"messageID":42,"from":"ann"}
            """#)
        #expect(p.content == NotificationContent(title: "T", subtitle: "S", body: "B", badge: 3, sound: "siren",
                                                  categoryIdentifier: "invite", threadIdentifier: "chat-7",
                                                  userInfo: .object(["messageID": .number(42), "from": .string("ann")]),
                                                  interruptionLevel: .timeSensitive, relevanceScore: 0.5))
        #expect(p.mutableContent && !p.contentAvailable && !p.isSilent && p.wantsExtension)
        let text = try payload(#"{"aps":{"alert":"Hello"}}"#)
        #expect(text.content == NotificationContent(body: "Hello") && text.content.userInfo == nil)
    }

    @Test("silent: no alert, sound or badge; the extension is asked only for an alert with mutable-content")
    func payloadKinds() throws {
        let silent = try payload(#"{"aps":{"content-available":1},"sync":"inbox"}"#)
        #expect(silent.isSilent && silent.contentAvailable && !silent.wantsExtension)
        #expect(try payload(#"{"aps":{"badge":0}}"#).isSilent == false)
        #expect(try payload(#"{"aps":{"sound":"default","mutable-content":1}}"#).wantsExtension == false)
        #expect(try payload(#"{"aps":{"alert":"x","mutable-content":0}}"#).wantsExtension == false)
    }

    @Test("bad payloads are refused with a reason", arguments: [
        (#"{"alert":"x"}"#, "needs an \"aps\" object"),
        (#"{"aps":{"alert":3}}"#, "aps.alert must be a string or an object"),
        (#"{"aps":{"badge":-1}}"#, "aps.badge"),
        (#"{"aps":{"alert":"x","mutable-content":2}}"#, "aps.mutable-content must be 1 or 0"),
        (#"{"aps":{"alert":"x","interruption-level":"loud"}}"#, "aps.interruption-level"),
        (#"{"aps":{"alert":{"title":7}}}"#, "aps.alert.title must be a string"),
    ])
    func badPayloads(json: String, reason: String) throws {
        #expect {
            try RemotePayload(json: JSONValue.parse(json))
        } throws: { ($0 as? RequestError)?.reason.contains(reason) == true }
    }

    @Test("a payload push delivers a pending push request of its id with the payload's content; else under its id, replacing")
    func payloadPush() throws {
        let h = try Harness()
        try h.scheduler.add(request(#"{"id":"order","content":{"title":"Order"},"trigger":{"type":"push"}}"#), device: h.d, at: 0)
        #expect(h.scheduler.push(id: "order", payload: try payload(#"{"aps":{"alert":"Shipped"}}"#), device: h.d, at: 10) == .deliveredPending)
        #expect(h.last.content.body == "Shipped" && h.last.trigger == .push)
        #expect(h.scheduler.pending(device: h.d).isEmpty)
        // apns-collapse-id: a second push under the same id replaces the delivered one.
        #expect(h.scheduler.push(id: "score", payload: try payload(#"{"aps":{"alert":"1-0"}}"#), device: h.d, at: 20) == .deliveredContent)
        #expect(h.scheduler.push(id: "score", payload: try payload(#"{"aps":{"alert":"2-0"}}"#), device: h.d, at: 30) == .deliveredContent)
        #expect(h.scheduler.delivered(device: h.d).map { "\($0.request.id):\($0.request.content.body!)" } == ["order:Shipped", "score:2-0"])
    }

    @Test("a silent push reaches the app only: no delivery, and a pending push request of its id stays pending")
    func silentPush() throws {
        let h = try Harness()
        try h.scheduler.add(request(#"{"id":"sync","trigger":{"type":"push"}}"#), device: h.d, at: 0)
        let outcome = h.scheduler.push(id: "sync", payload: try payload(#"{"aps":{"content-available":1},"folder":"inbox"}"#), device: h.d, at: 5)
        #expect(outcome == .silent)
        #expect(h.inbox.deliveries.isEmpty)
        #expect(h.silent == [SilentPush(t: 5, device: h.d, id: "sync", userInfo: .object(["folder": .string("inbox")]), contentAvailable: true)])
        #expect(h.scheduler.pending(device: h.d).map(\.id) == ["sync"])
    }

    // MARK: Service extension

    final class FakeExtension: NotificationServiceExtension {
        var answer: (NotificationContent?, ServiceExtensionOutcome)
        var asked: [(String, String, NotificationContent)] = []
        init(_ answer: (NotificationContent?, ServiceExtensionOutcome)) { self.answer = answer }
        func rewrite(_ content: NotificationContent, request: String, device: String) -> (NotificationContent?, ServiceExtensionOutcome) {
            asked.append((request, device, content))
            return answer
        }
    }

    @Test("the extension rewrites title, subtitle, body, badge, sound, userInfo and attachments, not category or thread")
    func extensionRewrites() throws {
        let h = try Harness()
        let answer = NotificationContent(title: "Decrypted", body: "Meet at 8", badge: 4, sound: "chime", categoryIdentifier: "other",
                                         threadIdentifier: "t2", userInfo: .object(["k": .bool(true)]),
                                         attachments: [NotificationAttachment(identifier: "img", url: "file:///tmp/a.png")])
        let ext = FakeExtension((answer, .modified))
        h.scheduler.serviceExtension = ext
        h.scheduler.push(id: "m", payload: try payload(#"{"aps":{"alert":{"title":"Encrypted","subtitle":"S"},"category":"invite","thread-id":"t1","mutable-content":1}}"#),
                         device: h.d, at: 10)
        #expect(ext.asked.count == 1 && ext.asked[0].0 == "m" && ext.asked[0].1 == "d1" && ext.asked[0].2.title == "Encrypted")
        #expect(h.last.serviceExtension == .modified)
        #expect(h.last.content == NotificationContent(title: "Decrypted", subtitle: nil, body: "Meet at 8", badge: 4, sound: "chime",
                                                      categoryIdentifier: "invite", threadIdentifier: "t1",
                                                      userInfo: .object(["k": .bool(true)]),
                                                      attachments: [NotificationAttachment(identifier: "img", url: "file:///tmp/a.png")]))
        #expect(h.last.id == "m" && h.last.trigger == .push)
    }

    @Test("timeout or failure delivers the original content, saying which", arguments: [ServiceExtensionOutcome.timeout, .failed])
    func extensionFallsBack(outcome: ServiceExtensionOutcome) throws {
        let h = try Harness()
        h.scheduler.serviceExtension = FakeExtension((NotificationContent(title: "never"), outcome))
        h.scheduler.push(id: "m", payload: try payload(#"{"aps":{"alert":"original","mutable-content":1}}"#), device: h.d, at: 10)
        #expect(h.last.content.body == "original" && h.last.content.title == nil)
        #expect(h.last.serviceExtension == outcome)
    }

    @Test("the extension is not asked without mutable-content, for a silent push, or for a push with plain content")
    func extensionNotAsked() throws {
        let h = try Harness()
        let ext = FakeExtension((NotificationContent(title: "x"), .modified))
        h.scheduler.serviceExtension = ext
        h.scheduler.push(id: "a", payload: try payload(#"{"aps":{"alert":"x"}}"#), device: h.d, at: 1)
        h.scheduler.push(id: "b", payload: try payload(#"{"aps":{"content-available":1,"mutable-content":1}}"#), device: h.d, at: 2)
        try h.deliver("c", #"{"title":"x"}"#)
        #expect(ext.asked.isEmpty)
        #expect(h.inbox.deliveries.allSatisfy { $0.serviceExtension == nil })
    }

    // MARK: State

    @Test("categories, authorization and app state survive a snapshot")
    func snapshot() throws {
        let h = try Harness()
        h.scheduler.setCategories(try categories(invite), device: h.d)
        h.scheduler.authorize([.sound, .badge], granted: true, device: h.d)
        h.scheduler.setAppState(AppState(foreground: true, presentation: [.badge]), device: h.d)
        try h.deliver("a", #"{"title":"x","categoryIdentifier":"invite","attachments":[{"identifier":"i","url":"u"}]}"#)
        var w = SnapshotWriter()
        h.scheduler.writeSnapshot(to: &w)
        let (copy, _) = try makeScheduler()
        #expect(copy.device("d1") == h.d)
        var r = SnapshotReader(w.bytes)
        try copy.restoreSnapshot(from: &r)
        #expect(copy.categories(device: h.d) == h.scheduler.categories(device: h.d))
        #expect(copy.authorization(device: h.d) == ([.sound, .badge], true))
        #expect(copy.appState(device: h.d) == AppState(foreground: true, presentation: [.badge]))
        #expect(copy.delivered(device: h.d).map(\.request.content.attachments) == h.scheduler.delivered(device: h.d).map(\.request.content.attachments))
    }
}
