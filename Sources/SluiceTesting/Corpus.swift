import Foundation

/// Generated corpora for tests (in a ``TemporaryDirectory``).
public enum TestCorpus {
    /// Writes `count` text documents of several paragraphs each, deterministic for a given seed.
    @discardableResult
    public static func writeTextDocuments(
        count: Int,
        into directory: URL,
        seed: Int = 1,
        paragraphs: Int = 4
    ) throws -> [String] {
        let words = [
            "river", "sluice", "gate", "water", "flow", "vector", "index", "document", "chunk", "embed",
            "resume", "checkpoint", "batch", "token", "search", "store", "mill", "canal", "lock", "stream",
        ]
        var keys: [String] = []
        var state = UInt64(seed) &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        for index in 0..<count {
            let folder = "group\(index % 5)"
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(folder),
                withIntermediateDirectories: true
            )
            var text = "Document \(index)\n\n"
            for p in 0..<paragraphs {
                let sentence = (0..<(20 + next() % 40)).map { _ in words[next() % words.count] }.joined(separator: " ")
                text += "Paragraph \(p) of document \(index): \(sentence).\n\n"
            }
            let key = "\(folder)/doc\(index).txt"
            try text.write(to: directory.appendingPathComponent(key), atomically: true, encoding: .utf8)
            keys.append(key)
        }
        return keys
    }
}
