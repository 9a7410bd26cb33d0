import ArgumentParser
import Foundation
import SluiceCore
import SluiceTesting

/// Builds a text corpus from real documents on the machine (/usr/share/doc): plain files and
/// decompressed `.gz` ones, cut into documents of 4–64 KiB. Copy k > 0 of the corpus shuffles each
/// document's paragraphs with a seed of its own, so copies are new text (not cache hits).
///
/// `--kind doc-files` builds issue 19's latency corpus instead: whole files, as they are (see
/// `CorpusCommand+DocFiles.swift`).
struct CorpusCommand: ParsableCommand {
    enum Kind: String, ExpressibleByArgument, CaseIterable {
        /// Documents of 4–64 KiB cut from /usr/share/doc, each copy's paragraphs shuffled.
        case shuffled
        /// Whole Debian copyright, README, NEWS and changelog files and Python docstrings.
        case docFiles = "doc-files"
    }

    static let configuration = CommandConfiguration(
        commandName: "corpus",
        abstract: "Build a text corpus from /usr/share/doc."
    )

    @Option(help: "Target size in MB of one copy.") var sizeMB = 50
    @Option(help: "How many copies (each shuffled differently).") var copies = 1
    @Option(help: "Where to write it (emptied first).") var out: String
    @Option(help: "Where to read documents from.") var from = "/usr/share/doc"
    @Option(help: "shuffled (documents cut from --from, shuffled per copy) or doc-files (whole files, one copy).")
    var kind: Kind = .shuffled

    func run() throws {
        let outURL = URL(fileURLWithPath: out)
        try? FileManager.default.removeItem(at: outURL)
        try FileManager.default.createDirectory(at: outURL, withIntermediateDirectories: true)
        if kind == .docFiles {
            let (files, bytes) = try writeDocFiles(into: outURL, limitBytes: sizeMB << 20)
            print("corpus: \(files) files, \(String(format: "%.1f", Double(bytes) / 1_048_576)) MB in \(outURL.path)")
            return
        }
        let texts = try collectTexts(limitBytes: sizeMB << 20)
        var written = 0
        var files = 0
        for copy in 0..<copies {
            var rng = SplitMix64(seed: UInt64(copy) &+ 7)
            for (index, text) in texts.enumerated() {
                var paragraphs = text.components(separatedBy: "\n\n")
                if copy > 0 { paragraphs.shuffle(using: &rng) }
                let body = paragraphs.joined(separator: "\n\n")
                let folder = outURL.appendingPathComponent("copy\(copy)/d\(index / 500)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try body.write(to: folder.appendingPathComponent("doc\(index).txt"), atomically: false, encoding: .utf8)
                written += body.utf8.count
                files += 1
            }
        }
        print("corpus: \(files) files, \(String(format: "%.1f", Double(written) / 1_048_576)) MB in \(outURL.path)")
    }

    private func collectTexts(limitBytes: Int) throws -> [String] {
        var texts: [String] = []
        var total = 0
        guard let walker = FileManager.default.enumerator(atPath: from) else {
            throw ValidationError("cannot read \(from)")
        }
        var paths: [String] = []
        while let path = walker.nextObject() as? String { paths.append(path) }
        for path in paths.sorted() {
            if total >= limitBytes { break }
            let url = URL(fileURLWithPath: from).appendingPathComponent(path)
            guard let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .isSymbolicLinkKey]),
                values.isRegularFile == true, values.isSymbolicLink != true
            else { continue }
            if path.hasSuffix("copyright") { continue }
            var data: Data?
            if path.hasSuffix(".gz") {
                data = gunzip(url)
            } else if url.pathExtension.isEmpty || ["txt", "md", "rst", "html", "text"].contains(url.pathExtension) {
                data = try? Data(contentsOf: url)
            }
            guard let data, data.count > 2_000, let text = String(data: data, encoding: .utf8), !text.contains("\u{0}")
            else { continue }
            // Cut into documents of at most 64 KiB at paragraph boundaries.
            var current = ""
            for paragraph in text.components(separatedBy: "\n\n") {
                current += paragraph + "\n\n"
                if current.utf8.count > 65_536 {
                    texts.append(current)
                    total += current.utf8.count
                    current = ""
                }
            }
            if current.utf8.count > 4_096 {
                texts.append(current)
                total += current.utf8.count
            }
        }
        return texts
    }

    func gunzip(_ url: URL) -> Data? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-dc", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? data : nil
    }
}
