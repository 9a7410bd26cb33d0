/// `source`: where the documents are.
extension PipelineConfiguration {
    public struct Source: Sendable, Hashable {
        /// Root folder of the corpus; document keys are paths relative to it.
        public var path: String = "./samples"
        public var include: [String] = ["**/*"]
        public var exclude: [String] = ["**/.git/**", "**/.sluice/**"]
        /// Follow symbolic links (never outside the root, never in loops).
        public var followSymlinks: Bool = false
        public init() {}
    }
}

extension PipelineConfiguration.Source {
    /// Reads `source.path`, `include`, `exclude` and `follow_symlinks` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        path = try s.string("path") ?? path
        include = try s.strings("include") ?? include
        exclude = try s.strings("exclude") ?? exclude
        followSymlinks = try s.bool("follow_symlinks") ?? followSymlinks
        try s.finish()
    }
}
