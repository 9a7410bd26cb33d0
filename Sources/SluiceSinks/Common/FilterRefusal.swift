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
    /// The folder of a prefix on `document_key` that names one (`reports/2026/`): the stores without
    /// prefix matching answer it through the built-in `folders` list, which holds every folder above a
    /// document.
    /// - Throws: the refusal for any other prefix (`store` names the store in it).
    func folderPrefix(in store: String) throws -> String {
        guard case .prefix(let field, let prefix) = self else { preconditionFailure("not a prefix: \(self)") }
        guard field == SearchFilter.documentKeyField, prefix.hasSuffix("/"), prefix.count > 1 else {
            throw SluiceError.filterRefused(
                store,
                "\(self)",
                "\(store) has no prefix match; only document_key ^= \"folder/\" (ending in /) is supported, through the folders list"
            )
        }
        return prefix
    }
}

extension SearchRequest {
    /// Refuses every ranking but `vector` (for the stores without a keyword index).
    func requireVectorMode(_ store: String) throws {
        guard mode == .vector else {
            throw SluiceError(.usage, "\(store) has no \(mode.rawValue) search; use --mode vector")
        }
    }
}
