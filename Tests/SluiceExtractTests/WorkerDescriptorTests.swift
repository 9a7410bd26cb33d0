import Foundation
import Testing

@testable import SluiceExtract

#if canImport(Glibc)
import Glibc
#endif

/// An extract worker holds its two pipes and standard error, nothing else of the process that started it:
/// not a descriptor another library (or a test harness) left without close-on-exec. One it inherited would stay
/// open as long as the worker lives (a pool's lifetime): a pipe's other end never seeing end of file, or the
/// socket by which Foundation learns of another child's death never closing (seen as hundreds of sockets held
/// by the test process, 2026-11-30).
@Suite struct WorkerDescriptorTests {
    @Test("a worker inherits no descriptor but its standard three, even one left without close-on-exec")
    func noInheritedDescriptors() throws {
        var leaked: [Int32] = [-1, -1]
        #expect(pipe(&leaked) == 0)  // not close-on-exec
        defer { for fd in leaked { close(fd) } }
        let worker = try WorkerProcess.spawn(.init(executable: "/bin/sleep", arguments: ["600"]))
        defer { _ = worker.kill() }
        // posix_spawn returns once the child has executed /bin/sleep, but the dynamic loader then opens its
        // libraries (a descriptor 3 for a moment: seen once in the whole suite). An inherited descriptor stays
        // as long as the worker lives, so wait for the listing to settle; one that never does fails below.
        var open: [Int32] = []
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker.pid)/fd")
                .compactMap { Int32($0) }.sorted()
            if open == [0, 1, 2] { break }
            usleep(20_000)
        } while ContinuousClock.now < deadline
        #expect(open == [0, 1, 2], "the worker holds \(open); this process's unmarked pipe is \(leaked)")
    }
}
