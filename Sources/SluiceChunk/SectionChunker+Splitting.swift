import SluiceCore

/// The separators ``RecursiveChunker`` tries, strongest first.
enum SplitLevel: Int, Comparable {
    /// A blank line (a run of white space with two line breaks or more), a form feed or U+2029.
    case paragraph
    /// A line break.
    case line
    /// White space after a sentence terminator, or nothing after a full-width one (`。`).
    case sentence
    /// Any white space.
    case word
    /// Between two characters: the last resort.
    case character

    static func < (lhs: SplitLevel, rhs: SplitLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension SectionChunker {
    /// Splits the text at `range` (trimmed, counting `tokens`) into pieces that fit and hands them to
    /// the merger in order, splitting at separators of `level` first.
    ///
    /// `level` is the strongest separator inside `range` as the scan of the enclosing range found it
    /// (`.paragraph` for a whole section), so levels absent from the text cost no scan at all: a 50 MB line without white space goes
    /// straight to ``SplitLevel/character``.
    mutating func split(_ range: Range<Int>, tokens: Int, level: SplitLevel) {
        if tokens <= maxTokens {
            add(TextPiece(range: range, tokens: tokens))
            return
        }
        if level == .character {
            splitCharacters(range, tokens: tokens)
            return
        }
        Self.forEachPart(of: range, separatedAt: level, in: bytes) { part, strongestInside in
            // A part that is the whole range keeps its count.
            let partTokens = part == range ? tokens : count(part)
            split(part, tokens: partTokens, level: strongestInside)
        }
    }

    /// Calls `body` with each part of `range` between separators of `level` or stronger, in order, and
    /// the strongest separator inside that part (``SplitLevel/character`` if none).
    ///
    /// `range` must be trimmed; the parts are trimmed and non-empty, and only white space lies
    /// between them.
    static func forEachPart(
        of range: Range<Int>,
        separatedAt level: SplitLevel,
        in bytes: UnsafeBufferPointer<UInt8>,
        _ body: (Range<Int>, SplitLevel) -> Void
    ) {
        guard let base = bytes.baseAddress, !range.isEmpty else { return }
        let end = range.upperBound
        var partStart = range.lowerBound
        var strongestInside = SplitLevel.character
        var index = range.lowerBound
        // The last visible scalars were a sentence terminator, maybe followed by closing punctuation.
        var afterTerminator = false
        var afterFullWidthTerminator = false
        while index < end {
            // Unchecked, like the rest of this loop: it sees every byte (`range` is within `bytes`).
            let byte = base[index]
            // Fast path: printable ASCII that is neither white space nor part of a sentence end.
            // (Spelled out rather than in a helper: this loop sees every byte and debug builds do not inline.)
            if byte > 0x20 && byte < 0x80 && !afterTerminator && byte != 0x2E && byte != 0x21 && byte != 0x3F {
                index += 1
                continue
            }
            let (scalar, length) = UTF8Decoding.scalar(in: bytes, at: index)
            if byte <= 0x20 ? ASCII.isWhitespace(byte) : byte >= 0x80 && scalar.properties.isWhitespace {
                let runStart = index
                let (runEnd, strength) = whitespaceRun(from: index, to: end, in: bytes)
                index = runEnd
                let separator = strength == .word && afterTerminator ? .sentence : strength
                if separator <= level {
                    body(partStart..<runStart, strongestInside)
                    partStart = index
                    strongestInside = .character
                } else {
                    strongestInside = min(strongestInside, separator)
                }
                afterTerminator = false
                afterFullWidthTerminator = false
                continue
            }
            if let fullWidth = sentenceTerminator(scalar) {
                afterTerminator = true
                afterFullWidthTerminator = afterFullWidthTerminator || fullWidth
            } else if afterTerminator && isClosingPunctuation(scalar) {
                // `."` and `。」` still end the sentence.
            } else {
                if afterFullWidthTerminator && index > partStart {
                    if level >= .sentence {
                        body(partStart..<index, strongestInside)
                        partStart = index
                        strongestInside = .character
                    } else {
                        strongestInside = min(strongestInside, .sentence)
                    }
                }
                afterTerminator = false
                afterFullWidthTerminator = false
            }
            index += length
        }
        body(partStart..<end, strongestInside)
    }

    /// The end of the run of white space that starts at `start`, and the strongest separator it makes
    /// by itself: a paragraph (two line breaks or more, a form feed, U+2029), a line, or a word.
    private static func whitespaceRun(
        from start: Int,
        to end: Int,
        in bytes: UnsafeBufferPointer<UInt8>
    ) -> (end: Int, strength: SplitLevel) {
        var index = start
        var lineBreaks = 0
        var paragraphMark = false
        var previousWasCR = false
        while index < end {
            let byte = bytes[index]
            var value = UInt32(byte)
            var length = 1
            if byte < 0x80 {
                guard ASCII.isWhitespace(byte) else { break }
            } else {
                let (scalar, scalarLength) = UTF8Decoding.scalar(in: bytes, at: index)
                guard scalar.properties.isWhitespace else { break }
                value = scalar.value
                length = scalarLength
            }
            switch value {
            case 0x0A:
                if !previousWasCR { lineBreaks += 1 }
            case 0x0D, 0x0B, 0x85, 0x2028:
                lineBreaks += 1
            case 0x0C, 0x2029:
                paragraphMark = true
            default:
                break
            }
            previousWasCR = value == 0x0D
            index += length
        }
        let strength: SplitLevel = paragraphMark || lineBreaks >= 2 ? .paragraph : lineBreaks == 1 ? .line : .word
        return (index, strength)
    }

    /// Whether `scalar` ends a sentence: `nil` if not, `true` for full-width terminators, which end a
    /// sentence even when no white space follows (CJK text has none).
    static func sentenceTerminator(_ scalar: Unicode.Scalar) -> Bool? {
        switch scalar.value {
        case 0x2E, 0x21, 0x3F, 0x2026, 0x203C, 0x2047...0x2049, 0x061F, 0x06D4, 0x0964, 0x0965:
            return false  // . ! ? … ‼ ⁇ ⁈ ⁉ ؟ ۔ । ॥
        case 0x3002, 0xFF61, 0xFF01, 0xFF1F:
            return true  // 。 ｡ ！ ？
        default:
            return nil
        }
    }

    /// Closing quotes and brackets that may follow a sentence terminator.
    static func isClosingPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x22, 0x27, 0x29, 0x5D, 0x7D, 0xBB, 0x2019, 0x201D, 0x203A, 0x300D, 0x300F, 0xFF09, 0x3011:
            return true  // " ' ) ] } » ’ ” › 」 』 ） 】
        default:
            return false
        }
    }

    /// Cuts `range`, which holds no white space but counts more than `maxTokens`, into windows that fit.
    ///
    /// A window's length is estimated from the bytes per token seen so far, counted, and shrunk in
    /// proportion when it does not fit, so each byte is counted about twice: linear time even for a
    /// 50 MB line.
    mutating func splitCharacters(_ range: Range<Int>, tokens: Int) {
        var start = range.lowerBound
        var guess = Self.scaled(range.count, by: maxTokens, over: tokens)
        while start < range.upperBound {
            var length = guess
            while true {
                let end = cutPoint(after: start, length: length, limit: range.upperBound)
                let windowTokens = count(start..<end)
                if windowTokens <= maxTokens || length == 1 {
                    // A single character that counts more than maxTokens is kept whole: nothing smaller exists.
                    add(TextPiece(range: start..<end, tokens: windowTokens))
                    let filled = Self.scaled(end - start, by: maxTokens, over: windowTokens)
                    guess = min(max(filled, length / 2, 1), 2 * length)
                    start = end
                    break
                }
                // Shrink at least by a sixteenth so that a counter that barely moves still converges fast.
                length = max(1, min(Self.scaled(length, by: maxTokens, over: windowTokens), length - length / 16 - 1))
            }
        }
    }

    /// `value * numerator / denominator`, at least 1, without overflow.
    static func scaled(_ value: Int, by numerator: Int, over denominator: Int) -> Int {
        guard denominator > 0 else { return max(value, 1) }
        let (product, overflow) = value.multipliedReportingOverflow(by: numerator)
        return overflow ? Int.max / 2 : max(product / denominator, 1)
    }

    /// The end of a window of about `length` bytes from `start`, at most `limit`: on a scalar boundary,
    /// and not inside a grapheme cluster (before a combining mark, around a zero-width joiner) unless
    /// the cluster is longer than the window. Always after `start`.
    func cutPoint(after start: Int, length: Int, limit: Int) -> Int {
        if length >= limit - start { return limit }
        var end = start + length
        while end > start && UTF8Decoding.isContinuation(bytes[end]) { end -= 1 }
        while end > start && extendsCluster(at: end) {
            end = UTF8Decoding.scalarStart(in: bytes, before: end)
        }
        if end > start { return end }
        // The window is inside one long cluster (or shorter than one scalar): take at least one scalar.
        return min(start + UTF8Decoding.scalar(in: bytes, at: start).length, limit)
    }

    /// Whether a cut just before the scalar at `offset` would break a grapheme cluster.
    private func extendsCluster(at offset: Int) -> Bool {
        let scalar = UTF8Decoding.scalar(in: bytes, at: offset).scalar
        if !scalar.isASCII {
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                return true
            default:
                break
            }
            // Zero-width joiner, emoji modifiers, tag characters.
            if scalar.value == 0x200D || (0x1F3FB...0x1F3FF).contains(scalar.value)
                || (0xE0020...0xE007F).contains(scalar.value)
            {
                return true
            }
        }
        let previous = UTF8Decoding.scalarStart(in: bytes, before: offset)
        return UTF8Decoding.scalar(in: bytes, at: previous).scalar.value == 0x200D
    }
}
