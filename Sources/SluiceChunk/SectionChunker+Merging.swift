import SluiceCore

extension SectionChunker {
    /// Adds the next piece of the section, first closing the chunk being formed if the piece does not
    /// fit in it, and starting a new chunk with the overlap of the previous one.
    mutating func add(_ piece: TextPiece) {
        while carried < pending.count && pendingTokens + piece.tokens > maxTokens {
            for heldBack in flush() { add(heldBack) }
        }
        if pending.isEmpty && !previous.isEmpty {
            // The overlap is sized for this piece, so that it never pushes the chunk past maxTokens.
            pending = overlap(of: previous, budget: min(overlapTokens, maxTokens - piece.tokens))
            pendingTokens = pending.reduce(0) { $0 + $1.tokens }
            carried = pending.count
            previous = []
        }
        while carried > 0 && pendingTokens + piece.tokens > maxTokens {
            dropFirstPending()
        }
        pending.append(piece)
        pendingTokens += piece.tokens
    }

    /// Emits the last chunk of the section.
    mutating func finish() {
        while carried < pending.count {
            for heldBack in flush() { add(heldBack) }
        }
    }

    /// Emits the pending pieces as a chunk and keeps them as `previous`, to take the overlap from.
    ///
    /// The chunk's count is the count of its whole text (from the section's index: no new tokenizing).
    /// Should it be more than `maxTokens` (white space between pieces can count, so the sum of the
    /// pieces' counts may underestimate), the overlap is dropped first, then pieces at the end are held
    /// back until the chunk fits; they are returned, to be added again.
    /// - Returns: The pieces held back, in order.
    private mutating func flush() -> [TextPiece] {
        var heldBack: [TextPiece] = []
        var range = pending[0].range.lowerBound..<pending[pending.count - 1].range.upperBound
        // A piece's count is the counter's count of its range; only merged pieces need counting again.
        var tokens = pending.count == 1 ? pending[0].tokens : count(range)
        while tokens > maxTokens && pending.count > 1 {
            if carried > 0 {
                dropFirstPending()
            } else {
                let last = pending.removeLast()
                pendingTokens -= last.tokens
                heldBack.append(last)
            }
            range = pending[0].range.lowerBound..<pending[pending.count - 1].range.upperBound
            tokens = count(range)
        }
        emit(range, tokens: tokens)
        previous = pending
        pending = []
        pendingTokens = 0
        carried = 0
        return heldBack.reversed()
    }

    private mutating func dropFirstPending() {
        pendingTokens -= pending.removeFirst().tokens
        carried -= 1
    }

    /// The end of the chunk made of `pieces` that the next chunk repeats: the last whole pieces that fit
    /// in `budget` (never all of them), or, when the last piece alone is too large, its last words.
    private func overlap(of pieces: [TextPiece], budget: Int) -> [TextPiece] {
        guard budget > 0, let last = pieces.last else { return [] }
        var first = pieces.count
        var tokens = 0
        while first > 1 && tokens + pieces[first - 1].tokens <= budget {
            first -= 1
            tokens += pieces[first].tokens
        }
        // The sum of the pieces' counts is the count of the whole for a subadditive counter; one that
        // also counts the white space between pieces may give more, so check, giving up pieces in front.
        while pieces.count - first > 1 && count(pieces[first].range.lowerBound..<last.range.upperBound) > budget {
            first += 1
        }
        if first < pieces.count { return Array(pieces[first...]) }
        return trailingWords(of: last, budget: budget).map { [$0] } ?? []
    }

    /// The longest run of whole words at the end of `piece` that counts at most `budget`, as a piece;
    /// never the whole piece. Scans back only over the words it takes and the one it refuses.
    private func trailingWords(of piece: TextPiece, budget: Int) -> TextPiece? {
        var taken: Int?
        var tokens = 0
        var wordEnd = piece.range.upperBound
        while true {
            var wordStart = wordEnd
            while wordStart > piece.range.lowerBound {
                let before = UTF8Decoding.scalarStart(in: bytes, before: wordStart)
                if isWhitespace(at: before) { break }
                wordStart = before
            }
            // The first word of the piece would make the overlap the whole piece.
            guard wordStart > piece.range.lowerBound else { break }
            let wordTokens = count(wordStart..<wordEnd)
            guard tokens + wordTokens <= budget else { break }
            tokens += wordTokens
            taken = wordStart
            wordEnd = wordStart
            while wordEnd > piece.range.lowerBound {
                let before = UTF8Decoding.scalarStart(in: bytes, before: wordEnd)
                if !isWhitespace(at: before) { break }
                wordEnd = before
            }
        }
        guard var start = taken else { return nil }
        // As for whole pieces, the sum may underestimate: check, giving up words in front.
        var overlapTokens = count(start..<piece.range.upperBound)
        while overlapTokens > budget {
            while start < piece.range.upperBound && !isWhitespace(at: start) {
                start += UTF8Decoding.scalar(in: bytes, at: start).length
            }
            while start < piece.range.upperBound && isWhitespace(at: start) {
                start += UTF8Decoding.scalar(in: bytes, at: start).length
            }
            guard start < piece.range.upperBound else { return nil }
            overlapTokens = count(start..<piece.range.upperBound)
        }
        return TextPiece(range: start..<piece.range.upperBound, tokens: overlapTokens)
    }
}
