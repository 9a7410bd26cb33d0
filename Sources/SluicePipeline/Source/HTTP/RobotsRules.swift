import Foundation

/// What a site's robots.txt allows one user agent (RFC 9309): the rules of the groups naming its product
/// token (case-insensitive), else those of the `*` groups; the longest matching rule wins, `Allow` on a
/// tie; `*` matches any run of characters and a final `$` anchors the end. `/robots.txt` is always allowed.
/// `Crawl-delay` (not in the RFC, widely written) is kept for the politeness delay.
struct RobotsRules: Sendable, Hashable {
    struct Rule: Sendable, Hashable {
        var allows: Bool
        var pattern: String
    }

    var rules: [Rule] = []
    /// The group's `Crawl-delay`, in seconds.
    var crawlDelay: Double?

    /// Everything allowed: no robots.txt (a 4xx), or honouring it is turned off.
    static let allowAll = RobotsRules()

    init() {}

    init(text: String, userAgent: String) {
        // A byte-order mark before the first line would make its field `\u{FEFF}user-agent`, a field of no
        // group (RFC 9309 §2.2: its rules would belong to nobody).
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        let token =
            userAgent.split(whereSeparator: { $0 == "/" || $0.isWhitespace }).first.map { $0.lowercased() } ?? ""
        var own: [Rule] = []
        var any: [Rule] = []
        var ownDelay: Double?
        var anyDelay: Double?
        var foundOwn = false
        // The agents of the group being read, and whether its rules started (a new user-agent line after
        // rules starts a new group).
        var agents: [String] = []
        var inRules = false
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            guard let colon = line.firstIndex(of: ":") else { continue }
            let field = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch field {
            case "user-agent":
                if inRules {
                    agents = []
                    inRules = false
                }
                agents.append(value.lowercased())
            case "allow", "disallow", "crawl-delay":
                inRules = true
                let mine = agents.contains(token)
                let star = agents.contains("*")
                if mine { foundOwn = true }
                guard mine || star else { continue }
                if field == "crawl-delay" {
                    let delay = Double(value)
                    if mine { ownDelay = delay ?? ownDelay } else { anyDelay = delay ?? anyDelay }
                    continue
                }
                guard !value.isEmpty else { continue }  // `Disallow:` with nothing: allows everything
                let rule = Rule(allows: field == "allow", pattern: Self.normalized(value))
                if mine { own.append(rule) } else { any.append(rule) }
            default:
                continue
            }
        }
        rules = foundOwn ? own : any
        crawlDelay = foundOwn ? ownDelay : anyDelay
    }

    /// Whether `path` (the URL's path and query, percent-encoded as sent) may be fetched.
    func allows(_ path: String) -> Bool {
        if path == "/robots.txt" { return true }
        let path = Self.normalized(path)
        var best: Rule?
        for rule in rules where Self.matches(rule.pattern, path) {
            guard let current = best else {
                best = rule
                continue
            }
            if rule.pattern.count > current.pattern.count
                || (rule.pattern.count == current.pattern.count && rule.allows)
            {
                best = rule
            }
        }
        return best?.allows ?? true
    }

    /// A path or a rule's pattern in one spelling, so that the two compare as RFC 9309 §2.2.2 asks: other
    /// than ASCII percent-encoded as UTF-8 (`/privé/` is `/priv%C3%A9/`), percent-encoded unreserved
    /// characters decoded (`/%7Ejoe/` is `/~joe/`), and the other escapes' hex digits upper-cased.
    static func normalized(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "%") }) else { return text }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        func escaped(_ byte: UInt8) -> [UInt8] {
            let digits = Array("0123456789ABCDEF".utf8)
            return [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
        }
        func unreserved(_ byte: UInt8) -> Bool {
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "~")
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hex(bytes[index + 1]),
                let low = hex(bytes[index + 2])
            {
                let decoded = high << 4 | low
                out += unreserved(decoded) ? [decoded] : escaped(decoded)
                index += 3
            } else {
                out += byte >= 0x80 ? escaped(byte) : [byte]
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `pattern` (`*` wildcards, a final `$` anchor) matches the start of `path`.
    static func matches(_ pattern: String, _ path: String) -> Bool {
        var pattern = Array(pattern.utf8)
        var anchored = false
        if pattern.last == UInt8(ascii: "$") {
            anchored = true
            pattern.removeLast()
        }
        let text = Array(path.utf8)
        // Positions in `text` the pattern so far can end at (a set: `*` spreads it).
        var positions: Set<Int> = [0]
        for byte in pattern {
            if byte == UInt8(ascii: "*") {
                guard let lowest = positions.min() else { return false }
                positions = Set(lowest...text.count)
            } else {
                positions = Set(positions.compactMap { $0 < text.count && text[$0] == byte ? $0 + 1 : nil })
            }
            if positions.isEmpty { return false }
        }
        return anchored ? positions.contains(text.count) : true
    }
}
