/// The process exit codes, for cron (docs/DESIGN.md §7).
public struct RunExitCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Every document upserted or skipped.
    public static let success = RunExitCode(rawValue: 0)
    /// Usage or configuration error.
    public static let usage = RunExitCode(rawValue: 1)
    /// Finished, but some documents failed.
    public static let documentsFailed = RunExitCode(rawValue: 2)
    /// Another run holds the state lock.
    public static let lockHeld = RunExitCode(rawValue: 3)
    /// Interrupted by a signal; run again to resume.
    public static let interrupted = RunExitCode(rawValue: 4)
    /// A provider refused to go on (quota, credentials); fix it and run again.
    public static let providerRefused = RunExitCode(rawValue: 5)

    public var description: String { "\(rawValue)" }
}
