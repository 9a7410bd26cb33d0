import NIOCore
import Synchronization

/// The frames of a streamed answer on their way to the connection: what arrived since the last write is
/// written as one buffer.
///
/// A model may stream thousands of tiny events a second; written one by one, each is a write and a flush
/// on the connection's event loop, and two such answers kept `/health` waiting for seconds (issue 37).
/// Frames that arrive while a write is under way are joined into the next one, so a fast stream costs a
/// write per batch while a slow one is still written event by event, as it comes.
final class FrameQueue: Sendable {
    private let pending = Mutex(ByteBuffer())
    /// One wake-up per `append` at most pending: the bytes are in ``pending``, so a wake-up dropped for
    /// another one still waiting loses nothing.
    private let wakeups: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (wakeups, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Adds a frame after those not yet written.
    func append(_ frame: ByteBuffer) {
        pending.withLock { buffer in
            var frame = frame
            buffer.writeBuffer(&frame)
        }
        continuation.yield()
    }

    /// No frame follows: ``batches()`` ends once the last ones are taken.
    func finish() { continuation.finish() }

    /// What was appended since the last call, or nil when nothing was.
    private func take() -> ByteBuffer? {
        pending.withLock { buffer -> ByteBuffer? in
            guard buffer.readableBytes > 0 else { return nil }
            defer { buffer = ByteBuffer() }
            return buffer
        }
    }

    /// Calls `write` with each batch of frames until ``finish()``, or until the calling task is cancelled.
    func batches(_ write: (ByteBuffer) async throws -> Void) async throws {
        for await _ in wakeups {
            if let batch = take() { try await write(batch) }
        }
        if let rest = take() { try await write(rest) }
    }
}
