import Foundation
import SluiceCore
import Testing

/// The filter language (docs/USAGE.md, "Filters"): its text and JSON forms, and the evaluation the local
/// stores apply while they rank.
@Suite struct SearchFilterTests {
    let record = VectorRecord(
        id: VectorID(rawValue: "r1"),
        documentKey: "reports/2026/q3.pdf",
        ordinal: 2,
        text: "Quarterly figures",
        vector: [],
        metadata: [
            "format": "pdf", "page": 7, "score": 0.25, "draft": false,
            "mtime": .time(Date(timeIntervalSince1970: 1_780_000_000)),
            "headings": .strings(["Results", "Revenue"]), "folders": .strings(["reports/", "reports/2026/"]),
        ]
    )

    @Test(arguments: [
        ("format = pdf", true), ("format = \"docx\"", false), ("format != docx", true), ("format != pdf", false),
        ("page >= 7", true), ("page > 7", false), ("page < 10 and page > 3", true), ("page = 7.0", true),
        ("score <= 0.25", true), ("draft = false", true), ("draft = true", false),
        ("format in (docx, pdf)", true), ("format in (docx, html)", false), ("page in (1, 7)", true),
        ("document_key ^= \"reports/2026/\"", true), ("document_key ^= reports/2025/", false),
        ("title exists", false), ("format exists", true), ("headings = Revenue", true),
        ("headings in (Costs, Results)", true), ("headings != Costs", true), ("headings != Revenue", false),
        ("mtime >= 2026-01-01", true), ("mtime < 2026-01-01", false),
        ("mtime > 2026-05-28T20:26:39Z", true), ("mtime > 2026-05-28T20:26:40Z", false),
        ("format = docx or page = 7", true), ("(format = docx or page = 7) and draft = true", false),
        ("format = docx or page = 7 and draft = true", false), ("missing = 1", false),
        ("folders = reports/2026/", true), ("mtime = \"2026-05-28T20:26:40Z\"", true),
        ("mtime = \"2026-05-28T20:26:41Z\"", false), ("mtime > 1000", false),
    ])
    func evaluates(filter: String, expected: Bool) throws {
        #expect(try SearchFilter(parsing: filter).matches(record) == expected, "\(filter)")
    }

    /// `and` binds tighter than `or`; parentheses group; the printed form reads back to the same filter.
    @Test func parsesPrecedenceAndPrintsBack() throws {
        let filter = try SearchFilter(parsing: "a = 1 or b = 2 and c exists")
        #expect(filter == .or([.compare("a", .equal, 1), .and([.compare("b", .equal, 2), .exists("c")])]))
        for text in [
            "a = 1 or b = 2 and c exists", "format in (pdf, \"two words\")", "document_key ^= \"x/\\\"y\"",
            "mtime >= 2026-01-01", "(a = 1 or b = 2) and c != x",
        ] {
            let parsed = try SearchFilter(parsing: text)
            #expect(try SearchFilter(parsing: parsed.description) == parsed, "\(text) → \(parsed)")
        }
    }

    /// Every mistake is a usage error that names it.
    @Test(arguments: [
        ("", "empty"), ("format", "needs a condition"), ("format =", "needs a value"), ("= pdf", "field name"),
        ("page >= abc", "ranges compare numbers"), ("format in pdf", "needs a list"), ("(a = 1", "not closed"),
        ("a = 1 b = 2", "unexpected"), ("a = \"open", "not closed"), ("{\"page\": {\"$gt\": \"x\"}}", "compares"),
        ("{\"$not\": {}}", "unknown operator"), ("{\"page\": {\"$exists\": false}}", "$exists"), ("{oops", "JSON"),
        ("a ~ b", "unexpected"),
    ])
    func refusesMistakes(filter: String, message: String) {
        #expect {
            _ = try SearchFilter(parsing: filter)
        } throws: { error in
            guard let error = error as? SluiceError else { return false }
            return error.code == .usage && error.message.contains(message)
        }
    }

    /// The JSON form reads to the same filter as the text form, and writes back to itself.
    @Test func jsonFormMatchesTheTextForm() throws {
        let json = """
            {"$or": [{"format": "pdf", "page": {"$gte": 3, "$lt": 9}}, {"document_key": {"$prefix": "a/"}}],
             "mtime": {"$gte": "2026-01-01"}, "tags": {"$in": ["x", 2]}, "title": {"$exists": true}}
            """
        let parsed = try SearchFilter(parsing: json)
        let text = try SearchFilter(
            parsing:
                "(format = pdf and page >= 3 and page < 9 or document_key ^= \"a/\") and mtime >= 2026-01-01 and tags in (x, 2) and title exists"
        )
        #expect(parsed.matches(record) == text.matches(record))
        #expect(try SearchFilter(json: parsed.jsonObject) == parsed)
        #expect(parsed.fields == ["format", "page", "document_key", "mtime", "tags", "title"])
    }
}

/// Typed metadata values: JSON round trips, times as RFC 3339 text.
@Suite struct MetadataValueTests {
    @Test func roundTripsThroughJSON() throws {
        let values: [String: MetadataValue] = [
            "s": "text", "i": 42, "d": 2.5, "b": true, "t": .time(Date(timeIntervalSince1970: 1_780_000_000)),
            "l": .strings(["a", "b"]), "n": "2026-13-01T00:00:00Z",
        ]
        let data = try JSONEncoder().encode(values)
        #expect(try JSONDecoder().decode([String: MetadataValue].self, from: data) == values)
        let object = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        #expect(object.compactMapValues(MetadataValue.init(json:)) == values)
        #expect(String(decoding: try JSONEncoder().encode(values["t"]!), as: UTF8.self) == "\"2026-05-28T20:26:40Z\"")
    }

    @Test func parsesRFC3339Times() {
        #expect(MetadataValue.parseTime("2026-05-28T22:26:40+02:00") == Date(timeIntervalSince1970: 1_780_000_000))
        #expect(MetadataValue.parseTime("2026-05-28T20:26:40.5Z") == Date(timeIntervalSince1970: 1_780_000_000.5))
        for text in ["2026-05-28", "2026-05-28T20:26:40", "x026-05-28T20:26:40Z", "2026-05-28T20:26:40Zjunk"] {
            #expect(MetadataValue.parseTime(text) == nil, "\(text)")
        }
    }
}
