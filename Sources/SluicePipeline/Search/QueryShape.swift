/// What a query's words say about it, before anything is searched: a *question in words* — at least
/// ``minimumWords`` words, every one of them plain letters (a capital allowed first, none after it) or a
/// plural acronym (`UIDs`) once the punctuation around it (`?,:;!"'()`) is stripped — is a user asking in
/// their own words, the kind of query the vector ranking answers best. A code, an option, a version, a name
/// in capitals, a file name or a short phrase is not one (`DEVRANDOM_WAIT`, `--keep`, `CFLAGS`,
/// `ISO 639-2 code for Old High German`, `Node.js path`).
///
/// Score fusion gives such a query the larger vector weight (``SearchFusion/score(vectorWeight:questionWeight:)``),
/// and a *look-up of codes* — no word of plain letters — none: the keyword ranking's order.
/// The threshold and both rules were chosen on Benchmarks/retrieval/queries.jsonl and checked on heldout.jsonl
/// (README there, "Today"; the first measurements in docs/notes/benchmarks-2026-11.md, "A question in words").
struct QueryShape: Sendable, Equatable {
    /// The fewest words a question in words has.
    static let minimumWords = 9
    /// Stripped from both ends of each word.
    static let punctuation: Set<Character> = ["?", ",", ":", ";", "!", "\"", "'", "(", ")"]

    /// Whether the query is a question in words.
    let isQuestionInWords: Bool
    /// Whether the query is a look-up of codes: no word of it is plain letters (`path.sep`, `DEVRANDOM_WAIT`,
    /// `FD 37 7A 58 5A 00`, `RFC 7159`): a string to be found as written, where a sentence embedder's
    /// neighbours only push the exact matches down.
    let isLookupOfCodes: Bool

    init(_ query: String) {
        let words = query.split(whereSeparator: \.isWhitespace).map { word in
            Array(
                word.drop { Self.punctuation.contains($0) }.reversed().drop { Self.punctuation.contains($0) }.reversed()
            )
        }.filter { !$0.isEmpty }
        let plain = words.filter(Self.isPlain).count
        isQuestionInWords = words.count >= Self.minimumWords && plain == words.count
        isLookupOfCodes = !words.isEmpty && plain == 0
    }

    /// Letters only, lowercase after the first — or a plural acronym (``isPluralAcronym(_:)``).
    static func isPlain(_ word: [Character]) -> Bool {
        guard let first = word.first, first.isLetter else { return false }
        return word.dropFirst().allSatisfy { $0.isLetter && $0.isLowercase } || isPluralAcronym(word)
    }

    /// Two or more capitals and a lowercase `s` (`UIDs`, `PDFs`, `IDs`): an acronym inflected as an English
    /// noun is a word of the sentence, where capitals alone (`CFLAGS`, `PATH`, `UIDS`) may be a name to look
    /// up, and mixed case (`uIDs`, `macOS`) or a digit (`UID2s`) is an identifier.
    static func isPluralAcronym(_ word: [Character]) -> Bool {
        guard word.count >= 3, word.last == "s" else { return false }
        return word.dropLast().allSatisfy { $0.isLetter && $0.isUppercase }
    }
}
