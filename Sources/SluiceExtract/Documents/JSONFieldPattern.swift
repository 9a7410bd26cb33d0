/// One entry of `extract.json.fields`: which string values to index.
///
/// - A pattern starting with `$` is matched against the whole JSON path (`$.items[3].body`): `*` stands
///   for one key or index (`$.items[*].body`, `$.*.title`), `**` for any run of steps
///   (`$.**.description`); other characters match themselves.
/// - Any other pattern is a key name (`body`, `title`), with `*` as a wildcard within the name: it
///   matches a value under a key of that name at any depth.
///
/// A pattern that matches an object or array selects every string inside it.
struct JSONFieldPattern: Sendable, Hashable {
    private enum Token: Hashable {
        case step(JSONScanner.Step)
        case anyStep
        case anySteps
        case keyGlob(String)
    }

    private let tokens: [Token]
    private let keyName: String?

    init(_ pattern: String) {
        guard pattern.hasPrefix("$") else {
            keyName = pattern
            tokens = []
            return
        }
        keyName = nil
        var tokens: [Token] = []
        var rest = Substring(pattern.dropFirst())
        while !rest.isEmpty {
            if rest.hasPrefix(".**") {
                tokens.append(.anySteps)
                rest = rest.dropFirst(3)
            } else if rest.hasPrefix("[*]") {
                tokens.append(.anyStep)
                rest = rest.dropFirst(3)
            } else if rest.hasPrefix("[\"") || rest.hasPrefix("['") {
                let quote = rest.dropFirst().first!
                let body = rest.dropFirst(2)
                let close = body.firstIndex(of: quote) ?? body.endIndex
                tokens.append(.step(.key(String(body[..<close]))))
                rest = body[close...].dropFirst(2)
            } else if rest.hasPrefix("[") {
                let close = rest.firstIndex(of: "]") ?? rest.endIndex
                let inside = rest.dropFirst()[..<close]
                tokens.append(Int(inside).map { .step(.index($0)) } ?? .keyGlob(String(inside)))
                rest = rest[close...].dropFirst()
            } else {
                if rest.first == "." { rest = rest.dropFirst() }
                let name = rest.prefix { $0 != "." && $0 != "[" }
                rest = rest.dropFirst(name.count)
                tokens.append(
                    name == "*" ? .anyStep : name.contains("*") ? .keyGlob(String(name)) : .step(.key(String(name)))
                )
            }
        }
        self.tokens = tokens
    }

    /// Whether the value at `path` is selected by this pattern (not counting its ancestors).
    func matches(_ path: [JSONScanner.Step]) -> Bool {
        if let keyName {
            guard case .key(let key)? = path.last else { return false }
            return Self.glob(keyName[...], key[...])
        }
        return Self.match(tokens[...], path[...])
    }

    private static func match(_ tokens: ArraySlice<Token>, _ path: ArraySlice<JSONScanner.Step>) -> Bool {
        guard let token = tokens.first else { return path.isEmpty }
        switch token {
        case .anySteps:
            for skip in 0...path.count where match(tokens.dropFirst(), path.dropFirst(skip)) { return true }
            return false
        case .anyStep:
            return !path.isEmpty && match(tokens.dropFirst(), path.dropFirst())
        case .step(let step):
            return path.first == step && match(tokens.dropFirst(), path.dropFirst())
        case .keyGlob(let pattern):
            guard case .key(let key)? = path.first else { return false }
            return glob(pattern[...], key[...]) && match(tokens.dropFirst(), path.dropFirst())
        }
    }

    /// `*` matches any run of characters; everything else matches itself.
    static func glob(_ pattern: Substring, _ text: Substring) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        if first == "*" {
            let rest = pattern.dropFirst()
            var candidate = text
            while true {
                if glob(rest, candidate) { return true }
                guard !candidate.isEmpty else { return false }
                candidate = candidate.dropFirst()
            }
        }
        guard let head = text.first, head == first else { return false }
        return glob(pattern.dropFirst(), text.dropFirst())
    }
}
