import SluiceCore
import Testing

@testable import SluiceServe

struct ExportRouteTests {
    @Test("a cursor is ORDINAL:KEY, the key last so that it may hold any character", arguments: ["a.md", "x:y/z:1.md"])
    func cursorRoundTrip(_ key: String) throws {
        let cursor = ExportRoute.Cursor(key: key, ordinal: 12)
        #expect(cursor.text == "12:\(key)")
        #expect(ExportRoute.Cursor(cursor.text) == cursor)
    }

    @Test("a cursor that is not one the server wrote is refused", arguments: ["", "x", "1", "1:", "-1:a", "a:b"])
    func malformedCursor(_ text: String) {
        #expect(ExportRoute.Cursor(text) == nil)
    }

    @Test("whole documents are asked by key, the others by key and ordinals, all under the access filter")
    func filter() {
        let readable = SearchFilter.oneOf("access", [.string("eng"), .string("*")])
        let plan = [
            ExportRoute.Planned(key: "a", ordinals: 3..<5, whole: false),
            ExportRoute.Planned(key: "b", ordinals: 0..<2, whole: true),
            ExportRoute.Planned(key: "c", ordinals: 0..<4, whole: false),
        ]
        let part = { (key: String, range: Range<Int>) -> SearchFilter in
            .and([
                .compare(SearchFilter.documentKeyField, .equal, .string(key)),
                .compare(SearchFilter.ordinalField, .greaterOrEqual, .int(range.lowerBound)),
                .compare(SearchFilter.ordinalField, .less, .int(range.upperBound)),
            ])
        }
        let records = SearchFilter.or([
            .oneOf(SearchFilter.documentKeyField, [.string("b")]), part("a", 3..<5), part("c", 0..<4),
        ])
        #expect(ExportRoute.filter(plan, readable: readable) == .and([records, readable]))
        #expect(ExportRoute.filter([plan[1]], readable: nil) == .oneOf(SearchFilter.documentKeyField, [.string("b")]))
    }

    @Test("a damaged record is the page's to name only when planned in its range, up to its last record")
    func unreadableInRange() {
        let cursor = { (key: String, ordinal: Int) in ExportRoute.Cursor(key: key, ordinal: ordinal) }
        let planned = [
            VectorID(rawValue: "a1"): cursor("a", 1), VectorID(rawValue: "b0"): cursor("b", 0),
            VectorID(rawValue: "b2"): cursor("b", 2), VectorID(rawValue: "c0"): cursor("c", 0),
        ]
        let met = ["a1", "b0", "b2", "c0", "z9"].map {
            UnreadableRecord(id: VectorID(rawValue: $0), documentKey: nil, reason: "not UTF-8")
        }
        let named = { (end: ExportRoute.Cursor?) in
            ExportRoute.unreadable(met, planned: planned, upTo: end).map(\.id.rawValue)
        }
        #expect(named(cursor("b", 0)) == ["a1", "b0"], "up to and including the page's last record")
        #expect(named(cursor("b", 1)) == ["a1", "b0"], "b2 is the next page's")
        #expect(named(cursor("a", 5)) == ["a1"], "a key orders before another by bytes")
        #expect(named(nil) == ["a1", "b0", "b2", "c0"], "the last page names every planned one, never z9")
    }
}
