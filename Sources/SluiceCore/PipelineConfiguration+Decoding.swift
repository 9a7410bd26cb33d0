import Foundation

/// Reading a pipeline file.
///
/// Every key, its type, its default and its meaning are in `docs/CONFIGURATION.md` ("Every key"); the
/// configuration reference test fails when that table and this decoder disagree (a key documented but
/// not decoded, decoded but not documented, or a default that differs). Unknown keys are errors, so a
/// typo never passes silently. Relative paths resolve against the folder of the pipeline file.
extension PipelineConfiguration {
    /// Loads a pipeline file and applies `key=value` overrides (dotted keys, YAML values).
    /// - Throws: ``SluiceError/Code/configuration`` naming the offending key.
    public static func load(file: URL?, overrides: [String] = []) throws -> PipelineConfiguration {
        var tree: [String: Any] = [:]
        if let file {
            let text: String
            do {
                text = try String(contentsOf: file, encoding: .utf8)
            } catch {
                throw SluiceError(
                    .configuration,
                    "cannot read pipeline file \(file.path): \(error.localizedDescription)"
                )
            }
            tree = try parse(yaml: text, origin: file.path)
        }
        for override in overrides {
            guard let equals = override.firstIndex(of: "=") else {
                throw SluiceError(.configuration, "--set expects key=value, got '\(override)'")
            }
            let key = String(override[..<equals]).trimmingCharacters(in: .whitespaces)
            let rawValue = String(override[override.index(after: equals)...])
            // The value is YAML, as in the file: one that does not parse is refused, never taken as text (a
            // list missing its `]` would otherwise become one pattern that matches nothing).
            let value: Any
            do {
                value = try BoundedYAML.load(rawValue) ?? ""
            } catch let error as SluiceError {
                throw SluiceError(
                    .configuration,
                    "--set \(key): the value is \(error.message); quote a text value: --set '\(key)=\"…\"'"
                )
            }
            try set(&tree, path: key.split(separator: ".").map(String.init), value: value, fullKey: key)
        }
        var configuration = try decode(tree)
        configuration.baseDirectory = file?.deletingLastPathComponent().standardizedFileURL
        configuration.sourceFile = file?.standardizedFileURL
        return configuration
    }

    static func parse(yaml text: String, origin: String) throws -> [String: Any] {
        let loaded: Any?
        do {
            loaded = try BoundedYAML.load(text)
        } catch let error as SluiceError {
            throw SluiceError(.configuration, "\(origin): \(error.message)")
        }
        guard let loaded else { return [:] }
        guard let tree = loaded as? [String: Any] else {
            throw SluiceError(.configuration, "\(origin): the top level must be a mapping of keys")
        }
        return tree
    }

    private static func set(_ tree: inout [String: Any], path: [String], value: Any, fullKey: String) throws {
        guard let first = path.first, !first.isEmpty else {
            throw SluiceError(.configuration, "--set: empty key in '\(fullKey)'")
        }
        if path.count == 1 {
            tree[first] = value
            return
        }
        var child = (tree[first] as? [String: Any]) ?? [:]
        if tree[first] != nil && !(tree[first] is [String: Any]) {
            throw SluiceError(.configuration, "--set \(fullKey): '\(first)' is not a section")
        }
        try set(&child, path: Array(path.dropFirst()), value: value, fullKey: fullKey)
        tree[first] = child
    }

    /// Every key the decoder reads, as a dotted path: decoding a file whose every section is present and
    /// empty visits them all.
    package static var decodableKeys: Set<String> {
        let log = KeyLog()
        let skeleton: [String: Any] = [
            "source": ["s3": [String: Any](), "http": [String: Any]()], "chunk": [String: Any](),
            "embed": [String: Any](),
            "sink": ["hnsw": [String: Any](), "ivf": [String: Any]()], "run": [String: Any](),
            "answer": [String: Any](),
            "serve": ["jwt": [String: Any]()], "search": ["rerank": [String: Any]()],
            "eval": [String: Any](), "access": [String: Any](), "generations": ["s3": [String: Any]()],
            "extract": [
                "zip": [String: Any](), "json": [String: Any](), "ocr": [String: Any](), "pdf": [String: Any](),
                "images": ["caption": ["pictures": [String: Any]()]],
            ],
        ]
        _ = try? decode(skeleton, log: log)
        // Deprecated keys are still read (each with a notice): the sections they sit in, one file each.
        _ = try? decode(["extract": ["docx": [String: Any]()]], log: log)
        return log.keys
    }

    /// The configuration `tree` (a parsed pipeline file) describes: each section decodes itself over its
    /// defaults (`init(section:)` beside its type), in file order.
    static func decode(_ tree: [String: Any], log: KeyLog = KeyLog()) throws -> PipelineConfiguration {
        var c = PipelineConfiguration()
        var root = ConfigurationSection(tree, path: "", log: log)
        if let s = try root.section("source") { c.source = try Source(section: s) }
        if let s = try root.section("extract") { c.extract = try Extract(section: s) }
        if let s = try root.section("chunk") { c.chunk = try Chunk(section: s) }
        if let s = try root.section("embed") { c.embed = try Embed(section: s) }
        if let s = try root.section("sink") { c.sink = try Sink(section: s) }
        if let s = try root.section("run") { c.run = try Run(section: s) }
        if let s = try root.section("answer") { c.answer = try Answer(section: s) }
        if let s = try root.section("serve") { c.serve = try Serve(section: s) }
        if let s = try root.section("search") { c.search = try Search(section: s) }
        if let s = try root.section("eval") { c.eval = try Eval(section: s) }
        if let s = try root.section("access") { c.access = try Access(section: s) }
        if let s = try root.section("generations") { c.generations = try Generations(section: s) }
        c.state = try root.path("state") ?? c.state
        try root.finish()
        // A malformed URL is the configuration's fault (exit 1), not a store that is down or a bug.
        if let url = c.embed.baseURL, c.embed.provider.isRemote {
            try checkHTTPURL(url, key: "embed.base_url")
        }
        if let url = c.answer.baseURL { try checkHTTPURL(url, key: "answer.base_url") }
        if c.generations.hasCoordination, c.sink.kind != .pinecone {
            throw SluiceError(
                .configuration,
                "generations.coordination: only a sharded deployment on Pinecone keeps its generation manifest in a coordination store (sink.kind \(c.sink.kind) keeps it in the store itself, or beside it)"
            )
        }
        // sink.url is checked by the store's descriptor (SinkFactory), which knows what it must be.
        for (key, value) in [
            ("sink.collection", c.sink.collection), ("sink.index", c.sink.index), ("sink.table", c.sink.table),
        ] where value?.isEmpty == true {
            throw SluiceError(.configuration, "\(key): must not be empty")
        }
        c.notes = ConfigurationNotes(deprecations: log.notices, keysSet: log.present)
        return c
    }

    /// An `http` or `https` URL with a host and, if any, a port from 1 to 65535. The value is not repeated
    /// in the message: it may carry credentials.
    package static func checkHTTPURL(_ text: String, key: String) throws {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.port.map({ (1...65_535).contains($0) }) ?? true
        else {
            throw SluiceError(
                .configuration,
                "\(key): must be an http:// or https:// URL with a host (and a port from 1 to 65535)"
            )
        }
    }
}
