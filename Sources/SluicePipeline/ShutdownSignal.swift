import Synchronization

/// Asks a running pipeline to stop taking new documents; what is in flight finishes and is committed.
public final class ShutdownSignal: Sendable {
    private let requested = Atomic<Bool>(false)

    public init() {}

    public func request() { requested.store(true, ordering: .relaxed) }

    public var isRequested: Bool { requested.load(ordering: .relaxed) }
}
