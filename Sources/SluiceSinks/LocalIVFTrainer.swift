import Dispatch
import Foundation
import SluiceCore
import Synchronization

/// The thread that trains the local store's IVF index (`LocalSink+IVFTraining.swift`), so that the store's
/// writer thread goes on writing and readers go on searching meanwhile: k-means runs on a snapshot, and the
/// lists are filled in bounded commits that interleave with the writer's.
///
/// One job runs at a time; asking for one while another runs makes it run once more when it ends (the store
/// may need more than that job saw: a retrain after a long first training), unless the trainer is being
/// stopped. The job's write transactions are counted and timed here
/// (``LocalIVFTrainerCounts/longestCommit``: the longest the writer could have waited for the trainer).
final class LocalIVFTrainer: @unchecked Sendable {
    /// Where a job is, for tests that hold it there (``hold(at:_:)``).
    enum Step: Sendable, Equatable {
        /// The sample is read and the centroids computed; the epoch is not yet recorded.
        case trained
        /// A part of the lists is computed from a snapshot; it is not yet written.
        case partComputed
        /// A part of the relabelling of a store written without labels is committed; more follow.
        case relabelPart
        /// A job has ended: done, stopped, or failed (its error kept for ``takeFailure()``). Lets a test that
        /// waits for a step learn that the job will not reach it, instead of waiting forever.
        case ended
    }

    // All are thread-safe; the class only owns them.
    private let queue = DispatchQueue(label: "sl-local-ivf-train")
    /// Whether a job runs or waits to, and whether it was asked for again meanwhile.
    private let busy = Mutex((running: false, again: false))
    private let stopped = Mutex(false)
    private let counts = Mutex(LocalIVFTrainerCounts())
    private let failure = Mutex<(any Error)?>(nil)
    private let holds = Mutex<[Step: @Sendable () -> Void]>([:])

    init() {
        if let step = Self.debugHold {
            // Never released: the process is killed (the CLI's tests of `serve` during a training).
            hold(at: step) {
                FileHandle.standardError.write(Data("sluice debug: the IVF trainer holds at \(step)\n".utf8))
                DispatchSemaphore(value: 0).wait()
            }
        }
    }

    /// The step `SLUICE_DEBUG_IVF_HOLD` names (`trained`, `part-computed`), where every trainer of the process
    /// stops for good, saying so on stderr (read once per process).
    private static let debugHold: Step? = {
        switch ProcessInfo.processInfo.environment["SLUICE_DEBUG_IVF_HOLD"] {
        case "trained": return .trained
        case "part-computed": return .partComputed
        default: return nil
        }
    }()

    /// Runs `job` on the trainer's thread, or once more after the one that runs.
    func request(_ job: @escaping @Sendable () -> Void) {
        let queued = busy.withLock { busy in
            if busy.running {
                busy.again = true
                return false
            }
            busy.running = true
            return true
        }
        guard queued else { return }
        queue.async {
            while true {
                self.timed(job)
                self.reach(.ended)
                let again = self.busy.withLock { busy in
                    let again = busy.again && !self.isStopped
                    busy = (running: again, again: false)
                    return again
                }
                if !again { break }
            }
        }
    }

    /// Runs `job`, recording its wall and CPU time in ``LocalIVFTrainerCounts/jobs``.
    private func timed(_ job: () -> Void) {
        let clock = ContinuousClock()
        let (begin, cpu, trainings) = (clock.now, Self.threadCPU(), counts.withLock { $0.trainings })
        job()
        let took = begin.duration(to: clock.now)
        let used = Self.threadCPU() - cpu
        counts.withLock { $0.jobs.append(.init(wall: took, cpu: used, trained: $0.trainings > trainings)) }
    }

    /// The CPU time of the calling thread.
    private static func threadCPU() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// Returns once the job asked for before has ended. Never call it on the trainer's thread, nor inside a
    /// write transaction (the job may wait for that transaction's lock).
    func settle() { queue.sync {} }

    /// Makes the running job stop at its next step (between k-means rounds or commits) and waits for it: the
    /// store is about to be emptied. Jobs asked for later run again.
    func stop() {
        stopped.withLock { $0 = true }
        settle()
        stopped.withLock { $0 = false }
    }

    /// Whether a job runs or waits to.
    var isBusy: Bool { busy.withLock { $0.running } }

    /// Whether the running job should stop.
    var isStopped: Bool { stopped.withLock { $0 } }

    /// The error of the last job that failed, taken once.
    func takeFailure() -> (any Error)? { failure.withLock { $0.take() } }

    func failed(_ error: any Error) { failure.withLock { $0 = error } }

    var report: LocalIVFTrainerCounts { counts.withLock { $0 } }

    /// Runs `body`, one write transaction, counting and timing it.
    func commit<T>(_ body: () throws -> T) rethrows -> T {
        let clock = ContinuousClock()
        let begin = clock.now
        defer {
            let took = begin.duration(to: clock.now)
            counts.withLock {
                $0.commits += 1
                $0.longestCommit = max($0.longestCommit, took)
            }
        }
        return try body()
    }

    /// Runs `body`, work outside any write transaction, timing it.
    func compute<T>(_ body: () throws -> T) rethrows -> T {
        let clock = ContinuousClock()
        let begin = clock.now
        defer { counts.withLock { $0.computing += begin.duration(to: clock.now) } }
        return try body()
    }

    func trained() { counts.withLock { $0.trainings += 1 } }

    /// Records that the job holds a training sample of `bytes` (0: it let it go).
    func holdSample(bytes: Int) {
        counts.withLock {
            $0.sampleHeld = bytes
            $0.largestSample = max($0.largestSample, bytes)
        }
    }

    /// For tests: the job calls `body` when it reaches `step` (on the trainer's thread, which waits for it).
    func hold(at step: Step, _ body: (@Sendable () -> Void)?) { holds.withLock { $0[step] = body } }

    func reach(_ step: Step) { holds.withLock { $0[step] }?() }
}
