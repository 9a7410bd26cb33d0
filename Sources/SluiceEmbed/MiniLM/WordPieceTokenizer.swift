import SluiceCore

/// BERT's uncased WordPiece tokenizer, identical in its token ids to the Hugging Face fast tokenizer
/// that sentence-transformers runs for all-MiniLM-L6-v2 (see `BertNormalization` for the text
/// normalization).
///
/// - Special tokens written in the text (`[CLS]`, `[SEP]`, `[PAD]`, `[MASK]`, `[UNK]`, case-sensitive)
///   are matched before normalization and keep their ids, as in the fast tokenizer.
/// - Each word is split greedily into the longest vocabulary entries from its start, continuations
///   prefixed with `##`; a word with a part not in the vocabulary, or longer than
///   ``maxCharactersPerWord`` scalars, is one `[UNK]`.
/// - ``encode(_:)`` frames the pieces as `[CLS] … [SEP]` and keeps at most ``maxSequenceLength`` ids
///   in all (the word pieces are truncated at `maxSequenceLength - 2`).
///
/// As a ``TokenCounter`` it counts word pieces without the two special tokens and without truncation:
/// a chunk fits the model's window when its count is at most ``maxPiecesPerInput``. Normalization works one
/// scalar at a time and white space ends a word, so counts add up at white space (``AdditiveTokenCounter``):
/// the chunker counts a section once.
public struct WordPieceTokenizer: AdditiveTokenCounter {
    let vocabulary: WordPieceVocabulary
    /// The most ids ``encode(_:)`` returns, `[CLS]` and `[SEP]` included.
    public let maxSequenceLength: Int
    /// Longer words are `[UNK]` (the fast tokenizer's `max_input_chars_per_word`).
    public let maxCharactersPerWord = 100
    let classifierID: Int32
    let separatorID: Int32
    let unknownID: Int32
    /// The special tokens recognized in raw text, with their ids.
    private let specialTokens: [(bytes: [UInt8], id: Int32)]

    /// Creates a tokenizer from the text of `vocab.txt`.
    /// - Throws: ``SluiceError/Code/configuration`` when the vocabulary lacks a special token.
    init(vocabulary text: String, maxSequenceLength: Int) throws {
        precondition(maxSequenceLength > 2, "the window must hold [CLS] and [SEP]")
        let vocabulary = try WordPieceVocabulary(text: text)
        func special(_ token: String) throws -> Int32 {
            guard let id = vocabulary.id(of: token) else {
                throw SluiceError(.configuration, "vocab.txt has no \(token) token")
            }
            return id
        }
        self.vocabulary = vocabulary
        self.maxSequenceLength = maxSequenceLength
        self.classifierID = try special("[CLS]")
        self.separatorID = try special("[SEP]")
        self.unknownID = try special("[UNK]")
        self.specialTokens = try ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].map {
            (Array($0.utf8), try special($0))
        }
    }

    /// The most word pieces of one input that the model sees (the window less `[CLS]` and `[SEP]`).
    public var maxPiecesPerInput: Int { maxSequenceLength - 2 }

    /// The model's input ids for `text`: `[CLS]`, at most ``maxPiecesPerInput`` word pieces, `[SEP]`.
    public func encode(_ text: String) -> [Int32] {
        var ids: [Int32] = [classifierID]
        ids.reserveCapacity(min(maxSequenceLength, text.utf8.count / 3 + 2))
        let limit = maxPiecesPerInput
        forEachPiece(in: text[...]) { id in
            guard ids.count <= limit else { return false }
            ids.append(id)
            return true
        }
        ids.append(separatorID)
        return ids
    }

    /// The number of word pieces of `text` (no special tokens, no truncation).
    public func count(_ text: Substring) -> Int {
        var count = 0
        forEachPiece(in: text) { _ in
            count += 1
            return true
        }
        return count
    }

    /// The number of word pieces of `text`, reporting the cuts where counts add up (see
    /// ``AdditiveTokenCounter``): white space that separates words (not the control characters that
    /// normalization drops) after a scalar that is not white space.
    public func count(_ text: Substring, cuts cut: (_ offset: Int, _ tokensBefore: Int) -> Void) -> Int {
        var count = 0
        withoutActuallyEscaping(
            { (offset: Int) in cut(offset, count) },
            do: { atCut in
                var cuts: CutTracker? = CutTracker(report: atCut)
                forEachPiece(in: text, cuts: &cuts) { _ in
                    count += 1
                    return true
                }
            }
        )
        return count
    }

    /// Calls `body` with each word piece id of `text` in order, until it returns false.
    func forEachPiece(in text: Substring, _ body: (Int32) -> Bool) {
        var cuts: CutTracker?
        forEachPiece(in: text, cuts: &cuts, body)
    }

    /// ``forEachPiece(in:_:)``, reporting the cuts to `cuts` (when there is one) before the pieces after them.
    private func forEachPiece(in text: Substring, cuts: inout CutTracker?, _ body: (Int32) -> Bool) {
        var word = WordBuffer()
        var going = true
        let utf8 = text.utf8
        var segmentStart = utf8.startIndex
        var index = utf8.startIndex
        // Split at special tokens written in the text; normalize and split the rest into words.
        while going && index < utf8.endIndex {
            if utf8[index] == UInt8(ascii: "["), let special = specialToken(in: utf8, at: index) {
                going = tokenize(text[segmentStart..<index], cuts: &cuts, into: &word, body)
                if going { going = body(special.id) }
                index = utf8.index(index, offsetBy: special.length)
                segmentStart = index
                cuts?.skipSpecialToken(length: special.length)
            } else {
                utf8.formIndex(after: &index)
            }
        }
        if going { _ = tokenize(text[segmentStart..<utf8.endIndex], cuts: &cuts, into: &word, body) }
    }

    private func specialToken(
        in utf8: Substring.UTF8View,
        at index: Substring.UTF8View.Index
    ) -> (id: Int32, length: Int)? {
        for token in specialTokens where utf8[index...].starts(with: token.bytes) {
            return (token.id, token.bytes.count)
        }
        return nil
    }

    /// Normalizes and pre-tokenizes `segment`, and word-pieces each word; false when `body` stopped.
    private func tokenize(
        _ segment: Substring,
        cuts: inout CutTracker?,
        into word: inout WordBuffer,
        _ body: (Int32) -> Bool
    ) -> Bool {
        var going = true
        for scalar in segment.unicodeScalars {
            if cuts != nil, cuts!.isCut(before: scalar) {
                // The word before the cut is counted first.
                guard flush(&word, body) else { return false }
                cuts!.reportCut()
            }
            cuts?.skip(scalar)
            BertNormalization.normalize(scalar) { normalized, piece in
                guard going else { return }
                switch piece {
                case .word:
                    word.append(normalized)
                case .separator:
                    going = flush(&word, body)
                case .punctuation:
                    going = flush(&word, body)
                    if going {
                        word.append(normalized)
                        going = flush(&word, body)
                    }
                }
            }
            if !going { return false }
        }
        return flush(&word, body)
    }

    /// Word-pieces the buffered word, if any, and empties the buffer.
    private func flush(_ word: inout WordBuffer, _ body: (Int32) -> Bool) -> Bool {
        guard !word.isEmpty else { return true }
        defer { word.removeAll() }
        if word.scalarCount > maxCharactersPerWord { return body(unknownID) }
        // Greedy longest match first; any part not in the vocabulary makes the whole word [UNK].
        var pieces: [Int32] = []
        var start = 0
        let scalars = word.scalarCount
        while start < scalars {
            var end = scalars
            let budget = vocabulary.longestTokenBytes - (start > 0 ? 2 : 0)
            while end > start && word.byteOffset(end) - word.byteOffset(start) > budget { end -= 1 }
            var found: Int32?
            while end > start {
                if let id = vocabulary.id(prefixed: start > 0, word.bytes(from: start, to: end)) {
                    found = id
                    break
                }
                end -= 1
            }
            guard let id = found else { return body(unknownID) }
            pieces.append(id)
            start = end
        }
        for id in pieces where !body(id) { return false }
        return true
    }
}

/// Where the cuts of a text are, as ``WordPieceTokenizer`` walks it: white space that BERT's normalization
/// keeps as a word separator (tab, line feed, carriage return, space, and non-ASCII white space that is not a
/// control character) after a scalar that is not white space.
private struct CutTracker {
    let report: (Int) -> Void
    /// The UTF-8 offset of the next scalar.
    private var offset = 0
    private var afterVisible = false

    init(report: @escaping (Int) -> Void) { self.report = report }

    /// Whether a cut comes before `scalar`, the next one.
    func isCut(before scalar: Unicode.Scalar) -> Bool {
        guard afterVisible else { return false }
        let value = scalar.value
        if value < 0x80 { return value == 0x20 || value == 0x0A || value == 0x09 || value == 0x0D }
        return scalar.properties.isWhitespace && !BertNormalization.isControl(scalar)
    }

    func reportCut() { report(offset) }

    /// Moves past `scalar`.
    mutating func skip(_ scalar: Unicode.Scalar) {
        afterVisible = !(scalar.value < 0x80 ? ASCII.isWhitespace(UInt8(scalar.value)) : scalar.properties.isWhitespace)
        offset += UTF8.width(scalar)
    }

    /// Moves past a special token of `length` bytes (visible).
    mutating func skipSpecialToken(length: Int) {
        afterVisible = true
        offset += length
    }
}

/// A word being collected: its UTF-8 bytes and where each scalar starts.
struct WordBuffer {
    private(set) var utf8: [UInt8] = []
    /// `offsets[i]` is the byte offset of scalar `i`; one more entry marks the end.
    private var offsets: [Int] = [0]

    var isEmpty: Bool { utf8.isEmpty }
    var scalarCount: Int { offsets.count - 1 }

    mutating func append(_ scalar: Unicode.Scalar) {
        if scalar.value < 0x80 {
            utf8.append(UInt8(scalar.value))
        } else {
            utf8.append(contentsOf: UTF8.encode(scalar)!)
        }
        offsets.append(utf8.count)
    }

    func byteOffset(_ scalar: Int) -> Int { offsets[scalar] }

    func bytes(from start: Int, to end: Int) -> ArraySlice<UInt8> { utf8[offsets[start]..<offsets[end]] }

    mutating func removeAll() {
        utf8.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
        offsets.append(0)
    }
}
