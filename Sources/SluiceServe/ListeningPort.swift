import Synchronization

/// The port the server bound (known once it listens: `--port 0` picks one), for the checks that compare
/// requests with it.
final class ListeningPort: Sendable {
    private let value = Atomic<Int>(0)

    var port: Int { value.load(ordering: .acquiring) }

    func set(_ port: Int) { value.store(port, ordering: .releasing) }
}
