import GeotriggerRuntime

// `replay --jobs` hands every record to its job: the reader appends one `JobItem` per record to
// the list of that job's next batch. In arrays, each append paid two uniqueness checks (the
// batches', then the records') and each device's last time a third; here the lists are raw
// memory (`PodList`) behind the two small types below, and the reader's hot path touches no
// reference count.

/// The records of one batch, crossing to the job and back (emptied, for reuse) by reference;
/// the memory is freed with the last reference.
final class JobItemList: @unchecked Sendable {
    @exclusivity(unchecked) fileprivate var list = PodList<JobItem>()

    init() {}

    /// An empty list with room for `count` records.
    init(reserving count: Int) { list.reserve(count) }

    deinit { list.free() }

    var count: Int { Int(list.count) }

    subscript(i: Int) -> JobItem {
        @inline(__always) get { list[i] }
    }

    func removeAll() { list.removeAll() }
}

/// The reader's lists being filled, one per job, until `take` hands one to its batch.
final class JobOutboxes {
    private let lists: UnsafeMutablePointer<PodList<JobItem>>
    let jobs: Int

    init(jobs: Int) {
        self.jobs = jobs
        lists = .allocate(capacity: jobs)
        lists.initialize(repeating: PodList(), count: jobs)
    }

    deinit {
        for j in 0..<jobs { lists[j].free() }
        lists.deinitialize(count: jobs)
        lists.deallocate()
    }

    @inline(__always)
    func append(_ item: JobItem, to job: Int) {
        assert(job >= 0 && job < jobs, "job out of range")
        lists[job].append(item)
    }

    /// Job `job`'s records so far, moved into `spare` (emptied first), whose memory this list
    /// goes on with.
    func take(_ job: Int, into spare: JobItemList) -> JobItemList {
        spare.list.removeAll()
        swap(&lists[job], &spare.list)
        return spare
    }
}
