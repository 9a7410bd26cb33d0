import Foundation
import SluiceCore
import SluiceState

/// The local store's keyword index, kept in the store's own LMDB environment and written in the same
/// write transactions as the vectors, so that a crash at any point leaves both as they were after the last
/// committed transaction (LMDB commits a transaction whole or not at all).
///
/// Layout:
/// - `keyword-postings`: key `term 0x00 id`, value `[UInt32 frequency][UInt32 record length]` (little
///   endian): a term's postings are one key range, and a record's length travels with each posting, so a
///   search reads nothing else. Terms are ``KeywordTokenizer`` terms; a term over ``maxTermBytes`` is not
///   indexed (LMDB keys are at most 511 bytes; such terms are blobs, not words).
/// - `meta` (the store's): `keyword-index` = the index's version (absent: not built, or built by another
///   tokenizer version), `keyword-corpus` = `[UInt64 records][UInt64 terms]`.
///
/// A record's old postings are found by tokenizing its old text, read from `vectors` before it is
/// overwritten or deleted; so the index needs no per-record list of terms.
struct KeywordIndex {
    static let postingsDatabase = "keyword-postings"
    static let versionKey = Array("keyword-index".utf8)
    static let corpusKey = Array("keyword-corpus".utf8)
    static let version = Array("bm25 tokenizer=\(KeywordTokenizer.version)".utf8)
    static let maxTermBytes = 200

    let environment: LMDBEnvironment

    /// For searching: opens nothing (a read-only store may not have the index's database yet).
    init(environment: LMDBEnvironment) {
        self.environment = environment
    }

    /// For a write transaction: opens (creating) the databases first. Opening a database inside a write
    /// transaction would wait for that same transaction (LMDB opens it in a transaction of its own).
    init(writingTo environment: LMDBEnvironment) throws {
        self.environment = environment
        for name in ["vectors", "meta", Self.postingsDatabase] { _ = try environment.database(name) }
    }

    /// Whether the index is built and current (readable in a read-only transaction).
    func isBuilt(_ txn: LMDBTransaction) throws -> Bool {
        try txn.get(environment.database("meta"), Self.versionKey) == Self.version
    }

    /// Builds the index from every stored record unless it is current: a store made before the keyword
    /// index existed (or by an older tokenizer) gets it in this one transaction.
    func ensureBuilt(_ txn: LMDBTransaction) throws {
        guard try !isBuilt(txn) else { return }
        let postings = try environment.database(Self.postingsDatabase)
        try txn.drop(postings)
        var corpus = BM25.Corpus(documents: 0, terms: 0)
        // Writing another database while a cursor walks `vectors` is safe in an LMDB write transaction.
        try txn.forEach(environment.database("vectors")) { key, value in
            let id = Array(key)
            corpus.terms += try addPostings(id: id, text: try LocalSink.decode(id: id, value).text, txn)
            corpus.documents += 1
            return true
        }
        let meta = try environment.database("meta")
        try txn.put(meta, Self.corpusKey, Self.encode(corpus))
        try txn.put(meta, Self.versionKey, Self.version)
    }

    /// Replaces the postings of `id` (if it is stored) with those of `text`. Call before `vectors` is written.
    func replace(id: [UInt8], with text: String, _ txn: LMDBTransaction) throws {
        var corpus = try self.corpus(txn)
        try remove(id: id, txn, corpus: &corpus)
        corpus.terms += try addPostings(id: id, text: text, txn)
        corpus.documents += 1
        try txn.put(environment.database("meta"), Self.corpusKey, Self.encode(corpus))
    }

    /// Removes the postings of `id`, if it is stored. Call before `vectors` is written.
    func remove(id: [UInt8], _ txn: LMDBTransaction) throws {
        var corpus = try self.corpus(txn)
        try remove(id: id, txn, corpus: &corpus)
        try txn.put(environment.database("meta"), Self.corpusKey, Self.encode(corpus))
    }

    private func remove(id: [UInt8], _ txn: LMDBTransaction, corpus: inout BM25.Corpus) throws {
        guard let old = try txn.get(environment.database("vectors"), id) else { return }
        let postings = try environment.database(Self.postingsDatabase)
        let counts = Self.counts(of: try LocalSink.decode(id: id, old).text)
        for term in counts.terms.keys { try txn.delete(postings, Self.key(term, id)) }
        corpus.documents = max(0, corpus.documents - 1)
        corpus.terms = max(0, corpus.terms - counts.length)
    }

    /// Writes the postings of `text`; returns its length in terms.
    private func addPostings(id: [UInt8], text: String, _ txn: LMDBTransaction) throws -> Int {
        let postings = try environment.database(Self.postingsDatabase)
        let counts = Self.counts(of: text)
        for (term, frequency) in counts.terms {
            try txn.put(postings, Self.key(term, id), Self.encode(frequency, counts.length))
        }
        return counts.length
    }

    func corpus(_ txn: LMDBTransaction) throws -> BM25.Corpus {
        guard let bytes = try txn.get(environment.database("meta"), Self.corpusKey), bytes.count == 16 else {
            return BM25.Corpus(documents: 0, terms: 0)
        }
        return BM25.Corpus(documents: Int(Self.integer(bytes, at: 0)), terms: Int(Self.integer(bytes, at: 8)))
    }

    /// The postings of `term`: one key range.
    func postings(of term: String, _ txn: LMDBTransaction) throws -> [BM25.Posting] {
        let prefix = Array(term.utf8) + [0]
        var list: [BM25.Posting] = []
        try txn.forEach(environment.database(Self.postingsDatabase), from: prefix) { key, value in
            guard key.count > prefix.count, key.starts(with: prefix), value.count == 8 else { return false }
            list.append(
                BM25.Posting(
                    id: String(decoding: key[prefix.count...], as: UTF8.self),
                    frequency: Int(value.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian),
                    length: Int(value.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian)
                )
            )
            return true
        }
        return list
    }

    /// A text's indexed terms with their frequencies, and its length in terms (every term counts).
    static func counts(of text: String) -> (terms: [String: Int], length: Int) {
        let all = KeywordTokenizer.terms(of: text)
        var terms: [String: Int] = [:]
        for term in all where term.utf8.count <= maxTermBytes { terms[term, default: 0] += 1 }
        return (terms, all.count)
    }

    static func key(_ term: String, _ id: [UInt8]) -> [UInt8] { Array(term.utf8) + [0] + id }

    static func encode(_ frequency: Int, _ length: Int) -> [UInt8] {
        var out: [UInt8] = []
        for value in [UInt32(clamping: frequency), UInt32(clamping: length)] {
            withUnsafeBytes(of: value.littleEndian) { out += $0 }
        }
        return out
    }

    static func encode(_ corpus: BM25.Corpus) -> [UInt8] {
        var out: [UInt8] = []
        for value in [UInt64(corpus.documents), UInt64(corpus.terms)] {
            withUnsafeBytes(of: value.littleEndian) { out += $0 }
        }
        return out
    }

    static func integer(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }
}
