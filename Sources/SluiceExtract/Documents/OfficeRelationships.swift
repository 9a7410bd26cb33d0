import Foundation
import SluiceCore

/// The relationships of an Office Open XML part (PPTX, XLSX): how `ppt/presentation.xml` names its slides
/// and `xl/workbook.xml` its sheets, through `_rels/<part>.rels` beside the part.
enum OfficeRelationships {
    /// The namespace of relationship ids (`r:id`).
    static let namespace = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

    /// One relationship: its target resolved to a part name, and its type (a URI ending in `/slide`,
    /// `/notesSlide`, `/worksheet`, …).
    struct Target {
        var path: String
        var type: String
    }

    /// The relationships of `part` (`ppt/_rels/presentation.xml.rels` for `ppt/presentation.xml`) by id;
    /// external targets are left out. None when the part has no relationships part.
    static func of(_ part: String, in archive: inout ZIPContainer) throws -> [String: Target] {
        let folder = part.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        let name = part.split(separator: "/").last.map(String.init) ?? part
        let relationshipsPart = (folder + ["_rels", Substring(name + ".rels")]).joined(separator: "/")
        guard let bytes = try archive.part(relationshipsPart) else { return [:] }
        let tree = try ContainerXML.parse(bytes, name: relationshipsPart)
        var targets: [String: Target] = [:]
        for relationship in tree.root?.children ?? XMLChildren(first: nil)
        where relationship.isElement && relationship.localName == "Relationship" {
            guard let id = relationship.attribute("Id"), let target = relationship.attribute("Target"),
                relationship.attribute("TargetMode") != "External"
            else { continue }
            targets[id] = Target(path: resolve(target, from: Array(folder)), type: relationship.attribute("Type") ?? "")
        }
        withExtendedLifetime(tree) {}  // owns the nodes walked above
        return targets
    }

    /// A relationship's target as a part name: relative to the source part's folder unless it starts with
    /// "/", with "." and ".." steps resolved.
    static func resolve(_ target: String, from folder: [Substring]) -> String {
        var path = target.hasPrefix("/") ? [] : folder
        for step in target.split(separator: "/") {
            switch step {
            case ".": continue
            case "..": if !path.isEmpty { path.removeLast() }
            default: path.append(step)
            }
        }
        return path.joined(separator: "/")
    }
}
