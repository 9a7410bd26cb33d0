import Foundation
import Testing

@testable import SluiceClient

@Suite struct ServerSentEventParserTests {
    @Test func eventsEndAtABlankLine() {
        var parser = ServerSentEventParser()
        let lines = [
            ": a comment", "event: delta", "data: {\"text\": \"Hel\"}", "", "data: one", "data:two", "", "",
            "event: done", "id: 7", "data: {}", "",
        ]
        let events = lines.compactMap { parser.feed(line: $0) }
        #expect(
            events == [
                ServerSentEvent(event: "delta", data: "{\"text\": \"Hel\"}"),
                ServerSentEvent(event: "message", data: "one\ntwo"),
                ServerSentEvent(event: "done", data: "{}", id: "7"),
            ]
        )
    }

    @Test func structuredErrorsAreDecoded() {
        let body = Data(#"{"error": {"code": "lock-held", "message": "a run is going", "run_id": "r1"}}"#.utf8)
        let error = SluiceClientError(status: 409, body: body)
        #expect(error == SluiceClientError(status: 409, code: "lock-held", message: "a run is going", runID: "r1"))
        #expect(SluiceClientError(status: 502, body: Data("bad gateway".utf8)).code == "http-502")
    }

    @Test func keysAreOneSegment() {
        #expect(SluiceClient.segment("reports/2026/q1 summary.txt") == "reports%2F2026%2Fq1%20summary.txt")
    }

    @Test func filtersEncodeAsJSON() throws {
        let request = SearchRequest(query: "q", k: 3, filter: ["page": ["$gte": 3]], minScore: 0.5)
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as? [String: Any]
        #expect(object?["min_score"] as? Double == 0.5)
        #expect(((object?["filter"] as? [String: Any])?["page"] as? [String: Any])?["$gte"] as? Double == 3)
    }
}
