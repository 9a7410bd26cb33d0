import Foundation
import Testing

/// Files the docs show (`<!-- file: PATH -->` before a fenced block) are shown as they are in the
/// repository: the Kubernetes manifests and systemd units a user applies are the ones the docs explain.
@Suite struct DocumentedFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// (document, path, the block's text) for every marked block of README.md and docs/*.md.
    static func shownFiles() throws -> [(document: String, path: String, shown: String)] {
        let docs = root.appendingPathComponent("docs")
        let pages =
            ["README.md"]
            + (try FileManager.default.contentsOfDirectory(atPath: docs.path)).filter { $0.hasSuffix(".md") }.map {
                "docs/\($0)"
            }
        var found: [(String, String, String)] = []
        for page in pages {
            let lines = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8).components(
                separatedBy: "\n"
            )
            for (index, line) in lines.enumerated() where line.hasPrefix("<!-- file: ") && line.hasSuffix(" -->") {
                let path = String(line.dropFirst("<!-- file: ".count).dropLast(" -->".count))
                guard index + 1 < lines.count, lines[index + 1].hasPrefix("```"),
                    let end = lines[(index + 2)...].firstIndex(where: { $0 == "```" })
                else {
                    Issue.record("\(page): the marker for \(path) is not followed by a fenced block")
                    continue
                }
                found.append((page, path, lines[(index + 2)..<end].joined(separator: "\n")))
            }
        }
        return found
    }

    @Test func everyShownFileIsTheRepositorysFile() throws {
        let shown = try Self.shownFiles()
        #expect(shown.count >= 4, "the deploy files are no longer shown in the docs")
        for (document, path, text) in shown {
            let file = try? String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
            #expect(file != nil, "\(document) shows \(path), which does not exist")
            if let file {
                #expect(
                    text == file.trimmingCharacters(in: .newlines),
                    "\(document) shows \(path) differently from the file"
                )
            }
        }
    }

    @Test func everyDeployFileIsShown() throws {
        let shown = Set(try Self.shownFiles().map(\.path))
        let deploy = Self.root.appendingPathComponent("deploy")
        let files = FileManager.default.enumerator(atPath: deploy.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".yaml") || file.hasSuffix(".service") || file.hasSuffix(".timer") {
            #expect(shown.contains("deploy/\(file)"), "deploy/\(file) is not shown in the docs")
        }
    }
}
