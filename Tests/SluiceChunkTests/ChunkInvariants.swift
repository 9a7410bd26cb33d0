import SluiceCore
import Testing

/// Checks every guarantee of ``RecursiveChunker`` on `chunks`, the output for `document`.
///
/// Sections must be told apart by (page, heading path) from their neighbours.
func expectChunkGuarantees(
    _ chunks: [Chunk],
    of document: ExtractedText,
    maxTokens: Int,
    overlapTokens: Int,
    counter: any TokenCounter,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    // Ordinals 0…n-1.
    #expect(chunks.map(\.ordinal) == Array(chunks.indices), "ordinals", sourceLocation: sourceLocation)

    var remaining = chunks[...]
    for section in document.sections {
        let sectionChunks = remaining.prefix { $0.page == section.page && $0.headingPath == section.headingPath }
        remaining = remaining.dropFirst(sectionChunks.count)
        expectSectionGuarantees(
            Array(sectionChunks),
            of: section,
            maxTokens: maxTokens,
            overlapTokens: overlapTokens,
            counter: counter,
            sourceLocation: sourceLocation
        )
    }
    #expect(remaining.isEmpty, "chunks that belong to no section", sourceLocation: sourceLocation)
}

private func expectSectionGuarantees(
    _ chunks: [Chunk],
    of section: TextSection,
    maxTokens: Int,
    overlapTokens: Int,
    counter: any TokenCounter,
    sourceLocation: SourceLocation
) {
    let bytes = Array(section.text.utf8)
    var previousEnd = 0
    var previousStart = -1
    for chunk in chunks {
        let text = chunk.text
        let start = chunk.startOffset
        let end = start + text.utf8.count
        // Counted by the counter, within the budget.
        let tokens = counter.count(text)
        #expect(chunk.tokenCount == tokens, "tokenCount is the counter's count", sourceLocation: sourceLocation)
        #expect(tokens <= maxTokens, "chunk \(chunk.ordinal) has \(tokens) tokens", sourceLocation: sourceLocation)
        // Not empty, trimmed.
        #expect(!isBlank(text), "blank chunk \(chunk.ordinal)", sourceLocation: sourceLocation)
        #expect(
            text.unicodeScalars.first.map(isSpace) == false && text.unicodeScalars.last.map(isSpace) == false,
            "chunk \(chunk.ordinal) is not trimmed: \(text.debugDescription)",
            sourceLocation: sourceLocation
        )
        // A contiguous substring at startOffset (UTF-8).
        #expect(
            start >= 0 && end <= bytes.count,
            "chunk \(chunk.ordinal) out of its section",
            sourceLocation: sourceLocation
        )
        guard start >= 0 && end <= bytes.count else { return }
        #expect(
            bytes[start..<end].elementsEqual(text.utf8),
            "chunk \(chunk.ordinal) is not the section text at its offset",
            sourceLocation: sourceLocation
        )
        // In order, making progress; nothing but white space left out in between.
        #expect(
            start > previousStart && end > previousEnd,
            "chunk \(chunk.ordinal) goes back",
            sourceLocation: sourceLocation
        )
        if overlapTokens == 0 {
            #expect(
                start >= previousEnd,
                "chunk \(chunk.ordinal) overlaps without overlap",
                sourceLocation: sourceLocation
            )
        }
        if start > previousEnd {
            #expect(
                isBlank(decode(bytes[previousEnd..<start])),
                "text lost before chunk \(chunk.ordinal)",
                sourceLocation: sourceLocation
            )
        } else if start < previousEnd {
            let shared = counter.count(decode(bytes[start..<previousEnd]))
            #expect(
                shared <= overlapTokens,
                "chunk \(chunk.ordinal) repeats \(shared) tokens",
                sourceLocation: sourceLocation
            )
        }
        previousStart = start
        previousEnd = max(previousEnd, end)
    }
    #expect(isBlank(decode(bytes[previousEnd...])), "text lost at the end of a section", sourceLocation: sourceLocation)
}

func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace }

func isBlank(_ text: some StringProtocol) -> Bool { text.unicodeScalars.allSatisfy(isSpace) }

func decode(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

/// The text without any white space.
func visible(_ text: some StringProtocol) -> String {
    var out = String.UnicodeScalarView()
    out.append(contentsOf: text.unicodeScalars.lazy.filter { !isSpace($0) })
    return String(out)
}
