extension Monitor {
    /// Every device's `DeviceState`, by device id, in one 64-byte-aligned buffer the monitor owns
    /// (`AlignedBuffer`): reading or editing one field of a device's state touches that field
    /// alone (an array would check its uniqueness, a class per device would add a pointer to
    /// follow). Grows by half; the monitor frees it in its `deinit` (`free`). Nothing is
    /// allocated before the first device.
    typealias DeviceStates = AlignedBuffer<DeviceState>
}

extension AlignedBuffer<Monitor.DeviceState> {
    /// Starts loading device `slot`'s state for writing: all of it (two or three lines).
    @inline(__always)
    func prefetchForWriting(_ slot: Int) {
        prefetchForWriting(slot, byteOffset: 0)
        prefetchForWriting(slot, byteOffset: 64)
        prefetchForWriting(slot, byteOffset: MemoryLayout<Monitor.DeviceState>.stride - 1)
    }
}
