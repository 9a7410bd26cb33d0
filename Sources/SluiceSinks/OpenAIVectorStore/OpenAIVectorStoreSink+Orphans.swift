import SluiceCore
import SluiceHTTP

extension OpenAIVectorStoreSink {
    /// The start of the name of every file the sink uploads for the vector store `storeID`: how a later run
    /// recognises its own files among the account's (the Files API keeps no metadata of its own on a file,
    /// only its name and purpose).
    static func filePrefix(storeID: String) -> String { "sluice-\(storeID)-" }

    /// The uploaded file's name: ``filePrefix(storeID:)``, then the document key's last component (OpenAI
    /// shows it in search results), as text.
    static func filename(_ documentKey: String, storeID: String) -> String {
        let last = documentKey.split(separator: "/").last.map(String.init) ?? "document"
        return filePrefix(storeID: storeID) + String(last.prefix(200)) + ".txt"
    }

    struct AccountFile: Decodable {
        var id: String
        var filename: String?
    }

    /// Deletes the files the sink uploaded for the store that the store does not hold: a file uploaded
    /// and not attached yet, or detached and not deleted yet, when a run was killed (kill -9, a lost
    /// machine) between the two requests. Nothing else can find them, and the account pays for their
    /// storage. The store's attachments are listed first, so that a file is judged against what the store
    /// holds now; the state lock keeps another run of this pipeline from uploading meanwhile.
    /// - Returns: the number of files deleted.
    @discardableResult
    func deleteOrphanedFiles(storeID: String) async throws -> Int {
        let attached = Set(try await storeFiles(storeID: storeID).map(\.id))
        let prefix = Self.filePrefix(storeID: storeID)
        var orphans: [String] = []
        var after: String?
        repeat {
            // purpose=assistants: the only purpose the sink uploads with; 10,000 is the API's largest page.
            var path = "/files?purpose=assistants&limit=10000&order=asc"
            if let after { path += "&after=\(StoreHTTP.segment(after))" }
            let page = try await http.decode(Page<AccountFile>.self, "GET", path)
            for file in page.data where file.filename?.hasPrefix(prefix) == true && !attached.contains(file.id) {
                orphans.append(file.id)
            }
            after = page.hasMore == true ? page.lastID ?? page.data.last?.id : nil
        } while after != nil
        for id in orphans {
            try await http.send("DELETE", "/files/\(StoreHTTP.segment(id))", accepting: [404])
        }
        return orphans.count
    }
}
