import Foundation
import SluiceCore
import Synchronization

/// Builds the store a pipeline file names, through the descriptor registered for its `sink.kind`: the
/// stores Sluice ships (``SinkDescriptor/standard``, the local one among them) and any a library user
/// registers (``register(_:)``). Nothing here lists kinds.
///
/// Each store's `Settings` maps the `sink` section onto itself (`init(section:…)`), so no default is
/// restated here: a descriptor only reads the secrets and required keys its store needs.
public enum SinkFactory {
    private static let registry = Mutex(
        Dictionary(uniqueKeysWithValues: SinkDescriptor.standard.map { ($0.kind, $0) })
    )

    /// Adds (or replaces) the descriptor of a kind of store, for every pipeline built after it in this
    /// process: `sink.kind: <its name>` then builds it, and `sluice check` and runs check it as they do
    /// the stores Sluice ships (``VectorSink/checkAvailability()``).
    public static func register(_ descriptor: SinkDescriptor) {
        registry.withLock { $0[descriptor.kind] = descriptor }
    }

    /// The descriptor registered for `kind`, if any.
    public static func descriptor(for kind: PipelineConfiguration.Sink.Kind) -> SinkDescriptor? {
        registry.withLock { $0[kind] }
    }

    /// Every kind that can be built, sorted by name.
    public static var kinds: [PipelineConfiguration.Sink.Kind] {
        registry.withLock { $0.keys.sorted { $0.rawValue < $1.rawValue } }
    }

    /// The descriptor of the pipeline's `sink.kind`.
    /// - Throws: ``SluiceError/Code/configuration`` for a kind nobody registered.
    public static func descriptor(of configuration: PipelineConfiguration) throws -> SinkDescriptor {
        let kind = configuration.sink.kind
        guard let descriptor = descriptor(for: kind) else {
            throw SluiceError(
                .configuration,
                "sink.kind: '\(kind)' is not supported (expected one of: \(kinds.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        return descriptor
    }

    /// The store the pipeline file names, its settings checked first.
    /// - Throws: ``SluiceError/Code/configuration`` for an unknown kind, a malformed or missing key, or a
    ///   secret missing from the environment.
    public static func make(_ configuration: PipelineConfiguration, readOnly: Bool) throws -> any VectorSink {
        let descriptor = try descriptor(of: configuration)
        try descriptor.validate(configuration.sink)
        return try descriptor.make(configuration, readOnly)
    }

    /// Creates the pipeline's store empty if its kind needs that before a reader starts (the local store:
    /// `sluice serve` on a new deployment serves before its first run).
    /// - Throws: ``SluiceError/Code/configuration`` for an unknown kind; the store's error if it cannot be
    ///   created.
    public static func createIfMissing(_ configuration: PipelineConfiguration) throws {
        try descriptor(of: configuration).createIfMissing?(configuration)
    }

    /// The keys set in the pipeline's `sink` section that its store does not read (sorted, as `sink.KEY`):
    /// a key meant for another store, which would otherwise be ignored without a word.
    public static func unreadKeys(_ configuration: PipelineConfiguration) -> [String] {
        guard let descriptor = descriptor(for: configuration.sink.kind) else { return [] }
        let read = descriptor.keys.union(SinkDescriptor.commonKeys)
        return configuration.notes.keysSet.filter { $0.hasPrefix("sink.") }.map { String($0.dropFirst(5)) }
            .filter { !$0.contains(".") && !read.contains($0) }.sorted().map { "sink.\($0)" }
    }

    /// A secret from the environment variable named in the pipeline file (never from the file itself).
    static func secret(_ variable: String?, key: String, need: EnvironmentSecret.Need) throws -> String? {
        try EnvironmentSecret.value(of: variable, key: key, need: need)
    }

    static func required(_ value: String?, key: String, kind: PipelineConfiguration.Sink.Kind) throws -> String {
        guard let value, !value.isEmpty else {
            throw SluiceError(.configuration, "\(key) is required for sink.kind \(kind.rawValue)")
        }
        return value
    }
}
