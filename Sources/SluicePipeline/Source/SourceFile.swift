import Foundation
import SluiceCore

/// One file of the source as the scanner saw it (from `lstat`/`stat`, without reading it).
package struct SourceFile: Sendable, Hashable {
    /// Path relative to the source root, `/`-separated: the document key.
    package var key: String
    package var url: URL
    package var size: Int
    /// The change token the checkpoint's record keeps (`mtime_ns`): a file's modification time; an
    /// object's ETag hashed to 64 bits (``S3Object/changeToken``). Size and token unchanged: the entry is
    /// taken as unchanged without reading a byte.
    package var mtimeNanoseconds: Int64
    /// When the entry was last modified, for the records' `mtime` metadata, where that is not the change
    /// token itself (an object's `LastModified`); nil: ``mtimeNanoseconds``.
    package var modifiedNanoseconds: Int64? = nil
    /// The file the scanner listed (device, inode): what is read later must be that file.
    package var identity: FileIdentity? = nil
    /// Whether the path is a symbolic link the scanner followed (`source.follow_symlinks`).
    package var followsSymlink = false

    /// Opens the file for reading as the scanner saw it (see ``DocumentFile``).
    package func open() throws -> DocumentFile {
        try DocumentFile.open(url.path, identity: identity, followSymlink: followsSymlink)
    }
}
