import Foundation
import SluiceCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The audit log of `sluice serve` (`serve.audit_log`, docs/ACCESS.md): one JSON line per request that
/// reads documents (search, ask, documents, export, runs), appended to a file the pipeline names. A line holds the
/// time, who asked (the kind of credential, the principal, a key's id — never the key or the token), the
/// method, the route's pattern (`/v1/documents/{key}`: never a document key the caller asked for), the
/// status, how many distinct documents the answer showed (only readable ones ever are), the filter the
/// store's query was restricted by, and with `serve.audit_query_text` the query text.
///
/// Written with `O_APPEND`, one `write` per line, so lines of concurrent requests never interleave. SIGHUP
/// reopens the file (``reopen()``): rotate by renaming it, then `kill -HUP`.
final class AuditLog: Sendable {
    struct Entry: Sendable, Equatable {
        var time: Date
        var identity: RequestIdentity.Kind
        var principal: String?
        var keyID: String?
        var method: String
        var route: String
        var status: Int
        /// Distinct documents in the answer; nil when the answer does not list documents (a run, a stream).
        var documents: Int?
        /// The filter the store's query was restricted by (the access filter, ANDed with the caller's own on a
        /// search or an ask), in the CLI's filter language; nil for an unrestricted identity or a refusal.
        var filter: String? = nil
        /// The query text (a search's query, an ask's question), with `serve.audit_query_text` only.
        var query: String? = nil

        /// The JSON line (with its newline).
        var line: String {
            var object: [String: Any] = [
                "time": Self.format(time), "identity": identity.rawValue, "method": method, "route": route,
                "status": status,
            ]
            object["principal"] = principal.map { $0 as Any } ?? NSNull()
            object["key_id"] = keyID.map { $0 as Any } ?? NSNull()
            object["documents"] = documents.map { $0 as Any } ?? NSNull()
            object["filter"] = filter.map { $0 as Any } ?? NSNull()
            if let query { object["query"] = query }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self) + "\n"
        }

        static func format(_ date: Date) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.string(from: date)
        }
    }

    let url: URL
    private let descriptor: Mutex<Int32>
    private let executor = BlockingExecutor(label: "sl-audit", threads: 1)

    /// Opens (creates, mode 0600) the file for appending. Blocks.
    /// - Throws: ``SluiceError/Code/configuration`` when it cannot be opened.
    init(url: URL) throws {
        self.url = url
        descriptor = Mutex(try Self.openForAppending(url))
    }

    deinit {
        executor.shutdown()
        descriptor.withLock { _ = close($0) }
    }

    private static func openForAppending(_ url: URL) throws -> Int32 {
        let fd = open(url.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SluiceError(
                .configuration,
                "serve.audit_log: cannot open \(url.path) for appending: \(String(cString: strerror(errno)))"
            )
        }
        return fd
    }

    /// Appends `entry`'s line, off the cooperative pool.
    func append(_ entry: Entry) async {
        let bytes = Array(entry.line.utf8)
        _ = try? await executor.run { [self] in
            descriptor.withLock { fd in
                bytes.withUnsafeBytes { buffer in _ = write(fd, buffer.baseAddress, buffer.count) }
            }
        }
    }

    /// Opens the file by its name again (after a rotation renamed it). Blocks. A failure keeps the old file.
    /// - Throws: why the file cannot be opened.
    func reopen() throws {
        let fd = try Self.openForAppending(url)
        descriptor.withLock { current in
            _ = close(current)
            current = fd
        }
    }
}
