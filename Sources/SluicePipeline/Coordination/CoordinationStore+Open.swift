import Foundation
import SluiceCore
import SluiceSinks
import Synchronization

extension CoordinationStore {
    /// The stores opened in this process, by what they were opened with (URL, secrets, deployment, settings).
    private static let opened = Mutex<[String: any CoordinationRecordStore]>([:])

    /// The coordination store `configuration.generations` names, for the records of `deployment`: a
    /// PostgreSQL table (``PostgresCoordinationStore``) or an S3 bucket (``S3CoordinationStore``); nil when
    /// it names none.
    ///
    /// One store per location and settings in a process: `sluice serve` opens the deployment once a second,
    /// and the same store (its PostgreSQL connection, its S3 client) serves every poll, as
    /// ``SeenRecordVersions/of(_:)`` keeps one memory per location.
    /// - Throws: ``SluiceError/Code/configuration`` for a URL that is neither, a password in
    ///   `generations.coordination`, a variable that is not set, an S3 URL without a bucket, or no S3
    ///   credentials. No message quotes the URL.
    static func open(
        _ configuration: PipelineConfiguration,
        deployment: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> (any CoordinationRecordStore)? {
        guard let (url, key) = try named(configuration, environment: environment) else { return nil }
        if isS3(url) {
            guard let (bucket, prefix) = S3CoordinationStore.bucketAndPrefix(url) else {
                throw SluiceError(.configuration, "\(key): an S3 coordination store is named s3://bucket/prefix")
            }
            let settings = configuration.generations.s3
            let credentials = try S3Credentials.resolve(settings, section: "generations.s3", environment: environment)
            let identity = [
                "s3", bucket, prefix, deployment, settings.endpoint ?? "",
                S3Client.region(settings, environment: environment),
                "\(settings.pathStyle.map { "\($0)" } ?? "")", credentials.accessKey, credentials.secretKey,
                credentials.sessionToken ?? "", "\(settings.maxRetries)", "\(settings.timeoutSeconds)",
            ]
            return reused(identity) {
                S3CoordinationStore(
                    bucket: bucket,
                    prefix: prefix,
                    settings: settings,
                    credentials: credentials,
                    deployment: deployment
                )
            }
        }
        let password = try postgresPassword(url: url, key: key, configuration, environment: environment)
        let maxRetries = configuration.sink.maxRetries
        return reused(["postgres", url, password ?? "", deployment, "\(maxRetries)"]) {
            PostgresCoordinationStore(url: url, password: password, deployment: deployment, maxRetries: maxRetries)
        }
    }

    /// The store opened with `identity` before, else the one `make` makes (kept for the next call).
    private static func reused(
        _ identity: [String],
        _ make: () -> any CoordinationRecordStore
    ) -> any CoordinationRecordStore {
        let key = identity.joined(separator: "\u{0}")
        return opened.withLock { stores in
            if let known = stores[key] { return known }
            let store = make()
            stores[key] = store
            return store
        }
    }
}
