import Foundation
import Testing

@testable import SluiceCore

/// docs/CONFIGURATION.md's "Every key" table against the decoder: one place per fact, checked.
@Suite struct ConfigurationReferenceTests {
    struct Row {
        var key: String
        /// The default when it is one literal in backticks (`200`, `["**/*"]`); nil for prose ("none").
        var literalDefault: String?
    }

    static let rows: [Row] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        guard let text = try? String(contentsOf: root.appendingPathComponent("docs/CONFIGURATION.md"), encoding: .utf8),
            let start = text.range(of: "## Every key")
        else { return [] }
        return text[start.upperBound...].split(separator: "\n").compactMap { line -> Row? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            // "| `key` | type | default | meaning |" splits into ["", key, type, default, meaning, ""].
            guard cells.count >= 6, cells[1].hasPrefix("`"), cells[1].hasSuffix("`"), cells[1].count > 2 else {
                return nil
            }
            let key = String(cells[1].dropFirst().dropLast())
            let cell = cells[3]
            let isLiteral =
                cell.hasPrefix("`") && cell.hasSuffix("`") && cell.count > 2
                && cell.dropFirst().dropLast().firstIndex(of: "`") == nil
            return Row(key: key, literalDefault: isLiteral ? String(cell.dropFirst().dropLast()) : nil)
        }
    }()

    @Test func theTableIsThere() {
        #expect(Self.rows.count > 50, "docs/CONFIGURATION.md's table was not found or not read")
        #expect(Set(Self.rows.map(\.key)).count == Self.rows.count, "a key is listed twice")
    }

    @Test func everyDocumentedKeyIsDecoded() {
        let decodable = PipelineConfiguration.decodableKeys
        for row in Self.rows {
            #expect(
                decodable.contains(row.key),
                "docs/CONFIGURATION.md documents \(row.key), which the decoder does not read"
            )
        }
    }

    @Test func everyDecodedKeyIsDocumented() {
        let decodable = PipelineConfiguration.decodableKeys
        // A section (a key other keys sit under) needs no row of its own.
        let leaves = decodable.filter { key in !decodable.contains { $0.hasPrefix(key + ".") } }
        let documented = Set(Self.rows.map(\.key))
        for key in leaves.sorted() {
            #expect(documented.contains(key), "the decoder reads \(key), which docs/CONFIGURATION.md does not document")
        }
    }

    /// Setting a key to its documented default changes nothing.
    @Test func documentedDefaultsAreTheDecodersDefaults() throws {
        let defaults = PipelineConfiguration()
        var checked = 0
        for row in Self.rows {
            guard let literal = row.literalDefault else { continue }
            let configuration = try PipelineConfiguration.load(file: nil, overrides: ["\(row.key)=\(literal)"])
            #expect(configuration == defaults, "\(row.key): the documented default \(literal) is not the decoder's")
            checked += 1
        }
        #expect(checked > 40)
    }

    /// The check above can fail: a wrong documented default is caught.
    @Test func aWrongDefaultIsCaught() throws {
        let changed = try PipelineConfiguration.load(file: nil, overrides: ["extract.max_file_mb=201"])
        #expect(changed != PipelineConfiguration())
    }
}
