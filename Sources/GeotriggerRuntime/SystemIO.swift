import GeotriggerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The loops around write(2) and pread(2) that every file the package writes or hashes goes
/// through (event and reject files, checkpoints, the service extension's pipe): a system call
/// takes a raw pointer, and this is the one place that hands it one.
package enum SystemIO {
    /// Writes all of `bytes` to `fd`, again after a partial write or EINTR. Returns the bytes
    /// written and, when the system refused the rest, why (strerror).
    package static func writeAll(_ fd: Int32, _ bytes: ByteView) -> (written: Int, failure: String?) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return (offset, String(cString: strerror(errno)))
                }
                offset += n
            }
            return (offset, nil)
        }
    }

    /// Reads `fd` from byte `from` up to byte `to` in chunks of 1 MiB, handing each to `body`
    /// (valid during the call). Returns false if the file ends before `to`; throws what
    /// `body` throws.
    package static func readRange(_ fd: Int32, from: Int, to: Int, _ body: (ByteView) throws -> Void) rethrows -> Bool {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var at = from
        while at < to {
            let n = pread(fd, buffer, min(chunk, to - at), off_t(at))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            try body(ByteView(unsafe: UnsafeRawBufferPointer(start: buffer, count: n)))
            at += n
        }
        return true
    }

    /// One read(2) of `fd` into `bytes[range]`, again after EINTR: how many bytes it read (0 at
    /// the end of the input), or −errno.
    package static func read(_ fd: Int32, into bytes: inout [UInt8], _ range: Range<Int>) -> Int {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "read beyond the array")
        while true {
            let n = bytes.withUnsafeMutableBytes { raw in
                systemRead(fd, raw.baseAddress! + range.lowerBound, range.count)
            }
            if n >= 0 { return n }
            if errno != EINTR { return -Int(errno) }
        }
    }

    /// Sends all of `bytes` on the socket `fd` without SIGPIPE (a peer that has gone away is an
    /// error, not a signal), again after a partial send or EINTR; nil, or why the system refused.
    package static func sendAll(_ fd: Int32, _ bytes: ByteView) -> String? {
        bytes.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                sent += n
            }
            return nil
        }
    }

    /// The names in directory `path` (`.` and `..` included), or nil if it cannot be read.
    package static func directoryNames(_ path: String) -> [String]? {
        directoryEntries(path)?.map(\.name)
    }

    /// The names in directory `path` with what readdir(3) says each is: a regular file (true),
    /// something else (false), or not said (nil: the file system leaves it to stat(2), and a
    /// symbolic link is followed only by stat). Nil if it cannot be read (errno set).
    package static func directoryEntries(_ path: String) -> [(name: String, regular: Bool?)]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var entries: [(name: String, regular: Bool?)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            let type = Int32(entry.pointee.d_type)
            entries.append((name, type == Int32(DT_REG) ? true : type == Int32(DT_UNKNOWN) || type == Int32(DT_LNK) ? nil : false))
        }
        return entries
    }

    /// posix_spawn(3) of `path` with `arguments` (C strings made and freed here) and the
    /// caller's file actions and attributes, in this process's environment. Returns the child's
    /// pid and posix_spawn's result (0, or an errno).
    package static func spawn(_ path: String, arguments: [String], _ actions: inout posix_spawn_file_actions_t,
                              _ attributes: inout posix_spawnattr_t) -> (pid: pid_t, status: Int32) {
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        return (child, rc)
    }
}

/// read(2), for `SystemIO.read`, whose name hides the system's inside the enum.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(fd, buffer, count) }
