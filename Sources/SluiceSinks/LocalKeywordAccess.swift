import SluiceCore
import SluiceLMDB
import Synchronization

/// What access control's field holds for each record of the local keyword index, by record number, kept in memory,
/// so that a keyword search restricted by access control ranks as if the store held only the records its caller may
/// read (`LocalSink+Keyword.swift`).
///
/// Without it a restricted keyword search leaked in two ways. BM25's corpus — the number of records, their average
/// length, each query term's document frequency — counted every record, so a returned score said how many records
/// the caller may not see hold the query's terms. And the ranked walk read every record ranked above the k-th
/// readable one, readable or not, so its time grew with the unreadable records holding the terms. With the table
/// the corpus is the readable records' (a restricted search's scores are those of a store holding only what its
/// caller may read, to the bit), and the walk reads only readable records. What stays the same for every caller:
/// the query terms' postings are read and decoded whole, readable or not.
///
/// The table describes one state of the index: per record number below ``Table/next`` (the index's next number
/// then), an index into the distinct values of the field (``LocalAccessValues``; 0: no live record) and the
/// record's length in terms, and per value the live records and terms holding it. A record's number is never
/// given again (an upsert gives the record a new one), so a number's value never changes: a table of an earlier
/// state is brought to a later one by the numbers given since (the `n<number>` keys at or past its ``Table/next``)
/// and the numbers killed since (the snapshot's dead marks). A kill whose dead mark a merge dropped meanwhile is
/// found by the count (the live records left must be the index's `keyword-corpus` count), and the table is then
/// made again from the live numbers, reusing the values it knows. A clear or a rebuild starts the numbers over:
/// the index's epoch (`keyword-epoch`, written anew then) tells tables of another numbering apart.
///
/// A few tables are kept (the newest states asked for), so that searches whose read transactions began before and
/// after a write both find theirs.
final class LocalKeywordAccess: Sendable {
    /// The meta key of the index's numbering: written anew whenever the numbers start over.
    static let epochKey = Array("keyword-epoch".utf8)

    /// The value number of a live record that does not decode (never readable).
    static let undecodable = UInt32.max

    /// The most numbers a table spans: 16 a live record plus `allowance` (2^20 but in tests). Numbers only rise,
    /// and a store whose few old records outlive many replaced ones spans more; its restricted keyword searches
    /// rank by a scan of every record (docs/STORES.md) until a rebuild numbers the records again.
    static func fits(span: UInt64, live: Int, allowance: UInt64) -> Bool { span <= 16 * UInt64(live) + allowance }

    /// ``fits(span:live:allowance:)``'s allowance.
    let allowance: UInt64

    init(allowance: UInt64 = 1 << 20) {
        self.allowance = allowance
    }

    /// The records of the index at one state, by number.
    struct Table: Sendable {
        let field: String
        let epoch: UInt64
        /// Numbers below it are described.
        fileprivate(set) var next: UInt64
        /// The first number described (``valueOfNumber``[0]'s).
        fileprivate(set) var base: UInt64
        /// The index's count of live records in the state described (`keyword-corpus`).
        fileprivate(set) var documents: Int
        /// Per number from ``base``, the value number of its record (``values``), 0 for none live,
        /// ``LocalKeywordAccess/undecodable`` for a record that does not decode.
        fileprivate(set) var valueOfNumber: [UInt32] = []
        /// Per number from ``base``, its record's length in terms.
        fileprivate(set) var lengthOfNumber: [UInt32] = []
        fileprivate(set) var values = LocalAccessValues()
        /// Per value number, the live records holding it and their terms.
        fileprivate(set) var records: [Int] = [0]
        fileprivate(set) var terms: [Int] = [0]
        /// Live records, undecodable ones too.
        fileprivate(set) var live = 0

        fileprivate init(
            field: String,
            epoch: UInt64,
            base: UInt64,
            next: UInt64,
            documents: Int,
            values: LocalAccessValues = LocalAccessValues()
        ) {
            self.field = field
            self.values = values
            records = [Int](repeating: 0, count: values.count)
            terms = records
            self.epoch = epoch
            self.base = base
            self.next = next
            self.documents = documents
            let span = Int(next - base)
            valueOfNumber = [UInt32](repeating: 0, count: span)
            lengthOfNumber = [UInt32](repeating: 0, count: span)
        }

        /// The value number of `number`'s record, 0 when it is not live here.
        func value(of number: UInt64) -> UInt32 {
            guard number >= base, number < next else { return 0 }
            return valueOfNumber[Int(number - base)]
        }

        /// Records `number` live with `value` (nil: undecodable) and `length`.
        fileprivate mutating func add(_ number: UInt64, value: MetadataValue??, length: UInt32) {
            guard let value else {
                add(number, index: LocalKeywordAccess.undecodable, length: length)
                return
            }
            let index = values.number(of: value)
            if records.count < values.count {
                records.append(0)
                terms.append(0)
            }
            add(number, index: index, length: length)
        }

        /// Records `number` live with the value numbered `index` here, and `length`.
        fileprivate mutating func add(_ number: UInt64, index: UInt32, length: UInt32) {
            if index != LocalKeywordAccess.undecodable {
                records[Int(index)] += 1
                terms[Int(index)] += Int(length)
            }
            if value(of: number) != 0 { remove(number) }
            let position = Int(number - base)
            live += 1
            valueOfNumber[position] = index
            lengthOfNumber[position] = length
        }

        /// Records `number` as no longer live.
        fileprivate mutating func remove(_ number: UInt64) {
            let index = value(of: number)
            guard index != 0 else { return }
            let position = Int(number - base)
            if index != LocalKeywordAccess.undecodable {
                records[Int(index)] -= 1
                terms[Int(index)] -= Int(lengthOfNumber[position])
            }
            valueOfNumber[position] = 0
            lengthOfNumber[position] = 0
            live -= 1
        }

        /// Numbers from `next` on described too (none live yet).
        fileprivate mutating func extend(to next: UInt64) {
            guard next > self.next else { return }
            let more = Int(next - self.next)
            valueOfNumber.append(contentsOf: repeatElement(0, count: more))
            lengthOfNumber.append(contentsOf: repeatElement(0, count: more))
            self.next = next
        }
    }

    /// What restricts a keyword search by access control: the conditions of its filter naming the field alone
    /// (``AccessRestriction/init(_:field:)``), and the store's tables.
    struct Restriction: Sendable {
        let field: String
        let conditions: [SearchFilter]
        let tables: LocalKeywordAccess
    }

    /// A restricted search's view of a table: which numbers its caller may read, and the corpus they make.
    struct Admission {
        let table: Table
        /// Per value number, 1 when the caller's conditions accept it.
        let allowed: [UInt8]

        init(_ table: Table, _ conditions: [SearchFilter]) {
            self.table = table
            allowed = table.values.allowed(by: conditions, field: table.field)
        }

        /// Whether the caller may read the record numbered `number` (live in the table).
        @inline(__always) func admits(_ number: UInt64) -> Bool {
            let index = table.value(of: number)
            return index != 0 && index != LocalKeywordAccess.undecodable && allowed[Int(index)] != 0
        }

        /// BM25's corpus of the records the caller may read.
        var corpus: BM25.Corpus {
            var corpus = BM25.Corpus(documents: 0, terms: 0)
            for index in allowed.indices where allowed[index] != 0 {
                corpus.documents += table.records[index]
                corpus.terms += table.terms[index]
            }
            return corpus
        }
    }

    private let kept = Mutex<[Table]>([])

    /// How the tables searches used came about: kept as they were, brought forward from an earlier state, or made
    /// from every live number (for tests).
    struct Counts: Equatable {
        var kept = 0
        var broughtForward = 0
        var made = 0
    }
    let counts = Mutex(Counts())
    /// How many tables are kept.
    static let keep = 3

    /// The table of `field` for the index as `txn` sees it (`snapshot`, at `epoch`): a kept one of that state, one
    /// brought to it from a kept earlier one, or one made from every live number (reusing the values a kept table
    /// of the same numbering knows). Nil when the numbers span too far (``fits(span:live:allowance:)``): the search scans.
    func table(
        field: String,
        epoch: UInt64,
        snapshot: KeywordIndex.Snapshot,
        environment: LMDBEnvironment,
        txn: LMDBTransaction,
        cancellation: CancellationFlag?
    ) throws -> Table? {
        let tables = kept.withLock { $0 }.filter { $0.field == field && $0.epoch == epoch }
        if let same = tables.first(where: { $0.next == snapshot.next && $0.documents == snapshot.corpus.documents }) {
            counts.withLock { $0.kept += 1 }
            return same
        }
        let reader = Reader(
            environment: environment,
            txn: txn,
            field: field,
            cancellation: cancellation,
            allowance: allowance
        )
        var table: Table?
        // The latest earlier state, brought forward by the numbers given and killed since.
        if let earlier = tables.filter({ $0.next <= snapshot.next }).max(by: { $0.next < $1.next }),
            Self.fits(span: snapshot.next - earlier.base, live: snapshot.corpus.documents, allowance: allowance)
        {
            var forward = earlier
            forward.documents = snapshot.corpus.documents
            forward.extend(to: snapshot.next)
            for number in snapshot.dead where number < earlier.next { forward.remove(number) }
            try reader.forEachLive(from: earlier.next) { number, id in
                try reader.describe(number, id, into: &forward)
            }
            // A kill whose dead mark a merge has dropped since leaves one live record too many.
            if forward.live == snapshot.corpus.documents {
                table = forward
                counts.withLock { $0.broughtForward += 1 }
            }
        }
        if table == nil {
            counts.withLock { $0.made += 1 }
            table = try reader.make(
                epoch: epoch,
                snapshot: snapshot,
                reusing: tables.max(by: { $0.next < $1.next })
            )
        }
        if let table {
            kept.withLock { kept in
                kept.removeAll { $0.field == table.field && $0.epoch == table.epoch && $0.next == table.next }
                kept.append(table)
                if kept.count > Self.keep { kept.removeFirst(kept.count - Self.keep) }
            }
        }
        return table
    }

    /// Reads the records of the keyword index for a table.
    private struct Reader {
        let environment: LMDBEnvironment
        let txn: LMDBTransaction
        let field: String
        let cancellation: CancellationFlag?
        let allowance: UInt64

        /// Calls `body` with each live number from `first` on, ascending, and its record's id.
        func forEachLive(from first: UInt64, _ body: (UInt64, [UInt8]) throws -> Void) throws {
            var seen = 0
            try txn.forEach(try environment.database(KeywordIndex.recordsDatabase), from: KeywordIndex.numberKey(first))
            {
                key,
                id in
                guard key.count == 9, key[0] == UInt8(ascii: "n") else { return false }
                seen += 1
                if seen % LocalSink.cancellationInterval == 0 { try cancellation?.check() }
                try body(KeywordIndex.bigEndianInteger(key[1...]), Array(id))
                return true
            }
        }

        /// Adds the live record `number` (`id`) to `table`: its length from the index, its value from the record.
        func describe(_ number: UInt64, _ id: [UInt8], into table: inout Table) throws {
            let records = try environment.database(KeywordIndex.recordsDatabase)
            let vectors = try environment.database("vectors")
            var length: UInt32 = 0
            if let value = try txn.get(records, [UInt8(ascii: "i")] + id), value.count == 12 {
                length = value.withUnsafeBytes {
                    UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
                }
            }
            let value: MetadataValue?? =
                try txn.get(vectors, id, largeValues: .copied).map { bytes in
                    bytes.withUnsafeBytes { LocalAccessValues.value(in: $0, field: field, id: id) }
                } ?? .none
            table.add(number, value: value, length: length)
        }

        /// The table of every live number, reusing what `known` (same numbering, any state) says of a number: a
        /// number's record never changes. Nil when the numbers span too far.
        func make(epoch: UInt64, snapshot: KeywordIndex.Snapshot, reusing known: Table?) throws -> Table? {
            var first: UInt64?
            try txn.forEach(try environment.database(KeywordIndex.recordsDatabase), from: [UInt8(ascii: "n")]) {
                key,
                _ in
                if key.count == 9, key[0] == UInt8(ascii: "n") { first = KeywordIndex.bigEndianInteger(key[1...]) }
                return false
            }
            let base = min(first ?? snapshot.next, snapshot.next)
            guard
                LocalKeywordAccess.fits(
                    span: snapshot.next - base,
                    live: snapshot.corpus.documents,
                    allowance: allowance
                )
            else {
                return nil
            }
            var table = Table(
                field: field,
                epoch: epoch,
                base: base,
                next: snapshot.next,
                documents: snapshot.corpus.documents,
                values: known?.values ?? LocalAccessValues()
            )
            guard let known else {
                // Nothing to reuse: the records in key order (sequential pages), each one's number and length
                // looked up in the index's `i<id>` keys, in the same order.
                try forEachIndexed { number, length, value in table.add(number, value: value, length: length) }
                return table
            }
            try forEachLive(from: base) { number, id in
                if case let index = known.value(of: number), index != 0 {
                    table.add(number, index: index, length: known.lengthOfNumber[Int(number - known.base)])
                } else {
                    try describe(number, id, into: &table)
                }
            }
            return table
        }

        /// Calls `body` with each record the index holds, in key order: its number, its length, and its value of the
        /// field (nil: the record does not decode).
        func forEachIndexed(_ body: (UInt64, UInt32, MetadataValue??) throws -> Void) throws {
            let records = try environment.database(KeywordIndex.recordsDatabase)
            var seen = 0
            try txn.forEach(try environment.database("vectors"), largeValues: .copied) { key, bytes in
                seen += 1
                if seen % LocalSink.cancellationInterval == 0 { try cancellation?.check() }
                let id = Array(key)
                guard let entry = try txn.get(records, [UInt8(ascii: "i")] + id), entry.count == 12 else { return true }
                let number = KeywordIndex.bigEndianInteger(entry[0..<8])
                let length = entry.withUnsafeBytes {
                    UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
                }
                try body(number, length, LocalAccessValues.value(in: bytes, field: field, id: id))
                return true
            }
        }
    }
}
