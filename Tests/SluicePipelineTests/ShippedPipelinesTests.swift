import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// Every file in `Pipelines/` is a pipeline a new user can start from (issue 30): it reads, it names its
/// embedder (never the hash test embedder by default), its embedder can be set up from it, and it takes in
/// every format of the samples, not just plain text. Running the ones that need no server is in
/// `ShippedPipelinesCLITests`.
@Suite struct ShippedPipelinesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var files: [URL] {
        let folder = root.appendingPathComponent("Pipelines")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test func theFolderIsThere() {
        #expect(Self.files.count >= 8, "\(Self.files.map(\.lastPathComponent))")
        let names = Set(Self.files.map(\.lastPathComponent))
        #expect(names.isSuperset(of: ["default.yaml", "openai.yaml", "pgvector.yaml", "openai-pgvector.yaml"]))
    }

    @Test(arguments: files.map(\.lastPathComponent))
    func aShippedPipelineReadsAndNamesARealEmbedder(_ name: String) throws {
        let file = Self.root.appendingPathComponent("Pipelines").appendingPathComponent(name)
        let configuration = try PipelineConfiguration.load(file: file)
        // The embed section's own lines (indented under `embed:`) name the provider.
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        let section = lines.drop { $0 != "embed:" }.dropFirst().prefix { $0.hasPrefix(" ") }
        if !lines.contains("embed:") {
            // Only a store that chunks and embeds the text itself needs no embedder (docs/STORES.md).
            if let variable = configuration.sink.apiKeyEnv { setenv(variable, "unused-by-this-test", 0) }
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
            #expect(components.sink.embedsText, "\(name) has no embed section, and its store does not embed")
            return
        }
        #expect(
            section.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("provider:") },
            "\(name) does not name its embed.provider"
        )
        #expect(configuration.embed.provider != .hash, "\(name) indexes with the hash test embedder")
        // The embedder can be set up from the file (credentials aside: they are the user's).
        if configuration.embed.provider.isRemote {
            _ = try PipelineComponents.makeEmbedder(
                configuration.embed,
                resolve: configuration.resolve,
                requireCredentials: false
            )
        }
    }

    /// The samples of every format the extractors read are taken in, as by the default pipeline.
    @Test(arguments: files.map(\.lastPathComponent))
    func aShippedPipelineTakesInEveryFormat(_ name: String) throws {
        let file = Self.root.appendingPathComponent("Pipelines").appendingPathComponent(name)
        let configuration = try PipelineConfiguration.load(file: file)
        let scanner = SourceScanner(
            configuration: configuration.source,
            root: Self.root.appendingPathComponent("samples")
        )
        for key in [
            "pdf/xz-utils-faq.pdf", "docx/xz-lists.docx", "odt/xz-lists.odt", "rtf/xz-lists.rtf", "csv/packages.csv",
            "pptx/systemd-uids-gids.pptx", "xlsx/iso-3166-1-countries.xlsx", "epub/libjpeg-turbo-README.epub",
            "json/nodejs-path.json",
            "html/nodejs-path.html", "markdown/git-README.md", "text/grep-README.txt", "images/xz-faq-page.png",
            "README",
        ] {
            #expect(scanner.selects(key), "\(name) leaves out \(key)")
        }
    }
}
