import SluiceCore

/// A stage whose workers turn one document into one document (extract, chunk, hash).
///
/// The actor owns the stage's lifecycle and statistics; documents flow through the channels, not
/// through actor calls. `workers` tasks each take a document from `input`, transform it, and send it
/// to `output` (suspending while `output` is full). Settled documents (failed, unchanged) pass through.
/// Busy time is the wall time of each transform, waits inside it included; CPU time is what its work
/// used (``WorkCPU``: measured by the transform's synchronous parts and by the executors it calls).
package actor TransformStage {
    private enum State { case initial, running, finished }

    package nonisolated let name: String
    package nonisolated let workers: Int
    package nonisolated let meter: StageMeter
    private let transform: @Sendable (DocumentWork) async -> DocumentWork
    private var state = State.initial

    package init(name: String, workers: Int, transform: @escaping @Sendable (DocumentWork) async -> DocumentWork) {
        self.name = name
        self.workers = workers
        self.meter = StageMeter(name: name, workers: workers)
        self.transform = transform
    }

    /// Runs until `input` is finished and drained; finishes `output` (once per worker).
    package func run(input: StageChannel<DocumentWork>, output: StageChannel<DocumentWork>) async {
        precondition(state == .initial, "a stage runs once")
        state = .running
        let meter = self.meter
        let transform = self.transform
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    let clock = ContinuousClock()
                    while true {
                        let waitStart = clock.now
                        // A cancelled task ends the worker as the end of the input does.
                        guard let document = try? await input.receive() else { break }
                        meter.starved(waitStart.duration(to: clock.now))
                        meter.received()
                        var result = document
                        if !document.isSettled {
                            let workStart = clock.now
                            let cpu = WorkCPU()
                            result = await WorkCPU.$current.withValue(cpu) { await transform(document) }
                            meter.worked(
                                workStart.duration(to: clock.now),
                                cpu: cpu.seconds,
                                bytes: Int(document.file.size)
                            )
                        }
                        let sendStart = clock.now
                        if (try? await output.send(result)) == true { meter.blocked(sendStart.duration(to: clock.now)) }
                    }
                    output.finish()
                }
            }
        }
        state = .finished
    }
}
