import CLibPQ
import Foundation
import SluiceCore

/// `sink.url` as libpq reads it. The sink hands it to libpq as `dbname` with `expand_dbname`, so it may be
/// a URI (`postgresql://user@host:port/db?key=value`, percent-encoded) or key/value conninfo
/// (`host=db dbname=x`, spaces allowed around `=`, values quoted). Only libpq's own parser
/// (`PQconninfoParse`) sees every spelling of a key (`pass%77ord=`, `password = x`), so checks and
/// display go through it, never through string matching.
extension PgvectorSink {
    /// One option libpq read from a connection string.
    struct ConnectionOption: Equatable {
        var keyword: String
        var value: String
        /// A password field (libpq marks them with display character `*`: `password`, `sslpassword`).
        var isSecret: Bool
    }

    /// The options set in `url`, percent-decoded and unquoted, in libpq's order; nil when libpq cannot
    /// parse it. A plain word (no `=`, no URI prefix) is a database name, as libpq reads it.
    static func connectionOptions(_ url: String) -> [ConnectionOption]? {
        guard url.contains("=") || url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
            return [ConnectionOption(keyword: "dbname", value: url, isSecret: false)]
        }
        var message: UnsafeMutablePointer<CChar>?
        // libpq's message may quote the input (a bad percent-escape inside a password): never shown.
        defer { if let message { PQfreemem(message) } }
        guard let options = PQconninfoParse(url, &message) else { return nil }
        defer { PQconninfoFree(options) }
        var out: [ConnectionOption] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                let name = String(cString: keyword)
                let display = option.pointee.dispchar.map { String(cString: $0) } ?? ""
                out.append(
                    ConnectionOption(
                        keyword: name,
                        value: String(cString: value),
                        isSecret: display.contains("*") || name == "password" || name == "sslpassword"
                    )
                )
            }
            option += 1
        }
        return out
    }

    /// Whether `url` sets a password (or another secret field) in any form libpq accepts.
    static func urlHasPassword(_ url: String) -> Bool {
        connectionOptions(url)?.contains(where: \.isSecret) ?? false
    }

    /// Refuses a connection string libpq cannot read, or one that carries a secret: passwords come from
    /// the environment variable named in `sink.password_env`. The messages never quote the string.
    static func refusePassword(in url: String) throws {
        guard let options = connectionOptions(url) else {
            throw SluiceError(
                .configuration,
                "sink.url is neither a PostgreSQL URI (postgresql://…) nor key=value connection settings that libpq can read"
            )
        }
        if let secret = options.first(where: \.isSecret) {
            throw SluiceError(
                .configuration,
                "sink.url must not contain a password (it sets \(secret.keyword)): name an environment variable in sink.password_env"
            )
        }
    }

    /// The connection settings for display (logs, `sink info`, `verify`): libpq's key=value form of what
    /// `url` sets, without any secret field.
    static func redacted(_ url: String) -> String {
        guard let options = connectionOptions(url) else { return "(unreadable connection string)" }
        return options.filter { !$0.isSecret }.map { "\($0.keyword)=\(quoted($0.value))" }.joined(separator: " ")
    }

    /// A conninfo value, single-quoted (with `\` escapes) when it is empty or holds spaces, quotes or
    /// backslashes.
    private static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "'" || $0 == "\\" }) else { return value }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
