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
                let rule = Rule(allows: field == "allow", pattern: value)
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
