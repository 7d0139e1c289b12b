/// What a command that has finished leaves for the process's exit to take back, instead of
/// freeing it itself.
///
/// Why: a replay of a fleet's logs, one file per receiver, has thousands of files mapped; freed
/// with the run, each went back with a `munmap` of its own (a system call, a walk of its pages
/// and a TLB flush apiece), where the kernel takes back all of a process's mappings in one pass
/// at its exit. Kept here, reachable, a leak checker reports nothing.
enum LeftForExit {
    /// Only the command's own thread runs by then (`keep` is called once it is done).
    nonisolated(unsafe) private static var kept: [AnyObject] = []

    static func keep(_ object: AnyObject) {
        kept.append(object)
    }
}
