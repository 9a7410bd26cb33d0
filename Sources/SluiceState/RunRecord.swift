import SluiceCore

/// One run as the checkpoint remembers it.
public struct RunRecord: Sendable, Hashable, Codable {
    public var runID: String
    public var startedAt: Double
    public var endedAt: Double?
    public var configurationHash: String
    public var exitCode: Int32?
    public var stats: RunStats?

    public init(runID: String, startedAt: Double, endedAt: Double? = nil, configurationHash: String, exitCode: Int32? = nil, stats: RunStats? = nil) {
        self.runID = runID
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.configurationHash = configurationHash
        self.exitCode = exitCode
        self.stats = stats
    }
}
