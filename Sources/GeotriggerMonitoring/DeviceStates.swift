import CPrefetch

extension Monitor {
    /// Every device's `DeviceState`, by device id, in one buffer the monitor owns: reading or
    /// editing one field of a device's state touches that field alone (an array would check its
    /// uniqueness, a class per device would add a pointer to follow). Grows by half; the monitor
    /// frees it in its `deinit` (`free`). Nothing is allocated before the first device.
    struct DeviceStates {
        private var storage: UnsafeMutablePointer<DeviceState>?
        private(set) var count = 0
        private var capacity = 0

        init() {}

        /// The buffer; only read for a slot below `count`, so there is one.
        private var base: UnsafeMutablePointer<DeviceState> {
            @inline(__always) get { storage.unsafelyUnwrapped }
        }

        /// Device `slot`'s state, in place.
        subscript(slot: Int) -> DeviceState {
            @inline(__always) unsafeAddress { UnsafePointer(base + slot) }
            @inline(__always) unsafeMutableAddress { base + slot }
        }

        mutating func append(_ state: DeviceState) {
            if count == capacity {
                let grown = Self.allocate(max(64, capacity + capacity / 2))
                if let storage {
                    grown.moveInitialize(from: storage, count: count)
                    UnsafeMutableRawPointer(storage).deallocate()
                }
                storage = grown
                capacity = max(64, capacity + capacity / 2)
            }
            (base + count).initialize(to: state)
            count += 1
        }

        /// Starts loading device `slot`'s state for writing: all of it (two or three lines), or
        /// the line at `byteOffset`.
        @inline(__always)
        func prefetchForWriting(_ slot: Int) {
            let p = UnsafeRawPointer(base + slot)
            geotrigger_prefetch_write(p)
            geotrigger_prefetch_write(p + 64)
            geotrigger_prefetch_write(p + (MemoryLayout<DeviceState>.stride - 1))
        }

        @inline(__always)
        func prefetchForWriting(_ slot: Int, byteOffset: Int) {
            geotrigger_prefetch_write(UnsafeRawPointer(base + slot) + byteOffset)
        }

        /// Hands each state to `release` (what it holds of its own), then frees them all.
        mutating func free(_ release: (inout DeviceState) -> Void) {
            guard let storage else { return }
            for i in 0..<count { release(&storage[i]) }
            storage.deinitialize(count: count)
            UnsafeMutableRawPointer(storage).deallocate()
            self.storage = nil
            count = 0
            capacity = 0
        }

        private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<DeviceState> {
            UnsafeMutableRawPointer.allocate(byteCount: capacity * MemoryLayout<DeviceState>.stride, alignment: 64)
                .bindMemory(to: DeviceState.self, capacity: capacity)
        }
    }
}
