import Foundation
import SluiceCore
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The campaign's bad inputs: documents (samples/bad and generated ones), settings (table and collection
/// names, URLs, pipeline values) and damaged state. A bad document fails alone with a reason while the
/// others are indexed as without it (exit 2, or 0 when it could be indexed after all); a bad setting or
/// state is a clear command error with a documented exit code (docs/DESIGN.md §7), never a crash.
extension FaultCampaignTests {
    // MARK: Documents

    /// A bad document: its name (raw bytes: not every name is UTF-8) and how to make it.
    struct BadDocument: Sendable, CustomTestStringConvertible {
        var name: String
        var path: [UInt8]
        /// Whether it is a regular file (a FIFO, a folder or a dangling link is no document: it may be
        /// passed over).
        var regular = true
        var settings: [String] = []
        var make: @Sendable (_ corpus: URL, _ path: [UInt8]) throws -> Void
        var testDescription: String { name }

        init(
            _ name: String,
            path: String,
            regular: Bool = true,
            settings: [String] = [],
            make: @escaping @Sendable (URL, [UInt8]) throws -> Void
        ) {
            self.init(name, bytes: Array(path.utf8), regular: regular, settings: settings, make: make)
        }

        init(
            _ name: String,
            bytes: [UInt8],
            regular: Bool = true,
            settings: [String] = [],
            make: @escaping @Sendable (URL, [UInt8]) throws -> Void
        ) {
            self.name = name
            self.path = bytes
            self.regular = regular
            self.settings = settings
            self.make = make
        }

        /// Writes `data` at the raw path (folders on the way created).
        static func write(_ data: Data, _ corpus: URL, _ path: [UInt8]) throws {
            let full = Array(corpus.path.utf8) + [UInt8(ascii: "/")] + path
            var parts = full.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            parts.removeLast()
            var folder: [UInt8] = []
            for part in parts where !part.isEmpty {
                folder += [UInt8(ascii: "/")] + part
                _ = mkdir(cString(folder), 0o755)
            }
            let fd = open(cString(full), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else {
                throw SluiceError(.io, "cannot create \(String(decoding: path, as: UTF8.self)): errno \(errno)")
            }
            defer { close(fd) }
            try data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                    guard written > 0 else { throw SluiceError(.io, "write failed: errno \(errno)") }
                    offset += written
                }
            }
        }

        /// Raw bytes as a NUL-terminated C string (a file name need not be UTF-8).
        static func cString(_ bytes: [UInt8]) -> [CChar] {
            bytes.map { CChar(bitPattern: $0) } + [0]
        }

        static func sample(_ path: String) throws -> Data {
            try Data(contentsOf: Corpus.repositoryRoot.appendingPathComponent("samples").appendingPathComponent(path))
        }
    }

    static let allBadDocuments: [BadDocument] = {
        var documents: [BadDocument] = []
        let bad = Corpus.repositoryRoot.appendingPathComponent("samples/bad")
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: bad.path)) ?? []).sorted() {
            documents.append(
                BadDocument("samples/bad/\(name)", path: "bad/\(name)") { corpus, path in
                    try BadDocument.write(try BadDocument.sample("bad/\(name)"), corpus, path)
                }
            )
        }
        func generated(
            _ name: String,
            _ path: String,
            regular: Bool = true,
            settings: [String] = [],
            _ data: @escaping @Sendable () throws -> Data
        ) {
            documents.append(
                BadDocument(name, path: path, regular: regular, settings: settings) { corpus, path in
                    try BadDocument.write(try data(), corpus, path)
                }
            )
        }
        generated("an empty text file", "gen/empty.txt") { Data() }
        generated("binary bytes named .txt", "gen/binary.txt") {
            var rng = SeededGenerator(seed: 0xB1)
            return Data((0..<40_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
        generated("a PDF cut in half", "gen/truncated.pdf") {
            let d = try BadDocument.sample("pdf/fontconfig-user.pdf")
            return d.prefix(d.count / 2)
        }
        generated("a PDF cut after its header", "gen/header-only.pdf") {
            try BadDocument.sample("pdf/fontconfig-user.pdf").prefix(1024)
        }
        generated("a DOCX cut in half", "gen/truncated.docx") {
            let d = try BadDocument.sample("docx/zstd-README.docx")
            return d.prefix(d.count / 2)
        }
        generated("a DOCX that is a ZIP of nothing", "gen/empty-zip.docx") {
            Data([0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18))
        }
        generated("one line of 3 MB", "gen/huge-line.txt") { Data(String(repeating: "word ", count: 600_000).utf8) }
        generated("one word of 1 MB", "gen/huge-word.txt") { Data(String(repeating: "x", count: 1 << 20).utf8) }
        generated("NUL bytes and control characters in text", "gen/controls.txt") {
            Data(
                ("Some text\u{0}with a NUL,\u{1b}[31m escapes\u{7}, a BOM \u{feff} and\r\nCRLF lines.\r\n"
                    + String(repeating: "More text. ", count: 200)).utf8
            )
        }
        generated("UTF-16 text named .txt", "gen/utf16.txt") {
            "A text in UTF-16 with a byte order mark.\n".data(using: .utf16)!
        }
        generated("HTML that never closes its tags", "gen/unclosed.html") {
            Data(String(repeating: "<div><p>text ", count: 20_000).utf8)
        }
        generated("JSON cut short", "gen/cut.json") { Data(#"{"a": [1, 2, {"b": "c"#.utf8) }
        generated("a file over extract.max_file_mb", "gen/big.txt", settings: ["--set", "extract.max_file_mb=1"]) {
            Data(String(repeating: "big file line\n", count: 150_000).utf8)
        }
        generated("a document 40 folders deep", (0..<40).map { "d\($0)" }.joined(separator: "/") + "/deep.txt") {
            Data("Deep inside the tree.\n".utf8)
        }
        generated("a name of 250 bytes", "gen/" + String(repeating: "n", count: 246) + ".txt") {
            Data("A long name.\n".utf8)
        }
        for (label, name) in [
            ("a newline", "new\nline"), ("a tab and a carriage return", "tab\there\rcr"),
            ("an escape sequence", "esc\u{1b}[2J"), ("a bell and DEL", "bell\u{7}del\u{7f}"),
        ] {
            generated("a name with \(label)", "gen/\(name).txt") { Data("A file with an odd name.\n".utf8) }
        }
        documents.append(
            BadDocument(
                "a name that is not UTF-8",
                bytes: Array("gen/latin1-".utf8) + [0xE9, 0xFF] + Array(".txt".utf8)
            ) { corpus, path in
                try BadDocument.write(Data("Named in Latin-1.\n".utf8), corpus, path)
            }
        )
        documents.append(
            BadDocument("a FIFO named .txt", path: "gen/pipe.txt", regular: false) { corpus, _ in
                try FileManager.default.createDirectory(
                    at: corpus.appendingPathComponent("gen"),
                    withIntermediateDirectories: true
                )
                guard mkfifo(corpus.appendingPathComponent("gen/pipe.txt").path, 0o644) == 0 else {
                    throw SluiceError(.io, "mkfifo: errno \(errno)")
                }
            }
        )
        documents.append(
            BadDocument("a folder named .txt", path: "gen/folder.txt", regular: false) { corpus, _ in
                try FileManager.default.createDirectory(
                    at: corpus.appendingPathComponent("gen/folder.txt"),
                    withIntermediateDirectories: true
                )
            }
        )
        documents.append(
            BadDocument("a symbolic link loop", path: "gen/loop.txt", regular: false) { corpus, _ in
                try FileManager.default.createDirectory(
                    at: corpus.appendingPathComponent("gen"),
                    withIntermediateDirectories: true
                )
                try FileManager.default.createSymbolicLink(
                    atPath: corpus.appendingPathComponent("gen/loop.txt").path,
                    withDestinationPath: "loop.txt"
                )
            }
        )
        return documents
    }()

    static let representativeBadDocuments = ["a PDF cut in half", "a name that is not UTF-8", "one line of 3 MB"]

    @Test(
        "a bad document fails alone with a reason; the other documents are indexed as without it",
        arguments: representativeBadDocuments
    )
    func badDocument(_ name: String) async throws {
        try await Self.badDocument(try #require(Self.allBadDocuments.first { $0.name == name }))
    }

    @Test(
        "the sweep: every bad document of samples/bad and the generated ones",
        .enabled(if: FaultCampaign.sweep),
        arguments: allBadDocuments.filter { !representativeBadDocuments.contains($0.name) }
    )
    func badDocumentSweep(_ document: BadDocument) async throws {
        try await Self.badDocument(document)
    }

    static func badDocument(_ document: BadDocument) async throws {
        let ws = try Workspace("faults-input")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 6, into: ws.corpus, seed: 0x5EED_1430, maxBytes: 3_000)
        let settings = ["--set", #"source.include=["**/*"]"#] + document.settings
        let reference = ws.target("reference")
        try await ws.run(reference, settings, expecting: 0)
        let expected = try Export.records(try await ws.export(reference))

        try await FaultCampaign.scenario(.input, "document: \(document.name)") { scenario in
            try document.make(ws.corpus, document.path)
            let target = ws.target("main")
            var exports: [Data] = []
            for attempt in 1...2 {
                let result = try await ws.run(target, settings, timeout: .seconds(300))
                scenario.expect(result.exitCode == 0 || result.exitCode == 2, "run \(attempt): \(result)")
                scenario.expect(!result.stderr.contains("Fatal error"), "run \(attempt) crashed: \(result)")
                exports.append(try await ws.export(target))
            }
            scenario.expectSameExport(exports[1], exports[0], "the second run changed the store")
            let records = try Export.records(exports[1])
            let good = records.filter { keys.contains($0.documentKey) }
            scenario.expect(good == expected, "the good documents are not stored as without the bad one")
            let status = try await ws.status(target)
            let failures = status.failures
            let others = Set(records.map(\.documentKey)).subtracting(keys)
            scenario.expect(
                failures.count + others.count <= 1,
                "more than the bad document failed or was added:\n\(status.text)"
            )
            if document.regular {
                scenario.expect(
                    failures.count + others.count == 1,
                    "the bad document is neither failed nor indexed:\n\(status.text)"
                )
            }
            for (key, reason) in failures {
                scenario.expect(
                    reason.contains(":") && reason.count > 8,
                    "\(key.debugDescription) failed without a clear reason: \(reason)"
                )
            }
            let verify = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments + settings)
            scenario.expect(verify.exitCode == 0, "verify: \(verify)")
        }
    }

    // MARK: Settings and state

    /// A bad setting or state, the command it is given to, and the exit codes that are right for it.
    struct BadSetting: Sendable, CustomTestStringConvertible {
        var name: String
        var settings: [String]
        var exits: Set<Int32>
        /// Damages the state folder of a target that has been indexed (nil: a fresh target).
        var damage: (@Sendable (URL) throws -> Void)?
        /// A store stand-in to run against (its URL and key are added to the settings).
        var store: StoreUnderTest.Kind?
        /// A defect found by the campaign and not fixed yet: the scenario runs as a known issue.
        var knownIssue: String?
        var testDescription: String { name }

        init(
            name: String,
            settings: [String],
            exits: Set<Int32>,
            store: StoreUnderTest.Kind? = nil,
            knownIssue: String? = nil,
            damage: (@Sendable (URL) throws -> Void)? = nil
        ) {
            self.knownIssue = knownIssue
            self.name = name
            self.settings = settings
            self.exits = exits
            self.store = store
            self.damage = damage
        }
    }

    static let allBadSettings: [BadSetting] = {
        var cases: [BadSetting] = []
        let unreachablePG = "postgresql://postgres@127.0.0.1:1/postgres"
        for table in [
            "x; drop table y", "", "a.b.c", String(repeating: "t", count: 80), "Robert'); DROP TABLE students;--",
            "naïve", "'\"quoted\"'",
        ] {
            cases.append(
                BadSetting(
                    name: "pgvector table \(table.debugDescription)",
                    settings: ["sink.kind=pgvector", "sink.url=\(unreachablePG)", "sink.table=\(table)"],
                    exits: [1]
                )
            )
        }
        // Against the Qdrant stand-in: escaped into the path and taken (0), or refused (1).
        for collection in ["../../etc", "a/b", "", "with space", "?x=1#y"] {
            cases.append(
                BadSetting(
                    name: "qdrant collection \(collection.debugDescription)",
                    settings: ["sink.kind=qdrant", "sink.collection=\(collection)"],
                    exits: [0, 1],
                    store: .qdrant
                )
            )
        }
        for url in [
            "not a url", "ftp://127.0.0.1/x", "http://", "http://[::1", "file:///etc/passwd", "http://127.0.0.1:99999",
        ] {
            cases.append(
                BadSetting(
                    name: "qdrant URL \(url.debugDescription)",
                    settings: ["sink.kind=qdrant", "sink.url=\(url)", "sink.collection=c"],
                    exits: [1]
                )
            )
            cases.append(
                BadSetting(
                    name: "embedder URL \(url.debugDescription)",
                    settings: [
                        "embed.provider=openai", "embed.base_url=\(url)", "embed.model=m", "embed.dimensions=8",
                        "embed.api_key_env=HOME",
                    ],
                    exits: [1]
                )
            )
        }
        // Unreachable, not malformed: a dependency is unavailable (docs/DESIGN.md §7).
        cases.append(
            BadSetting(
                name: "a store that refuses connections",
                settings: ["sink.kind=qdrant", "sink.url=http://127.0.0.1:1", "sink.collection=c"],
                exits: [6]
            )
        )
        cases.append(
            BadSetting(
                name: "an embedder that refuses connections",
                settings: [
                    "embed.provider=openai", "embed.base_url=http://127.0.0.1:1/v1", "embed.model=m",
                    "embed.dimensions=8", "embed.api_key_env=HOME", "embed.max_retries=1",
                ],
                exits: [6]
            )
        )
        cases.append(
            BadSetting(
                name: "a pgvector URL with a bad scheme",
                settings: ["sink.kind=pgvector", "sink.url=mysql://127.0.0.1/x", "sink.table=t"],
                exits: [1]
            )
        )
        for (key, value) in [
            ("embed.batch", "-1"), ("chunk.max_tokens", "0"), ("chunk.overlap_tokens", "100000"),
            ("embed.dimensions", "0"), ("run.buffer", "abc"), ("no.such_key", "1"), ("sink.kind", "nosuch"),
        ] {
            cases.append(BadSetting(name: "setting \(key)=\(value)", settings: ["\(key)=\(value)"], exits: [1]))
        }
        // Damaged state (StateDamageCLITests has truncated, emptied and rewritten records).
        cases.append(
            BadSetting(name: "state data.mdb of random bytes", settings: [], exits: [1]) { state in
                var rng = SeededGenerator(seed: 0xDA7A)
                let size =
                    try FileManager.default.attributesOfItem(atPath: state.appendingPathComponent("data.mdb").path)[
                        .size
                    ] as? Int ?? 65_536
                try Data((0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }).write(
                    to: state.appendingPathComponent("data.mdb")
                )
            }
        )
        cases.append(
            BadSetting(name: "state data.mdb is a folder", settings: [], exits: [1]) { state in
                try FileManager.default.removeItem(at: state.appendingPathComponent("data.mdb"))
                try FileManager.default.createDirectory(
                    at: state.appendingPathComponent("data.mdb"),
                    withIntermediateDirectories: false
                )
            }
        )
        cases.append(
            BadSetting(name: "the state folder is a file", settings: [], exits: [1]) { state in
                try FileManager.default.removeItem(at: state)
                try Data("not a folder".utf8).write(to: state)
            }
        )
        cases.append(
            BadSetting(name: "state lock.mdb of garbage", settings: [], exits: [0, 1]) { state in
                try Data(repeating: 0xA5, count: 8192).write(to: state.appendingPathComponent("lock.mdb"))
            }
        )
        cases.append(
            BadSetting(name: "the run lock is a folder", settings: [], exits: [1, 3]) { state in
                try? FileManager.default.removeItem(at: state.appendingPathComponent("run.lock"))
                try FileManager.default.createDirectory(
                    at: state.appendingPathComponent("run.lock"),
                    withIntermediateDirectories: false
                )
            }
        )
        return cases
    }()

    static let representativeBadSettings = [
        "pgvector table \"x; drop table y\"", "qdrant URL \"not a url\"", "state data.mdb of random bytes",
    ]

    @Test(
        "a bad setting or state is a clear command error with a documented exit code",
        arguments: representativeBadSettings
    )
    func badSetting(_ name: String) async throws {
        try await Self.badSetting(try #require(Self.allBadSettings.first { $0.name == name }))
    }

    @Test(
        "the sweep: bad table and collection names, URLs, values and damaged state",
        .enabled(if: FaultCampaign.sweep),
        arguments: allBadSettings.filter { !representativeBadSettings.contains($0.name) }
    )
    func badSettingSweep(_ setting: BadSetting) async throws {
        if let known = setting.knownIssue {
            await withKnownIssue(Comment(rawValue: known)) { try await Self.badSetting(setting) }
        } else {
            try await Self.badSetting(setting)
        }
    }

    static func badSetting(_ setting: BadSetting) async throws {
        let ws = try Workspace("faults-setting")
        defer { ws.cleanUp() }
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_1440, maxBytes: 3_000)
        let target = ws.target("main")
        if let damage = setting.damage {
            try await ws.run(target, expecting: 0)
            try damage(target.state)
        }
        var settings = setting.settings
        var server: StoreUnderTest?
        if let kind = setting.store {
            server = try await StoreUnderTest.start(kind, in: ws)
            settings += ["sink.url=\(server!.endpoint!.baseURL)", "sink.api_key_env=\(StoreUnderTest.apiKeyVariable)"]
        }
        defer { server?.stop() }
        try await FaultCampaign.scenario(.input, "setting: \(setting.name)") { scenario in
            let result = try await ws.run(target, settings.flatMap { ["--set", $0] }, timeout: .seconds(300))
            scenario.expect(
                result.exitCode.map { setting.exits.contains($0) } ?? false,
                "exit \(String(describing: result.exitCode)), expected \(setting.exits.sorted()): \(result)"
            )
            scenario.expect(
                !result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"),
                "a crash: \(result)"
            )
            if result.exitCode != 0 {
                let message = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
                scenario.expect(!message.isEmpty, "an error without a message: \(result)")
                scenario.expect(
                    !message.contains("DecodingError") && !message.contains("Swift."),
                    "a raw error: \(result)"
                )
            }
        }
    }
}
