import CPrefetch

/// A table an event consumer reads once per region event (the event writer's region ids, in
/// fixed slots): where it starts and how many bytes an entry takes, so that the monitor can
/// prefetch a region's entry as soon as it decides the event. Its owner keeps the table where it
/// is while it is set (`Engine.output`).
package struct RegionEventTable {
    let base: UnsafeRawPointer
    let stride: Int

    package init(base: UnsafeRawPointer, stride: Int) {
        self.base = base
        self.stride = stride
    }

    /// Starts loading region `r`'s entry.
    @inline(__always)
    func prefetch(_ r: Int32) { geotrigger_prefetch(base + Int(r) &* stride) }
}
