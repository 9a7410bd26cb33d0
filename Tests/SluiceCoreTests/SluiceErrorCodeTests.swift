import SluiceCore
import Testing

/// The registry of failure codes (`SluiceError+Codes.swift`) and the exit code each maps to.
@Suite struct SluiceErrorCodeTests {
    @Test func everyCodeIsListedOnceInKebabCase() {
        let names = SluiceError.Code.registered.map(\.rawValue)
        #expect(Set(names).count == names.count, "a code is registered twice")
        for name in names {
            #expect(!name.isEmpty && name.allSatisfy { $0.isLowercase || $0 == "-" }, "\(name) is not kebab-case")
        }
    }

    /// Usage, configuration and a state the user must deal with exit 1; a held lock 3; a refusing
    /// provider 5; an unavailable dependency (or a network failure, a timeout) or a full disk 6; a refused mass delete 7;
    /// a refused generation promote 8; anything else that stops a command is a bug (70).
    @Test(arguments: SluiceError.Code.registered)
    func eachCodeHasItsExitCode(code: SluiceError.Code) {
        let expected: RunExitCode
        switch code {
        case .configuration, .usage, .embedderMismatch, .stateCorrupt: expected = .usage
        case .lockHeld: expected = .lockHeld
        case .providerRefused: expected = .providerRefused
        // Issue 37: unavailability exits 6 whichever command meets it (search, sink info, ask).
        case .dependencyUnavailable, .diskFull, .network, .timeout, .sinkUnavailable: expected = .dependencyUnavailable
        case .massDelete: expected = .deletionRefused
        case .promoteRefused: expected = .promoteRefused
        default: expected = .internalError
        }
        #expect(RunExitCode(for: SluiceError(code, "m")) == expected)
    }

    @Test func unavailabilityIsFoundInTheChainOfCauses() {
        let refused = SluiceError(.network, "connection refused")
        let spent = SluiceError(.sinkFailed, "gave up", cause: SluiceError(.sinkUnavailable, "q", cause: refused))
        #expect(spent.isUnavailability)
        #expect(SluiceError(.embeddingFailed, "x", cause: SluiceError(.timeout, "t")).isUnavailability)
        #expect(!SluiceError(.sinkFailed, "HTTP 400").isUnavailability)
        #expect(!SluiceError(.providerRefused, "401").isUnavailability)
        #expect(RunExitCode(for: spent) == .dependencyUnavailable)
        #expect(RunExitCode(for: SluiceError(.sinkFailed, "HTTP 400")) == .internalError)
        #expect(RunExitCode.dependencyUnavailable.rawValue == 6 && RunExitCode.deletionRefused.rawValue == 7)
        #expect(RunExitCode.promoteRefused.rawValue == 8)
    }

    @Test func anErrorOtherThanSluiceErrorIsABug() {
        struct Other: Error {}
        #expect(RunExitCode(for: Other()) == .internalError)
    }
}
