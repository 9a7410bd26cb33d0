/// Who a search, ask or document read is made for (docs/ACCESS.md): a principal and its groups, or an
/// unrestricted identity (the operator's bearer token, the CLI without `--as`), which reads every record.
///
/// A restricted identity reads the records whose readers (``PipelineConfiguration/Access/field``) name its
/// principal, one of its groups, or ``PipelineConfiguration/Access/everyone``: a condition the store
/// evaluates inside its own query (``filter(_:)``), never applied to results afterwards.
public struct AccessIdentity: Sendable, Hashable {
    /// The principal's name (`alice`); nil for an anonymous caller.
    public var principal: String?
    public var groups: [String]
    /// Reads every record (no access filter).
    public var isUnrestricted: Bool

    public init(principal: String?, groups: [String]) {
        self.principal = principal
        self.groups = groups
        isUnrestricted = false
    }

    /// The identity that reads everything.
    public static let unrestricted: AccessIdentity = {
        var identity = AccessIdentity(principal: nil, groups: [])
        identity.isUnrestricted = true
        return identity
    }()

    /// The readers this identity counts as: its principal, its groups and ``PipelineConfiguration/Access/everyone``.
    public var readers: [String] {
        var seen = Set<String>()
        return ([principal].compactMap { $0 } + groups + [PipelineConfiguration.Access.everyone])
            .filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// The condition a record must meet for this identity under `access`: nil when nothing is restricted
    /// (access control off, or an unrestricted identity).
    public func filter(_ access: PipelineConfiguration.Access) -> SearchFilter? {
        guard access.isEnabled, !isUnrestricted else { return nil }
        return .oneOf(access.field, readers.map(MetadataValue.string))
    }

    /// `filter` restricted to what this identity may read under `access` (both must hold).
    /// - Throws: ``SluiceError/Code/usage`` when a restricted identity's filter names the readers field:
    ///   results leave a record's readers out (they name other principals and groups), and a filter on
    ///   them would give them back one condition at a time (`access = "board"`, a `$prefix` walk over
    ///   principals' names; session 47's campaign).
    public func restricting(_ filter: SearchFilter?, _ access: PipelineConfiguration.Access) throws -> SearchFilter? {
        guard let own = self.filter(access) else { return filter }
        guard let filter else { return own }
        guard !filter.fields.contains(access.field) else {
            throw SluiceError(
                .usage,
                "a filter on \(access.field) (the records' readers) is the operator's: this identity's results are already restricted to what it may read"
            )
        }
        return .and([own, filter])
    }
}
