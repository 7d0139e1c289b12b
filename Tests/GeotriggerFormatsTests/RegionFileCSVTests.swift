import Testing

@testable import GeotriggerCore
@testable import GeotriggerFormats

private func parse(_ text: String, fileName: String = "regions.csv") throws(RegionFileError) -> [Region] {
    try RegionFile.parse(bytes: Array(text.utf8), fileName: fileName)
}

private func circle(_ region: Region) -> (center: Coordinate, radius: Double)? {
    if case .circle(let center, let radius) = region.shape { return (center, radius) }
    return nil
}

@Suite("Regions from CSV")
struct RegionFileCSVTests {
    @Test func parsesCircles() throws {
        let regions = try parse("id,lat,lon,radius\nstephansplatz,48.2084,16.3725,150\nprater,48.2167,16.3958,400.5\n")
        #expect(regions.map(\.id) == ["stephansplatz", "prater"])
        #expect(regions.map(\.featureIndex) == [0, 1])
        let first = try #require(circle(regions[0]))
        #expect(first.center == Coordinate(latitude: 48.2084, longitude: 16.3725))
        #expect(first.radius == 150)
        #expect(circle(regions[1])?.radius == 400.5)
        #expect(regions.allSatisfy { $0.notifyOnEntry && $0.notifyOnExit && $0.properties == nil })
    }

    @Test func acceptsColumnsInAnyOrderAndIgnoresExtraOnes() throws {
        let regions = try parse("name,radius,lon,id,lat\nSt. Stephen,150,16.3725,stephansplatz,48.2084")
        let region = try #require(regions.first)
        #expect(region.id == "stephansplatz")
        #expect(circle(region)?.center == Coordinate(latitude: 48.2084, longitude: 16.3725))
    }

    @Test func handlesQuotedFields() throws {
        let text = #"""
            "id","lat","lon","radius","note"
            "a, with comma",1,2,3,"say ""hi"""
            "multi
            line",4,5,6,
            """#
        let regions = try parse(text)
        #expect(regions.map(\.id) == ["a, with comma", "multi\nline"])
        #expect(circle(regions[1])?.center == Coordinate(latitude: 4, longitude: 5))
    }

    @Test func handlesCRLFBlankLinesSpacesAndBOM() throws {
        let text = "\u{FEFF}id, lat, lon, radius\r\n\r\n a , 1.5 ,-2,10\r\n   \r\nb,0,0,1e3\r\n\r\n"
        let regions = try parse(text)
        #expect(regions.map(\.id) == ["a", "b"])
        #expect(circle(regions[0])?.center == Coordinate(latitude: 1.5, longitude: -2))
        #expect(circle(regions[1])?.radius == 1000)
    }

    /// Numbers are parsed in place in the file, looking past the field where the file goes on;
    /// each must still be read as exactly its field, whatever follows it (comma, line break,
    /// spaces, the file's end), and agree with Swift's own parsing.
    @Test func numbersReadAsTheirFieldsWhereverTheyStand() throws {
        var rng = SplitMix64(seed: 21)
        var rows: [String] = []
        var expected: [(Double, Double, Double)] = []
        for k in 0..<3000 {
            let lat = String(format: "%.\(rng.below(9))f", Double(rng.below(180_000_000)) / 1e6 - 90)
            let lon = String(format: "%.\(rng.below(9))f", Double(rng.below(360_000_000)) / 1e6 - 180)
            let radius = String(format: "%.\(rng.below(4))f", Double(rng.below(5_000_000)) / 1000 + 1)
            let pad = k % 7 == 0 ? "  " : ""
            rows.append("r\(k),\(lat)\(pad),\(pad)\(lon),\(radius)")
            expected.append((Double(lat)!, Double(lon)!, Double(radius)!))
        }
        // The last row ends the file, with no line break after its radius.
        let regions = try parse("id,lat,lon,radius\n" + rows.joined(separator: "\n"))
        #expect(regions.count == expected.count)
        for (region, e) in zip(regions, expected) {
            guard case .circle(let center, let radius) = region.shape else {
                Issue.record("\(region.id) is no circle")
                break
            }
            #expect(center.latitude.bitPattern == e.0.bitPattern && center.longitude.bitPattern == e.1.bitPattern
                    && radius.bitPattern == e.2.bitPattern, "\(region.id)")
        }
    }

    /// Plain rows (the generator's and most exports' form) are read straight from the file; any
    /// other record goes the general way. Both ways must read the same regions to the bit, or
    /// fail with the same error at the same line, whatever mixes of rows a file has.
    @Test(arguments: [
        "id,lat,lon,radius\na,1.5,-2,10\nb,0,0,1e3\nc,-90,180,0.5",
        "id,lat,lon,radius\r\na,1.5,-2,10\r\nb,0,0,1e3\r\n",
        "radius,lon,lat,id\n10,-2,1.5,a\r\n1e3,0,0,b\r\n",
        "id,lat,lon,radius\na ,1,2,3\nb,+1,2,3\nc,1, 2,3\nd,1,2,3 \n\"e\",1,2,3\nf,1,2,3\r\ng,1,2,3\rh\n",
        "id,lat,lon,radius\na,1,2,3\nb,1,2,3\n\n\nc,01,2,3\nd,1.,2,3\ne,1,2,3e1\nf,-0,-0,3\n",
        "id,lat,lon,radius\na,1,2,3\nb,1,2,3\na,4,5,6\n",
        "id,lat,lon,radius\na,1,2,3\nb,91,2,3\n",
        "id,lat,lon,radius\na,1,2,3\nb,1,2,0\nc,1,2\n",
        "id,lat,lon,radius\na,1,2,3\nb,1,2,-0\n",
        "id,lat,lon,radius\na,1,2,3\nb\u{7F},1,2,3\nc\u{E9},1,2,3\n",
        "id,lat,lon,radius\n" + String(repeating: "x", count: 300) + ",1,2,3\n",
        "id,lat,lon,radius,note\na,1,2,3,n\n",
        "id,lat,lon,radius\na,1,2,3,\n",
        "id,lat,lon,radius\na,1,2,3\nb,1,2,3,\"x\ny\"\nc,1,2,-1\n",
    ])
    func plainRowsReadAsTheGeneralScan(document: String) {
        func read(_ plainRows: Bool) -> Result<[String], RegionFileError> {
            Result { () throws(RegionFileError) in
                try CSVRegionReader(file: "r.csv", plainRows: plainRows).read(Array(document.utf8)).map { r in
                    guard case .circle(let c, let radius) = r.shape else { return "\(r.id) not a circle" }
                    return "\(r.id) \(r.featureIndex) \(c.latitude.bitPattern) \(c.longitude.bitPattern) \(radius.bitPattern)"
                }
            }
        }
        #expect(read(true) == read(false))
    }

    @Test func acceptsAHeaderWithoutRows() throws {
        #expect(try parse("id,lat,lon,radius\n").isEmpty)
    }

    @Test(arguments: [
        ("", nil, "empty file: expected a header row id,lat,lon,radius"),
        ("id,lat,lon\na,1,2", 1, "header must name the columns id, lat, lon and radius (missing: radius)"),
        ("id,latitude,longitude,radius\n", 1, "(missing: lat, lon)"),
        ("id,lat,lon,radius,lat\n", 1, #"column "lat" appears twice in the header"#),
        ("id,lat,lon,radius\na,1,2\n", 2, "row has 3 fields, the header has 4"),
        ("id,lat,lon,radius\na,1,2,3,4\n", 2, "row has 5 fields, the header has 4"),
        ("id,lat,lon,radius\n,1,2,3\n", 2, "missing id"),
        ("id,lat,lon,radius\na,north,2,3\n", 2, #"lat "north" is not a number"#),
        ("id,lat,lon,radius\na,1,,3\n", 2, "lon is empty"),
        ("id,lat,lon,radius\na,1,2,nan\n", 2, #"radius "nan" is not a number"#),
        ("id,lat,lon,radius\na,1,2,0x10\n", 2, #"radius "0x10" is not a number"#),
        ("id,lat,lon,radius\na,1,2,1e999\n", 2, #"radius "1e999" is not a number"#),
        ("id,lat,lon,radius\n\na,91,2,3\n", 3, "latitude 91 is outside [-90, 90]"),
        ("id,lat,lon,radius\na,1,-181,3\n", 2, "longitude -181 is outside [-180, 180]"),
        ("id,lat,lon,radius\na,1,2,0\n", 2, "radius must be greater than 0 (got 0)"),
        ("id,lat,lon,radius\na,1,2,-5\n", 2, "radius must be greater than 0 (got -5)"),
        ("id,lat,lon,radius\na,1,2,3\r\nb,1,2,3\r\na,4,5,6\r\n", 4, #"duplicate id "a" (first used on line 2)"#),
        // The first problem in the file is the one reported, a repeated id or a bad value; a
        // malformed record anywhere wins over both.
        ("id,lat,lon,radius\na,1,2,3\na,1,2,3\nb,1,2,-1\n", 3, #"duplicate id "a" (first used on line 2)"#),
        ("id,lat,lon,radius\na,1,2,3\nb,1,2,-1\na,1,2,3\n", 3, "radius must be greater than 0 (got -1)"),
        ("id,lat,lon,radius\na,1,2,3\na,1,2,3\n\"x,1,2,3\n", 4, "quoted field never closed"),
        ("id,lat,lon,radius\n\"a,1,2,3\n", 2, "quoted field never closed"),
        ("id,lat,lon,radius\n\"a\"x,1,2,3\n", 2, "unexpected character after a closing quote"),
        ("id,lat,lon,radius\na\"b,1,2,3\n", 2, "quote inside an unquoted field"),
        ("id,lat,lon,radius\n\"x\ny\",1,2,3\nb,1,2,-1\n", 4, "radius must be greater than 0"),
    ] as [(String, Int?, String)])
    func rejects(document: String, line: Int?, expectedReason: String) {
        do {
            let regions = try parse(document)
            Issue.record("accepted: \(regions.map(\.id))")
        } catch {
            #expect(error.reason.contains(expectedReason), "\(error)")
            #expect(error.line == line, "\(error)")
            #expect(error.file == "regions.csv")
        }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes = Array("id,lat,lon,radius\n".utf8) + [0x61, 0xFF] + Array(",1,2,3\n".utf8)
        #expect(throws: RegionFileError(file: "r.csv", reason: "not valid UTF-8", line: 2)) {
            try RegionFile.parse(bytes: bytes, fileName: "r.csv")
        }
    }

    /// An error names the row (its file line and feature index) and the region's id; a repeated
    /// id names the line of its first use too.
    @Test(arguments: [
        ("id,lat,lon,radius\nok,1,2,3\nbad,1,2,-1\n", 1, "bad", #"city.csv:3 (id "bad"): radius must be greater than 0 (got -1)"#),
        ("id,lat,lon,radius\nx,1,2,3\n\ny,1,2,3\n\"x\",4,5,6\n", 2, "x",
         #"city.csv:5 (id "x"): duplicate id "x" (first used on line 2)"#),
    ] as [(String, Int, String, String)])
    func errorsNameTheLineAndId(document: String, featureIndex: Int, id: String, description: String) {
        do {
            _ = try parse(document, fileName: "city.csv")
            Issue.record("accepted")
        } catch {
            #expect(error.featureIndex == featureIndex)
            #expect(error.id == id)
            #expect(error.description == description)
        }
    }

    @Test(arguments: ["regions.csv", "REGIONS.CSV", "regions.txt", "-"])
    func detectsCSV(fileName: String) throws {
        #expect(try parse("id,lat,lon,radius\na,1,2,3\n", fileName: fileName).count == 1)
    }

    @Test func explicitFormatOverridesTheExtension() throws {
        let regions = try RegionFile.parse(bytes: Array("id,lat,lon,radius\na,1,2,3".utf8), fileName: "x.json", format: .csv)
        #expect(regions.count == 1)
    }
}
