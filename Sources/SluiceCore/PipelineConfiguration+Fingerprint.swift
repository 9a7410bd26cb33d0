import Foundation

/// The fingerprint of a configuration: a hash of an explicit, versioned encoding of every setting, which a
/// run keeps in its record (``RunRecord/configurationHash``).
///
/// The encoding is Sluice's own, not the compiler's description of the value (`String(describing:)`, whose
/// form can change with Swift): one line per setting, `path=value`, sorted by path, under a first line that
/// names the encoding's version (``fingerprintVersion``). Paths are the properties' names
/// (`embed.provider`, `extract.ocr.dpi`); values are written as JSON scalars (strings quoted and escaped,
/// numbers as Swift prints them, which round-trips, `true`/`false`, `null` for an unset optional), lists
/// as `[a,b]`, maps as `{"k":v}` with sorted keys, enumerations by their raw value, URLs by their path.
///
/// Changing the encoding changes every fingerprint: bump ``fingerprintVersion`` then. A record written by an
/// older Sluice has a bare hex hash (no `c1:` prefix): it is an earlier run's, not a change of settings, and
/// nothing compares fingerprints across versions (the settings that decide whether a document is processed
/// again are compared by ``ShapingSettings``, with an encoding of their own).
extension PipelineConfiguration {
    /// The version of the encoding ``fingerprint`` hashes.
    public static let fingerprintVersion = 1

    /// `c1:` and the XXH3-128 of `fingerprintText`, in hex.
    public var fingerprint: String {
        "c\(Self.fingerprintVersion):" + ContentHash(utf8: fingerprintText).hex
    }

    /// The encoding itself: `sluice-configuration 1`, then one `path=value` line per setting, sorted.
    package var fingerprintText: String {
        var lines: [String] = []
        // `notes` say how the file was written (deprecated keys, keys set), not what it configures.
        var settings = self
        settings.notes = ConfigurationNotes()
        settings.generation = nil  // which generation, not what it is configured with
        FingerprintEncoder.lines(of: settings, path: "", into: &lines)
        lines.removeAll { $0.hasPrefix("notes.") || $0.hasPrefix("generation=") }
        return (["sluice-configuration \(Self.fingerprintVersion)"] + lines.sorted()).joined(separator: "\n") + "\n"
    }
}

/// An open-ended choice named in the pipeline file (a struct with static members, as `embed.provider`,
/// `answer.provider` and `extract.ocr.mode`): written by its name, as an enumeration's raw value is.
package protocol NamedSetting {
    var rawValue: String { get }
}

extension PipelineConfiguration.Embed.Provider: NamedSetting {}
extension PipelineConfiguration.Answer.Provider: NamedSetting {}
extension PipelineConfiguration.Extract.OCR.Mode: NamedSetting {}

/// `rrf(k=10.0)` or `score(vector_weight=0.15,question_weight=0.8)`: the rule and its parameters, in one stable
/// token.
extension SearchFusion: NamedSetting {
    package var rawValue: String {
        switch rule {
        case .reciprocalRank(let k): "rrf(k=\(k))"
        case .score(let weight, let question): "score(vector_weight=\(weight),question_weight=\(question))"
        }
    }
}

/// Writes a value's settings as `path=value` lines (see ``PipelineConfiguration/fingerprint``).
package enum FingerprintEncoder {
    /// Marks a value the encoder has no explicit form for (a test keeps every setting out of it).
    package static let unknownMarker = "?unencoded:"

    static func lines(of value: Any, path: String, into lines: inout [String]) {
        if let scalar = scalar(value) {
            lines.append("\(path)=\(scalar)")
            return
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct?, .class?:
            guard !mirror.children.isEmpty else {
                lines.append("\(path)={}")
                return
            }
            for child in mirror.children {
                guard let label = child.label else { continue }
                Self.lines(of: child.value, path: path.isEmpty ? label : "\(path).\(label)", into: &lines)
            }
        default:
            lines.append("\(path)=\(encode(value))")
        }
    }

    /// The value in one token: a scalar, a list or a map.
    static func encode(_ value: Any) -> String {
        if let scalar = scalar(value) { return scalar }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional?:
            return mirror.children.first.map { encode($0.value) } ?? "null"
        case .collection?, .set?:
            let items = mirror.children.map { encode($0.value) }
            return "[" + (mirror.displayStyle == .set ? items.sorted() : items).joined(separator: ",") + "]"
        case .dictionary?:
            let pairs = mirror.children.compactMap { pair -> (String, String)? in
                let parts = Array(Mirror(reflecting: pair.value).children)
                guard parts.count == 2 else { return nil }
                return (encode(parts[0].value), encode(parts[1].value))
            }
            return "{" + pairs.sorted { $0.0 < $1.0 }.map { "\($0.0):\($0.1)" }.joined(separator: ",") + "}"
        case .struct?, .class?:
            var lines: [String] = []
            Self.lines(of: value, path: "", into: &lines)
            return "{" + lines.sorted().joined(separator: ",") + "}"
        default:
            return unknownMarker + String(reflecting: type(of: value))
        }
    }

    /// A string, number, Boolean, URL, metadata value (its kind's letter, then its text quoted) or raw-valued
    /// enumeration; nil for anything else.
    static func scalar(_ value: Any) -> String? {
        switch value {
        case let text as String: return quoted(text)
        case let bool as Bool: return bool ? "true" : "false"
        case let number as Int: return String(number)
        case let number as Double: return number.description
        case let url as URL: return quoted(url.path)
        case let metadata as MetadataValue: return metadata.fingerprintKind + quoted(metadata.fingerprintText)
        case let raw as any RawRepresentable: return encode(raw.rawValue)
        case let named as any NamedSetting: return quoted(named.rawValue)
        default: return nil
        }
    }

    static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        JSONString.append(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
