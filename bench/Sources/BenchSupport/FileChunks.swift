#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams over files a megabyte at a time: event and reading files of the full-size scenarios
/// are hundreds of megabytes, too many to load whole just to count or compare them.
public enum FileChunks {
    /// Calls `body` with each chunk until it returns false. Throws if the file cannot be opened.
    public static func forEach(_ path: String, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        guard let file = fopen(path, "rb") else { throw FileError(path: path) }
        defer { fclose(file) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = fread(buffer.baseAddress, 1, buffer.count, file)
            if n == 0 { return }
            if try !body(UnsafeRawBufferPointer(rebasing: buffer[..<n])) { return }
        }
    }

    public static func lineCount(_ path: String) throws -> Int {
        var lines = 0
        try forEach(path) { chunk in
            lines += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            return true
        }
        return lines
    }

    /// Whether two files hold the same bytes.
    public static func identical(_ a: String, _ b: String) throws -> Bool {
        guard let other = fopen(b, "rb") else { throw FileError(path: b) }
        defer { fclose(other) }
        var same = true
        var theirs = [UInt8](repeating: 0, count: 1 << 20)
        try forEach(a) { chunk in
            let n = fread(&theirs, 1, chunk.count, other)
            same = n == chunk.count && theirs.withUnsafeBytes { memcmp($0.baseAddress!, chunk.baseAddress!, n) == 0 }
            return same
        }
        return same && fgetc(other) == EOF
    }

    /// Copies the first `lines` lines of `source` to `destination`.
    public static func copyLines(_ lines: Int, from source: String, to destination: String) throws {
        guard let out = fopen(destination, "wb") else { throw FileError(path: destination) }
        defer { fclose(out) }
        var remaining = lines
        try forEach(source) { chunk in
            var end = 0
            while end < chunk.count && remaining > 0 {
                if chunk[end] == UInt8(ascii: "\n") { remaining -= 1 }
                end += 1
            }
            fwrite(chunk.baseAddress, 1, end, out)
            return remaining > 0
        }
    }

    public struct FileError: Error, CustomStringConvertible {
        public var path: String
        public var description: String { "cannot open \(path)" }
    }
}
