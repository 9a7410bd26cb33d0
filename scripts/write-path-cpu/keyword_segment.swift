// A batch's keyword segment built three ways, per batch of 64 1,000-character chunks (each with its file's
// name as context), through to the sorted entries with their stored postings, and then each entry's key and
// rebased list as the writer thread puts them (numbers raised by 1,000):
// - "old": as main built it until session 27 (each record counted into its own KeywordTermTable, then each
//   of its terms inserted into the segment's table; entries sorted with lexicographicallyPrecedes);
// - "arrays": as main built it in sessions 27-28 (terms counted straight into the segment's table, a
//   KeywordPostings array per term, entries sorted with memcmp, an array per entry's term, stored list, key
//   and rebased list);
// - "log": as KeywordIndex.SegmentBuilder builds it since session 29 (every posting in one log, chained per
//   term; terms sorted by their first 8 bytes, then memcmp; the entries in one KeywordSegmentEntries; key and
//   rebased list put together in buffers used again).
// The algorithms are copied here from the sources (KeywordIndex+SegmentBuilder.swift and its history); the
// tokenizer, the term table, the postings and the entries are this tree's. Built with -O by
// scripts/bench-keyword-segment.sh; prints CPU-seconds per pass, alternating, and checks that the three give
// the same bytes.
import Foundation

let root = CommandLine.arguments[1]
let passes = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2])! : 7
let texts = corpusChunks(root)  // corpus_chunks.swift
print("chunks", texts.count)

func forEachCountedTerm(of text: String, _ body: (UnsafeBufferPointer<UInt8>?) -> Void) {
    KeywordTokenizer.forEachTerm(of: text) { term in
        if term.allSatisfy({ $0 < 0x80 }) {
            body(term.count <= 200 ? term : nil)
            return
        }
        var composed = String(decoding: term, as: UTF8.self).precomposedStringWithCanonicalMapping
        composed.withUTF8 { body($0.count <= 200 ? $0 : nil) }
    }
}

typealias Entries = [(term: [UInt8], value: [UInt8])]

func old(_ batch: ArraySlice<String>) -> Entries {
    var terms = KeywordTermTable()
    var postings: [KeywordPostings] = []
    for (offset, text) in batch.enumerated() {
        var table = KeywordTermTable()
        var frequencies: [Int] = []
        var length = 0
        forEachCountedTerm(of: text) { term in
            length += 1
            guard let term else { return }
            let found = table.insert(term)
            if found.inserted { frequencies.append(1) } else { frequencies[found.number] += 1 }
        }
        table.bytes.withUnsafeBufferPointer { bytes in
            var start = 0
            for (index, frequency) in frequencies.enumerated() {
                let end = start + table.term(index).count
                let found = terms.insert(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                if found.inserted { postings.append(KeywordPostings()) }
                postings[found.number].append(number: UInt64(offset + 1), frequency: frequency, length: length)
                start = end
            }
        }
    }
    return postings.indices.map { (term: Array(terms.term($0)), value: postings[$0].stored) }
        .sorted { $0.term.lexicographicallyPrecedes($1.term) }
}

func arrays(_ batch: ArraySlice<String>) -> Entries {
    var terms = KeywordTermTable()
    var postings: [KeywordPostings] = []
    var countedIn: [Int32] = []
    var frequencies: [Int32] = []
    var counted: [Int32] = []
    for (offset, text) in batch.enumerated() {
        let mark = Int32(offset + 1)
        var length = 0
        forEachCountedTerm(of: text) { term in
            length += 1
            guard let term else { return }
            let found = terms.insert(term)
            if found.inserted {
                postings.append(KeywordPostings())
                countedIn.append(0)
                frequencies.append(0)
            }
            if countedIn[found.number] == mark {
                frequencies[found.number] += 1
            } else {
                countedIn[found.number] = mark
                frequencies[found.number] = 1
                counted.append(Int32(found.number))
            }
        }
        for term in counted {
            postings[Int(term)].append(number: UInt64(offset + 1), frequency: Int(frequencies[Int(term)]), length: length)
        }
        counted.removeAll(keepingCapacity: true)
    }
    return memcmpSorted(terms).map { (term: Array(terms.term($0)), value: postings[$0].stored) }
}

// KeywordTermTable.sortedNumbers as it was in sessions 27-28.
func memcmpSorted(_ terms: KeywordTermTable) -> [Int] {
    var starts = [0]
    for number in 0..<terms.count { starts.append(starts[number] + terms.term(number).count) }
    return terms.bytes.withUnsafeBufferPointer { stored in
        let base = stored.baseAddress!
        return (0..<terms.count).sorted { a, b in
            let aCount = starts[a + 1] - starts[a]
            let bCount = starts[b + 1] - starts[b]
            let order = memcmp(base + starts[a], base + starts[b], min(aCount, bCount))
            return order != 0 ? order < 0 : aCount < bCount
        }
    }
}

func log(_ batch: ArraySlice<String>) -> KeywordSegmentEntries {
    var terms = KeywordTermTable()
    var countedIn: [Int32] = []
    var frequencies: [Int32] = []
    var firstPosting: [Int] = []
    var lastPosting: [Int] = []
    var postingNumbers: [UInt64] = []
    var nextPosting: [Int] = []
    var postingEnds: [Int] = []
    var log: [UInt8] = []
    var counted: [Int32] = []
    for (offset, text) in batch.enumerated() {
        let mark = Int32(offset + 1)
        var length = 0
        forEachCountedTerm(of: text) { term in
            length += 1
            guard let term else { return }
            let found = terms.insert(term)
            if found.inserted {
                countedIn.append(0)
                frequencies.append(0)
                firstPosting.append(-1)
                lastPosting.append(-1)
            }
            if countedIn[found.number] == mark {
                frequencies[found.number] += 1
            } else {
                countedIn[found.number] = mark
                frequencies[found.number] = 1
                counted.append(Int32(found.number))
            }
        }
        for term in counted.map(Int.init) {
            KeywordPostings.putVarint(UInt64(frequencies[term]) << 1, into: &log)
            KeywordPostings.putVarint(UInt64(length), into: &log)
            let posting = postingNumbers.count
            postingNumbers.append(UInt64(offset + 1))
            postingEnds.append(log.count)
            nextPosting.append(-1)
            if lastPosting[term] < 0 { firstPosting[term] = posting } else { nextPosting[lastPosting[term]] = posting }
            lastPosting[term] = posting
        }
        counted.removeAll(keepingCapacity: true)
    }
    var out = KeywordSegmentEntries()
    out.reserve(count: terms.count, termBytes: terms.bytes.count, valueBytes: log.count + 3 * postingNumbers.count + 5 * terms.count)
    log.withUnsafeBufferPointer { log in
        for term in terms.sortedNumbers() {
            out.append(term: terms.term(term)) { value in
                KeywordPostings.putVarint(postingNumbers[lastPosting[term]], into: &value)
                var previous: UInt64 = 0
                var posting = firstPosting[term]
                while posting >= 0 {
                    let number = postingNumbers[posting]
                    KeywordPostings.putVarint(number - previous, into: &value)
                    let start = posting == 0 ? 0 : postingEnds[posting - 1]
                    value.append(contentsOf: UnsafeBufferPointer(rebasing: log[start..<postingEnds[posting]]))
                    previous = number
                    posting = nextPosting[posting]
                }
            }
        }
    }
    return out
}

let prefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 7]  // a segment's id, big endian

// The writer's side as it was: a key array and a rebased list per entry.
func writeArrays(_ entries: Entries, _ sink: inout UInt64) {
    var key = prefix
    for entry in entries {
        key.removeSubrange(prefix.count...)
        key += entry.term
        let value = KeywordPostings.rebased(stored: entry.value, by: 1000)
        sink &+= UInt64(key.count &+ value.count) &+ UInt64(value[value.count - 1])
    }
}

// The writer's side now (KeywordIndex+Segments.swift).
func writeLog(_ entries: KeywordSegmentEntries, _ sink: inout UInt64) {
    var key = prefix
    var value: [UInt8] = []
    entries.forEachEntry { term, stored in
        key.removeSubrange(prefix.count...)
        key.append(contentsOf: term)
        value.removeAll(keepingCapacity: true)
        KeywordPostings.rebase(stored: stored, by: 1000, into: &value)
        sink &+= UInt64(key.count &+ value.count) &+ UInt64(value[value.count - 1])
    }
}

func digest(_ batches: [Entries]) -> (entries: Int, digest: UInt64) {
    var digest: UInt64 = 0xCBF2_9CE4_8422_2325
    for entry in batches.joined() {
        for byte in entry.term + [0xFF] + entry.value { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01B3 }
    }
    return (batches.reduce(0) { $0 + $1.count }, digest)
}

func pass(_ build: (ArraySlice<String>) -> Entries) -> (seconds: Double, entries: Int, digest: UInt64, written: UInt64) {
    var batches: [Entries] = []
    var written: UInt64 = 0
    let start = cpu()
    for first in stride(from: 0, to: texts.count, by: 64) {
        let entries = build(texts[first..<min(texts.count, first + 64)])
        writeArrays(entries, &written)
        batches.append(entries)
    }
    let seconds = cpu() - start
    let (entries, sum) = digest(batches)
    return (seconds, entries, sum, written)
}

func passLog() -> (seconds: Double, entries: Int, digest: UInt64, written: UInt64) {
    var batches: [KeywordSegmentEntries] = []
    var written: UInt64 = 0
    let start = cpu()
    for first in stride(from: 0, to: texts.count, by: 64) {
        let entries = log(texts[first..<min(texts.count, first + 64)])
        writeLog(entries, &written)
        batches.append(entries)
    }
    let seconds = cpu() - start
    let (entries, sum) = digest(batches.map(\.array))
    return (seconds, entries, sum, written)
}

var seconds: [[Double]] = [[], [], []]
for _ in 0..<passes {
    let a = pass(old)
    let b = pass(arrays)
    let c = passLog()
    precondition(a.entries == b.entries && a.digest == b.digest && a.written == b.written, "old and arrays differ")
    precondition(b.entries == c.entries && b.digest == c.digest && b.written == c.written, "arrays and log differ")
    for (index, run) in [a, b, c].enumerated() { seconds[index].append(run.seconds) }
    print(String(format: "old %.3f, arrays %.3f, log %.3f CPU-s (%d entries, same bytes)", a.seconds, b.seconds, c.seconds, a.entries))
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let differences = zip(seconds[2], seconds[1]).map { $0 - $1 }
print(
    String(
        format: "median of %d: old %.3f, arrays %.3f, log %.3f CPU-s; log - arrays, paired: median %.3f, log faster in %d",
        passes, median(seconds[0]), median(seconds[1]), median(seconds[2]), median(differences),
        differences.filter { $0 < 0 }.count
    )
)
