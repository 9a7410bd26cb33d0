import Foundation
import Hummingbird
import SluiceCore
import SluicePipeline
import Testing

@testable import SluiceServe

/// Every mistake in a search body is a 400 that names the field, never a 5xx.
@Suite struct SearchBodyTests {
    func parse(_ json: String, maxK: Int = 100) throws -> SearchQuery {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        return try SearchBody(object, maxK: maxK).query
    }

    @Test func aFullBody() throws {
        let query = try parse(
            #"{"query": "gate", "k": 7, "filter": {"page": {"$gte": 3}}, "mode": "vector", "min_score": 0.5, "collapse": false}"#
        )
        #expect(query.text == "gate" && query.k == 7 && query.mode == .vector && query.minScore == 0.5)
        #expect(!query.collapseDuplicates)
        #expect(query.filter != nil)
        #expect(query.rerank, "a reranker is used unless the body says otherwise")
        #expect(try !parse(#"{"query": "gate", "rerank": false}"#).rerank)
    }

    @Test func anAskBodyCanSkipTheReranker() throws {
        let object = try JSONSerialization.jsonObject(with: Data(#"{"question": "why", "rerank": false}"#.utf8))
        #expect(try !AskBody(object as! [String: Any], maxK: 100).rerank)
        let bad = try JSONSerialization.jsonObject(with: Data(#"{"question": "why", "rerank": "no"}"#.utf8))
        #expect(throws: APIError.self) { _ = try AskBody(bad as! [String: Any], maxK: 100) }
    }

    @Test("fusion names a rule, with the pipeline's parameter for it; null or absent: the server's")
    func fusion() throws {
        #expect(try parse(#"{"query": "x", "fusion": "rrf"}"#).fusion == .rrf(k: 10))
        #expect(try parse(#"{"query": "x", "fusion": null}"#).fusion == nil)
        #expect(try parse(#"{"query": "x"}"#).fusion == nil)
        var search = PipelineConfiguration.Search()
        search.vectorWeight = 0.25
        let object = try JSONSerialization.jsonObject(with: Data(#"{"question": "x", "fusion": "score"}"#.utf8))
        let ask = try AskBody(object as! [String: Any], maxK: 100, search: search)
        #expect(ask.fusion == .score(vectorWeight: 0.25))
    }

    @Test(arguments: [
        #"{"k": 3}"#, #"{"query": ""}"#, #"{"query": " \n"}"#, #"{"query": 1}"#, #"{"query": "x", "k": 0}"#,
        #"{"query": "x", "k": 101}"#, #"{"query": "x", "k": 2.5}"#, #"{"query": "x", "k": true}"#,
        #"{"query": "x", "k": "3"}"#, #"{"query": "x", "mode": "fuzzy"}"#, #"{"query": "x", "filter": []}"#,
        #"{"query": "x", "filter": {"$nope": 1}}"#, #"{"query": "x", "min_score": "high"}"#,
        #"{"query": "x", "collapse": 1}"#, #"{"query": "x", "extra": 1}"#, #"{"query": "x", "rerank": 0}"#,
        #"{"query": "x", "rerank": "false"}"#,
        #"{"query": "x", "collapse": 1}"#, #"{"query": "x", "extra": 1}"#, #"{"query": "x", "fusion": "rank"}"#,
        #"{"query": "x", "fusion": 1}"#,
    ])
    func badInputIsA400(_ json: String) {
        do {
            _ = try parse(json)
            Issue.record("accepted \(json)")
        } catch let error as APIError {
            #expect(error.status == .badRequest && error.code == "usage", "\(json)")
        } catch {
            Issue.record("\(json): \(error)")
        }
    }

    @Test func sluiceErrorsMapToStatuses() {
        #expect(APIError(SluiceError(.usage, "x")).status == .badRequest)
        #expect(APIError(SluiceError(.lockHeld, "x")).status == .conflict)
        #expect(APIError(SluiceError(.dependencyUnavailable, "x")).status == .serviceUnavailable)
        #expect(APIError(SluiceError(.timeout, "x")).status == .serviceUnavailable)
        #expect(APIError(CancellationError()).status == .internalServerError)
    }

    @Test func tokensCompareWholly() {
        let token = Array("s3cret".utf8)
        #expect(BearerAuthMiddleware<BasicRequestContext>.equal(token, token))
        #expect(!BearerAuthMiddleware<BasicRequestContext>.equal(Array("s3cres".utf8), token))
        #expect(!BearerAuthMiddleware<BasicRequestContext>.equal(Array("s3cret-".utf8), token))
        #expect(!BearerAuthMiddleware<BasicRequestContext>.equal([], token))
    }
}
