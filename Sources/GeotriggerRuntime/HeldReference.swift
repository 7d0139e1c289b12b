import GeotriggerCore
/// An optional strong reference that the hot path calls without reference counting.
///
/// A call through a class's `var` holding an object (or a class-bound existential) is wrapped in
/// a retain and a release, since the property might be replaced during the call: about 40
/// instructions an event for the monitor's sink and the engine's output. Here the reference sits
/// in an immutable box that this object keeps retained by hand, and `call` borrows it: the box
/// cannot go away during the call unless the callee replaces `value` itself, which the owners
/// (`Monitor.sink`, `Engine.output`) do not do.
public final class HeldReference<Target> {
    @usableFromInline final class Box {
        @usableFromInline let target: Target
        @usableFromInline init(_ target: Target) { self.target = target }
    }

    @exclusivity(unchecked) @usableFromInline var box: Unmanaged<Box>?

    public init() {}

    deinit { box?.release() }

    /// The reference (retained while set).
    public var value: Target? {
        get { box?.takeUnretainedValue().target }
        set {
            let old = box
            box = newValue.map { Unmanaged.passRetained(Box($0)) }
            old?.release()
        }
    }

    /// Calls `body` with the reference, if set, without retaining it.
    @inlinable @inline(__always)
    public func call(_ body: (Target) -> Void) {
        guard let box else { return }
        box._withUnsafeGuaranteedRef { body($0.target) }
    }
}
