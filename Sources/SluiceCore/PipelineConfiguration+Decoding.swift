import Foundation
import Yams

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
                throw SluiceError(.configuration, "cannot read pipeline file \(file.path): \(error.localizedDescription)")
            }
            tree = try parse(yaml: text, origin: file.path)
        }
        for override in overrides {
            guard let equals = override.firstIndex(of: "=") else {
                throw SluiceError(.configuration, "--set expects key=value, got '\(override)'")
            }
            let key = String(override[..<equals]).trimmingCharacters(in: .whitespaces)
            let rawValue = String(override[override.index(after: equals)...])
            let value: Any
            do {
                value = try Yams.load(yaml: rawValue) ?? ""
            } catch {
                value = rawValue
            }
            try set(&tree, path: key.split(separator: ".").map(String.init), value: value, fullKey: key)
        }
        var configuration = try decode(tree)
        configuration.baseDirectory = file?.deletingLastPathComponent().standardizedFileURL
        return configuration
    }

    static func parse(yaml text: String, origin: String) throws -> [String: Any] {
        let loaded: Any?
        do {
            loaded = try Yams.load(yaml: text)
        } catch {
            throw SluiceError(.configuration, "\(origin) is not valid YAML: \(error)")
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
            "source": [String: Any](), "chunk": [String: Any](), "embed": [String: Any](), "sink": [String: Any](),
            "run": [String: Any](),
            "extract": ["docx": [String: Any](), "json": [String: Any](), "ocr": [String: Any](), "pdf": [String: Any]()],
        ]
        _ = try? decode(skeleton, log: log)
        return log.keys
    }

    static func decode(_ tree: [String: Any], log: KeyLog? = nil) throws -> PipelineConfiguration {
        var c = PipelineConfiguration()
        var root = Section(tree, path: "", log: log)
        if var s = try root.section("source") {
            c.source.path = try s.string("path") ?? c.source.path
            c.source.include = try s.strings("include") ?? c.source.include
            c.source.exclude = try s.strings("exclude") ?? c.source.exclude
            c.source.followSymlinks = try s.bool("follow_symlinks") ?? c.source.followSymlinks
            try s.finish()
        }
        if var s = try root.section("extract") {
            c.extract.maxFileMB = try s.number("max_file_mb", min: 0.000001) ?? c.extract.maxFileMB
            c.extract.parallelism = try s.int("parallelism", min: 1) ?? c.extract.parallelism
            c.extract.timeoutSeconds = try s.number("timeout_seconds", min: 0.001) ?? c.extract.timeoutSeconds
            if var d = try s.section("docx") {
                c.extract.docx.maxInflatedMB = try d.number("max_inflated_mb", min: 0.001) ?? c.extract.docx.maxInflatedMB
                c.extract.docx.maxCompressionRatio = try d.number("max_compression_ratio", min: 1) ?? c.extract.docx.maxCompressionRatio
                try d.finish()
            }
            if var j = try s.section("json") {
                c.extract.json.fields = try j.strings("fields") ?? c.extract.json.fields
                c.extract.json.maxDepth = try j.int("max_depth", min: 1) ?? c.extract.json.maxDepth
                try j.finish()
            }
            // PDF and OCR.
            c.extract.isolate = try s.bool("isolate") ?? c.extract.isolate
            c.extract.cacheMB = try s.number("cache_mb", min: 0) ?? c.extract.cacheMB
            let modes = PipelineConfiguration.Extract.OCR.Mode.all.map(\.rawValue)
            if let mode = try s.scalarString("ocr", oneOf: modes) {
                c.extract.ocr.mode = .init(mode)
            } else if var o = try s.section("ocr") {
                c.extract.ocr.mode = try o.string("mode", oneOf: modes).map { .init($0) } ?? c.extract.ocr.mode
                c.extract.ocr.languages = try o.strings("languages") ?? c.extract.ocr.languages
                c.extract.ocr.pageSegmentationMode = try o.int("psm", min: 0, max: 13) ?? c.extract.ocr.pageSegmentationMode
                c.extract.ocr.dpi = try o.int("dpi", min: 72, max: 1200) ?? c.extract.ocr.dpi
                c.extract.ocr.minTextCharacters = try o.int("min_text_chars", min: 0) ?? c.extract.ocr.minTextCharacters
                try o.finish()
            }
            if var p = try s.section("pdf") {
                c.extract.pdf.stripHeadersFooters = try p.bool("strip_headers") ?? c.extract.pdf.stripHeadersFooters
                c.extract.pdf.joinHyphens = try p.bool("join_hyphens") ?? c.extract.pdf.joinHyphens
                c.extract.pdf.passwordEnvironmentVariable = try p.string("password_env") ?? c.extract.pdf.passwordEnvironmentVariable
                try p.finish()
            }
            try s.finish()
        }
        if var s = try root.section("chunk") {
            c.chunk.strategy = try s.string("strategy", oneOf: ["recursive", "structured"]) ?? c.chunk.strategy
            c.chunk.maxTokens = try s.int("max_tokens", min: 8) ?? c.chunk.maxTokens
            c.chunk.overlapTokens = try s.int("overlap_tokens", min: 0) ?? c.chunk.overlapTokens
            c.chunk.parallelism = try s.int("parallelism", min: 1) ?? c.chunk.parallelism
            try s.finish()
        }
        if c.chunk.overlapTokens >= c.chunk.maxTokens {
            throw SluiceError(.configuration, "chunk.overlap_tokens (\(c.chunk.overlapTokens)) must be below chunk.max_tokens (\(c.chunk.maxTokens))")
        }
        if var s = try root.section("embed") {
            c.embed.provider = try s.string("provider", oneOf: ["hash", "minilm", "openai", "azure-openai", "ollama", "tei"]) ?? c.embed.provider
            c.embed.model = try s.string("model") ?? c.embed.model
            c.embed.dimensions = try s.int("dimensions", min: 2) ?? c.embed.dimensions
            c.embed.batch = try s.int("batch", min: 1) ?? c.embed.batch
            c.embed.maxBatchTokens = try s.int("max_batch_tokens", min: 1) ?? c.embed.maxBatchTokens
            c.embed.lingerMilliseconds = try s.int("linger_ms", min: 0) ?? c.embed.lingerMilliseconds
            c.embed.parallelism = try s.int("parallelism", min: 1) ?? c.embed.parallelism
            // Remote providers.
            c.embed.baseURL = try s.string("base_url") ?? c.embed.baseURL
            c.embed.apiKeyEnv = try s.string("api_key_env") ?? c.embed.apiKeyEnv
            c.embed.apiVersion = try s.string("api_version") ?? c.embed.apiVersion
            c.embed.encodingFormat = try s.string("encoding_format", oneOf: ["base64", "float"]) ?? c.embed.encodingFormat
            c.embed.requestDimensions = try s.bool("request_dimensions") ?? c.embed.requestDimensions
            c.embed.requestsPerMinute = try s.int("rpm", min: 1) ?? c.embed.requestsPerMinute
            c.embed.tokensPerMinute = try s.int("tpm", min: 1) ?? c.embed.tokensPerMinute
            c.embed.maxRetries = try s.int("max_retries", min: 0) ?? c.embed.maxRetries
            c.embed.maxRetryAfterSeconds = try s.number("max_retry_after_seconds", min: 0) ?? c.embed.maxRetryAfterSeconds
            guard c.embed.maxRetryAfterSeconds <= 86_400 else {
                throw SluiceError(.configuration, "embed.max_retry_after_seconds: must be at most 86400 (a day), got \(c.embed.maxRetryAfterSeconds)")
            }
            c.embed.timeoutSeconds = try s.number("timeout_seconds", min: 0.001) ?? c.embed.timeoutSeconds
            c.embed.connectTimeoutSeconds = try s.number("connect_timeout_seconds", min: 0.001) ?? c.embed.connectTimeoutSeconds
            c.embed.caBundle = try s.string("ca_bundle") ?? c.embed.caBundle
            c.embed.maxRequestBytes = try s.int("max_request_bytes", min: 1024) ?? c.embed.maxRequestBytes
            c.embed.maxInputTokens = try s.int("max_input_tokens", min: 8) ?? c.embed.maxInputTokens
            c.embed.tokenizer = try s.string("tokenizer", oneOf: ["cl100k_base", "o200k_base"]) ?? c.embed.tokenizer
            try s.finish()
        }
        if var s = try root.section("sink") {
            c.sink.kind = try s.string("kind", oneOf: ["local", "jsonl", "pgvector", "chroma", "qdrant", "pinecone"]) ?? c.sink.kind
            c.sink.path = try s.string("path") ?? c.sink.path
            c.sink.batch = try s.int("batch", min: 1) ?? c.sink.batch
            c.sink.maxBatchBytes = try s.int("max_batch_bytes", min: 1024) ?? c.sink.maxBatchBytes
            c.sink.url = try s.string("url") ?? c.sink.url
            c.sink.passwordEnv = try s.string("password_env") ?? c.sink.passwordEnv
            c.sink.apiKeyEnv = try s.string("api_key_env") ?? c.sink.apiKeyEnv
            c.sink.table = try s.string("table") ?? c.sink.table
            c.sink.collection = try s.string("collection") ?? c.sink.collection
            c.sink.index = try s.string("index") ?? c.sink.index
            c.sink.namespace = try s.string("namespace") ?? c.sink.namespace
            c.sink.tenant = try s.string("tenant") ?? c.sink.tenant
            c.sink.database = try s.string("database") ?? c.sink.database
            c.sink.metric = try s.string("metric", oneOf: ["cosine", "l2", "dot"]) ?? c.sink.metric
            c.sink.retries = try s.int("retries", min: 1) ?? c.sink.retries
            c.sink.shards = try s.int("shards", min: 1) ?? c.sink.shards
            c.sink.timeoutSeconds = try s.number("timeout_seconds", min: 0.001) ?? c.sink.timeoutSeconds
            c.sink.metadataTextBytes = try s.int("metadata_text_bytes", min: 0) ?? c.sink.metadataTextBytes
            try s.finish()
        }
        if var s = try root.section("run") {
            c.run.prune = try s.bool("prune") ?? c.run.prune
            c.run.maxDeleteFraction = try s.number("max_delete_fraction", min: 0) ?? c.run.maxDeleteFraction
            c.run.buffer = try s.int("buffer", min: 1) ?? c.run.buffer
            c.run.upsertParallelism = try s.int("upsert_parallelism", min: 1) ?? c.run.upsertParallelism
            try s.finish()
        }
        c.state = try root.string("state") ?? c.state
        try root.finish()
        // A malformed URL is the configuration's fault (exit 1), not a store that is down or a bug.
        if let url = c.embed.baseURL, c.embed.provider != "hash", c.embed.provider != "minilm" {
            try checkHTTPURL(url, key: "embed.base_url")
        }
        if let url = c.sink.url, ["chroma", "qdrant", "pinecone"].contains(c.sink.kind) {
            try checkHTTPURL(url, key: "sink.url")
        }
        for (key, value) in [("sink.collection", c.sink.collection), ("sink.index", c.sink.index), ("sink.table", c.sink.table)] where value?.isEmpty == true {
            throw SluiceError(.configuration, "\(key): must not be empty")
        }
        // libpq takes a postgres:// or postgresql:// URL, or a key=value connection string.
        if let url = c.sink.url, c.sink.kind == "pgvector", let scheme = url.range(of: "://"),
            !["postgres", "postgresql"].contains(url[..<scheme.lowerBound].lowercased())
        {
            throw SluiceError(.configuration, "sink.url: must be a postgresql:// URL or a key=value connection string")
        }
        return c
    }

    /// An `http` or `https` URL with a host and, if any, a port from 1 to 65535. The value is not repeated
    /// in the message: it may carry credentials.
    static func checkHTTPURL(_ text: String, key: String) throws {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, (url.port.map { (1...65_535).contains($0) } ?? true)
        else {
            throw SluiceError(.configuration, "\(key): must be an http:// or https:// URL with a host (and a port from 1 to 65535)")
        }
    }
}

/// The keys a decoding read, with their full paths (for ``PipelineConfiguration/decodableKeys``).
final class KeyLog {
    var keys: Set<String> = []
}

/// A mapping being read: typed accessors with the key path in every error, and unknown-key detection.
private struct Section {
    var values: [String: Any]
    var path: String
    var seen: Set<String> = []
    let log: KeyLog?

    init(_ values: [String: Any], path: String, log: KeyLog?) {
        self.values = values
        self.path = path
        self.log = log
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private mutating func take(_ key: String) -> Any? {
        seen.insert(key)
        guard let value = values[key], !(value is NSNull) else { return nil }
        return value
    }

    mutating func section(_ key: String) throws -> Section? {
        guard let value = take(key) else { return nil }
        guard let dict = value as? [String: Any] else {
            throw SluiceError(.configuration, "\(name(key)): expected a mapping")
        }
        return Section(dict, path: name(key), log: log)
    }

    mutating func string(_ key: String, oneOf allowed: [String]? = nil) throws -> String? {
        guard let value = take(key) else { return nil }
        let text: String
        switch value {
        case let s as String: text = s
        case let i as Int: text = String(i)
        case let d as Double: text = String(d)
        case let date as Date:
            // YAML reads an unquoted 2024-02-01 (an Azure api-version) as a timestamp: give the text back.
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd"
            text = formatter.string(from: date)
        default: throw SluiceError(.configuration, "\(name(key)): expected a string")
        }
        if let allowed, !allowed.contains(text) {
            throw SluiceError(.configuration, "\(name(key)): '\(text)' is not supported (expected one of: \(allowed.joined(separator: ", ")))")
        }
        return text
    }

    mutating func strings(_ key: String) throws -> [String]? {
        guard let value = take(key) else { return nil }
        if let single = value as? String { return [single] }
        guard let list = value as? [Any], let strings = list as? [String] else {
            throw SluiceError(.configuration, "\(name(key)): expected a list of strings")
        }
        return strings
    }

    mutating func bool(_ key: String) throws -> Bool? {
        guard let value = take(key) else { return nil }
        if let b = value as? Bool { return b }
        if let s = value as? String, ["true", "false"].contains(s.lowercased()) { return s.lowercased() == "true" }
        throw SluiceError(.configuration, "\(name(key)): expected true or false")
    }

    mutating func int(_ key: String, min: Int) throws -> Int? {
        guard let value = take(key) else { return nil }
        var number: Int?
        if let i = value as? Int { number = i }
        if let s = value as? String { number = Int(s) }
        guard let number else { throw SluiceError(.configuration, "\(name(key)): expected a whole number") }
        guard number >= min else { throw SluiceError(.configuration, "\(name(key)): must be at least \(min), got \(number)") }
        return number
    }

    mutating func int(_ key: String, min: Int, max: Int) throws -> Int? {
        guard let number = try int(key, min: min) else { return nil }
        guard number <= max else { throw SluiceError(.configuration, "\(name(key)): must be at most \(max), got \(number)") }
        return number
    }

    /// A key that may hold either a scalar (returned, and checked against `allowed`) or a mapping (left
    /// for ``section(_:)``, and nil returned).
    mutating func scalarString(_ key: String, oneOf allowed: [String]) throws -> String? {
        guard let value = values[key], !(value is [String: Any]) else { return nil }
        return try string(key, oneOf: allowed)
    }

    mutating func number(_ key: String, min: Double) throws -> Double? {
        guard let value = take(key) else { return nil }
        var number: Double?
        if let d = value as? Double { number = d }
        if let i = value as? Int { number = Double(i) }
        if let s = value as? String { number = Double(s) }
        guard let number else { throw SluiceError(.configuration, "\(name(key)): expected a number") }
        guard number >= min else { throw SluiceError(.configuration, "\(name(key)): must be at least \(min), got \(number)") }
        return number
    }

    func finish() throws {
        log?.keys.formUnion(seen.map { name($0) })
        let unknown = Set(values.keys).subtracting(seen).sorted()
        if !unknown.isEmpty {
            let known = seen.sorted().map { name($0) }.joined(separator: ", ")
            throw SluiceError(.configuration, "unknown key \(unknown.map { name($0) }.joined(separator: ", ")) (known here: \(known))")
        }
    }
}
