import Foundation
import Testing

/// Every relative link of the docs reaches a file of the repository, and every `#anchor` a heading of it, so
/// that moving a section (or a page into `docs/notes/`) cannot leave a reader at a dead link.
@Suite struct DocumentedLinksTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// README.md, and every Markdown page under docs/ and Benchmarks/, as paths relative to the root.
    static func pages() -> [String] {
        var pages = ["README.md"]
        for folder in ["docs", "Benchmarks"] {
            guard let files = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path) else {
                continue
            }
            for case let file as String in files where file.hasSuffix(".md") {
                pages.append("\(folder)/\(file)")
            }
        }
        return pages.sorted()
    }

    /// The anchors GitHub gives a page's headings: lower-cased, punctuation other than `-` and `_` dropped,
    /// spaces as `-`, and `-1`, `-2`… for repeated headings. Fenced blocks hold no headings.
    static func anchors(of text: String) -> Set<String> {
        var anchors: Set<String> = []
        var seen: [String: Int] = [:]
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle() }
            guard !inFence, line.hasPrefix("#") else { continue }
            let title = line.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces)
            var slug = ""
            for scalar in title.lowercased().unicodeScalars {
                if scalar == " " {
                    slug.append("-")
                } else if scalar == "-" || scalar == "_" || CharacterSet.alphanumerics.contains(scalar) {
                    slug.unicodeScalars.append(scalar)
                }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// The targets of a page's inline links `[text](target)`, outside fenced blocks and code spans.
    static func links(in text: String) -> [String] {
        var targets: [String] = []
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle() }
            if inFence { continue }
            let chars = Array(line)
            var index = 0
            var inCode = false
            while index < chars.count {
                if chars[index] == "`" { inCode.toggle() }
                if !inCode, chars[index] == "]", index + 1 < chars.count, chars[index + 1] == "(" {
                    if let close = chars[(index + 2)...].firstIndex(of: ")") {
                        targets.append(String(chars[(index + 2)..<close]))
                        index = close
                    }
                }
                index += 1
            }
        }
        return targets
    }

    @Test func anchorsFollowGitHubsRules() {
        let anchors = Self.anchors(
            of: "# Status\n## Extraction: PDF vs `pdftotext`, OCR\n```\n# not a heading\n```\n## Status\n"
        )
        #expect(anchors == ["status", "extraction-pdf-vs-pdftotext-ocr", "status-1"])
        #expect(Self.links(in: "see [a](A.md#x) and `[b](B.md)`\n```\n[c](C.md)\n```") == ["A.md#x"])
    }

    @Test func everyRelativeLinkReachesAFileAndItsAnchor() throws {
        var checked = 0
        for page in Self.pages() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(page), encoding: .utf8)
            let folder = (page as NSString).deletingLastPathComponent
            for link in Self.links(in: text) {
                guard !link.contains("://"), !link.hasPrefix("mailto:") else { continue }
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let anchor = parts.count > 1 ? String(parts[1]) : nil
                let target =
                    path.isEmpty
                    ? page
                    : ((folder as NSString).appendingPathComponent(path) as NSString)
                        .standardizingPath
                let url = Self.root.appendingPathComponent(target)
                checked += 1
                guard FileManager.default.fileExists(atPath: url.path) else {
                    Issue.record("\(page): the link \(link) reaches no file (\(target))")
                    continue
                }
                if let anchor, target.hasSuffix(".md") {
                    let headings = Self.anchors(of: try String(contentsOf: url, encoding: .utf8))
                    let found = headings.contains(anchor)
                    #expect(found, "\(page): the link \(link) names no heading of \(target)")
                }
            }
        }
        #expect(checked > 100, "the docs' links were not found")
    }
}
