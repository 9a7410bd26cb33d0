import CLibPQ
import Foundation
import SluiceCore

/// One libpq connection. Every call blocks its thread: call it only from the sink's
/// ``SluiceCore/BlockingExecutor``. Not `Sendable`: one thread uses it at a time (the pool hands it out).
final class PGConnection {
    private var handle: OpaquePointer?
    private let url: String
    private let password: String?

    /// A result's rows as text (nil for SQL NULL).
    typealias Rows = [[String?]]

    init(url: String, password: String?) throws {
        self.url = url
        self.password = password
        try connect()
    }

    deinit { if let handle { PQfinish(handle) } }

    private func connect() throws {
        if let handle { PQfinish(handle) }
        // NOTICEs ("extension already exists", "relation already exists") would go to stderr through
        // libpq's default notice processor on every prepare and staging batch. `options` comes first, so
        // that `options` in the user's URL (expanded from `dbname`) still wins.
        var keywords = ["options", "dbname", "application_name", "connect_timeout"]
        var values = ["-c client_min_messages=warning", url, "sluice", "10"]
        if let password {
            keywords.append("password")
            values.append(password)
        }
        let cKeywords = keywords.map { strdup($0) }
        let cValues = values.map { strdup($0) }
        defer {
            for pointer in cKeywords { free(pointer) }
            for pointer in cValues { free(pointer) }
        }
        var keywordPointers = cKeywords.map { UnsafePointer($0) } + [nil]
        var valuePointers = cValues.map { UnsafePointer($0) } + [nil]
        handle = keywordPointers.withUnsafeMutableBufferPointer { k in
            valuePointers.withUnsafeMutableBufferPointer { v in PQconnectdbParams(k.baseAddress, v.baseAddress, 1) }
        }
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let message = handle.map { Self.clean(String(cString: PQerrorMessage($0))) } ?? "out of memory"
            // Connection failures are transient (server restarting, network): retried with backoff.
            throw SluiceError(.sinkUnavailable, "cannot connect to PostgreSQL: \(message)")
        }
        _ = PQsetClientEncoding(handle, "UTF8")
    }

    /// Reconnects when the previous call left the connection broken.
    private func ensureConnected() throws {
        if let handle, PQstatus(handle) == CONNECTION_OK { return }
        try connect()
    }

    /// libpq's cancel object for this connection's backend (``PGQueryCanceller``); nil when not connected.
    /// The caller frees it with `PQfreeCancel`.
    func makeCancel() -> OpaquePointer? {
        handle.flatMap { PQgetCancel($0) }
    }

    /// Ends a transaction a failed or cancelled call left open (a no-op outside one, where a `ROLLBACK`
    /// would print PostgreSQL's warning).
    func rollBackOpenTransaction() {
        guard let handle, PQtransactionStatus(handle) != PQTRANS_IDLE else { return }
        PQclear(PQexec(handle, "ROLLBACK"))
    }

    /// Runs SQL with text parameters (`$1`, `$2`, …) and returns the rows.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> Rows {
        // libpq reads a parameter as a C string: a NUL would silently cut it (and `text` cannot hold one).
        if let index = parameters.firstIndex(where: { $0?.utf8.contains(0) ?? false }) {
            throw SluiceError(
                .usage,
                "PostgreSQL cannot hold U+0000 (NUL) in text: parameter $\(index + 1) holds one, and would be cut there"
            )
        }
        try ensureConnected()
        let cParameters = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for pointer in cParameters { free(pointer) } }
        var pointers = cParameters.map { $0.map { UnsafePointer($0) } }
        let result = pointers.withUnsafeMutableBufferPointer { buffer in
            PQexecParams(handle, sql, Int32(parameters.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        return try consume(result, sql: sql)
    }

    /// `COPY … FROM STDIN` with the given bytes (text format).
    func copyIn(_ sql: String, _ bytes: [UInt8]) throws {
        try ensureConnected()
        let start = PQexec(handle, sql)
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            _ = try consume(start, sql: sql)
            throw SluiceError(.sinkFailed, "\(sql): the server did not start COPY")
        }
        PQclear(start)
        var offset = 0
        let step = 1 << 20
        try bytes.withUnsafeBufferPointer { buffer in
            while offset < buffer.count {
                let length = min(step, buffer.count - offset)
                let sent = buffer.baseAddress!.advanced(by: offset).withMemoryRebound(to: CChar.self, capacity: length)
                {
                    PQputCopyData(handle, $0, Int32(length))
                }
                guard sent == 1 else { throw failure(nil, sql: sql) }
                offset += length
            }
        }
        guard PQputCopyEnd(handle, nil) == 1 else { throw failure(nil, sql: sql) }
        var firstError: (any Error)?
        while let result = PQgetResult(handle) {
            do { _ = try consume(result, sql: sql) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    /// Reads a result's rows, or throws its error; frees it either way.
    private func consume(_ result: OpaquePointer?, sql: String) throws -> Rows {
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_COPY_IN else {
            throw failure(result, sql: sql)
        }
        guard status == PGRES_TUPLES_OK else { return [] }
        let rows = Int(PQntuples(result))
        let columns = Int(PQnfields(result))
        var out: Rows = []
        out.reserveCapacity(rows)
        for row in 0..<rows {
            var values: [String?] = []
            values.reserveCapacity(columns)
            for column in 0..<columns {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            out.append(values)
        }
        return out
    }

    /// The error of a failed call, classified: connection loss and the SQLSTATE classes that mean "try
    /// again" (08 connection, 40 serialization/deadlock, 53 resources, 57P0x shutdown) are transient.
    private func failure(_ result: OpaquePointer?, sql: String) -> SluiceError {
        let state =
            result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) } ?? ""
        var message = result.flatMap { PQresultErrorMessage($0) }.map { String(cString: $0) } ?? ""
        if message.isEmpty, let handle { message = String(cString: PQerrorMessage(handle)) }
        let lost = handle.map { PQstatus($0) != CONNECTION_OK } ?? true
        let transient = lost || ["08", "40", "53"].contains(String(state.prefix(2))) || state.hasPrefix("57P0")
        let verb = sql.split(separator: " ").prefix(2).joined(separator: " ")
        return SluiceError(
            transient ? .sinkUnavailable : .sinkFailed,
            "PostgreSQL \(verb)…: \(Self.clean(message))\(state.isEmpty ? "" : " [\(state)]")"
        )
    }

    /// The SQLSTATE of an error thrown by this connection ("23505" …), parsed from the message.
    static func sqlState(of error: any Error) -> String? {
        guard let error = error as? SluiceError, error.message.hasSuffix("]"),
            let open = error.message.lastIndex(of: "[")
        else {
            return nil
        }
        return String(
            error.message[error.message.index(after: open)..<error.message.index(before: error.message.endIndex)]
        )
    }

    private static func clean(_ message: String) -> String {
        message.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\n", with: " ")
    }
}

@available(*, unavailable)
extension PGConnection: Sendable {}
