// Counting a corpus's terms for the keyword index as main did (a String per term, dictionaries keyed by
// String) and as the byte path does (KeywordTokenizer.forEachTerm into KeywordTermTable), per batch of 64
// 1,000-character chunks, through to the sorted segment entries. Built with -O by
// scripts/bench-write-path-cpu.sh from the tokenizer of `main` (renamed OldTokenizer) and this tree's files.
import Foundation
func cpu() -> Double { var t = timespec(); clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9 }
let root = CommandLine.arguments[1]
var texts: [String] = []
let e = FileManager.default.enumerator(atPath: root)!
while let p = e.nextObject() as? String {
    guard let d = FileManager.default.contents(atPath: root + "/" + p) else { continue }
    let s = String(decoding: d, as: UTF8.self)
    var i = s.startIndex
    while i < s.endIndex { let j = s.index(i, offsetBy: 1000, limitedBy: s.endIndex) ?? s.endIndex; texts.append(String(s[i..<j])); i = j }
}
print("chunks", texts.count)
// Old: String terms, dictionary per record, dictionary per batch of 64 keyed by String, entries sorted.
func old() -> Int {
    var total = 0
    for start in stride(from: 0, to: texts.count, by: 64) {
        var postings: [String: [Int]] = [:]
        for (n, text) in texts[start..<min(texts.count, start + 64)].enumerated() {
            let all = OldTokenizer.terms(of: text)
            var terms: [String: Int] = [:]
            for term in all where term.utf8.count <= 200 { terms[term, default: 0] += 1 }
            for (term, f) in terms { postings[term, default: []].append(n &+ f) }
        }
        let entries = postings.map { (Array($0.key.utf8), $0.value) }.sorted { $0.0.lexicographicallyPrecedes($1.0) }
        total += entries.count
    }
    return total
}
func new() -> Int {
    var total = 0
    for start in stride(from: 0, to: texts.count, by: 64) {
        var seg = KeywordTermTable(); var postings: [[Int]] = []
        for (n, text) in texts[start..<min(texts.count, start + 64)].enumerated() {
            var table = KeywordTermTable(); var freq: [Int] = []; var length = 0
            KeywordTokenizer.forEachTerm(of: text) { term in
                length += 1
                if term.allSatisfy({ $0 < 0x80 }) {
                    guard term.count <= 200 else { return }
                    let f = table.insert(term); if f.inserted { freq.append(1) } else { freq[f.number] += 1 }
                } else {
                    var c = String(decoding: term, as: UTF8.self).precomposedStringWithCanonicalMapping
                    c.withUTF8 { t in let f = table.insert(t); if f.inserted { freq.append(1) } else { freq[f.number] += 1 } }
                }
            }
            table.bytes.withUnsafeBufferPointer { bytes in
                var s = 0
                for (i, f) in freq.enumerated() { let e = s + table.term(i).count; let r = seg.insert(UnsafeBufferPointer(rebasing: bytes[s..<e])); if r.inserted { postings.append([]) }; postings[r.number].append(n &+ f); s = e }
            }
        }
        let entries = postings.indices.map { (Array(seg.term($0)), postings[$0]) }.sorted { $0.0.lexicographicallyPrecedes($1.0) }
        total += entries.count
    }
    return total
}
for _ in 0..<3 {
    var c = cpu(); let a = old(); let to = cpu() - c
    c = cpu(); let b = new(); let tn = cpu() - c
    print(String(format: "old %.3f CPU-s (%d entries), new %.3f CPU-s (%d entries)", to, a, tn, b))
}
