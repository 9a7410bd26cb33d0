import Foundation

extension PipelineConfiguration {
    /// `access`: who may read each record (docs/ACCESS.md). Enabled, the pipeline writes each record's
    /// readers as a list (``field``), and `sluice serve` restricts every search, ask and document read to
    /// what the caller's identity may read, inside the store's own query.
    public struct Access: Sendable, Hashable {
        /// Whether access control is on (`access.enabled`).
        public var isEnabled = false
        /// The metadata key that holds a record's readers (groups or principals), a list like `headings`.
        /// Set by `source.metadata`, a `source.metadata_from_path` capture of that name, or front matter.
        public var field = "access"
        /// Whether a document with no readers may be read by everyone (`default: allow`) or only by an
        /// unrestricted identity (`default: deny`, the default).
        public var allowsByDefault = false
        public init() {}

        /// The reader every identity counts as: records readable by everyone hold it
        /// (`access.default: allow`, or `access: ["*"]` in a document's metadata).
        public static let everyone = "*"
    }
}

extension PipelineConfiguration.Access {
    /// Reads `access.*` over the defaults: `enabled` (bool, `false`), `field` (text, `access`), `default`
    /// (`deny` or `allow`, `deny`).
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        isEnabled = try s.bool("enabled") ?? isEnabled
        field = try s.string("field") ?? field
        guard !field.isEmpty, !Self.builtInFields.contains(field) else {
            throw SluiceError(
                .configuration,
                "access.field: \(field.isEmpty ? "must not be empty" : "\(field) is a built-in field; name a metadata key such as access")"
            )
        }
        if let rule = try s.string("default", oneOf: ["deny", "allow"]) { allowsByDefault = rule == "allow" }
        try s.finish()
    }

    /// Fields the pipeline or the stores fill themselves.
    static let builtInFields: Set<String> = [
        SearchFilter.documentKeyField, SearchFilter.ordinalField, "headings", "folders", "page", "size", "mtime",
    ]

    /// A record's readers as stored: the value its metadata has under ``field`` (one text or a list),
    /// else ``everyone`` under `default: allow`; nil (no readers: only an unrestricted identity reads it)
    /// under `default: deny`.
    public func readers(of metadata: [String: MetadataValue]) -> [String]? {
        var readers: [String] = []
        switch metadata[field] {
        case .strings(let values)?: readers = values
        case let value? where !value.isEmpty: readers = [value.text]
        default: break
        }
        readers = readers.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if readers.isEmpty { return allowsByDefault ? [Self.everyone] : nil }
        var seen = Set<String>()
        return readers.filter { seen.insert($0).inserted }
    }

    /// What the pipeline's access rules add to the fingerprint of a document's metadata: empty when
    /// access control is off, so that pipelines without it keep their fingerprints.
    public var fingerprintText: String {
        isEnabled ? "access.field=\(field)\naccess.default=\(allowsByDefault ? "allow" : "deny")\n" : ""
    }
}

extension PipelineConfiguration.Access {
    /// Refuses access control on a store whose records cannot hold a list (``FilterLimits/holdsLists``):
    /// a record's readers are a list, so the access filter could not be expressed in the store's own
    /// query, and Sluice never filters results afterwards (docs/ACCESS.md). Nothing to refuse when access
    /// control is off.
    /// - Parameters:
    ///   - limits: The store's (``VectorSink/filterLimits``).
    ///   - store: The store's kind, for the message (`openai-vector-store`).
    /// - Throws: ``SluiceError/Code/configuration`` naming the store and why.
    public func requireExpressible(in limits: FilterLimits, store: String) throws {
        guard isEnabled, !limits.holdsLists else { return }
        throw SluiceError(
            .configuration,
            "access control is on, but \(store) cannot express the access filter in its own query: a record's readers (\(field)) are a list, and its records hold no lists; Sluice never filters results afterwards (docs/ACCESS.md). Use a store that holds lists, or turn access.enabled off"
        )
    }
}
