import SluiceCore
import Testing

/// The one lookup of secrets from the environment variables a pipeline file names.
@Suite struct EnvironmentSecretTests {
    static let environment = ["SET": "s3cr3t-value", "EMPTY": ""]

    @Test(arguments: [EnvironmentSecret.Need.optional, .ifNamed, .required])
    func aSetVariableGivesItsValue(need: EnvironmentSecret.Need) throws {
        #expect(
            try EnvironmentSecret.value(of: "SET", key: "sink.api_key_env", need: need, environment: Self.environment)
                == "s3cr3t-value"
        )
    }

    @Test func anUnnamedVariableIsNoSecretUnlessOneIsRequired() throws {
        for name in [nil, ""] as [String?] {
            #expect(
                try EnvironmentSecret.value(of: name, key: "k", need: .optional, environment: Self.environment) == nil
            )
            #expect(
                try EnvironmentSecret.value(of: name, key: "k", need: .ifNamed, environment: Self.environment) == nil
            )
            let error = #expect(throws: SluiceError.self) {
                try EnvironmentSecret.value(
                    of: name,
                    key: "sink.api_key_env",
                    need: .required,
                    environment: Self.environment
                )
            }
            #expect(error?.code == .configuration)
            #expect(error?.message.hasPrefix("sink.api_key_env:") == true)
        }
    }

    /// Empty counts as unset; the message names the key and the variable.
    @Test(arguments: ["EMPTY", "UNSET"])
    func aNamedVariableMustBeSetUnlessTheSecretIsOptional(name: String) throws {
        #expect(try EnvironmentSecret.value(of: name, key: "k", need: .optional, environment: Self.environment) == nil)
        for need in [EnvironmentSecret.Need.ifNamed, .required] {
            let error = #expect(throws: SluiceError.self) {
                try EnvironmentSecret.value(
                    of: name,
                    key: "embed.api_key_env",
                    need: need,
                    environment: Self.environment
                )
            }
            #expect(error?.code == .configuration)
            #expect(error?.message == "embed.api_key_env: the environment variable \(name) is not set or empty")
        }
    }

}
