import Foundation
import SluiceCore

extension SinkDescriptor {
    /// The stores Sluice ships, each described once: adding a store is adding its descriptor here (and
    /// its static member of ``PipelineConfiguration/Sink/Kind``), nothing else.
    public static let standard: [SinkDescriptor] = [
        local, jsonl, pgvector, chroma, qdrant, pinecone, openAIVectorStore,
    ]

    /// LMDB in a folder, with an exact scan, an HNSW graph or inverted lists (IVF).
    public static let local = SinkDescriptor(
        kind: .local,
        keys: ["path", "local_index", "hnsw", "ivf", "local_commit_pages"],
        createIfMissing: { configuration in
            let directory = configuration.resolve(configuration.sink.path)
            if !FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) {
                _ = try LocalSink(directory: directory)
            }
        },
        make: { configuration, readOnly in
            var index = LocalSink.IndexSettings(section: configuration.sink)
            index.accessField = configuration.access.isEnabled ? configuration.access.field : nil
            return try LocalSink(
                directory: configuration.resolve(configuration.sink.path),
                readOnly: readOnly,
                index: index,
                commitPages: configuration.sink.localCommitPages
            )
        }
    )

    /// One JSON Lines file, or a folder of shards.
    public static let jsonl = SinkDescriptor(kind: .jsonl, keys: ["path", "shards"]) { configuration, readOnly in
        try JSONLSink(
            path: configuration.resolve(configuration.sink.path),
            shards: configuration.sink.shards,
            readOnly: readOnly
        )
    }

    /// A PostgreSQL table with the pgvector extension.
    public static let pgvector = SinkDescriptor(
        kind: .pgvector,
        keys: ["url", "password_env", "table", "retries"],
        validate: { sink in
            // libpq takes a postgres:// or postgresql:// URL, or a key=value connection string.
            if let url = sink.url, let scheme = url.range(of: "://"),
                !["postgres", "postgresql"].contains(url[..<scheme.lowerBound].lowercased())
            {
                throw SluiceError(
                    .configuration,
                    "sink.url: must be a postgresql:// URL or a key=value connection string"
                )
            }
        },
        make: { configuration, _ in
            let sink = configuration.sink
            var settings = PgvectorSink.Settings(
                section: sink,
                url: try SinkFactory.required(sink.url, key: "sink.url", kind: sink.kind),
                password: try SinkFactory.secret(sink.passwordEnv, key: "sink.password_env", need: .ifNamed),
                connections: configuration.run.upsertParallelism
            )
            settings.accessField = configuration.access.isEnabled ? configuration.access.field : nil
            return try PgvectorSink(settings: settings)
        }
    )

    /// A Chroma server.
    public static let chroma = optionalKeyStore(
        .chroma,
        keys: ["collection", "tenant", "database"],
        validate: { try ChromaSink.checkCollectionName($0.collection) },
        build: { sink, key in ChromaSink(settings: .init(section: sink, apiKey: key)) }
    )

    /// A Qdrant server.
    public static let qdrant = optionalKeyStore(.qdrant, keys: ["collection"]) { sink, key in
        QdrantSink(settings: .init(section: sink, apiKey: key))
    }

    /// An HTTP store whose API key is optional: a local Chroma or Qdrant needs none, and a variable named by
    /// `sink.api_key_env` that is unset or empty sends none (the store answers 401/403 if it wanted one:
    /// exit 5, "check the key").
    static func optionalKeyStore(
        _ kind: PipelineConfiguration.Sink.Kind,
        keys: Set<String>,
        validate: @escaping @Sendable (PipelineConfiguration.Sink) throws -> Void = { _ in },
        build: @escaping @Sendable (PipelineConfiguration.Sink, String?) -> any VectorSink
    ) -> SinkDescriptor {
        SinkDescriptor(
            kind: kind,
            keys: httpKeys.union(keys),
            validate: { sink in
                try validateHTTP(sink)
                try validate(sink)
            },
            make: { configuration, _ in
                let sink = configuration.sink
                return build(sink, try SinkFactory.secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .optional))
            }
        )
    }

    /// A Pinecone serverless index.
    public static let pinecone = SinkDescriptor(
        kind: .pinecone,
        keys: httpKeys.union(["index", "namespace", "metadata_text_bytes"]),
        validate: { sink in
            try validateHTTP(sink)
            if let index = sink.index { try PineconeSink.checkNames(index: index, namespace: sink.namespace) }
        },
        make: { configuration, _ in
            let sink = configuration.sink
            return PineconeSink(
                settings: .init(
                    section: sink,
                    apiKey: try SinkFactory.secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .required)!,
                    index: try SinkFactory.required(sink.index, key: "sink.index", kind: sink.kind)
                )
            )
        }
    )

    /// An OpenAI vector store, which chunks and embeds the documents itself (``VectorSink/embedsText``).
    public static let openAIVectorStore = SinkDescriptor(
        kind: .openAIVectorStore,
        keys: httpKeys.union([
            "collection", "vector_store_id", "chunking_max_tokens", "chunking_overlap_tokens",
            "processing_timeout_seconds",
        ]),
        validate: validateHTTP,
        make: { configuration, _ in
            let sink = configuration.sink
            // Searching and listing the store need the key as much as writing does.
            return OpenAIVectorStoreSink(
                settings: .init(
                    section: sink,
                    apiKey: try SinkFactory.secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .required)!
                )
            )
        }
    )

    /// The keys every store behind an HTTP API reads.
    static let httpKeys: Set<String> = ["url", "api_key_env", "retries", "timeout_seconds"]

    /// `sink.url`, when set, is an http(s) URL with a host.
    @Sendable static func validateHTTP(_ sink: PipelineConfiguration.Sink) throws {
        if let url = sink.url { try PipelineConfiguration.checkHTTPURL(url, key: "sink.url") }
    }
}
