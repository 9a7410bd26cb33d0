import Foundation
import SluiceCore

/// The coordination store a pipeline file names (`generations.coordination`, or the URL in the variable
/// `generations.coordination_env` names): where a sharded deployment on Pinecone keeps its generation
/// records (docs/GENERATIONS.md, "Sharded deployments on Pinecone").
package enum CoordinationStore {
    /// The store `configuration.generations` names, for the records of `deployment`; nil when it names none.
    /// - Throws: ``SluiceError/Code/configuration`` for a URL that is not a PostgreSQL one, a password in
    ///   `generations.coordination` (passwords come from environment variables), or a variable that is not
    ///   set. No message quotes the URL.
    package static func make(
        _ configuration: PipelineConfiguration,
        deployment: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PostgresCoordinationStore? {
        let settings = configuration.generations
        let url: String
        if let written = settings.coordination {
            try requirePostgres(written, key: "generations.coordination")
            if PgvectorSink.urlHasPassword(written) {
                throw SluiceError(
                    .configuration,
                    "generations.coordination must not contain a password: name an environment variable in generations.password_env (or put the whole URL in one named by generations.coordination_env)"
                )
            }
            url = written
        } else if let named = settings.coordinationEnv {
            guard
                let value = try EnvironmentSecret.value(
                    of: named,
                    key: "generations.coordination_env",
                    need: .required,
                    environment: environment
                )
            else { return nil }
            try requirePostgres(value, key: "generations.coordination_env (\(named))")
            url = value
        } else {
            return nil
        }
        let password = try EnvironmentSecret.value(
            of: settings.passwordEnv,
            key: "generations.password_env",
            need: .ifNamed,
            environment: environment
        )
        return PostgresCoordinationStore(
            url: url,
            password: password,
            deployment: deployment,
            maxRetries: configuration.sink.maxRetries
        )
    }

    /// Refuses anything but a PostgreSQL URI libpq can read (`postgresql://…`, `postgres://…`).
    private static func requirePostgres(_ url: String, key: String) throws {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") else {
            let s3 = lowered.hasPrefix("s3://")
            throw SluiceError(
                .configuration,
                s3
                    ? "\(key): an S3 coordination store (s3://…) is not built yet: name a PostgreSQL database (postgresql://user@host:port/db)"
                    : "\(key): must be a PostgreSQL URL (postgresql://user@host:port/db)"
            )
        }
        guard PgvectorSink.connectionOptions(url) != nil else {
            throw SluiceError(.configuration, "\(key): a PostgreSQL URL that libpq cannot read")
        }
    }
}
