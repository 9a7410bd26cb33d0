import Logging
import ServiceLifecycle
import Testing

@testable import SluiceServe

/// SIGTERM's drain has a deadline (issue 37, item 5): a server that does not finish in time is cancelled;
/// one that finishes is not kept waiting for the deadline. No process, no socket: a service group and two
/// fake services.
@Suite struct DrainDeadlineServiceTests {
    /// Ignores graceful shutdown: only cancellation ends it (a request whose client stopped sending).
    struct Stuck: Service {
        func run() async throws {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        }
    }

    /// Returns as soon as graceful shutdown starts (every request already answered).
    struct Prompt: Service {
        func run() async throws { try? await gracefulShutdown() }
    }

    /// Runs `service` in a group, triggers graceful shutdown, and returns once the group has ended; a group
    /// that is still running after `guardTime` is a failure (the guard only stops a hang).
    static func stop(_ service: some Service, guardTime: Duration = .seconds(600)) async throws -> Bool {
        let group = ServiceGroup(configuration: .init(services: [service], logger: Logger(label: "test")))
        return try await withThrowingTaskGroup(of: Bool.self) { tasks in
            tasks.addTask {
                try await group.run()
                return true
            }
            tasks.addTask {
                try await Task.sleep(for: guardTime)
                return false
            }
            await group.triggerGracefulShutdown()
            let ended = try await tasks.next() ?? false
            tasks.cancelAll()
            return ended
        }
    }

    @Test func aServerThatDoesNotDrainIsCutAtTheDeadline() async throws {
        let service = DrainDeadlineService(wrapped: Stuck(), deadline: .milliseconds(50), logger: Logger(label: "t"))
        #expect(try await Self.stop(service))
    }

    @Test func aServerThatDrainsDoesNotWaitForTheDeadline() async throws {
        let service = DrainDeadlineService(wrapped: Prompt(), deadline: .seconds(3600), logger: Logger(label: "t"))
        #expect(try await Self.stop(service))
    }
}
