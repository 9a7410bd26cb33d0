import ArgumentParser
import Foundation
import SluiceTesting

/// `sluice-bench corpus --kind doc-files`: the plain-text corpus of issue 19's latency-bound benchmark, made
/// from what a Debian machine has: the `copyright`, `README*`, `NEWS*` and `changelog*` files under
/// `--from` (/usr/share/doc; `.gz` decompressed) and the docstrings of the Python standard library's modules
/// (`scripts/reference/python_docstrings.py`, one file per module). Files are kept whole (1–64 KiB, valid
/// UTF-8, no NUL); a quarter of the size goes to docstrings, the rest to documentation files, each picked in a
/// seeded order so the corpus spans the alphabet of packages. The same machine gives the same corpus.
extension CorpusCommand {
    /// The documentation files' names that the corpus takes.
    static func isDocFile(_ name: String) -> Bool {
        let base = name.hasSuffix(".gz") ? String(name.dropLast(3)) : name
        let lower = base.lowercased()
        return base == "copyright" || lower.hasPrefix("readme") || lower.hasPrefix("news")
            || lower.hasPrefix("changelog")
    }

    /// Writes the corpus under `root` (`doc/<package>/<file>.txt`, `python/<module>.txt`); returns the number
    /// of files and bytes written.
    func writeDocFiles(into root: URL, limitBytes: Int) throws -> (files: Int, bytes: Int) {
        var written = (files: 0, bytes: 0)
        func write(_ data: Data, _ relative: String) throws {
            let url = root.appendingPathComponent(relative)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try data.write(to: url)
            written.files += 1
            written.bytes += data.count
        }

        // Docstrings: up to a quarter of the size.
        let docstrings = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-docstrings-\(UInt32.random(in: 0...UInt32.max))"
        )
        defer { try? FileManager.default.removeItem(at: docstrings) }
        _ = try SinkBench.execute("/usr/bin/python3", ["scripts/reference/python_docstrings.py", docstrings.path], [:])
        var modules = try FileManager.default.contentsOfDirectory(atPath: docstrings.path).sorted()
        var rng = SplitMix64(seed: 19)
        modules.shuffle(using: &rng)
        for module in modules where written.bytes < limitBytes / 4 {
            let data = try Data(contentsOf: docstrings.appendingPathComponent(module))
            if Self.isPlainText(data) { try write(data, "python/\(module)") }
        }

        // Documentation files for the rest.
        guard let walker = FileManager.default.enumerator(atPath: from) else {
            throw ValidationError("cannot read \(from)")
        }
        var paths: [String] = []
        while let path = walker.nextObject() as? String {
            if Self.isDocFile((path as NSString).lastPathComponent) { paths.append(path) }
        }
        paths.sort()
        paths.shuffle(using: &rng)
        for path in paths where written.bytes < limitBytes {
            let url = URL(fileURLWithPath: from).appendingPathComponent(path)
            guard let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .isSymbolicLinkKey]),
                values.isRegularFile == true, values.isSymbolicLink != true
            else { continue }
            guard let data = path.hasSuffix(".gz") ? gunzip(url) : try? Data(contentsOf: url), Self.isPlainText(data)
            else { continue }
            let name = path.hasSuffix(".gz") ? String(path.dropLast(3)) : path
            try write(data, "doc/\(name).txt")
        }
        return written
    }

    /// 1–64 KiB of valid UTF-8 without NUL.
    static func isPlainText(_ data: Data) -> Bool {
        (1_024...65_536).contains(data.count) && !data.contains(0) && String(data: data, encoding: .utf8) != nil
    }
}
