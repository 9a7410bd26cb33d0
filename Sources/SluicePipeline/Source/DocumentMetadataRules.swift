import Foundation
import SluiceCore

/// The metadata a document's records get from outside its bytes: the pipeline's own values
/// (`source.metadata`), named captures of `source.metadata_from_path` on the key, and the file's size and
/// modification time. Its fingerprint is kept in the checkpoint, so that a change of this metadata alone
/// writes the records again, their vectors from the embedding cache (docs/DESIGN.md §12).
///
/// Size and mtime are left out of the fingerprint: they describe the bytes as they were indexed, so a
/// file touched without a change (a fresh `git clone`, a restore) is still skipped, as it was before.
package struct DocumentMetadataRules: Sendable {
    package let values: [String: MetadataValue]
    package let frontMatter: Bool
    /// The settings that shape chunks (docs/DESIGN.md §12): part of the fingerprint, so that a change of
    /// them processes again every document whose extractor reads them.
    package let shaping: ShapingSettings
    /// Who may read the records (`access`, docs/ACCESS.md): part of the fingerprint when on, so that a
    /// change of the rules writes the records again without embedding them again.
    package let access: PipelineConfiguration.Access
    private let pattern: String?
    private let regex: RegexBox?
    /// The keys the source sets when it reads an entry's bytes (an S3 object's user metadata and tags,
    /// ``S3ObjectMetadata``), not known from the listing: left out of the fingerprint, as size and mtime.
    package let fromTheSource: Set<String>
    /// The source's rules for them, as text: in the fingerprint, so that a change of the rules reads the
    /// documents again.
    private let sourceRules: String

    /// `Regex` is not `Sendable`; it is only matched, never mutated.
    private final class RegexBox: @unchecked Sendable {
        let regex: Regex<AnyRegexOutput>
        init(_ regex: Regex<AnyRegexOutput>) { self.regex = regex }
    }

    /// The pattern was checked when the configuration was read (``PipelineConfiguration/Source``).
    /// The settings a permanent failure depends on besides those that shape chunks: limits, the PDF
    /// password (whether its variable is set, never its value) and Sluice's version.
    private let admission: String

    /// - Parameter extractors: The pipeline's extractors, which declare the settings they read
    ///   (``Extractor/shapingSettings``).
    package init(configuration: PipelineConfiguration, extractors: [any Extractor]) {
        let extract = configuration.extract
        let password = extract.pdf.passwordEnvironmentVariable
        let admission = [
            "version=\(SluiceVersion.current)",
            "extract.max_file_mb=\(extract.maxFileMB)",
            // With the rule that a file may make text of a multiple of its size: a file that failed under the
            // setting alone is tried once more.
            "extract.max_text_mb=\(extract.maxTextMB),file_size_multiple=\(TextBudget.fileSizeMultiple)",
            "extract.json.max_depth=\(extract.json.maxDepth)",
            // Under the limits' first name (now extract.zip): the text keys known failures kept in states.
            "extract.docx.max_inflated_mb=\(extract.zip.maxInflatedMB)",
            "extract.docx.max_compression_ratio=\(extract.zip.maxCompressionRatio)",
            "extract.pdf.password_env=\(password ?? "")",
            "password_set=\(password.map { !(ProcessInfo.processInfo.environment[$0] ?? "").isEmpty } ?? false)",
        ]
        self.init(
            source: configuration.source,
            shaping: ShapingSettings(configuration, extractors: extractors),
            admission: admission.joined(separator: "\n"),
            access: configuration.access
        )
    }

    package init(
        source: PipelineConfiguration.Source,
        shaping: ShapingSettings = ShapingSettings(values: [:]),
        admission: String = "",
        access: PipelineConfiguration.Access = .init()
    ) {
        self.admission = admission
        self.access = access
        self.shaping = shaping
        if source.kind == .s3 {
            let object: [String: String] = source.s3.metadataFromObject
            let tags: [String: String] = source.s3.metadataFromTags
            fromTheSource = Set(object.keys).union(tags.keys)
            var rules = ""
            for key in object.keys.sorted() { rules += "object:\(key)=\(object[key] ?? "")\n" }
            for key in tags.keys.sorted() { rules += "tag:\(key)=\(tags[key] ?? "")\n" }
            sourceRules = rules
        } else {
            fromTheSource = []
            sourceRules = ""
        }
        values = source.metadata
        frontMatter = source.frontMatter
        pattern = source.metadataFromPath
        regex = source.metadataFromPath.flatMap { try? Regex($0) }.map(RegexBox.init)
    }

    /// No pipeline metadata (tests, tools).
    package static let none = DocumentMetadataRules(source: .init())

    /// The file's metadata: the pipeline's values, then the path's captures, then size and mtime.
    package func metadata(key: String, size: Int, mtimeNanoseconds: Int64) -> [String: MetadataValue] {
        var metadata = values
        if let regex, let match = try? regex.regex.firstMatch(in: key) {
            for capture in match.output {
                guard let name = capture.name, let text = capture.substring.map(String.init) else { continue }
                metadata[name] = Int(text).map(MetadataValue.int) ?? .string(text)
            }
        }
        metadata["size"] = .int(size)
        metadata["mtime"] = .time(Date(timeIntervalSince1970: Double(mtimeNanoseconds / 1_000_000_000)))
        return metadata
    }

    /// A hash of everything this metadata depends on besides the bytes (and of the rules themselves), for a
    /// document read by the extractor named `extractor` (nil: not known, every setting that shapes chunks).
    package func fingerprint(of metadata: [String: MetadataValue], read extractor: String?) -> ContentHash {
        var text = "front_matter=\(frontMatter)\npattern=\(pattern ?? "")\n\(shaping.text(read: extractor))\n"
        text += access.fingerprintText
        // Empty without source rules: pipelines without them keep their fingerprints.
        text += sourceRules
        for key in metadata.keys.sorted() where !Self.ofTheBytes.contains(key) && !fromTheSource.contains(key) {
            let value = metadata[key]!
            text += "\(key)\u{1F}\(value.fingerprintText)\u{1F}\(value.fingerprintKind)\n"
        }
        return ContentHash(utf8: text)
    }

    /// The key a permanent failure is kept under: while a file's stat and this key stay the same, the
    /// failure is known and the document is not retried (docs/DESIGN.md §11).
    ///
    /// Only the settings a permanent failure can depend on: the extraction settings the extractor named
    /// `extractor` reads (nil: not known, every extraction setting), whether front matter is read, and the
    /// admission limits. Not how text is cut or embedded, nor the metadata the records would get: a
    /// permanent failure happens before any of them is used (every permanent code is raised while the
    /// bytes are admitted or read), so a change of one must not retry it (issue 37).
    package func knownFailureKey(read extractor: String?) -> ContentHash {
        let extraction = shaping.extractionText(read: extractor)
        return ContentHash(utf8: "front_matter=\(frontMatter)\n\(extraction)\n\(admission)")
    }

    /// Keys that change only with the bytes (as far as the index is concerned).
    static let ofTheBytes: Set<String> = ["size", "mtime"]

}
