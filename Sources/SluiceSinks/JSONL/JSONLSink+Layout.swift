import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

extension JSONLSink {
    /// The files of a JSONL store and the blocking I/O on them (called on the sink's executor).
    struct Layout: Sendable {
        /// The `.jsonl` file, or the folder of shards.
        let root: URL
        let shards: Int
        let isFolder: Bool

        init(path: URL, shards: Int) {
            // A symbolic link (the one index generations keep to the active generation, docs/GENERATIONS.md) is
            // followed once, here: every file is then read from the same generation, even if the link is
            // switched meanwhile.
            root = Self.followingLink(path)
            isFolder = path.pathExtension != "jsonl"
            self.shards = isFolder ? max(1, shards) : 1
        }

        /// `path`, or the file or folder it links to when it is a symbolic link.
        static func followingLink(_ path: URL) -> URL {
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: path.path) else {
                return path
            }
            return URL(fileURLWithPath: destination, relativeTo: path.deletingLastPathComponent()).standardizedFileURL
        }

        var journal: URL {
            isFolder ? root.appendingPathComponent("journal.jsonl") : URL(fileURLWithPath: root.path + ".journal")
        }
        var meta: URL {
            isFolder ? root.appendingPathComponent("meta.json") : URL(fileURLWithPath: root.path + ".meta.json")
        }
        var dataFiles: [URL] {
            isFolder ? (0..<shards).map { root.appendingPathComponent(String(format: "part-%05d.jsonl", $0)) } : [root]
        }

        /// The shard of an id: its first 8 hex digits modulo the shard count.
        func shard(of id: VectorID) -> Int {
            Int(UInt32(id.rawValue.prefix(8), radix: 16) ?? 0) % shards
        }

        struct Loaded {
            var lines: [VectorID: Data] = [:]
            var embedder: String?
            var journalFound = false
        }

        /// Reads every data file (of any shard count found), then replays the journal.
        func load() throws -> Loaded {
            var loaded = Loaded()
            let decoder = JSONDecoder()
            var files = dataFiles
            if isFolder, let names = try? FileManager.default.contentsOfDirectory(atPath: root.path) {
                files = names.filter { $0.hasPrefix("part-") && $0.hasSuffix(".jsonl") }.sorted().map {
                    root.appendingPathComponent($0)
                }
            }
            for file in files where FileManager.default.fileExists(atPath: file.path) {
                try forEachLine(file) { line in
                    let record = try decoder.decode(VectorRecord.self, from: line)
                    loaded.lines[record.id] = line
                }
            }
            if FileManager.default.fileExists(atPath: journal.path) {
                loaded.journalFound = true
                try forEachLine(journal) { line in
                    // A line cut short by a crash: its write was never acknowledged (the next append cuts it off).
                    guard let entry = try? decoder.decode(JournalEntry.self, from: line) else { return }
                    switch entry.op {
                    case "upsert":
                        if let record = entry.record { loaded.lines[record.id] = try JSONLSink.encode(record) }
                    case "delete":
                        for id in entry.ids ?? [] { loaded.lines[id] = nil }
                    case "clear":
                        loaded.lines.removeAll()
                    default:
                        throw SluiceError(.sinkFailed, "unknown operation '\(entry.op)' in \(journal.path)")
                    }
                }
            }
            if let data = try? Data(contentsOf: meta),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            {
                loaded.embedder = object["embedder"] as? String
            }
            return loaded
        }

        private func forEachLine(_ url: URL, _ body: (Data) throws -> Void) throws {
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw SluiceError(.sinkFailed, "cannot read \(url.path): \(error.localizedDescription)")
            }
            for line in data.split(separator: 0x0A) where !line.isEmpty {
                do {
                    try body(Data(line))
                } catch let error as SluiceError {
                    throw error
                } catch {
                    throw SluiceError(.sinkFailed, "\(url.path): a line is not a record: \(error)")
                }
            }
        }

        private func ensureFolder() throws {
            let folder = isFolder ? root : root.deletingLastPathComponent()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        func writeMeta(embedder: EmbedderIdentity) throws {
            try ensureFolder()
            let object: [String: Any] = ["embedder": embedder.description, "dimensions": embedder.dimensions]
            try writeAtomically(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), to: meta)
        }

        /// Appends lines to the journal and fsyncs it.
        func appendJournal(_ lines: [Data]) throws {
            try ensureFolder()
            var bytes = Data()
            for line in lines {
                bytes += line
                bytes.append(0x0A)
            }
            let fd = open(journal.path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw SluiceError(.sinkFailed, "cannot open \(journal.path): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            try cutTornTail(fd)
            try writeAll(fd, bytes, path: journal.path)
            guard fsync(fd) == 0 else {
                throw SluiceError(.sinkFailed, "fsync \(journal.path): \(String(cString: strerror(errno)))")
            }
        }

        /// Cuts a last line without its newline off the journal: a write a crash (or a failed write) tore,
        /// never acknowledged and skipped on replay. Appending after it would glue the next record onto it,
        /// and the next replay would skip both.
        private func cutTornTail(_ fd: Int32) throws {
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                throw SluiceError(.sinkFailed, "stat \(journal.path): \(String(cString: strerror(errno)))")
            }
            var end = Int(info.st_size)
            guard end > 0, try byte(fd, at: end - 1) != 0x0A else { return }
            // Back to just after the last newline (or to the start), 64 KiB at a time.
            var keep = 0
            var block = [UInt8](repeating: 0, count: 65_536)
            search: while end > 0 {
                let start = max(0, end - block.count)
                let n = block.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, end - start, off_t(start)) }
                guard n == end - start else {
                    throw SluiceError(.sinkFailed, "read \(journal.path): \(String(cString: strerror(errno)))")
                }
                for index in stride(from: n - 1, through: 0, by: -1) where block[index] == 0x0A {
                    keep = start + index + 1
                    break search
                }
                end = start
            }
            guard ftruncate(fd, off_t(keep)) == 0 else {
                throw SluiceError(
                    .sinkFailed,
                    "cutting the torn last line of \(journal.path): \(String(cString: strerror(errno)))"
                )
            }
        }

        private func byte(_ fd: Int32, at offset: Int) throws -> UInt8 {
            var value: UInt8 = 0
            guard pread(fd, &value, 1, off_t(offset)) == 1 else {
                throw SluiceError(.sinkFailed, "read \(journal.path): \(String(cString: strerror(errno)))")
            }
            return value
        }

        /// Writes every shard sorted by id (temporary file, fsync, rename), then removes the journal.
        func rewrite(_ lines: [VectorID: Data]) throws {
            try ensureFolder()
            var perShard = [[VectorID]](repeating: [], count: shards)
            for id in lines.keys { perShard[shard(of: id)].append(id) }
            for (index, file) in dataFiles.enumerated() {
                var bytes = Data()
                for id in perShard[index].sorted() {
                    bytes += lines[id]!
                    bytes.append(0x0A)
                }
                try writeAtomically(bytes, to: file)
            }
            if isFolder, let names = try? FileManager.default.contentsOfDirectory(atPath: root.path) {
                let keep = Set(dataFiles.map(\.lastPathComponent))
                for name in names where name.hasPrefix("part-") && name.hasSuffix(".jsonl") && !keep.contains(name) {
                    try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
                }
            }
            if FileManager.default.fileExists(atPath: journal.path) { try FileManager.default.removeItem(at: journal) }
        }

        func removeFiles() throws {
            for file in dataFiles + [journal, meta] where FileManager.default.fileExists(atPath: file.path) {
                try FileManager.default.removeItem(at: file)
            }
        }

        private func writeAtomically(_ bytes: Data, to url: URL) throws {
            let temporary = URL(fileURLWithPath: url.path + ".tmp")
            let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw SluiceError(.sinkFailed, "cannot write \(temporary.path): \(String(cString: strerror(errno)))")
            }
            do {
                try writeAll(fd, bytes, path: temporary.path)
                guard fsync(fd) == 0 else {
                    throw SluiceError(.sinkFailed, "fsync \(temporary.path): \(String(cString: strerror(errno)))")
                }
            } catch {
                close(fd)
                throw error
            }
            close(fd)
            guard rename(temporary.path, url.path) == 0 else {
                throw SluiceError(.sinkFailed, "rename to \(url.path): \(String(cString: strerror(errno)))")
            }
        }

        private func writeAll(_ fd: Int32, _ bytes: Data, path: String) throws {
            try bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else {
                        throw SluiceError(.sinkFailed, "write \(path): \(String(cString: strerror(errno)))")
                    }
                    offset += n
                }
            }
        }
    }
}
