import SluiceCore

/// How a search's filter restricts readers by access control's field: the part of it a store can apply before it
/// reads a record (the local store's tables of readers, `LocalAccessLabels` and `LocalKeywordAccess`; pgvector's
/// keyword statistics), so that what a search reads and the scores it gives depend only on what its caller may read.
/// `serve` ANDs `field in (PRINCIPAL, GROUP…, "*")` into a restricted identity's filter: always ``conditions(_:)``.
enum AccessRestriction: Equatable {
    /// The filter does not name the field.
    case none
    /// The filter is these conditions, each naming the field alone, and others: a record is readable only when it
    /// meets all of these (the others are checked on each record read).
    case conditions([SearchFilter])
    /// The filter names the field otherwise (inside an `or`, say): no table can tell which records it reads.
    case inseparable

    /// How `filter` restricts readers by `field` (nil: access control is off): the conditions of its top-level
    /// `and` (nested `and`s flattened) that name `field` alone. `document_key` and `ordinal` are not metadata and are
    /// never such a field.
    init(_ filter: SearchFilter, field: String?) {
        guard let field, filter.fields.contains(field) else {
            self = .none
            return
        }
        guard field != SearchFilter.documentKeyField, field != SearchFilter.ordinalField else {
            self = .inseparable
            return
        }
        func conjuncts(_ filter: SearchFilter) -> [SearchFilter] {
            if case .and(let parts) = filter { return parts.flatMap(conjuncts) }
            return [filter]
        }
        let own = conjuncts(filter).filter { $0.fields == [field] }
        self = own.isEmpty ? .inseparable : .conditions(own)
    }
}
