/// The bounds every filter keeps, and what a store can hold exactly in one (docs/USAGE.md, "Limits of
/// filters and queries").
///
/// Both readers of filters (``SearchFilter/init(parsing:)``, ``SearchFilter/init(json:)``) refuse a filter
/// past ``standard`` before any store sees it; a store narrows them through ``VectorSink/filterLimits``
/// (PostgreSQL cannot hold U+0000 in text), and ``SearchFilter/check(_:store:)`` refuses what it cannot
/// represent exactly, instead of searching for something else.
public struct FilterLimits: Sendable, Hashable {
    /// Conditions in one filter, each value of an `in` list counting as one.
    public var maxTerms = 1024
    /// Levels of nesting: parentheses in the text form, `$and`/`$or` in the JSON form.
    public var maxDepth = 32
    /// Whether the store's text holds U+0000 (NUL) exactly. PostgreSQL's `text` cannot, and libpq cuts a
    /// bound value at it (`"a\u{0}b"` would search for `"a"`).
    public var holdsNUL = true
    /// Whether a record's field can hold a list of texts that `in` matches element by element (a record's
    /// readers under access control, `headings`, `folders`). An OpenAI vector store's attributes cannot.
    public var holdsLists = true

    public init() {}

    /// The limits of every filter, whatever the store.
    public static let standard = FilterLimits()
}

extension SearchFilter {
    /// The number of conditions, each value of an `in` list counting as one (without recursion).
    public var termCount: Int {
        var count = 0
        var pending = [self]
        while let filter = pending.popLast() {
            switch filter {
            case .and(let parts), .or(let parts): pending.append(contentsOf: parts)
            case .oneOf(_, let values): count += values.count
            default: count += 1
            }
        }
        return count
    }

    /// Refuses, with a usage error naming the limit, a filter past `limits` or holding what the store
    /// cannot represent exactly. Walks the filter without recursion.
    /// - Parameters:
    ///   - limits: The store's (``VectorSink/filterLimits``) or ``FilterLimits/standard``.
    ///   - store: The store's kind, for the message (`pgvector`); nil for the limits of every store.
    /// - Throws: ``SluiceError/Code/usage``.
    public func check(_ limits: FilterLimits, store: String? = nil) throws {
        var terms = 0
        var pending = [(filter: self, depth: 1)]
        while let (filter, depth) = pending.popLast() {
            guard depth <= limits.maxDepth else {
                throw SearchFilter.error("nested deeper than \(limits.maxDepth) levels of and/or")
            }
            var texts: [String] = []
            switch filter {
            case .and(let parts), .or(let parts):
                pending.append(contentsOf: parts.map { ($0, depth + 1) })
            case .compare(let field, _, let value):
                terms += 1
                texts = [field] + Self.texts(of: value)
            case .oneOf(let field, let values):
                terms += values.count
                texts = [field] + values.flatMap(Self.texts(of:))
            case .prefix(let field, let prefix):
                terms += 1
                texts = [field, prefix]
            case .exists(let field):
                terms += 1
                texts = [field]
            }
            guard terms <= limits.maxTerms else {
                throw SearchFilter.error(
                    "more than \(limits.maxTerms) conditions (each value of an in list counts as one)"
                )
            }
            if !limits.holdsNUL, texts.contains(where: { $0.utf8.contains(0) }) {
                throw SluiceError(
                    .usage,
                    "filter: \(store ?? "this store") cannot hold U+0000 (NUL) in text, so it cannot match a field name or value holding one exactly; remove it"
                )
            }
        }
    }

    private static func texts(of value: MetadataValue) -> [String] {
        switch value {
        case .string(let text): return [text]
        case .strings(let values): return values
        default: return []
        }
    }
}
