import Foundation
import SluiceCore

/// An object's user metadata (`x-amz-meta-*`) and tags as a document's typed metadata, by the pipeline's
/// rules `source.s3.metadata_from_object` and `source.s3.metadata_from_tags` (record key → S3 name).
///
/// - Values are typed as `source.metadata_from_path`'s captures are: digits only → an integer, else a
///   string. A value mapped to the access field (`access.field`) that names several readers separates them
///   by spaces (`hr eng`): S3 tag values cannot hold commas or brackets, so that is the only list they can
///   spell; it becomes a list of readers.
/// - User metadata comes with the download's answer (no request of its own); tags cost one
///   GetObjectTagging per object downloaded, made only when a rule reads tags. An unchanged object is
///   neither downloaded nor asked: change detection stays listing-only, so a change of an object's tags or
///   user metadata alone (which keeps its ETag) is read when its bytes next change.
/// - The keys these rules set are left out of the metadata fingerprint (``DocumentMetadataRules``): the
///   listing cannot know them, and an unchanged object must stay unchanged.
struct S3ObjectMetadata: Sendable {
    /// Record key → user metadata name (lowercased, as S3 stores them).
    let fromObject: [String: String]
    /// Record key → tag key.
    let fromTags: [String: String]
    /// `access.field` when access control is on: its value is a list of readers.
    let accessField: String?

    init(settings: PipelineConfiguration.Source.S3, accessField: String?) {
        fromObject = settings.metadataFromObject.mapValues { $0.lowercased() }
        fromTags = settings.metadataFromTags
        self.accessField = accessField
    }

    var isEmpty: Bool { fromObject.isEmpty && fromTags.isEmpty }
    var readsTags: Bool { !fromTags.isEmpty }

    /// The record keys these rules may set.
    var keys: Set<String> { Set(fromObject.keys).union(fromTags.keys) }

    /// The metadata of an object whose answer carried `headers` (names lowercased) and whose tags are
    /// `tags`; a rule whose name the object lacks sets nothing. A tag wins over user metadata for one key.
    func metadata(headers: [String: String], tags: [String: String]) -> [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        for (key, name) in fromObject {
            if let value = headers["x-amz-meta-" + name] { metadata[key] = typed(key, value) }
        }
        for (key, tag) in fromTags {
            if let value = tags[tag] { metadata[key] = typed(key, value) }
        }
        return metadata
    }

    private func typed(_ key: String, _ text: String) -> MetadataValue {
        if key == accessField {
            return .strings(text.split(whereSeparator: \.isWhitespace).map(String.init))
        }
        return Int(text).map(MetadataValue.int) ?? .string(text)
    }

    /// A GetObjectTagging answer's tags (`<Tag><Key>…</Key><Value>…</Value></Tag>`).
    static func tags(xml: [UInt8]) -> [String: String] {
        let text = Substring(String(decoding: xml, as: UTF8.self))
        var tags: [String: String] = [:]
        for block in XMLElements.blocks("Tag", in: text) {
            guard let key = XMLElements.element("Key", in: block) else { continue }
            tags[key] = XMLElements.element("Value", in: block) ?? ""
        }
        return tags
    }
}
