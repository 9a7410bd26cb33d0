/// What a query's words say about it, before anything is searched: a *question in words* — at least
/// ``minimumWords`` words, every one of them plain letters (a capital allowed first, none after it) once
/// the punctuation around it (`?,:;!"'()`) is stripped — is a user asking in their own words, the kind of
/// query the vector ranking answers best. A code, an option, a version, an acronym, a file name or a short
/// phrase is not one (`DEVRANDOM_WAIT`, `--keep`, `ISO 639-2 code for Old High German`, `Node.js path`).
///
/// Score fusion gives such a query the larger vector weight (``SearchFusion/score(vectorWeight:questionWeight:)``).
/// The threshold was chosen on Benchmarks/retrieval/queries.jsonl and checked on heldout.jsonl (README there,
/// "A question in words").
struct QueryShape: Sendable, Equatable {
    /// The fewest words a question in words has.
    static let minimumWords = 9
    /// Stripped from both ends of each word.
    static let punctuation: Set<Character> = ["?", ",", ":", ";", "!", "\"", "'", "(", ")"]

    /// Whether the query is a question in words.
    let isQuestionInWords: Bool

    init(_ query: String) {
        let words = query.split(whereSeparator: \.isWhitespace).map { word in
            word.drop { Self.punctuation.contains($0) }.reversed().drop { Self.punctuation.contains($0) }.reversed()
        }.filter { !$0.isEmpty }
        isQuestionInWords = words.count >= Self.minimumWords && words.allSatisfy { Self.isPlain(Array($0)) }
    }

    /// Letters only, lowercase after the first.
    static func isPlain(_ word: [Character]) -> Bool {
        guard let first = word.first, first.isLetter else { return false }
        return word.dropFirst().allSatisfy { $0.isLetter && $0.isLowercase }
    }
}
