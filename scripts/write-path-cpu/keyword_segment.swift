// A batch's keyword segment built as main built it until session 27 (each record counted into its own
// KeywordTermTable, then each of its terms inserted into the segment's table; entries sorted with
// lexicographicallyPrecedes) and as KeywordIndex.SegmentBuilder builds it now (terms counted straight into
// the segment's table, the record's frequencies kept beside it; entries sorted with memcmp), per batch of 64
// 1,000-character chunks (each with its file's name as context), through to the sorted entries with their
// stored postings. Both algorithms are copied here from the sources (KeywordIndex+SegmentBuilder.swift and
// its history); the tokenizer, the term table and the postings are this tree's. Built with -O by
// scripts/bench-keyword-segment.sh; prints CPU-seconds per pass (the building only), alternating, and checks
// that both passes give the same bytes.
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

func new(_ batch: ArraySlice<String>) -> Entries {
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
    return terms.sortedNumbers().map { (term: Array(terms.term($0)), value: postings[$0].stored) }
}

func pass(_ build: (ArraySlice<String>) -> Entries) -> (seconds: Double, entries: Int, digest: UInt64) {
    var batches: [Entries] = []
    let start = cpu()
    for first in stride(from: 0, to: texts.count, by: 64) {
        batches.append(build(texts[first..<min(texts.count, first + 64)]))
    }
    let seconds = cpu() - start
    var digest: UInt64 = 0xCBF2_9CE4_8422_2325
    for entry in batches.joined() {
        for byte in entry.term + [0xFF] + entry.value { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01B3 }
    }
    return (seconds, batches.reduce(0) { $0 + $1.count }, digest)
}

var oldSeconds: [Double] = []
var newSeconds: [Double] = []
for _ in 0..<passes {
    let a = pass(old)
    let b = pass(new)
    precondition(a.entries == b.entries && a.digest == b.digest, "the two builds' bytes differ")
    oldSeconds.append(a.seconds)
    newSeconds.append(b.seconds)
    print(String(format: "old %.3f CPU-s, new %.3f CPU-s (%d entries, same bytes)", a.seconds, b.seconds, a.entries))
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
print(String(format: "median of %d: old %.3f CPU-s, new %.3f CPU-s", passes, median(oldSeconds), median(newSeconds)))
