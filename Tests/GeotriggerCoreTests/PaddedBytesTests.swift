import Foundation
import Testing
@testable import GeotriggerCore

@Suite struct PaddedBytesTests {
    /// `word(at:)` is the 8 bytes from any index, the first lowest; slices keep the padding after them.
    @Test func wordsSlicesAndViews() {
        let bytes = Array("0123456789abcdef".utf8)
        bytes.withPaddedBytes { all in
            let p = all.slice(0..<8)  // 8 bytes, and 8 more readable after them
            #expect(p.count == 8 && p.padding == 8)
            #expect(p.word(at: 3) == 0x6139_3837_3635_3433)  // "3456789a", "3" lowest
            let s = p.slice(2..<5)
            #expect(s.count == 3 && s.padding == 11 && s[0] == UInt8(ascii: "2"))
            #expect(p.dropFirst(6).word(at: 0) == p.word(at: 6))
            #expect(p.view(from: 1, count: 3).string == "123")
            #expect(p.string(4..<8) == "4567")
            #expect(p.matches("345", at: 3) && !p.matches("346", at: 3))
            #expect(p.firstIndex(of: UInt8(ascii: "5"), in: 0..<8) == 5)
            #expect(p.firstIndex(of: UInt8(ascii: "9"), in: 0..<8) == nil)
            #expect(p.withCString(1..<4) { String(cString: $0) } == "123")
        }
    }

    #if DEBUG
    /// A read past the padding is caught in a debug build (release reads as the raw pointer did).
    /// Not under a sanitizer (`scripts/sanitize`): the child's intended trap would be its finding.
    @Test(.disabled(if: ["ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"].contains { ProcessInfo.processInfo.environment[$0] != nil },
                    "under a sanitizer the intended trap is reported as a finding"))
    func aReadPastThePaddingTraps() async {
        await #expect(processExitsWith: .failure) {
            let bytes: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9]
            _ = bytes.withPaddedBytes { $0.slice(0..<4).word(at: 2) }  // bytes 2..<10 of 9
        }
        await #expect(processExitsWith: .failure) {
            let bytes: [UInt8] = [1, 2, 3]
            _ = bytes.withPaddedBytes { $0[3] }
        }
    }
    #endif
}
