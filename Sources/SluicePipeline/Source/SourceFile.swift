import Foundation
import SluiceCore

/// One file of the source as the scanner saw it (from `lstat`/`stat`, without reading it).
package struct SourceFile: Sendable, Hashable {
    /// Path relative to the source root, `/`-separated: the document key.
    package var key: String
    package var url: URL
    package var size: Int
    package var mtimeNanoseconds: Int64
    /// The file the scanner listed (device, inode): what is read later must be that file.
    package var identity: FileIdentity? = nil
    /// Whether the path is a symbolic link the scanner followed (`source.follow_symlinks`).
    package var followsSymlink = false

    /// Opens the file for reading as the scanner saw it (see ``DocumentFile``).
    package func open() throws -> DocumentFile {
        try DocumentFile.open(url.path, identity: identity, followSymlink: followsSymlink)
    }
}
