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
    /// provider 5; anything else that stops a command is a bug (70).
    @Test(arguments: SluiceError.Code.registered)
    func eachCodeHasItsExitCode(code: SluiceError.Code) {
        let expected: RunExitCode
        switch code {
        case .configuration, .usage, .embedderMismatch, .massDelete, .stateCorrupt: expected = .usage
        case .lockHeld: expected = .lockHeld
        case .providerRefused: expected = .providerRefused
        default: expected = .internalError
        }
        #expect(RunExitCode(for: SluiceError(code, "m")) == expected)
    }

    @Test func anErrorOtherThanSluiceErrorIsABug() {
        struct Other: Error {}
        #expect(RunExitCode(for: Other()) == .internalError)
    }
}
