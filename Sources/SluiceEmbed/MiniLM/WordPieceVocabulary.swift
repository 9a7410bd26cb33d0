import SluiceCore

/// The WordPiece vocabulary (`vocab.txt`: one token per line, the line number is its id), as an
/// open-addressing hash table over UTF-8 bytes.
///
/// Lookups take the bytes of a word (and whether to prefix them with `##`, the continuation marker)
/// without building a `String`: the tokenizer looks up many candidate substrings per word, and Swift's
/// `String` keys would also compare by canonical equivalence, where the vocabulary means bytes.
struct WordPieceVocabulary: Sendable {
    /// All tokens' UTF-8 bytes, back to back.
    private let bytes: [UInt8]
    /// Token `i` is `bytes[starts[i]..<starts[i + 1]]`.
    private let starts: [Int32]
    /// Slot → token id, or -1 for an empty slot; the size is a power of two.
    private let slots: [Int32]
    /// The number of tokens.
    let count: Int
    /// The longest token, in bytes (the `##` included).
    let longestTokenBytes: Int

    /// Reads a vocabulary from the text of `vocab.txt`.
    /// - Throws: ``SluiceError/Code/configuration`` for an empty file or a token listed twice.
    init(text: String) throws {
        var tokens = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.utf8 }
        if let last = tokens.last, last.isEmpty { tokens.removeLast() }
        guard !tokens.isEmpty else { throw SluiceError(.configuration, "vocab.txt is empty") }
        var bytes: [UInt8] = []
        var starts: [Int32] = [0]
        var longest = 0
        for token in tokens {
            var token = Array(token)
            if token.last == UInt8(ascii: "\r") { token.removeLast() }
            bytes += token
            starts.append(Int32(bytes.count))
            longest = max(longest, token.count)
        }
        var capacity = 1
        while capacity < tokens.count * 2 { capacity <<= 1 }
        var slots = [Int32](repeating: -1, count: capacity)
        for id in 0..<tokens.count {
            let token = bytes[Int(starts[id])..<Int(starts[id + 1])]
            var slot = Int(Self.hash(prefixed: false, token) & UInt64(capacity - 1))
            while slots[slot] >= 0 {
                let other = Int(slots[slot])
                if bytes[Int(starts[other])..<Int(starts[other + 1])].elementsEqual(token) {
                    throw SluiceError(
                        .configuration,
                        "vocab.txt lists '\(String(decoding: token, as: UTF8.self))' twice"
                    )
                }
                slot = (slot + 1) & (capacity - 1)
            }
            slots[slot] = Int32(id)
        }
        self.bytes = bytes
        self.starts = starts
        self.slots = slots
        self.count = tokens.count
        self.longestTokenBytes = longest
    }

    /// The id of `word` (of `##word` when `prefixed`), or nil when it is not in the vocabulary.
    func id<Bytes: Collection<UInt8>>(prefixed: Bool, _ word: Bytes) -> Int32? {
        let mask = slots.count - 1
        var slot = Int(Self.hash(prefixed: prefixed, word) & UInt64(mask))
        let length = word.count + (prefixed ? 2 : 0)
        while true {
            let id = slots[slot]
            if id < 0 { return nil }
            let start = Int(starts[Int(id)])
            let end = Int(starts[Int(id) + 1])
            if end - start == length && matches(prefixed: prefixed, word, at: start) { return id }
            slot = (slot + 1) & mask
        }
    }

    /// The id of a token given as a string.
    func id(of token: String) -> Int32? { id(prefixed: false, Array(token.utf8)) }

    private func matches<Bytes: Collection<UInt8>>(prefixed: Bool, _ word: Bytes, at start: Int) -> Bool {
        var index = start
        if prefixed {
            guard bytes[index] == UInt8(ascii: "#"), bytes[index + 1] == UInt8(ascii: "#") else { return false }
            index += 2
        }
        for byte in word {
            if bytes[index] != byte { return false }
            index += 1
        }
        return true
    }

    /// FNV-1a over the bytes (with `##` first when `prefixed`).
    private static func hash<Bytes: Collection<UInt8>>(prefixed: Bool, _ word: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        if prefixed {
            hash = (hash ^ 0x23) &* 0x100_0000_01b3
            hash = (hash ^ 0x23) &* 0x100_0000_01b3
        }
        for byte in word { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        // Mix the high bits down: the table is indexed by the low bits.
        return hash ^ (hash >> 29)
    }
}
