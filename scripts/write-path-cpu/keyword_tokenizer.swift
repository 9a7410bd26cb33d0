// The keyword tokenizer as the keyword index counts with it, before session 28 (ReferenceKeywordTokenizer,
// kept verbatim in Tests/SluiceSinksTests) against this tree's (KeywordTokenizer+Bytes.swift's single pass),
// outside the pipeline: every term of 1,000-character chunks of a corpus (each with its file's name as
// context, as the local store counts a record), through KeywordIndex.forEachCountedTerm's composing and
// length limit, and, apart, the query side's `terms(of:)` (a `String` per term). Built with -O by
// scripts/bench-keyword-tokenizer.sh; prints CPU-seconds per pass (the tokenizing only), alternating, and
// checks that both give the same terms (a digest of every term's bytes, in order).
import Foundation

/// The index's counting, copied from Sources/SluiceSinks/KeywordIndex+Counts.swift: the benchmark builds
/// the tokenizer alone, without the module that holds the index.
enum KeywordIndex {
    static let maxTermBytes = 200

    static func forEachCountedTerm(of text: String, _ body: (UnsafeBufferPointer<UInt8>?) -> Void) {
        KeywordTokenizer.forEachTermNotingASCII(of: text) { term, ascii in
            if ascii {
                body(term.count <= maxTermBytes ? term : nil)
                return
            }
            var composed = String(decoding: term, as: UTF8.self).precomposedStringWithCanonicalMapping
            composed.withUTF8 { body($0.count <= maxTermBytes ? $0 : nil) }
        }
    }
}

let root = CommandLine.arguments[1]
let passes = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2])! : 7
let texts = corpusChunks(root)  // corpus_chunks.swift
let bytes = texts.reduce(0) { $0 + $1.utf8.count }
print("chunks", texts.count, "bytes", bytes)

struct Pass {
    var seconds: Double
    var terms = 0
    var digest: UInt64 = 0xCBF2_9CE4_8422_2325
    mutating func add(_ term: UnsafeBufferPointer<UInt8>?) {
        terms += 1
        guard let term else { digest = (digest ^ 0xFE) &* 0x100_0000_01B3; return }
        for byte in term { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01B3 }
        digest = (digest ^ 0xFF) &* 0x100_0000_01B3
    }
}

func counted(_ count: (String, (UnsafeBufferPointer<UInt8>?) -> Void) -> Void) -> Pass {
    var result = Pass(seconds: 0)
    let start = cpu()
    for text in texts { count(text) { result.add($0) } }
    result.seconds = cpu() - start
    return result
}

func strings(_ terms: (String) -> [String]) -> Pass {
    var result = Pass(seconds: 0)
    let start = cpu()
    var all: [[String]] = []
    all.reserveCapacity(texts.count)
    for text in texts { all.append(terms(text)) }
    result.seconds = cpu() - start
    for var term in all.joined() { term.withUTF8 { result.add($0) } }
    return result
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func report(_ name: String, _ old: [Double], _ new: [Double]) {
    let differences = zip(new, old).map { $0 - $1 }
    print(
        String(
            format: "%@, median of %d: old %.3f CPU-s, new %.3f CPU-s; paired difference median %.3f (new faster in %d of %d)",
            name, old.count, median(old), median(new), median(differences), differences.filter { $0 < 0 }.count,
            differences.count))
}

var oldCounted: [Double] = []
var newCounted: [Double] = []
var oldStrings: [Double] = []
var newStrings: [Double] = []
for _ in 0..<passes {
    let a = counted(ReferenceKeywordTokenizer.forEachCountedTerm)
    let b = counted(KeywordIndex.forEachCountedTerm)
    precondition(a.terms == b.terms && a.digest == b.digest, "the counted terms differ")
    let c = strings(ReferenceKeywordTokenizer.terms(of:))
    let d = strings(KeywordTokenizer.terms(of:))
    precondition(c.terms == d.terms && c.digest == d.digest && c.digest == a.digest, "the terms differ")
    oldCounted.append(a.seconds)
    newCounted.append(b.seconds)
    oldStrings.append(c.seconds)
    newStrings.append(d.seconds)
    print(
        String(
            format: "counted: old %.3f, new %.3f CPU-s; terms(of:): old %.3f, new %.3f CPU-s (%d terms, the same)",
            a.seconds, b.seconds, c.seconds, d.seconds, a.terms))
}
report("counted (the index)", oldCounted, newCounted)
report("terms(of:) (queries, snippets)", oldStrings, newStrings)
