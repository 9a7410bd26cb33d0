extension PipelineConfiguration.Sink {
    /// Which store holds the vectors (`sink.kind`).
    ///
    /// An open set of names, not an enum: a store added to Sluice is a new static member, and a store a
    /// library user registers (`SinkFactory.register(_:)` in SluiceSinks) is a name of its own, with no
    /// change to this type and no break of callers that switch over it (the shape of swift-service-lifecycle's
    /// `ServiceGroupConfiguration.ServiceConfiguration.TerminationBehavior`). What the pipeline needs to know
    /// about a kind (how to build it, the keys it reads) is said by the store's descriptor where it is built,
    /// never by lists of kinds kept here; whether a name is known is decided there too (exit 1 otherwise).
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The name in the pipeline file.
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }

        public var description: String { rawValue }

        /// The local store: LMDB in a folder, exact or HNSW search (the default).
        public static let local = Kind("local")
        /// JSON Lines files, for piping into anything else.
        public static let jsonl = Kind("jsonl")
        /// PostgreSQL with the pgvector extension.
        public static let pgvector = Kind("pgvector")
        /// A Chroma server.
        public static let chroma = Kind("chroma")
        /// A Qdrant server.
        public static let qdrant = Kind("qdrant")
        /// A Pinecone serverless index.
        public static let pinecone = Kind("pinecone")
        /// An OpenAI vector store (file search): each document uploaded as a file, embedded by OpenAI.
        public static let openAIVectorStore = Kind("openai-vector-store")
    }
}
