import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

extension OpenAIVectorStoreSink {
    /// Finds the vector store, or creates the one named `sink.collection`. The embedder is OpenAI's own
    /// (the pipeline's identity only records that the store embeds).
    public func prepare(embedder: EmbedderIdentity) async throws {
        if let store = try await describeStore() {
            // Files a killed run uploaded but never attached (or detached but never deleted).
            try await deleteOrphanedFiles(storeID: store.id)
            return
        }
        struct Create: Encodable {
            var name: String
            var metadata = ["created_by": "sluice"]
        }
        let created = try await http.decode(
            StoreObject.self,
            "POST",
            "/vector_stores",
            json: try StoreHTTP.encode(Create(name: settings.storeName))
        )
        state.withLock { $0 = State(storeID: created.id, files: [:]) }
    }

    struct StoreFile: Decodable {
        var id: String
        var status: String?
        var attributes: [String: MetadataValue]?
        var lastError: LastError?
        struct LastError: Decodable {
            var code: String?
            var message: String?
        }
        enum CodingKeys: String, CodingKey {
            case id, status, attributes
            case lastError = "last_error"
        }
    }

    /// Every file attached to the store, listed page by page.
    func storeFiles(storeID: String) async throws -> [StoreFile] {
        var files: [StoreFile] = []
        var after: String?
        repeat {
            var path = "/vector_stores/\(StoreHTTP.segment(storeID))/files?limit=100&order=asc"
            if let after { path += "&after=\(StoreHTTP.segment(after))" }
            let page = try await http.decode(Page<StoreFile>.self, "GET", path)
            files += page.data
            after = page.hasMore == true ? page.lastID ?? page.data.last?.id : nil
        } while after != nil
        return files
    }

    /// Record id → file id of every file attached to the store (cached for the sink's life unless
    /// `refresh`), with the status of those not processed yet in `state.unprocessed`.
    func files(refresh: Bool = false) async throws -> [VectorID: String] {
        if !refresh, let known = state.withLock({ $0.files }) { return known }
        guard let storeID = try await storeID() else { return [:] }
        var files: [VectorID: String] = [:]
        var unprocessed: [String: String] = [:]
        for file in try await storeFiles(storeID: storeID) {
            let id = file.attributes?[OpenAIVectorStoreAttributes.idKey]?.text ?? file.id
            files[VectorID(rawValue: id)] = file.id
            if let status = file.status, status != "completed" { unprocessed[file.id] = status }
        }
        let listed = files
        let unsettled = unprocessed
        state.withLock {
            $0.files = listed
            $0.unprocessed = unsettled
        }
        return listed
    }

    /// Uploads and attaches each record not attached yet (a record id is its text's: one already there
    /// is the same file), a few at a time, each waited for until OpenAI has processed it.
    public func upsert(_ records: [VectorRecord]) async throws {
        guard !records.isEmpty else { return }
        let storeID = try await requireStoreID()
        let known = try await files()
        let unprocessed = state.withLock { $0.unprocessed }
        var pending: [VectorRecord] = []
        for record in records {
            guard let fileID = known[record.id] else {
                pending.append(record)
                continue
            }
            switch unprocessed[fileID] {
            case nil: continue
            case "in_progress":
                // Attached by a run killed before it was processed: waited for as one just attached.
                try await deletingOnFailure(fileID: fileID) {
                    try await waitUntilProcessed(fileID: fileID, record: record, storeID: storeID)
                }
            default:
                // Failed or cancelled: replaced by a new upload.
                try await remove(fileID: fileID, storeID: storeID)
                pending.append(record)
            }
            state.withLock {
                $0.unprocessed[fileID] = nil
                if unprocessed[fileID] != "in_progress" { $0.files?[record.id] = nil }
            }
        }
        // Many records: uploaded, then attached by file batches (fewer requests); one: attached alone.
        if pending.count > 1 {
            try await addInBatches(pending, to: storeID)
        } else if let record = pending.first {
            let fileID = try await add(record, to: storeID)
            state.withLock { $0.files?[record.id] = fileID }
        }
    }

    /// One record as a processed file of the store: uploaded, attached with its attributes, polled.
    func add(_ record: VectorRecord, to storeID: String) async throws -> String {
        let fileID = try await uploadFile(record, storeID: storeID)
        try await deletingOnFailure(fileID: fileID) {
            try await attach(fileID: fileID, record: record, storeID: storeID)
        }
        return fileID
    }

    /// Uploads a record's text as a file named for the store (``filename(_:storeID:)``).
    func uploadFile(_ record: VectorRecord, storeID: String) async throws -> String {
        let text = Array(record.text.utf8)
        guard text.count <= Self.maxFileBytes else {
            throw SluiceError(
                .sinkFailed,
                "openai-vector-store: \(record.documentKey) is \(text.count) bytes of text, above OpenAI's 512 MB per file"
            )
        }
        var form = MultipartForm()
        form.field("purpose", "assistants")
        form.file(
            "file",
            filename: Self.filename(record.documentKey, storeID: storeID),
            contentType: "text/plain",
            data: text
        )
        form.finish()
        struct Uploaded: Decodable { var id: String }
        let uploaded = try Self.decode(
            Uploaded.self,
            try await http.send("POST", "/files", body: form.body, contentType: form.contentType)
        )
        CrashPoint.reach("openai-vector-store.uploaded")
        return uploaded.id
    }

    /// OpenAI's static chunking strategy from `sink.chunking_max_tokens` (and its overlap); nil: `auto`.
    var chunkingStrategy: JSONValue? {
        settings.chunkingMaxTokens.map { size in
            JSONValue.object([
                "type": .value(.string("static")),
                "static": .object([
                    "max_chunk_size_tokens": .value(.int(size)),
                    "chunk_overlap_tokens": .value(.int(settings.chunkingOverlapTokens ?? min(400, size / 2))),
                ]),
            ])
        }
    }

    /// A file as attached to the store: its record's attributes and the chunking strategy (one attach
    /// request's body, and one entry of a file batch's `files`).
    struct FileEntry: Encodable {
        var fileID: String
        var attributes: [String: MetadataValue]
        var chunkingStrategy: JSONValue?
        enum CodingKeys: String, CodingKey {
            case fileID = "file_id"
            case attributes
            case chunkingStrategy = "chunking_strategy"
        }
    }

    func entry(fileID: String, record: VectorRecord) -> FileEntry {
        FileEntry(
            fileID: fileID,
            attributes: OpenAIVectorStoreAttributes.encode(record).attributes,
            chunkingStrategy: chunkingStrategy
        )
    }

    /// Runs `body`; when it throws, deletes the file (leaving none behind that no store holds: what a
    /// failed request cannot delete, the next run's ``deleteOrphanedFiles(storeID:)`` does).
    func deletingOnFailure(fileID: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            _ = try? await http.send("DELETE", "/files/\(StoreHTTP.segment(fileID))", accepting: [404])
            throw error
        }
    }

    func attach(fileID: String, record: VectorRecord, storeID: String) async throws {
        let path = "/vector_stores/\(StoreHTTP.segment(storeID))/files"
        let file = try await http.decode(
            StoreFile.self,
            "POST",
            path,
            json: try StoreHTTP.encode(entry(fileID: fileID, record: record))
        )
        CrashPoint.reach("openai-vector-store.attached")
        try await waitUntilProcessed(fileID: fileID, record: record, storeID: storeID, answer: file)
    }

    /// Polls an attached file until OpenAI has processed it, within `sink.processing_timeout_seconds`; a
    /// file that failed is detached and the write fails with OpenAI's reason.
    /// - Parameter answer: the file as last seen (nil: read it first).
    func waitUntilProcessed(
        fileID: String,
        record: VectorRecord,
        storeID: String,
        answer: StoreFile? = nil
    ) async throws {
        let path = "/vector_stores/\(StoreHTTP.segment(storeID))/files"
        let clock = ContinuousClock()
        let deadline = clock.now + settings.processingTimeout
        var pause = Duration.milliseconds(100)
        var file: StoreFile
        if let answer {
            file = answer
        } else {
            file = try await http.decode(StoreFile.self, "GET", "\(path)/\(StoreHTTP.segment(fileID))")
        }
        while file.status == "in_progress" {
            guard clock.now < deadline else {
                throw SluiceError(
                    .sinkUnavailable,
                    "openai-vector-store: \(record.documentKey) still being processed after \(settings.processingTimeout) (sink.processing_timeout_seconds)"
                )
            }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
            file = try await http.decode(StoreFile.self, "GET", "\(path)/\(StoreHTTP.segment(fileID))")
        }
        guard file.status == "completed" else {
            _ = try? await http.send("DELETE", "\(path)/\(StoreHTTP.segment(fileID))", accepting: [404])
            let reason = [file.lastError?.code, file.lastError?.message].compactMap { $0 }.joined(separator: ": ")
            throw SluiceError(
                .sinkFailed,
                "openai-vector-store: \(record.documentKey): file processing \(file.status ?? "ended") (\(reason.isEmpty ? "no reason given" : reason))"
            )
        }
    }

    public func delete(_ ids: [VectorID]) async throws {
        guard !ids.isEmpty, let storeID = try await storeID() else { return }
        let known = try await files()
        for id in ids {
            guard let fileID = known[id] else { continue }
            try await remove(fileID: fileID, storeID: storeID)
            state.withLock { _ = $0.files?.removeValue(forKey: id) }
        }
    }

    /// Detaches a file from the store and deletes it (either already gone is fine).
    func remove(fileID: String, storeID: String) async throws {
        try await http.send(
            "DELETE",
            "/vector_stores/\(StoreHTTP.segment(storeID))/files/\(StoreHTTP.segment(fileID))",
            accepting: [404]
        )
        CrashPoint.reach("openai-vector-store.detached")
        try await http.send("DELETE", "/files/\(StoreHTTP.segment(fileID))", accepting: [404])
    }

    public func count() async throws -> Int { try await files(refresh: true).count }

    public func listIDs() async throws -> Set<VectorID>? { Set(try await files(refresh: true).keys) }

    public func existing(_ ids: [VectorID]) async throws -> Set<VectorID> {
        Set(try await files(refresh: true).keys).intersection(ids)
    }

    public func search(_ vector: [Float], k: Int) async throws -> [SearchHit] {
        throw SluiceError(.usage, "\(name) is searched by the query's text, not a vector")
    }

    /// The files' parsed text, as OpenAI holds it (`GET /vector_stores/{id}/files/{file}/content`).
    public func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
        guard let storeID = try await storeID() else { return }
        struct Content: Decodable {
            var data: [Part]?
            var content: [Part]?
            var attributes: [String: MetadataValue]?
            struct Part: Decodable { var text: String? }
        }
        let path = "/vector_stores/\(StoreHTTP.segment(storeID))/files"
        var records: [VectorRecord] = []
        for (_, fileID) in try await files(refresh: true) {
            let file = try await http.decode(StoreFile.self, "GET", "\(path)/\(StoreHTTP.segment(fileID))")
            let content = try await http.decode(Content.self, "GET", "\(path)/\(StoreHTTP.segment(fileID))/content")
            let text = (content.data ?? content.content ?? []).compactMap(\.text).joined(separator: "\n\n")
            records.append(
                OpenAIVectorStoreAttributes.record(attributes: file.attributes ?? [:], text: text, fileID: fileID)
            )
        }
        for record in records.sorted(by: { $0.id < $1.id }) { try body(record) }
    }

    /// Detaches and deletes every file of the store (the store itself is kept).
    public func removeAll() async throws {
        guard let storeID = try await storeID() else { return }
        for (_, fileID) in try await files(refresh: true) { try await remove(fileID: fileID, storeID: storeID) }
        state.withLock {
            $0.files = [:]
            $0.unprocessed = [:]
        }
        try await deleteOrphanedFiles(storeID: storeID)
    }

    /// Deletes every file, then the store itself when the sink created it by name (a store named by
    /// `sink.vector_store_id` is someone else's to delete: it is left, empty).
    public func drop() async throws {
        try await removeAll()
        guard settings.vectorStoreID == nil, let storeID = try await storeID() else { return }
        try await http.send("DELETE", "/vector_stores/\(StoreHTTP.segment(storeID))", accepting: [404])
        state.withLock { $0 = State() }
    }

    public func info() async throws -> SinkInfo {
        guard let store = try await describeStore() else { return SinkInfo(name: name, exists: false, count: 0) }
        var details = ["vector store": store.id, "embedded by": "OpenAI (the store chunks and embeds each file)"]
        if let bytes = store.usageBytes { details["usage bytes"] = String(bytes) }
        if let counts = store.fileCounts {
            details["files"] =
                "\(counts.completed ?? 0) completed, \(counts.inProgress ?? 0) in progress, \(counts.failed ?? 0) failed"
        }
        return SinkInfo(name: name, count: try await count(), details: details)
    }
}
