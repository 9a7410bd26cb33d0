/// What the IVF index's trainer (``LocalIVFTrainer``) did since the store was opened, for the benchmark.
package struct LocalIVFTrainerCounts: Sendable {
    /// Trainings that recorded a new epoch.
    package var trainings = 0
    /// Write transactions of the trainer (labels given, epochs recorded, parts of lists written, retired
    /// entries deleted).
    package var commits = 0
    /// The longest of those write transactions, from its begin to its commit: the longest the writer could
    /// have waited for the trainer.
    package var longestCommit: Duration = .zero
    /// Time spent sampling, in k-means and computing the lists' parts from snapshots, outside any write
    /// transaction.
    package var computing: Duration = .zero
    /// Bytes of the training sample held now (0 outside k-means: it is let go before the lists are filled).
    package var sampleHeld = 0
    /// The most bytes a training sample held (``LocalIVFSample``: its records' labels).
    package var largestSample = 0
    /// Every job the trainer ran, in order: its wall and CPU time (the trainer's thread alone), and whether it
    /// recorded a new epoch (a training) or only went on filling one or deleted a retired one.
    package var jobs: [Job] = []

    /// One job of the trainer.
    package struct Job: Sendable {
        /// From the job's start to its end.
        package var wall: Duration
        /// CPU time of the trainer's thread during the job (k-means runs on that thread alone).
        package var cpu: Duration
        /// Whether the job recorded a new epoch.
        package var trained: Bool
    }
}
