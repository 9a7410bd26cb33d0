import SluiceCore

extension SluiceError {
    /// A filter construct a store cannot express: refused before the search, never applied after its top-k.
    /// - Parameters:
    ///   - store: the store's kind (`qdrant`).
    ///   - construct: the part of the filter refused, in the filter language.
    ///   - instead: what to do instead.
    static func filterRefused(_ store: String, _ construct: String, _ instead: String) -> SluiceError {
        SluiceError(.usage, "\(store) cannot filter on \(construct): \(instead)")
    }
}

extension SearchFilter {
    /// A prefix on `document_key` that names a folder (`reports/2026/`): the stores without prefix matching
    /// answer it through the built-in `folders` list, which holds every folder above a document.
    var folderPrefix: String? {
        guard case .prefix(let field, let prefix) = self, field == SearchFilter.documentKeyField,
            prefix.hasSuffix("/"), prefix.count > 1
        else { return nil }
        return prefix
    }
}
