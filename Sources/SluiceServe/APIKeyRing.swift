import Foundation
import SluiceCore

/// The keys `sluice serve` accepts (`serve.keys_file`, docs/ACCESS.md), read again when the file changes or
/// on SIGHUP, without a restart (``ReloadingFile``).
typealias APIKeyRing = ReloadingFile<APIKeys>

extension ReloadingFile where Value == APIKeys {
    /// Reads the keys file. Blocks (file I/O).
    /// - Throws: ``SluiceError/Code/configuration`` when it cannot be read or is malformed.
    convenience init(url: URL) throws {
        try self.init(url: url, setting: "serve.keys_file", load: APIKeys.load, describe: { "\($0.keys.count) keys" })
    }

    /// The keys in use.
    var keys: APIKeys { value }
}
