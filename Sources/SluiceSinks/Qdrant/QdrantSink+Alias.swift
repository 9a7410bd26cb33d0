import Foundation
import SluiceCore

/// The stable name outside readers query while Sluice switches index generations (docs/GENERATIONS.md):
/// a collection alias on the active generation's collection, moved by one `POST /collections/aliases`
/// whose actions (delete the alias, create it on the new collection) Qdrant applies atomically.
extension QdrantSink {
    /// Points the alias `alias` at this sink's collection, in one request.
    /// - Returns: false, changing nothing, when the collection does not exist yet (no run wrote it).
    /// - Throws: the store's errors (Qdrant refuses an alias named as an existing collection).
    @discardableResult
    package func publishAlias(_ alias: String) async throws -> Bool {
        guard try await collectionInfo() != nil else { return false }
        let body = AliasChange(actions: [
            .init(delete_alias: .init(alias_name: alias)),
            .init(create_alias: .init(collection_name: settings.collection, alias_name: alias)),
        ])
        try await http.send("POST", "/collections/aliases", json: try StoreHTTP.encode(body))
        return true
    }

    /// The collection the alias `alias` names; nil when there is no such alias.
    package func aliasTarget(_ alias: String) async throws -> String? {
        let listed = try await http.decode(Envelope<AliasList>.self, "GET", "/aliases")
        return listed.result.aliases.first { $0.alias_name == alias }?.collection_name
    }

    struct AliasChange: Encodable {
        var actions: [Action]
        struct Action: Encodable {
            var delete_alias: Delete? = nil
            var create_alias: Create? = nil
        }
        struct Delete: Encodable { var alias_name: String }
        struct Create: Encodable {
            var collection_name: String
            var alias_name: String
        }
    }

    struct AliasList: Decodable {
        var aliases: [Alias]
        struct Alias: Decodable {
            var alias_name: String
            var collection_name: String
        }
    }
}
