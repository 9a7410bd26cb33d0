import Foundation
import SluiceCore

/// The coordination store a pipeline file names (`generations.coordination`, or the URL in the variable
/// `generations.coordination_env` names): where a sharded deployment on Pinecone keeps its generation
/// records (docs/GENERATIONS.md, "Sharded deployments on Pinecone").
package enum CoordinationStore {
    /// The coordination store's URL as the pipeline file names it (`generations.coordination`, or the value of
    /// the variable `generations.coordination_env` names), and the key it was named by; nil when none is.
    /// - Throws: ``SluiceError/Code/configuration`` for a variable that is not set.
    package static func named(
        _ configuration: PipelineConfiguration,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> (url: String, key: String)? {
        let settings = configuration.generations
        if let written = settings.coordination { return (written, "generations.coordination") }
        guard let named = settings.coordinationEnv,
            let value = try EnvironmentSecret.value(
                of: named,
                key: "generations.coordination_env",
                need: .required,
                environment: environment
            )
        else { return nil }
        return (value, "generations.coordination_env (\(named))")
    }

    /// Whether `url` names an S3 bucket (`s3://bucket/prefix`).
    package static func isS3(_ url: String) -> Bool { url.lowercased().hasPrefix("s3://") }

    /// The PostgreSQL store at `url` (named by `key`), for the records of `deployment`.
    /// - Throws: as ``postgresPassword(url:key:_:environment:)`` does.
    package static func postgres(
        url: String,
        key: String,
        _ configuration: PipelineConfiguration,
        deployment: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PostgresCoordinationStore {
        PostgresCoordinationStore(
            url: url,
            password: try postgresPassword(url: url, key: key, configuration, environment: environment),
            deployment: deployment,
            maxRetries: configuration.sink.maxRetries
        )
    }

    /// Checks the PostgreSQL URL `url` (named by `key`), and reads its password.
    /// - Returns: the value of the variable `generations.password_env` names; nil when it names none.
    /// - Throws: ``SluiceError/Code/configuration`` for a URL that is not a PostgreSQL one, a password in
    ///   `generations.coordination` (passwords come from environment variables), or a password variable that
    ///   is not set. No message quotes the URL.
    package static func postgresPassword(
        url: String,
        key: String,
        _ configuration: PipelineConfiguration,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String? {
        try requirePostgres(url, key: key)
        if configuration.generations.coordination != nil, PgvectorSink.urlHasPassword(url) {
            throw SluiceError(
                .configuration,
                "generations.coordination must not contain a password: name an environment variable in generations.password_env (or put the whole URL in one named by generations.coordination_env)"
            )
        }
        return try EnvironmentSecret.value(
            of: configuration.generations.passwordEnv,
            key: "generations.password_env",
            need: .ifNamed,
            environment: environment
        )
    }

    /// Refuses anything but a PostgreSQL URI libpq can read (`postgresql://…`, `postgres://…`).
    private static func requirePostgres(_ url: String, key: String) throws {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") else {
            throw SluiceError(
                .configuration,
                "\(key): must be a PostgreSQL URL (postgresql://user@host:port/db) or an S3 bucket (s3://bucket/prefix)"
            )
        }
        guard PgvectorSink.connectionOptions(url) != nil else {
            throw SluiceError(.configuration, "\(key): a PostgreSQL URL that libpq cannot read")
        }
    }
}
