import Foundation
import SluiceCore

extension Pipeline {
    /// The run's source (`source.kind`), seeing only this run's shard.
    /// - Parameter preview: for a dry run or `sluice check`: the source writes nothing (a web source's
    ///   changed pages are not downloaded into the state's `fetch/`).
    /// - Throws: ``SluiceError/Code/configuration`` for a kind Sluice cannot read.
    func makeSource(preview: Bool = false) throws -> any DocumentSource {
        switch configuration.source.kind {
        case .folder:
            return SourceScanner(configuration: configuration.source, root: sourceRoot, shard: options.shard)
        case .s3:
            return try S3Source(
                configuration: configuration.source,
                shard: options.shard,
                fetchDirectory: stateDirectory.appendingPathComponent("fetch"),
                accessField: configuration.access.isEnabled ? configuration.access.field : nil
            )
        case .http:
            return WebSource(
                configuration: configuration.source,
                shard: options.shard,
                fetchDirectory: stateDirectory.appendingPathComponent("fetch"),
                maxBytes: Int(configuration.extract.maxFileMB * 1_048_576),
                preview: preview
            )
        default:
            throw SluiceError(
                .configuration,
                "source.kind \(configuration.source.kind) is not a source Sluice can read"
            )
        }
    }
}
