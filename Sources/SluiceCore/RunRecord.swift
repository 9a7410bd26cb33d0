/// One run as the checkpoint remembers it.
public struct RunRecord: Sendable, Hashable, Codable {
    public var runID: String
    public var startedAt: Double
    public var endedAt: Double?
    public var configurationHash: String
    /// The exit code of the process that ran it (nil while it runs, or when it crashed).
    public var exitCode: Int32?
    public var stats: RunStats?
    /// Why the run stopped with an error after it started (`code: message`), when it did.
    public var failure: String?

    public init(
        runID: String,
        startedAt: Double,
        endedAt: Double? = nil,
        configurationHash: String,
        exitCode: Int32? = nil,
        stats: RunStats? = nil
    ) {
        self.runID = runID
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.configurationHash = configurationHash
        self.exitCode = exitCode
        self.stats = stats
    }
}
