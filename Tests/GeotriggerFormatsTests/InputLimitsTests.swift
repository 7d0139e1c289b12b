import Testing

@testable import GeotriggerCore
import GeotriggerFormats

/// SPEC §3's limits: times RFC 3339 can write (years 0001–9999, once rounded to the millisecond as
/// events write them) and identifiers of at most 256 bytes of UTF-8. Every boundary is computed by
/// hand, not by the code under test.
@Suite("Input limits")
struct InputLimitsTests {
    /// 0001-01-01T00:00:00Z is 719,162 days before 1970-01-01 (1969 years of 365 days plus 477 leap
    /// days: 492 multiples of 4, less 19 of 100, plus 4 of 400), times 86,400 s.
    @Test func earliestTimeIsTheFirstInstantOfYearOne() {
        #expect(InputLimits.earliestTime == -Double(719_162 * 86_400))
        #expect(InputLimits.earliestTime == -62_135_596_800)
        #expect(RFC3339.format(-62_135_596_800) == "0001-01-01T00:00:00.000Z")
        #expect(RFC3339.parse("0001-01-01T00:00:00Z") == -62_135_596_800)
    }

    /// Near 2.5e11 a Double's spacing is 2⁻¹⁵ s. Of the two Doubles either side of
    /// 253402300799.9995, the lower (fraction 32751/32768, 999.48 ms) rounds down to .999 and the
    /// upper (32752/32768 = 1 − 2⁻¹¹, 999.51 ms) up into the year 10000: that one is the limit.
    @Test func timeLimitIsTheFirstDoubleWrittenInTheYear10000() {
        #expect(InputLimits.timeLimit == 253_402_300_800 - 0x1p-11)
        #expect(InputLimits.timeLimit.nextDown == 253_402_300_799 + 32751.0 / 32768)
        #expect(RFC3339.format(InputLimits.timeLimit.nextDown) == "9999-12-31T23:59:59.999Z")
        #expect(RFC3339.format(InputLimits.timeLimit) == "10000-01-01T00:00:00.000Z")
        #expect(RFC3339.parse("9999-12-31T23:59:59Z") == 253_402_300_799)
    }

    @Test(arguments: [
        (-62_135_596_800.0, true),
        (-62_135_596_800.001, false),
        ((-62_135_596_800.0).nextDown, false),
        (0, true),
        (1_635_501_603.25, true),
        (253_402_300_799.999, true),
        (253_402_300_799.9994, true),
        (253_402_300_799.9995, false),  // the nearest Double is the limit: rounds to 10000-01-01
        (253_402_300_800, false),
        (1e300, false),
        (-1e300, false),
        (.infinity, false),
        (-.infinity, false),
        (.nan, false),
    ] as [(Double, Bool)])
    func timesRFC3339CanWrite(_ t: Double, _ writable: Bool) {
        #expect(InputLimits.timeIsWritable(t) == writable, "\(t)")
        if writable {
            // Every accepted time is written as four-digit-year RFC 3339, never "invalid".
            let text = RFC3339.format(t)
            #expect(text.utf8.count == 24 && text.hasSuffix("Z") && !text.hasPrefix("0000"), "\(text)")
        }
    }

    @Test func writtenBoundaryTimes() {
        #expect(RFC3339.format(253_402_300_799.999) == "9999-12-31T23:59:59.999Z")
        #expect(RFC3339.format(253_402_300_799.9994) == "9999-12-31T23:59:59.999Z")
    }

    @Test(arguments: [
        ("0001-01-01T00:00:00Z", true),
        ("9999-12-31T23:59:59.999Z", true),
        ("9999-12-31T23:59:59.9994Z", true),
        ("0000-12-31T23:59:59Z", false),
        ("0001-01-01T00:30:00+01:00", false),  // 0000-12-31T23:30:00Z
        ("9999-12-31T23:59:59.9995Z", false),  // written as 10000-01-01T00:00:00.000Z
        ("9999-12-31T23:30:00-01:00", false),  // 10000-01-01T00:30:00Z
    ])
    func rfc3339TimesOutsideTheYears(_ text: String, _ writable: Bool) throws {
        let t = try #require(RFC3339.parse(text))
        #expect(InputLimits.timeIsWritable(t) == writable)
    }

    @Test func theYear10000CannotBeParsed() {
        #expect(RFC3339.parse("10000-01-01T00:00:00Z") == nil)
    }

    /// The limit is in bytes of UTF-8: 128 "é" (2 bytes each) are exactly 256 bytes; one more
    /// ASCII letter is 257 bytes though only 129 characters.
    @Test func identifierLimitIsInBytes() {
        #expect(InputLimits.identifierBytes == 256)
        let fits = String(repeating: "é", count: 128)
        #expect(fits.count == 128 && fits.utf8.count == 256)
        #expect(InputLimits.identifierFits(fits))
        #expect(!InputLimits.identifierFits(fits + "x"))
        #expect(InputLimits.identifierFits(String(repeating: "a", count: 256)))
        #expect(!InputLimits.identifierFits(String(repeating: "a", count: 257)))
        #expect(!InputLimits.identifierFits(String(repeating: "é", count: 200)))  // 200 characters, 400 bytes
        #expect(InputLimits.identifierFits(byteCount: 256) && !InputLimits.identifierFits(byteCount: 257))
    }
}

/// Region ids over the limit make a bad regions file: the file, the feature and the reason.
@Suite("Region ids over 256 bytes")
struct RegionIDLimitTests {
    static let fits = String(repeating: "é", count: 128)  // 256 bytes
    static let tooLong = fits + "x"  // 257 bytes

    func feature(_ idMembers: String) -> String {
        #"{"type": "Feature", \#(idMembers)"geometry": {"type": "Point", "coordinates": [16.37, 48.2]}, "# +
            #""properties": {"radius": 100}}"#
    }

    func geojson(_ features: String...) -> [UInt8] {
        Array((#"{"type": "FeatureCollection", "features": ["# + features.joined(separator: ",") + "]}").utf8)
    }

    @Test func geoJSONIdOf256BytesIsRead() throws {
        let regions = try RegionFile.parse(bytes: geojson(feature(#""id": "\#(Self.fits)", "#)), fileName: "r.geojson")
        #expect(regions.map(\.id) == [Self.fits])
    }

    @Test(arguments: ["id", "properties.id"])
    func geoJSONIdOf257BytesIsABadFile(_ field: String) {
        let second = field == "id"
            ? feature(#""id": "\#(Self.tooLong)", "#)
            : #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {"radius": 1, "id": "\#(Self.tooLong)"}}"#
        do {
            _ = try RegionFile.parse(bytes: geojson(feature(#""id": "a", "#), second), fileName: "r.geojson")
            Issue.record("accepted a 257-byte id")
        } catch {
            #expect(error.kind == .invalidContent)
            #expect(error.file == "r.geojson" && error.featureIndex == 1 && error.id == nil)
            #expect(error.reason == "\(field) is 257 bytes long; identifiers are limited to 256 bytes of UTF-8")
            #expect(error.description.hasPrefix("r.geojson: feature 1: \(field) is 257 bytes long"))
        }
    }

    @Test func csvIdOf257BytesIsABadFile() throws {
        let ok = try RegionFile.parse(bytes: Array("id,lat,lon,radius\n\(Self.fits),48.2,16.37,100\n".utf8), fileName: "r.csv")
        #expect(ok.map(\.id) == [Self.fits])
        do {
            _ = try RegionFile.parse(bytes: Array("id,lat,lon,radius\na,1,2,3\n\(Self.tooLong),48.2,16.37,100\n".utf8),
                                     fileName: "r.csv")
            Issue.record("accepted a 257-byte id")
        } catch {
            #expect(error.kind == .invalidContent)
            #expect(error.file == "r.csv" && error.featureIndex == 1 && error.line == 3)
            #expect(error.reason == "id is 257 bytes long; identifiers are limited to 256 bytes of UTF-8")
        }
    }
}
