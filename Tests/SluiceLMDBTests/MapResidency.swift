#if os(Linux)
import Foundation

/// What this process holds resident of a mapping, for the tests of LMDB's maps.
enum MapResidency {
    /// The resident bytes of the mapping that starts at `start` (its `Rss` in /proc/self/smaps; 0 if absent).
    static func residentBytes(at start: UInt) -> Int {
        // Not String(contentsOfFile:): it stops after the first page of a /proc file.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return 0 }
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        let header = String(start, radix: 16) + "-"
        var inside = false
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-"), !line.hasSuffix(" kB") {
                inside = line.hasPrefix(header)
            } else if inside, line.hasPrefix("Rss:") {
                return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
            }
        }
        return 0
    }
}
#endif
