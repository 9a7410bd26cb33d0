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
    /// A dependency (the store, the embedder) is unavailable: nothing was marked failed; retry later.
    public static let dependencyUnavailable = RunExitCode(rawValue: 6)
    /// A deletion was refused by the mass-delete guard (`run.max_delete_fraction`): nothing was deleted.
    public static let deletionRefused = RunExitCode(rawValue: 7)
    /// `sluice generation promote` refused to switch to the candidate (incomplete): nothing changed.
    public static let promoteRefused = RunExitCode(rawValue: 8)

    /// A bug (docs/DESIGN.md §7), and what any other error that stops a command maps to.
    public static let internalError = RunExitCode(rawValue: 70)

    // The hidden `sluice extract-worker` process also exits with these (sysexits.h); its parent treats
    // any exit as the worker's end, whatever the code.
    /// A request the worker could not read (EX_DATAERR).
    public static let malformedInput = RunExitCode(rawValue: 65)
    /// A response the worker could not write (EX_IOERR).
    public static let outputFailed = RunExitCode(rawValue: 74)

    /// The exit code of a command stopped by `error`: the process exits with it, and a run's record
    /// says the same.
    public init(for error: any Error) {
        switch (error as? SluiceError)?.code {
        case .lockHeld?: self = .lockHeld
        // A damaged state is the user's to deal with (restore, repair, or a new state): refused like an
        // unusable configuration, not reported as a bug.
        case .configuration?, .usage?, .embedderMismatch?, .stateCorrupt?: self = .usage
        case .providerRefused?: self = .providerRefused
        case .dependencyUnavailable?, .diskFull?: self = .dependencyUnavailable
        case .massDelete?: self = .deletionRefused
        case .promoteRefused?: self = .promoteRefused
        // A store or a server that could not be reached or answered "unavailable" (connection refused,
        // a timeout, a 5xx storm), whatever command met it: as `serve` answers 503 for it.
        case _ where (error as? SluiceError)?.isUnavailability == true: self = .dependencyUnavailable
        default: self = .internalError
        }
    }

    public var description: String { "\(rawValue)" }
}
