#if canImport(Glibc)
import Glibc
#endif

/// Loopback as an address is parsed, not as its text begins: `127.evil.example` is a name that goes to DNS,
/// not loopback.
package enum LoopbackAddress {
    /// Whether `host` names this machine's loopback interface: an IPv4 literal in 127.0.0.0/8, the IPv6
    /// literal `::1` (also IPv4-mapped, `::ffff:127.0.0.1`), or the name `localhost` (any case). Brackets
    /// around an IPv6 literal are allowed; a port is not (see ``splitHostPort(_:)``). Anything else — other
    /// names, shorthand forms such as `127.1` or `0x7f000001` that some resolvers widen — is not loopback.
    package static func contains(_ host: String) -> Bool {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.lowercased() == "localhost" { return true }
        if let v4 = ipv4(name) { return v4.0 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        // IPv4-mapped: ::ffff:a.b.c.d
        return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }

    /// The four octets of a dotted-quad IPv4 literal (`inet_pton`'s strict form), or nil.
    package static func ipv4(_ text: String) -> (UInt8, UInt8, UInt8, UInt8)? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: address) { Array($0) }
        return (bytes[0], bytes[1], bytes[2], bytes[3])
    }

    /// Whether `text` is an IP literal (IPv4, or IPv6 with or without brackets), as opposed to a name.
    package static func isLiteral(_ text: String) -> Bool {
        var name = text
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if ipv4(name) != nil { return true }
        var v6 = in6_addr()
        return inet_pton(AF_INET6, name, &v6) == 1
    }

    /// A `Host` header's name and port: `name:8080`, `[::1]:8080`, `name` (port nil). Nil when it is not
    /// of that form (an unbracketed IPv6 literal, an empty name, a port that is not a number).
    package static func splitHostPort(_ value: String) -> (host: String, port: Int?)? {
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            let host = String(value[value.startIndex...close])
            let rest = value[value.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":"), let port = parsePort(rest.dropFirst()) else { return nil }
            return (host, port)
        }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard let name = parts.first, !name.isEmpty, parts.count <= 2 else { return nil }
        if parts.count == 1 { return (String(name), nil) }
        guard let port = parsePort(parts[1]) else { return nil }
        return (String(name), port)
    }

    /// Digits only (no sign, no space), 0…65535.
    private static func parsePort(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ ("0"..."9").contains($0) }), let value = Int(text),
            value <= 65_535
        else { return nil }
        return value
    }
}
