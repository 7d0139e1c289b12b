import Foundation
@testable import Geotrigger
import Testing

/// The number formatting every event line goes through.
@Suite struct JSONWritingTests {
    private func written(_ body: (OutputFile) -> Void) -> String {
        let out = OutputFile(memory: ())
        body(out)
        return String(decoding: out.buffer, as: UTF8.self)
    }

    @Test(arguments: [Int64(0), 7, 9, 10, 99, 100, 101, 12_345, 1_000_000, -1, -10, -987_654_321, .max, .min])
    func integersMatchSwiftsFormatting(value: Int64) {
        #expect(written { $0.appendInteger(value) } == String(value))
    }

    @Test(arguments: [0.0, 0.004, 0.005, 1.5, 12.345, 357.105, 99.999, 1e6 + 0.25, -0.004, -2.5, -1234.567])
    func twoDecimalsMatchRoundingToCentimetres(value: Double) {
        let cents = (abs(value) * 100).rounded()
        let expected = (value < 0 && cents != 0 ? "-" : "") + String(Int64(cents) / 100) + "."
            + String(format: "%02lld", Int64(cents) % 100)
        #expect(written { $0.appendFixed2(value) } == expected)
    }

    @Test func nonFiniteIsNull() {
        #expect(written { $0.appendFixed2(.nan) } == "null")
        #expect(written { $0.appendFixed2(.infinity) } == "null")
    }
}
