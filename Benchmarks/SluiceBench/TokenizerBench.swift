import ArgumentParser
import Foundation
import SluiceCore
import SluiceEmbed

#if canImport(Glibc)
import Glibc
#endif

/// `sluice-bench tokenizer`: Sluice's BPE tokenizers (`count` and `encode`) beside tiktoken's `encode_ordinary`
/// on the same texts, one thread each, in one run: MB/s of each and the ratio, medians of `--repeats`, for
/// cl100k_base and o200k_base. tiktoken (PyPI, pinned) is installed into the tools venv on first use.
struct TokenizerBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokenizer",
        abstract: "cl100k/o200k BPE tokenizer throughput vs tiktoken's encode_ordinary (MB/s, one thread each)."
    )

    static let tiktokenVersion = "0.14.0"

    @Option(help: "A folder of text files (a corpus from `sluice-bench corpus`); every regular file is read as UTF-8.")
    var corpus: String
    @Option(help: "Timed passes per side (the median is reported); at least 3.") var repeats = 3
    @Option(parsing: .upToNextOption, help: "Encodings to measure.") var encodings = BPETokenizer.supportedEncodings
    @Option(help: "The reference script.") var reference = "scripts/reference/tiktoken_bench.py"
    @Flag(help: "Measure Sluice only (no tiktoken).") var skipReference = false

    func validate() throws {
        guard repeats >= 3 else { throw ValidationError("--repeats must be at least 3 (medians of 3 or more)") }
    }

    func run() throws {
        let texts = try Self.texts(in: corpus)
        let bytes = texts.reduce(0) { $0 + $1.utf8.count }
        print("corpus \(corpus): \(texts.count) texts, \(f(Double(bytes) / 1e6, 2)) MB of UTF-8")
        let textsFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-tokenizer-bench-\(getpid()).json"
        )
        defer { try? FileManager.default.removeItem(at: textsFile) }
        if !skipReference {
            try JSONEncoder().encode(texts).write(to: textsFile)
            try Self.installTiktoken()
        }
        print("encoding      sluice count MB/s  sluice encode MB/s  tiktoken MB/s  count/tiktoken  encode/tiktoken")
        for name in encodings {
            let tokenizer = try BPETokenizer.named(name)
            // One untimed pass each (page faults of the rank tables), which also gives the totals.
            let counted = texts.reduce(0) { $0 + tokenizer.count($1[...]) }
            let encoded = texts.reduce(0) { $0 + tokenizer.encode($1[...]).count }
            var countSeconds: [Double] = []
            var encodeSeconds: [Double] = []
            for _ in 0..<repeats {
                countSeconds.append(Self.timed { for text in texts { _ = tokenizer.count(text[...]) } })
                encodeSeconds.append(Self.timed { for text in texts { _ = tokenizer.encode(text[...]) } })
            }
            let countRate = Double(bytes) / 1e6 / median(countSeconds)
            let encodeRate = Double(bytes) / 1e6 / median(encodeSeconds)
            var line = name.padding(toLength: 14, withPad: " ", startingAt: 0)
            line += f(countRate, 1).leftPadded(17) + f(encodeRate, 1).leftPadded(20)
            var notes = ["tokens \(counted)"]
            if encoded != counted { notes.append("MISMATCH: encode gives \(encoded)") }
            if !skipReference {
                let (tokens, seconds) = try referenceRun(name, textsFile: textsFile)
                let rate = Double(bytes) / 1e6 / median(seconds)
                line += f(rate, 1).leftPadded(15) + (f(countRate / rate, 2) + "×").leftPadded(16)
                line += (f(encodeRate / rate, 2) + "×").leftPadded(17)
                if tokens != counted { notes.append("MISMATCH: tiktoken gives \(tokens)") }
                notes.append("tiktoken s: " + seconds.map { f($0, 3) }.joined(separator: " "))
            }
            notes.append("count s: " + countSeconds.map { f($0, 3) }.joined(separator: " "))
            notes.append("encode s: " + encodeSeconds.map { f($0, 3) }.joined(separator: " "))
            print(line)
            print("    " + notes.joined(separator: "; "))
        }
    }

    /// Every regular file under `folder`, sorted by path, decoded as UTF-8 (invalid bytes replaced).
    static func texts(in folder: String) throws -> [String] {
        try TextBench.files(in: folder).map {
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: $0)), as: UTF8.self)
        }
    }

    static var python: String { SinkBench.cacheDirectory.appendingPathComponent("venv/bin/python").path }

    /// Installs the pinned tiktoken into the tools venv unless it is there already.
    static func installTiktoken() throws {
        let check = "import tiktoken, sys; sys.exit(tiktoken.__version__ != '\(tiktokenVersion)')"
        if (try? SinkBench.execute(python, ["-c", check], [:])) != nil { return }
        print("installing tiktoken \(tiktokenVersion) into the tools venv")
        _ = try SinkBench.execute(
            python,
            ["-m", "pip", "install", "-q", "--disable-pip-version-check", "tiktoken==\(tiktokenVersion)"],
            [:]
        )
    }

    /// tiktoken's token total and timed passes over the texts.
    private func referenceRun(_ name: String, textsFile: URL) throws -> (tokens: Int, seconds: [Double]) {
        let output = try SinkBench.execute(Self.python, [reference, textsFile.path, name, "\(repeats)"], [:])
        guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
            let tokens = object["tokens"] as? Int, let seconds = object["seconds"] as? [Double]
        else { throw ValidationError("unexpected output of \(reference): \(output)") }
        return (tokens, seconds)
    }

    /// Seconds taken by `body`.
    static func timed(_ body: () -> Void) -> Double {
        let start = ContinuousClock.now
        body()
        return (ContinuousClock.now - start) / .seconds(1)
    }
}

extension String {
    /// The string right-aligned in `width` columns.
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
