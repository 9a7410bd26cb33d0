// What the keyword benchmarks (keyword_segment.swift, keyword_tokenizer.swift) share: the process's CPU time,
// and a corpus cut into 1,000-character chunks, each with its file's name as context (as the local store
// counts a record's terms with its context).
import Foundation

func cpu() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

func corpusChunks(_ root: String) -> [String] {
    var texts: [String] = []
    let files = FileManager.default.enumerator(atPath: root)!
    while let path = files.nextObject() as? String {
        guard let data = FileManager.default.contents(atPath: root + "/" + path) else { continue }
        let text = String(decoding: data, as: UTF8.self)
        let name = (path as NSString).lastPathComponent
        var i = text.startIndex
        while i < text.endIndex {
            let j = text.index(i, offsetBy: 1000, limitedBy: text.endIndex) ?? text.endIndex
            texts.append(String(text[i..<j]) + "\n" + name)
            i = j
        }
    }
    return texts
}
