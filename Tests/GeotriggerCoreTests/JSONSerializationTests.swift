import Testing

@testable import GeotriggerCore

@Suite("JSON serialization")
struct JSONSerializationTests {
    @Test(arguments: [
        (JSONValue.null, "null"),
        (true, "true"),
        (false, "false"),
        (0, "0"),
        (.number(-0.0), "-0"),
        (42, "42"),
        (-17, "-17"),
        (.number(9_007_199_254_740_991), "9007199254740991"),
        (.number(9_007_199_254_740_992), "9007199254740992.0"),  // 2^53: Swift's own form
        (1e16, "1e+16"),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (1e-7, "1e-07"),
        (1e300, "1e+300"),
        (.number(.nan), "null"),
        (.number(.infinity), "null"),
        ("", #""""#),
        ("a\"b\\c/d", #""a\"b\\c/d""#),
        ("\n\r\t\u{08}\u{0C}", #""\n\r\t\b\f""#),
        ("\u{0}\u{1F}", #""\u0000\u001f""#),
        ("Straße 😀", "\"Straße 😀\""),
        ([], "[]"),
        ([:], "{}"),
        ([1, "x", [nil]], #"[1,"x",[null]]"#),
        (["b": 1, "a": ["d": true, "c": false], "B": 2], #"{"B":2,"a":{"c":false,"d":true},"b":1}"#),
    ] as [(JSONValue, String)])
    func serializesCompactly(value: JSONValue, expected: String) {
        #expect(value.serialized() == expected)
    }

    @Test func writeIntoAppends() {
        var bytes = Array("x=".utf8)
        JSONValue.array([1, 2]).write(into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x=[1,2]")
    }

    @Test(arguments: [
        #"{"type":"FeatureCollection","features":[{"id":7,"properties":{"radius":120.5,"name":"Stephansplatz"}}]}"#,
        #"[0.1,0.2,0.30000000000000004,1e-300,-2.2250738585072014e-308,1.7976931348623157e+308,123456789.125]"#,
        #"{"escapes":"\"\\\n\u0001","unicode":"é😀","nested":[[[]],{}]}"#,
    ])
    func roundTrips(text: String) throws {
        let value = try JSONValue.parse(text)
        let serialized = value.serialized()
        #expect(try JSONValue.parse(serialized) == value)
        // Serialization is a fixed point: a second pass gives the same text.
        #expect(try JSONValue.parse(serialized).serialized() == serialized)
    }

    @Test func doublesRoundTripExactly() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let value = Double(bitPattern: generator.next() & ~(0x7FF << 52) | (UInt64.random(in: 900...1100) << 52))
            let text = JSONValue.number(value).serialized()
            #expect(try JSONValue.parse(text).doubleValue?.bitPattern == value.bitPattern, "\(text)")
        }
    }
}
