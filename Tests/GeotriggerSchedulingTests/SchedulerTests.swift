import GeotriggerCore
@testable import GeotriggerScheduling
import Testing

/// Records deliveries as "id@t" (plus "/region" for location triggers).
final class Inbox {
    var deliveries: [Delivery] = []
    var log: String { deliveries.map { "\($0.id)@\(Int($0.t))" }.joined(separator: ",") }
}

func request(_ json: String) throws -> NotificationRequest {
    try NotificationRequest(json: JSONValue.parse(json))
}

func makeScheduler(_ requests: [NotificationRequest] = [], regions: [String] = ["home", "work"]) throws -> (Scheduler, Inbox) {
    let keys = Dictionary(uniqueKeysWithValues: regions.enumerated().map { ($0.element, Int32($0.offset)) })
    let s = try Scheduler(requests: requests, regionKeys: keys)
    let inbox = Inbox()
    s.onDeliver = { inbox.deliveries.append($0) }
    return (s, inbox)
}

@Suite("Scheduling core")
struct SchedulerTests {
    @Test("a time-interval request fires once at add + seconds, then leaves pending for delivered")
    func timeIntervalOnce() throws {
        let (s, inbox) = try makeScheduler()
        let d = s.device("d1")
        try s.add(request(#"{"id":"tea","content":{"title":"Tea"},"trigger":{"type":"timeInterval","seconds":30}}"#), device: d, at: 100)
        s.advance(to: 129)
        #expect(inbox.log == "")
        #expect(s.pending(device: d).map(\.id) == ["tea"])
        s.advance(to: 130)
        #expect(inbox.log == "tea@130")
        #expect(s.pending(device: d).isEmpty)
        #expect(s.delivered(device: d).map { "\($0.request.id)@\(Int($0.date))" } == ["tea@130"])
        #expect(inbox.deliveries[0].content.title == "Tea" && inbox.deliveries[0].trigger.kind == "timeInterval")
    }

    @Test("a repeating time-interval request stays pending; its newest delivery replaces the delivered one")
    func timeIntervalRepeating() throws {
        let (s, inbox) = try makeScheduler()
        let d = s.device("d1")
        try s.add(request(#"{"id":"hourly","trigger":{"type":"timeInterval","seconds":60,"repeats":true}}"#), device: d, at: 0)
        s.advance(to: 200)
        #expect(inbox.log == "hourly@60,hourly@120,hourly@180")
        #expect(s.pending(device: d).map(\.id) == ["hourly"])
        #expect(s.delivered(device: d).map(\.date) == [180])
    }

    @Test("time intervals: > 0, and ≥ 60 s when repeating, else refused with that reason", arguments: [
        (#"{"type":"timeInterval","seconds":59,"repeats":true}"#, "at least 60 seconds when repeating"),
        (#"{"type":"timeInterval","seconds":0}"#, "greater than 0"),
        (#"{"type":"timeInterval","seconds":-5}"#, "greater than 0"),
        (#"{"type":"timeInterval"}"#, "needs seconds"),
        (#"{"type":"location"}"#, "needs a region"),
        (#"{"type":"location","region":"home","notifyOnEntry":false,"notifyOnExit":false}"#, "neither entry nor exit"),
        (#"{"type":"teleport"}"#, "unknown trigger type"),
        (#"{"type":"push","repeats":true}"#, "unknown field \"repeats\""),
        (#"{"type":"calendar"}"#, "needs components"),
        (#"{"type":"calendar","components":{"hour":8},"timeZone":"Mars/Olympus"}"#, "Mars/Olympus"),
    ])
    func refusedTriggers(trigger: String, reason: String) throws {
        do {
            _ = try NotificationTrigger(json: JSONValue.parse(trigger))
            Issue.record("accepted \(trigger)")
        } catch let error as RequestError {
            #expect(error.reason.contains(reason), "\(error.reason)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("adding a pending identifier replaces it, and its time trigger restarts from the add")
    func replacePending() throws {
        let (s, inbox) = try makeScheduler()
        let d = s.device("d1")
        try s.add(request(#"{"id":"a","content":{"body":"old"},"trigger":{"type":"timeInterval","seconds":30}}"#), device: d, at: 0)
        s.advance(to: 20)
        try s.add(request(#"{"id":"a","content":{"body":"new"},"trigger":{"type":"timeInterval","seconds":30}}"#), device: d, at: 20)
        #expect(s.pending(device: d).count == 1)
        s.advance(to: 100)
        #expect(inbox.log == "a@50")
        #expect(inbox.deliveries[0].content.body == "new")
    }

    @Test("a new delivery with an identifier already delivered replaces it")
    func replaceDelivered() throws {
        let (s, _) = try makeScheduler()
        let d = s.device("d1")
        try s.add(request(#"{"id":"a","content":{"body":"1"},"trigger":{"type":"timeInterval","seconds":10}}"#), device: d, at: 0)
        try s.add(request(#"{"id":"b","trigger":{"type":"timeInterval","seconds":15}}"#), device: d, at: 0)
        s.advance(to: 20)
        try s.add(request(#"{"id":"a","content":{"body":"2"},"trigger":{"type":"timeInterval","seconds":10}}"#), device: d, at: 20)
        s.advance(to: 40)
        #expect(s.delivered(device: d).map { "\($0.request.id):\($0.request.content.body ?? "-")@\(Int($0.date))" } == ["b:-@15", "a:2@30"])
    }

    @Test("location triggers fire on their region's enter and/or exit, once unless repeating")
    func location() throws {
        let (s, inbox) = try makeScheduler()
        let d = s.device("d1")
        try s.add(request(#"{"id":"hello","trigger":{"type":"location","region":"home","notifyOnExit":false}}"#), device: d, at: 0)
        try s.add(request(#"{"id":"bye","trigger":{"type":"location","region":"home","notifyOnEntry":false,"repeats":true}}"#), device: d, at: 0)
        try s.add(request(#"{"id":"office","trigger":{"type":"location","region":"work"}}"#), device: d, at: 0)
        s.handleRegionEvent(device: d, region: 0, entry: true, at: 10)
        s.handleRegionEvent(device: d, region: 0, entry: false, at: 20)
        s.handleRegionEvent(device: d, region: 0, entry: true, at: 30)
        s.handleRegionEvent(device: d, region: 0, entry: false, at: 40)
        #expect(inbox.log == "hello@10,bye@20,bye@40")
        #expect(inbox.deliveries.allSatisfy { $0.region == 0 })
        #expect(s.pending(device: d).map(\.id) == ["bye", "office"])
    }

    @Test("requests without devices reach every device at its first reading; devices lists only those")
    func perDevice() throws {
        let all = try request(#"{"id":"welcome","trigger":{"type":"timeInterval","seconds":5}}"#)
        let vip = try request(#"{"id":"vip","trigger":{"type":"location","region":"work"},"devices":["d2"]}"#)
        let (s, inbox) = try makeScheduler([all, vip])
        let d1 = s.device("d1"), d2 = s.device("d2")
        s.deviceSeen(d1, at: 100)
        s.deviceSeen(d2, at: 150)
        s.deviceSeen(d1, at: 160)   // not the first reading: nothing is added again
        #expect(s.pending(device: d1).map(\.id) == ["welcome"])
        #expect(s.pending(device: d2).map(\.id) == ["welcome", "vip"])
        s.advance(to: 200)
        s.handleRegionEvent(device: d1, region: 1, entry: true, at: 200)
        s.handleRegionEvent(device: d2, region: 1, entry: true, at: 200)
        #expect(inbox.deliveries.map { "\(s.devices.name($0.device)):\($0.id)@\(Int($0.t))" } ==
                ["d1:welcome@105", "d2:welcome@155", "d2:vip@200"])
    }

    @Test("removePending, removeDelivered and the removeAll forms; unknown identifiers are ignored")
    func removal() throws {
        let (s, inbox) = try makeScheduler()
        let d = s.device("d1")
        for id in ["a", "b", "c"] {
            try s.add(request(#"{"id":"\#(id)","trigger":{"type":"timeInterval","seconds":10}}"#), device: d, at: 0)
        }
        s.removePending(ids: ["b", "nope"], device: d)
        #expect(s.pending(device: d).map(\.id) == ["a", "c"])
        s.advance(to: 10)
        #expect(inbox.log == "a@10,c@10")
        s.removeDelivered(ids: ["c", "zzz"], device: d)
        #expect(s.delivered(device: d).map(\.request.id) == ["a"])
        s.removeAllDelivered(device: d)
        #expect(s.delivered(device: d).isEmpty)
        try s.add(request(#"{"id":"x","trigger":{"type":"push"}}"#), device: d, at: 10)
        s.removeAllPending(device: d)
        #expect(s.pending(device: d).isEmpty)
    }

    @Test("push delivers the pending push request (record content wins), or the record's own content")
    func push() throws {
        let (s, inbox) = try makeScheduler()
        let d = s.device("d1")
        try s.add(request(#"{"id":"news","content":{"title":"Default"},"trigger":{"type":"push"}}"#), device: d, at: 0)
        #expect(s.push(id: "news", content: nil, device: d, at: 5) == .deliveredPending)
        #expect(s.push(id: "news", content: nil, device: d, at: 6) == .unknownRequest)
        #expect(s.push(id: "flash", content: NotificationContent(title: "Breaking"), device: d, at: 7) == .deliveredContent)
        #expect(inbox.log == "news@5,flash@7")
        #expect(inbox.deliveries.map { $0.content.title } == ["Default", "Breaking"])
        #expect(s.pending(device: d).isEmpty)
        #expect(s.delivered(device: d).map(\.request.id) == ["news", "flash"])
    }

    @Test("timers of many devices fire in time order")
    func timerOrder() throws {
        let (s, inbox) = try makeScheduler()
        for (i, seconds) in [50, 10, 30, 20, 40].enumerated() {
            try s.add(request(#"{"id":"r","trigger":{"type":"timeInterval","seconds":\#(seconds)}}"#), device: s.device("d\(i)"), at: 0)
        }
        var dues: [Double] = []
        while let due = s.nextTimerDue, due <= 100 {
            dues.append(due)
            s.fireNextTimer()
        }
        #expect(inbox.deliveries.map(\.t) == [10, 20, 30, 40, 50])
        #expect(dues == [10, 20, 30, 40, 50])
    }

    @Test("a location request naming an unknown region is refused")
    func unknownRegion() throws {
        let (s, _) = try makeScheduler()
        #expect(throws: RequestError.self) {
            try s.add(request(#"{"id":"x","trigger":{"type":"location","region":"mars"}}"#), device: s.device("d1"), at: 0)
        }
    }
}

@Suite("Requests file")
struct RequestsFileTests {
    @Test("a bad requests file names the request and the reason", arguments: [
        (#"[{"id":"a""#, "not valid JSON"),
        (#"{"id":"a","trigger":{"type":"push"}}"#, "expected a JSON array"),
        (#"[{"id":"a","trigger":{"type":"push"}},{"id":"a","trigger":{"type":"push"}}]"#, "request 1 (id \"a\"): duplicate id (first used by request 0)"),
        (#"[{"id":"a","trigger":{"type":"location","region":"mars"}}]"#, "request 0 (id \"a\"): unknown region \"mars\""),
        (#"[{"id":"a","trigger":{"type":"timeInterval","seconds":5,"repeats":true}}]"#, "at least 60 seconds"),
        (#"[{"trigger":{"type":"push"}}]"#, "request 0: request id is missing"),
        (#"[{"id":"a"}]"#, "has no trigger"),
        (#"[{"id":"a","trigger":{"type":"push"},"content":{"titel":"x"}}]"#, "unknown content field \"titel\""),
        (#"[{"id":"a","trigger":{"type":"push"},"content":{"relevanceScore":2}}]"#, "relevanceScore"),
        (#"[{"id":"a","trigger":{"type":"push"},"content":{"interruptionLevel":"loud"}}]"#, "interruptionLevel"),
        (#"[{"id":"a","trigger":{"type":"push"},"devices":[]}]"#, "devices must be"),
    ])
    func refused(text: String, reason: String) {
        do {
            _ = try RequestsFile.parse(bytes: Array(text.utf8), fileName: "req.json", knownRegion: { $0 == "home" })
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.hasPrefix("req.json"))
            #expect(error.description.contains(reason), "\(error.description)")
        }
    }

    @Test("content fields are read and written back as JSON")
    func contentRoundTrip() throws {
        let text = #"""
            [{"id":"w","devices":["d1"],"trigger":{"type":"location","region":"home","repeats":true},
              "content":{"title":"Hi","subtitle":"s","body":"b","badge":3,"sound":"default","categoryIdentifier":"c",
                         "threadIdentifier":"t","userInfo":{"k":[1,true,null]},"interruptionLevel":"timeSensitive","relevanceScore":0.5}}]
            """#
        let r = try RequestsFile.parse(bytes: Array(text.utf8), fileName: "req.json", knownRegion: { $0 == "home" })
        #expect(r.count == 1 && r[0].devices == ["d1"])
        #expect(r[0].trigger == .location(region: "home", notifyOnEntry: true, notifyOnExit: true, repeats: true))
        let original = try JSONValue.parse(text)[0]?["content"]
        #expect(r[0].content.json == original)
    }
}
