import Foundation
import SluiceCore
import Testing

/// The examples of docs/USAGE.md's "Filters" section are filters the parser reads (and writes back).
@Suite struct SearchFilterDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The lines of the fenced blocks between "## Filters" and the next section.
    static func examples() throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/USAGE.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## Filters\n").dropFirst().first)
            .components(separatedBy: "\n## ")[0]
        var lines: [String] = []
        var inside = false
        for line in section.components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                inside.toggle()
            } else if inside, !line.isEmpty {
                lines.append(line)
            }
        }
        return lines
    }

    @Test func everyExampleParses() throws {
        let examples = try Self.examples()
        #expect(examples.count >= 7)
        for example in examples {
            let filter = try SearchFilter(parsing: example)
            #expect(try SearchFilter(parsing: filter.description) == filter, "\(example)")
        }
    }
}
