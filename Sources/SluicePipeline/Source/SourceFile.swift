import Foundation

/// One file of the source as the scanner saw it (from `lstat`/`stat`, without reading it).
package struct SourceFile: Sendable, Hashable {
    /// Path relative to the source root, `/`-separated: the document key.
    package var key: String
    package var url: URL
    package var size: Int
    package var mtimeNanoseconds: Int64
}
