import SluiceCore
import SluiceHTTP
import Synchronization

extension OpenAIVectorStoreSink {
    /// Files per file batch: the API's limit.
    static let maxBatchFiles = 2000

    struct FileBatch: Decodable {
        var id: String
        var status: String?
        var fileCounts: StoreObject.FileCounts?
        enum CodingKeys: String, CodingKey {
            case id, status
            case fileCounts = "file_counts"
        }
    }

    /// Records as processed files of the store, attached by file batches (`POST
    /// /vector_stores/{id}/file_batches`, each file with its own attributes and chunking strategy, up to
    /// 2,000 a batch): one request and one poll for many files, where attaching each costs a request and
    /// a poll of its own. The files are uploaded a few at a time first; a batch is polled until OpenAI has
    /// processed it, within `sink.processing_timeout_seconds`, and cancelled past it.
    func addInBatches(_ records: [VectorRecord], to storeID: String) async throws {
        var start = 0
        while start < records.count {
            let slice = Array(records[start..<min(start + Self.maxBatchFiles, records.count)])
            start += slice.count
            let uploaded = try await upload(slice, to: storeID)
            let settled = try await attachBatch(uploaded, storeID: storeID)
            state.withLock {
                for (record, fileID) in settled { $0.files?[record.id] = fileID }
            }
        }
    }

    /// Uploads each record's file, `settings.parallelism` at a time; on an error, deletes those uploaded.
    func upload(_ records: [VectorRecord], to storeID: String) async throws -> [(VectorRecord, String)] {
        var uploaded: [(VectorRecord, String)] = []
        do {
            var next = 0
            try await withThrowingTaskGroup(of: (VectorRecord, String).self) { group in
                func start() {
                    guard next < records.count else { return }
                    let record = records[next]
                    next += 1
                    group.addTask { (record, try await self.uploadFile(record, storeID: storeID)) }
                }
                for _ in 0..<max(1, settings.parallelism) { start() }
                while let done = try await group.next() {
                    uploaded.append(done)
                    start()
                }
            }
        } catch {
            for (_, fileID) in uploaded {
                _ = try? await http.send("DELETE", "/files/\(StoreHTTP.segment(fileID))", accepting: [404])
            }
            throw error
        }
        return uploaded
    }

    /// Attaches uploaded files by one file batch and waits for it. Returns the files processed; files
    /// whose processing failed (or that were cancelled) are detached and deleted, and the write fails with
    /// their reasons after the processed ones are recorded.
    func attachBatch(_ files: [(VectorRecord, String)], storeID: String) async throws -> [(VectorRecord, String)] {
        struct Create: Encodable { var files: [FileEntry] }
        let path = "/vector_stores/\(StoreHTTP.segment(storeID))/file_batches"
        let entries = files.map { record, fileID in entry(fileID: fileID, record: record) }
        var batch: FileBatch
        do {
            batch = try await http.decode(
                FileBatch.self,
                "POST",
                path,
                json: try StoreHTTP.encode(Create(files: entries))
            )
        } catch {
            for (_, fileID) in files {
                _ = try? await http.send("DELETE", "/files/\(StoreHTTP.segment(fileID))", accepting: [404])
            }
            throw error
        }
        CrashPoint.reach("openai-vector-store.attached")
        let batchPath = "\(path)/\(StoreHTTP.segment(batch.id))"
        let clock = ContinuousClock()
        let deadline = clock.now + settings.processingTimeout
        var pause = Duration.milliseconds(100)
        while batch.status == "in_progress" || batch.status == "cancelling" {
            guard clock.now < deadline else {
                // Cancelled files stay attached as `cancelled`: the next run replaces them.
                _ = try? await http.send("POST", "\(batchPath)/cancel", json: Array("{}".utf8))
                throw SluiceError(
                    .sinkUnavailable,
                    "openai-vector-store: a file batch of \(files.count) documents still being processed after \(settings.processingTimeout) (sink.processing_timeout_seconds)"
                )
            }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
            batch = try await http.decode(FileBatch.self, "GET", batchPath)
        }
        let counts = batch.fileCounts
        guard batch.status != "completed" || (counts?.failed ?? 0) + (counts?.cancelled ?? 0) > 0 else {
            return files
        }
        // Which files did not make it: listed by the batch, detached and deleted.
        var unsettled: [String: StoreFile] = [:]
        for filter in ["failed", "cancelled", "in_progress"] {
            var after: String?
            repeat {
                var page = "\(batchPath)/files?filter=\(filter)&limit=100&order=asc"
                if let after { page += "&after=\(StoreHTTP.segment(after))" }
                let listed = try await http.decode(Page<StoreFile>.self, "GET", page)
                for file in listed.data { unsettled[file.id] = file }
                after = listed.hasMore == true ? listed.lastID ?? listed.data.last?.id : nil
            } while after != nil
        }
        var reasons: [String] = []
        var settled: [(VectorRecord, String)] = []
        for (record, fileID) in files {
            guard let file = unsettled[fileID] else {
                settled.append((record, fileID))
                continue
            }
            try await remove(fileID: fileID, storeID: storeID)
            let reason = [file.lastError?.code, file.lastError?.message].compactMap { $0 }.joined(separator: ": ")
            reasons.append(
                "\(record.documentKey): \(file.status ?? "ended") (\(reason.isEmpty ? "no reason given" : reason))"
            )
        }
        state.withLock {
            for (record, fileID) in settled { $0.files?[record.id] = fileID }
        }
        throw SluiceError(
            .sinkFailed,
            "openai-vector-store: file processing did not complete for \(reasons.count) of \(files.count) documents: \(reasons.prefix(5).joined(separator: "; "))"
        )
    }
}
