#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerFuzzing

// libFuzzer's entry point for every target: `FUZZ_TARGET` names the one to run (`scripts/fuzz`
// sets it). An input that breaks the target's invariant stops the process with the problem, so
// libFuzzer keeps the input as a crash.

private let target: FuzzTarget = {
    let name = getenv("FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let t = FuzzTargets.named(name) else {
        let names = FuzzTargets.all.map(\.name).joined(separator: ", ")
        say("geotrigger-fuzz: set FUZZ_TARGET to one of: \(names)\n")
        exit(2)
    }
    return t
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let problems = target.check(UnsafeRawBufferPointer(start: data, count: count))
    if let first = problems.first {
        say("geotrigger-fuzz: \(target.name): \(first)\n")
        abort()
    }
    return 0
}

/// `FUZZ_TARGET=list`: the targets, a line each (`scripts/fuzz --list`).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    if let name = getenv("FUZZ_TARGET"), String(cString: name) == "list" {
        for t in FuzzTargets.all { print("\(t.name)\t\(t.about)") }
        exit(0)
    }
    _ = target
    return 0
}

/// To standard error, unbuffered.
private func say(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
