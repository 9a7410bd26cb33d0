import Foundation
import SluiceCore

/// One file of the source as the scanner saw it (from `lstat`/`stat`, without reading it).
package struct SourceFile: Sendable, Hashable {
    /// Path relative to the source root, `/`-separated: the document key.
    package var key: String
    package var url: URL
    package var size: Int
    /// When the entry was last modified, nanoseconds since 1970 (a file's mtime, an object's
    /// `LastModified`; 0 when the source does not say): the records' `mtime` metadata, and for a folder the
    /// change token itself (``changeToken`` nil).
    package var mtimeNanoseconds: Int64
    /// The source's own change token, when it has one (an object's ETag): with the size, what tells from the
    /// listing alone that the entry is unchanged (``hasSameListing(as:)``). nil for a folder, whose token is
    /// its mtime.
    package var changeToken: String? = nil
    /// What a checkpoint record written before records kept ``changeToken`` holds in `mtime_ns` for this
    /// entry when it is unchanged (an S3 object's ETag hashed to 64 bits, ``S3Object/legacyChangeStamp``);
    /// nil for a source that never wrote records that way.
    package var legacyChangeStamp: Int64? = nil
    /// The file the scanner listed (device, inode): what is read later must be that file.
    package var identity: FileIdentity? = nil
    /// Whether the path is a symbolic link the scanner followed (`source.follow_symlinks`).
    package var followsSymlink = false

    /// Opens the file for reading as the scanner saw it (see ``DocumentFile``).
    package func open() throws -> DocumentFile {
        try DocumentFile.open(url.path, identity: identity, followSymlink: followsSymlink)
    }

    /// Whether `record` was written for this very entry as listed: same size and same change token, so the
    /// entry is unchanged without reading a byte.
    ///
    /// - An entry with a ``changeToken`` compares it with the record's `change_token`; a record without one
    ///   was written by an older Sluice, which kept the token hashed in `mtime_ns` (``legacyChangeStamp``):
    ///   compared that way, so that upgrading downloads nothing again, and a changed entry is still seen.
    /// - An entry without one (a folder's file) compares mtimes, and never matches a record that has a
    ///   change token (a source changed from a bucket to a folder reads every file once).
    package func hasSameListing(as record: DocumentRecord) -> Bool {
        guard record.size == size else { return false }
        guard let changeToken else { return record.changeToken == nil && record.mtimeNanoseconds == mtimeNanoseconds }
        if let recorded = record.changeToken { return recorded == changeToken }
        return legacyChangeStamp.map { $0 == record.mtimeNanoseconds } ?? false
    }
}
