import Foundation
import Testing

/// SPEC §5.1 end to end: one stream of control records that exercises categories, responses,
/// authorization, foreground presentation, APNs payloads, a silent push and a real service
/// extension child process (a shell script) that answers, hangs, crashes and talks nonsense.
/// Every expected event below was worked out by hand from the rules, record by record.
@Suite("geotrigger replay: categories, responses, authorization, payloads, service extension")
struct NotificationModelReplayTests {
    static let records = #"""
        {"t":1000,"device":"ann","op":"setCategories","categories":[{"id":"invite","actions":[{"id":"accept","title":"Accept","options":["foreground"]},{"id":"reply","title":"Reply","textInput":{"button":"Send","placeholder":"Message"}}],"options":["customDismissAction"]}]}
        {"t":1001,"device":"ann","op":"add","request":{"id":"party","content":{"title":"Party tonight","categoryIdentifier":"invite"},"trigger":{"type":"push"}}}
        {"t":1002,"device":"ann","op":"push","id":"party"}
        {"t":1003,"device":"ann","op":"respond","id":"party","action":"reply","text":"On my way"}
        {"t":1004,"device":"ann","op":"respond","id":"party","action":"default"}
        {"t":1005,"device":"ann","op":"push","id":"invite2","payload":{"aps":{"alert":{"title":"Dinner?"},"category":"invite","sound":"default"}}}
        {"t":1006,"device":"ann","op":"respond","id":"invite2","action":"accept"}
        {"t":1007,"device":"ann","op":"push","id":"invite3","payload":{"aps":{"alert":"Lunch?","category":"invite"}}}
        {"t":1008,"device":"ann","op":"respond","id":"invite3","action":"dismiss"}
        {"t":1009,"device":"ann","op":"respond","id":"invite3","action":"accept"}
        {"t":1010,"device":"ann","op":"authorize","options":["sound"],"granted":true}
        {"t":1011,"device":"ann","op":"push","id":"ding","payload":{"aps":{"alert":"Ding","sound":"bell"}}}
        {"t":1012,"device":"ann","op":"respond","id":"ding","action":"default"}
        {"t":1013,"device":"ann","op":"authorize","options":["alert","sound","badge"],"granted":true}
        {"t":1014,"device":"ann","op":"appState","state":"foreground","presentation":["badge"]}
        {"t":1015,"device":"ann","op":"push","id":"fg","payload":{"aps":{"alert":"In app","badge":2}}}
        {"t":1016,"device":"ann","op":"appState","state":"background"}
        {"t":1017,"device":"ann","op":"push","id":"sync","payload":{"aps":{"content-available":1},"folder":"inbox"}}
        {"t":1018,"device":"ann","op":"push","id":"secret","payload":{"aps":{"alert":{"title":"Encrypted"},"mutable-content":1},"key":"k1"}}
        {"t":1019,"device":"ann","op":"push","id":"slow","payload":{"aps":{"alert":"HANG","mutable-content":1}}}
        {"t":1020,"device":"ann","op":"push","id":"after-hang","payload":{"aps":{"alert":"x","mutable-content":1}}}
        {"t":1021,"device":"ann","op":"push","id":"boom","payload":{"aps":{"alert":"CRASH","mutable-content":1}}}
        {"t":1022,"device":"ann","op":"push","id":"junk","payload":{"aps":{"alert":"JUNK","mutable-content":1}}}
        {"t":1023,"device":"ann","op":"push","id":"plain","payload":{"aps":{"alert":"no mutation"}}}
        {"t":1024,"device":"ann","op":"respond","id":"secret","action":"nonesuch"}
        {"t":1025,"device":"ann","op":"setCategories","categories":[{"id":"x","actions":[{"id":"a"}]}]}
        {"t":1026,"device":"ann","op":"push","id":"both","content":{"title":"x"},"payload":{"aps":{"alert":"y"}}}
        {"t":1027,"device":"ann","op":"authorize","options":["vibrate"],"granted":true}
        """#

    /// A service extension as a user might write one in shell: answers with rewritten content,
    /// except that it hangs on HANG, exits on CRASH and prints nonsense on JUNK.
    static let extensionScript = #"""
        while IFS= read -r line; do
          case "$line" in
            *HANG*) sleep 60 ;;
            *CRASH*) exit 3 ;;
            *JUNK*) echo "this is not JSON" ;;
            *)
              request=$(printf '%s' "$line" | sed 's/.*"request":"\([^"]*\)".*/\1/')
              device=$(printf '%s' "$line" | sed 's/.*"device":"\([^"]*\)".*/\1/')
              printf '{"content":{"title":"Decrypted","body":"%s for %s","userInfo":{"decrypted":true},"attachments":[{"identifier":"photo","url":"file:///tmp/photo.jpg"}]}}\n' "$request" "$device" ;;
          esac
        done
        """#

    static func time(_ t: Int) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date(timeIntervalSince1970: Double(t)))
    }

    /// Runs the stream; returns the result, the events as objects, and the rejects and state files.
    static func run(jobs: Int = 1) throws -> (CLI.Result, [[String: Any]], String, [String: Any]) {
        let dir = try CLI.temporaryDirectory()
        let regions = dir.appendingPathComponent("regions.csv"), readings = dir.appendingPathComponent("records.ndjson")
        let script = dir.appendingPathComponent("extension.sh")
        let rejects = dir.appendingPathComponent("rejects.tsv"), state = dir.appendingPathComponent("state.json")
        try "id,lat,lon,radius\nhome,46.05,14.5,100\n".write(to: regions, atomically: true, encoding: .utf8)
        try (records + "\n").write(to: readings, atomically: true, encoding: .utf8)
        try extensionScript.write(to: script, atomically: true, encoding: .utf8)
        let r = try CLI.run(["replay", "--regions", regions.path, "--service-extension", "sh \(script.path)",
                             "--extension-timeout", "1", "--rejects", rejects.path, "--state-out", state.path,
                             "--jobs", "\(jobs)", readings.path])
        let events = r.lines.map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        let stateJSON = try JSONSerialization.jsonObject(with: Data(contentsOf: state)) as! [String: Any]
        return (r, events, try String(contentsOf: rejects, encoding: .utf8), stateJSON)
    }

    @Test("every rule of SPEC §5.1 from the command line, with a real extension child that answers, hangs, crashes and talks nonsense")
    func endToEnd() throws {
        let (r, events, rejects, state) = try Self.run()
        #expect(r.status == 0, "\(r.stderr)")

        // One line per event: t, event, request, then what the rule under test decides.
        func summary(_ e: [String: Any]) -> String {
            var s = "\(e["t"]!) \(e["event"]!) \(e["request"]!)"
            if let a = e["actions"] as? [String] { s += " actions=\(a.joined(separator: ","))" }
            if let p = e["presented"] as? [String] { s += " presented=\(p.joined(separator: ","))" }
            if let l = e["listed"] as? Bool { s += " listed=\(l)" }
            if let x = e["extension"] as? String { s += " extension=\(x)" }
            if let a = e["action"] as? String { s += " action=\(a)" }
            if let t = e["text"] as? String { s += " text=\(t)" }
            if let f = e["foreground"] as? Bool { s += " foreground=\(f)" }
            if let c = e["contentAvailable"] as? Bool { s += " contentAvailable=\(c)" }
            return s
        }
        let t = Self.time
        #expect(events.map(summary) == [
            "\(t(1002)) deliver party actions=accept,reply presented=alert",
            "\(t(1003)) response party action=reply text=On my way",
            "\(t(1005)) deliver invite2 actions=accept,reply presented=alert,sound",
            "\(t(1006)) response invite2 action=accept foreground=true",
            "\(t(1007)) deliver invite3 actions=accept,reply presented=alert",
            "\(t(1008)) response invite3 action=dismiss",
            // Only sound allowed: heard, not shown, not in Notification Center.
            "\(t(1011)) deliver ding actions= presented=sound listed=false",
            // In the foreground, willPresent let only the badge through.
            "\(t(1015)) deliver fg actions= presented=badge listed=false",
            "\(t(1017)) silentPush sync contentAvailable=true",
            "\(t(1018)) deliver secret actions= presented=alert extension=modified",
            "\(t(1019)) deliver slow actions= presented=alert extension=timeout",
            "\(t(1020)) deliver after-hang actions= presented=alert extension=modified",
            "\(t(1021)) deliver boom actions= presented=alert extension=failed",
            "\(t(1022)) deliver junk actions= presented=alert extension=failed",
            "\(t(1023)) deliver plain actions= presented=alert",
        ])

        // Contents: the payload read as iOS reads it; the extension's answer where it answered,
        // the original where it did not; what it may not change, kept.
        func content(_ id: String) -> [String: Any] {
            events.first { $0["event"] as? String == "deliver" && $0["request"] as? String == id }!["content"] as! [String: Any]
        }
        #expect(content("invite2") as NSDictionary == ["title": "Dinner?", "categoryIdentifier": "invite", "sound": "default"] as NSDictionary)
        #expect(content("secret") as NSDictionary == ["title": "Decrypted", "body": "secret for ann", "userInfo": ["decrypted": true],
                                                      "attachments": [["identifier": "photo", "url": "file:///tmp/photo.jpg"]]] as NSDictionary)
        #expect(content("after-hang")["body"] as? String == "after-hang for ann")
        for id in ["slow", "boom", "junk"] { #expect(content(id) as NSDictionary == ["body": id == "slow" ? "HANG" : id == "boom" ? "CRASH" : "JUNK"] as NSDictionary) }
        #expect(content("plain") as NSDictionary == ["body": "no mutation"] as NSDictionary)
        let silent = events.first { $0["event"] as? String == "silentPush" }!
        #expect(silent["userInfo"] as? NSDictionary == ["folder": "inbox"] as NSDictionary)

        // Seven bad control records, each with its reason, none of them changing anything.
        let rejected = rejects.split(separator: "\n")
        #expect(rejected.count == 7)
        #expect(rejected.allSatisfy { $0.split(separator: "\t")[1] == "bad-control-record" })
        #expect(rejected.map { $0.split(separator: "\t")[0].split(separator: ":").last! } == ["5", "10", "13", "25", "26", "27", "28"])
        for reason in ["\"party\" is not in the device's delivered notifications", "offers no action \"nonesuch\"",
                       "action \"a\" needs a title", "content or an APNs payload, not both", "not \"vibrate\""] {
            #expect(r.stderr.contains(reason), "stderr lacks \(reason)")
        }
        #expect(r.stderr.contains("no answer within 1"))
        #expect(r.stderr.contains("closed its output"))
        #expect(r.stderr.contains("not JSON"))

        // The summary says it in words.
        #expect(r.stderr.contains("deliveries: 11 notifications delivered (11 push)"))
        #expect(r.stderr.contains("2 kept out of Notification Center"))
        #expect(r.stderr.contains("3 responses reached the app; 1 silent push reached the app only"))
        #expect(r.stderr.contains("service extension: 2 pushes rewritten, 1 timed out and 2 failed"))
        #expect(r.stderr.contains("bad-control-record"))

        // The device's state: answered and unlisted ones gone from the delivered list; settings kept.
        let ann = (state["devices"] as! [String: Any])["ann"] as! [String: Any]
        let delivered = (ann["delivered"] as! [[String: Any]]).map { ($0["request"] as! [String: Any])["id"] as! String }
        #expect(delivered == ["secret", "slow", "after-hang", "boom", "junk", "plain"])
        #expect((ann["categories"] as! [[String: Any]]).map { $0["id"] as! String } == ["invite"])
        #expect(ann["authorized"] as? [String] == ["alert", "sound", "badge"])
        #expect(ann["appState"] == nil)
    }

    @Test("with --jobs 2 the same bytes: the one extension child serves both jobs")
    func jobs() throws {
        let (one, _, rejectsOne, _) = try Self.run(jobs: 1)
        let (two, _, rejectsTwo, _) = try Self.run(jobs: 2)
        #expect(two.status == 0, "\(two.stderr)")
        #expect(one.stdout == two.stdout)
        // Each run has its own folder: compare the rejects' lines from the file name on.
        func lines(_ rejects: String) -> [Substring] { rejects.split(separator: "\n").map { $0.drop { $0 != "\t" } } }
        #expect(lines(rejectsOne) == lines(rejectsTwo))
        #expect(lines(rejectsOne).count == 7)
    }

    @Test("the README's example prints the events the README shows, with the shell extension it ships")
    func readmeExample() throws {
        let readme = try String(contentsOf: CLI.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "### After delivery").map { String(readme[$0.upperBound...]) })
        // The first ``` block after the heading is the command, the second its output.
        let blocks = section.components(separatedBy: "```").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        let command = blocks[0].replacingOccurrences(of: "\\\n", with: " ").split(whereSeparator: \.isWhitespace)
            .map(String.init).drop { $0 == "sh" }
        #expect(command.first == "geotrigger")
        let r = try CLI.run(Array(command.dropFirst()))
        #expect(r.status == 0, "\(r.stderr)")
        let shown = blocks[1].split(separator: "\n").map(String.init)
        #expect(r.lines == shown)
        #expect(r.stderr.contains(#"respond: "msg-18" is not in the device's delivered notifications"#))
    }

    @Test("a command that cannot run is a failed extension for each push, and the run goes on")
    func missingCommand() throws {
        let dir = try CLI.temporaryDirectory()
        let regions = dir.appendingPathComponent("regions.csv")
        try "id,lat,lon,radius\nhome,46.05,14.5,100\n".write(to: regions, atomically: true, encoding: .utf8)
        let input = #"""
            {"t":1,"device":"d","op":"push","id":"a","payload":{"aps":{"alert":"one","mutable-content":1}}}
            {"t":2,"device":"d","op":"push","id":"b","payload":{"aps":{"alert":"two","mutable-content":1}}}
            """#
        let r = try CLI.run(["replay", "--regions", regions.path, "--service-extension", "/nonexistent/extension --flag"],
                            stdin: Data((input + "\n").utf8))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lines.count == 2)
        #expect(r.lines.allSatisfy { $0.contains(#""extension":"failed""#) })
        #expect(r.stderr.contains("service extension: 0 pushes rewritten, 0 timed out and 2 failed"))
    }
}
