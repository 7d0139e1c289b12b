import CMalloc

/// How a one-shot batch process (`replay`) asks the C allocator to keep the memory it frees.
///
/// Why it is here: a replay builds its tables once, frees the load's scratch (the regions file,
/// the Hilbert keys, the arrays the index moved out of) and goes on to allocate batches and
/// output blocks. glibc hands a large block back to the kernel when it is freed (one above its
/// mapping threshold is unmapped; the top of a heap is trimmed), and each page of the next block
/// is then a fault, which costs more than the work on it on a virtual machine. A process that
/// lives for one run and frees everything at its end gains nothing from giving memory back
/// early. Not for `consume`, which runs for days and should return what a burst took.
package enum FreedMemory {
    /// Blocks up to 8 MiB from the heap, no heap trimmed (`CMalloc.h`); only pages written are
    /// ever faulted in. Elsewhere than glibc, nothing. Call before the first large allocation.
    package static func keepForReuse() {
        geotrigger_keep_freed_memory()
    }
}
