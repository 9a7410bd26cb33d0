import SluiceCore
import SluiceExtract

/// Places pictures' captions in a document's sections where the pictures sit
/// (``EmbeddedPicture/Place``): a paragraph of its own at the end of the page's or slide's last section,
/// or after the DOCX paragraph that ends with the picture's anchor words, found in order (a picture's
/// paragraph is searched from where the previous one was placed, then from the start). A paragraph that
/// cannot be found (its words written otherwise) places the caption at the end of the last section placed
/// in, or of the document; a picture before any text, at the start of the first section.
struct PicturePlacer {
    private(set) var sections: [TextSection]
    /// Where the last caption went: a section index, and the offset (UTF-8) after it.
    private var cursor = (section: 0, offset: 0)

    init(sections: [TextSection]) { self.sections = sections }

    mutating func place(_ caption: String, named name: String, at place: EmbeddedPicture.Place) {
        guard !sections.isEmpty else {
            sections.append(TextSection(text: caption))
            mark(0, name)
            return
        }
        switch place {
        case .page(let page):
            let index = sections.lastIndex { $0.page == page } ?? sections.lastIndex { ($0.page ?? 0) < page } ?? 0
            insert(caption, in: index, at: sections[index].text.utf8.count, name)
        case .start:
            insert(caption, in: 0, at: 0, name)
        case .after(let words):
            if let found = find(words, from: cursor) ?? find(words, from: (0, 0)) {
                insert(caption, in: found.section, at: found.offset, name)
            } else {
                let index = min(cursor.section, sections.count - 1)
                insert(caption, in: index, at: sections[index].text.utf8.count, name)
            }
        }
    }

    /// The end of the paragraph (block) holding `words` in order, whitespace aside, from `start` on.
    private func find(_ words: [String], from start: (section: Int, offset: Int)) -> (section: Int, offset: Int)? {
        guard !words.isEmpty else { return nil }
        for index in start.section..<sections.count {
            let utf8 = Array(sections[index].text.utf8)
            let from = index == start.section ? start.offset : 0
            // The section's words with where each ends.
            var found: [(word: [UInt8], end: Int)] = []
            var position = from
            while position < utf8.count {
                while position < utf8.count, Self.isSpace(utf8[position]) { position += 1 }
                let begin = position
                while position < utf8.count, !Self.isSpace(utf8[position]) { position += 1 }
                if position > begin { found.append((Array(utf8[begin..<position]), position)) }
            }
            let wanted = words.map { Array($0.utf8) }
            guard found.count >= wanted.count else { continue }
            for first in 0...(found.count - wanted.count)
            where (0..<wanted.count).allSatisfy({ found[first + $0].word == wanted[$0] }) {
                let end = found[first + wanted.count - 1].end
                return (index, Self.blockEnd(utf8, after: end))
            }
        }
        return nil
    }

    /// The offset of the blank line (`\n\n`) that ends the block holding `offset`, or the text's end.
    private static func blockEnd(_ utf8: [UInt8], after offset: Int) -> Int {
        var index = offset
        while index + 1 < utf8.count {
            if utf8[index] == 0x0A && utf8[index + 1] == 0x0A { return index }
            index += 1
        }
        return utf8.count
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// Inserts the caption as a paragraph at `offset` (a block's end, or 0) of section `index`.
    private mutating func insert(_ caption: String, in index: Int, at offset: Int, _ name: String) {
        var utf8 = Array(sections[index].text.utf8)
        let before = offset > 0 ? Array("\n\n".utf8) : []
        // At a block's end the blank line that follows stays after the caption; at the start one is added.
        let after = offset == 0 && !utf8.isEmpty ? Array("\n\n".utf8) : []
        let inserted = before + Array(caption.utf8)
        utf8.insert(contentsOf: inserted + after, at: offset)
        sections[index].text = String(decoding: utf8, as: UTF8.self)
        cursor = (index, offset + inserted.count)
        mark(index, name)
    }

    private mutating func mark(_ index: Int, _ name: String) {
        sections[index].metadata["text_source"] = "text,caption"
        let names = sections[index].metadata["picture_captions"].map { $0 + "," } ?? ""
        sections[index].metadata["picture_captions"] = names + name
    }
}
