import CPrefetch

/// Cache-prefetch hints on memory the caller does not hold a pointer to: an array's element, an
/// output's per-region table. A hint only: nothing depends on it.
package enum Prefetch {
    /// Starts loading `array[index]` (no check: a hint for an index about to be read).
    @inline(__always)
    package static func element<T>(of array: [T], at index: Int) {
        array.withUnsafeBufferPointer { geotrigger_prefetch($0.baseAddress! + index) }
    }
}

/// A table an event consumer reads once per region event (the event writer's region ids, in
/// fixed slots): where it starts and how many bytes an entry takes, so that the monitor can
/// prefetch a region's entry as soon as it decides the event. Its owner keeps the table where it
/// is while it is set (`Engine.output`).
package struct RegionEventTable {
    let base: UnsafeRawPointer
    let stride: Int

    /// The table of `list`'s elements (which must not be empty), valid while the list keeps its
    /// storage (it does not grow or free).
    package init<T>(_ list: PodList<T>) {
        base = UnsafeRawPointer(list.base.unsafelyUnwrapped)
        stride = MemoryLayout<T>.stride
    }

    /// Starts loading region `r`'s entry.
    @inline(__always)
    package func prefetch(_ r: Int32) { geotrigger_prefetch(base + Int(r) &* stride) }
}
