import Foundation

/// Natural texts for tests of tokenizers and chunkers: the repository's samples and a few of Debian's
/// documents (those installed on the machine).
public enum RealTexts {
    /// The repository's root folder.
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Debian's documents the texts include when they are installed.
    public static let debianDocuments = [
        "/usr/share/doc/bash/README", "/usr/share/doc/git/README.md", "/usr/share/doc/gzip/README",
    ]

    /// The files of `samples/text` and `samples/markdown` in name order, then ``debianDocuments``, each cut
    /// to its first `prefix` characters.
    public static func load(prefix: Int = .max) -> [String] {
        var paths: [String] = []
        for folder in ["samples/text", "samples/markdown"] {
            let url = repository.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
            paths += names.sorted().map { url.appendingPathComponent($0).path }
        }
        return (paths + debianDocuments).compactMap { path in
            (try? String(contentsOfFile: path, encoding: .utf8)).map { String($0.prefix(prefix)) }
        }
    }
}
