import Foundation
import SluiceCore

/// One query of a judged query file (`sluice eval`, docs/USAGE.md "Retrieval quality"): what the user
/// types, and every passage that answers it.
///
/// The file is JSON lines, one query per line, in the format of Benchmarks/retrieval/queries.jsonl:
/// `{"id": "q001", "query": "…", "kind": "natural", "relevant": [{"key": "a.txt", "page": 2, "contains": "…"}]}`.
package struct JudgedQuery: Sendable, Hashable, Codable {
    package var id: String
    package var query: String
    /// The kind of query (`natural`, `exact`, …): scores are reported per kind as well as overall.
    package var kind: String?
    package var relevant: [Relevant]
    /// Why these are the answers (kept, never read).
    package var note: String?

    /// A passage that answers the query: a document (a page of it), optionally narrowed to the chunks
    /// whose text holds `contains`.
    package struct Relevant: Sendable, Hashable, Codable {
        /// The document key (the path relative to `source.path`).
        package var key: String
        /// The 1-based page, for paged documents.
        package var page: Int?
        /// A phrase of the answering passage (compared with runs of white space as one space).
        package var contains: String?

        package init(key: String, page: Int? = nil, contains: String? = nil) {
            self.key = key
            self.page = page
            self.contains = contains
        }
    }

    package init(id: String, query: String, kind: String? = nil, relevant: [Relevant], note: String? = nil) {
        self.id = id
        self.query = query
        self.kind = kind
        self.relevant = relevant
        self.note = note
    }
}

extension JudgedQuery {
    /// The keys a line may have.
    static let keys = ["id", "query", "kind", "relevant", "note"]
    /// The keys a `relevant` entry may have.
    static let relevantKeys = ["key", "page", "contains"]

    /// Reads a judged query file: one JSON object per line, blank lines skipped.
    ///
    /// - Parameter origin: The file's name, for messages.
    /// - Throws: ``SluiceError/Code/usage`` naming the line (1-based) and what is wrong with it: not a JSON
    ///   object, a missing or empty `id`, `query` or `relevant`, an entry without `key`, a page below 1, an
    ///   empty `contains`, an `id` used twice, an entry listed twice, a key it does not know (a misspelled
    ///   condition would be left out).
    package static func parse(_ text: String, origin: String) throws -> [JudgedQuery] {
        var queries: [JudgedQuery] = []
        var lines: [String: Int] = [:]
        // Split on bytes: "\r\n" is one Character, which a split on "\n" would not cut.
        for (index, bytes) in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = String(decoding: bytes, as: UTF8.self)
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            func bad(_ problem: String) -> SluiceError {
                SluiceError(.usage, "\(origin):\(number): \(problem)")
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw bad("not a JSON object")
            }
            // A key misspelled would be a condition left out (`contians`: any chunk of the document counts),
            // so a score higher than the truth: refused, as the pipeline file refuses unknown keys.
            func known(_ keys: [String], in object: [String: Any], at place: String) throws {
                let unknown = object.keys.filter { !keys.contains($0) }.sorted()
                guard unknown.isEmpty else {
                    throw bad(
                        "unknown key \(unknown.map { "`\(place)\($0)`" }.joined(separator: ", ")) (known here: \(keys.joined(separator: ", ")))"
                    )
                }
            }
            try known(Self.keys, in: object, at: "")
            func text(_ key: String, in object: [String: Any], required: Bool) throws -> String? {
                guard let value = object[key], !(value is NSNull) else {
                    if required { throw bad("`\(key)` is missing") }
                    return nil
                }
                guard let string = value as? String else { throw bad("`\(key)` must be a string") }
                guard !string.allSatisfy(\.isWhitespace) else { throw bad("`\(key)` is empty") }
                return string
            }
            let id = try text("id", in: object, required: true)!
            let query = try text("query", in: object, required: true)!
            let kind = try text("kind", in: object, required: false)
            let note = object["note"] as? String
            guard let entries = object["relevant"] as? [Any] else {
                throw bad("`relevant` must be a list of the documents that answer the query")
            }
            guard !entries.isEmpty else { throw bad("`relevant` is empty: a query needs at least one answer") }
            var relevant: [Relevant] = []
            for (position, value) in entries.enumerated() {
                guard let entry = value as? [String: Any] else { throw bad("relevant[\(position)] is not an object") }
                try known(Self.relevantKeys, in: entry, at: "relevant[\(position)].")
                let key = try text("key", in: entry, required: true)!
                var page: Int?
                if let value = entry["page"], !(value is NSNull) {
                    guard let number = value as? NSNumber,
                        Double(number.intValue) == number.doubleValue, number.intValue >= 1
                    else { throw bad("relevant[\(position)].page must be a page number (1 or more)") }
                    page = number.intValue
                }
                let contains = try text("contains", in: entry, required: false)
                let item = Relevant(key: key, page: page, contains: contains)
                guard !relevant.contains(item) else { throw bad("relevant[\(position)] is listed twice") }
                relevant.append(item)
            }
            if let first = lines[id] { throw bad("the id \(id) is used on line \(first) already") }
            lines[id] = number
            queries.append(JudgedQuery(id: id, query: query, kind: kind, relevant: relevant, note: note))
        }
        return queries
    }

    /// Reads the judged query file at `url`.
    /// - Throws: ``SluiceError/Code/usage`` for a file that cannot be read, is empty or has a bad line.
    package static func load(_ url: URL) throws -> [JudgedQuery] {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SluiceError(.usage, "cannot read the query file \(url.path): \(error.localizedDescription)")
        }
        let queries = try parse(text, origin: url.path)
        guard !queries.isEmpty else { throw SluiceError(.usage, "\(url.path): no queries") }
        return queries
    }

    /// The query as one line of a judged query file (keys sorted; no line end).
    package func jsonLine() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
