import Foundation
import Hummingbird
import SluiceCore
import SluicePipeline
import SluiceState

/// Every route of the API (docs/openapi.json), each a thin call into the library.
struct APIRoutes: Sendable {
    let server: SluiceServer

    var serve: PipelineConfiguration.Serve { server.configuration.serve }
    var timeout: Duration { .milliseconds(Int64(serve.requestTimeoutSeconds * 1000)) }

    func add(to router: Router<BasicRequestContext>) {
        let access = server.configuration.access
        let documents = DocumentRoutes(checkpoint: server.checkpoint, served: server.served, access: access)
        let export = ExportRoute(checkpoint: server.checkpoint, served: server.served, access: access)
        router.get("/health") { _, _ in try JSONResponse.make(["status": "ok"]) }
        router.get("/ready") { request, _ in
            let report = await ReadinessReport.probe(
                checkpoint: server.checkpoint,
                searcher: server.searcher,
                answerModelConfigured: server.answerer != nil,
                timeout: timeout,
                detailed: RequestIdentity.current.isOperator,
                countsHidden: access.isEnabled && !RequestIdentity.current.isOperator,
                logger: server.logger
            )
            return try JSONResponse.make(report, status: report.ready ? .ok : .serviceUnavailable)
        }
        router.post("/v1/search") { request, _ in
            var body = try SearchBody(
                try await JSONResponse.object(request, limit: serve.maxBodyBytes),
                maxK: serve.maxK,
                search: server.configuration.search
            )
            // Inside the store's query: k results come back when k readable ones exist (docs/ACCESS.md).
            let identity = RequestIdentity.current.access
            body.query.filter = try identity.restricting(body.query.filter, access)
            let query = body.query
            AuditRecord.asked(query.text, filter: query.filter)
            let searcher = server.searcher
            let skipped = UnreadableRecordLog()
            let outcome = try await bounded {
                try await UnreadableRecordLog.$current.withValue(skipped) { try await searcher.searchOutcome(query) }
            }
            server.readNotices.report(searcher.sink.readNotice, logger: server.logger)
            var results = outcome.results
            let restricted = identity.filter(access) != nil
            // A record's readers name other principals and groups: the operator's to see, not a restricted caller's.
            if restricted {
                for index in results.indices { results[index].metadata[access.field] = nil }
            }
            AuditRecord.showed(outcome.results.map(\.documentKey))
            return try JSONResponse.make(
                SearchAnswer(
                    results: results,
                    mode: body.query.mode ?? searcher.defaultMode,
                    rerank: outcome.rerank,
                    skipped: SkippedRecords.shown(skipped.records, restricted: restricted)
                )
            )
        }
        router.post("/v1/ask") { request, _ in
            guard let configured = server.answerer else {
                throw APIError.notFound("this server has no answer model: configure the pipeline's answer section")
            }
            let body = try AskBody(
                try await JSONResponse.object(request, limit: serve.maxBodyBytes),
                maxK: serve.maxK,
                search: server.configuration.search
            )
            var chosen = configured
            if !body.rerank { chosen.reranking = nil }
            if let fusion = body.fusion { chosen.fusion = fusion }
            let answerer = chosen
            let filter = try RequestIdentity.current.access.restricting(body.filter, access)
            let restricted = RequestIdentity.current.access.filter(access) != nil
            AuditRecord.asked(body.question, filter: filter)
            let accepts = request.headers[.accept]?.contains("text/event-stream") ?? false
            let skipped = UnreadableRecordLog()
            if body.stream || accepts {
                // The answer's task inherits the log: its searches note there what they skip.
                let events = UnreadableRecordLog.$current.withValue(skipped) {
                    answerer.answer(body.question, k: body.k, filter: filter, mode: body.mode)
                }
                return AnswerStream.response(events, skipped: restricted ? nil : skipped) {
                    server.readNotices.report(server.searcher.sink.readNotice, logger: server.logger)
                }
            }
            let transcript = try await bounded {
                try await UnreadableRecordLog.$current.withValue(skipped) {
                    var transcript = AnswerTranscript()
                    try await answerer.answer(body.question, k: body.k, filter: filter, mode: body.mode) {
                        transcript.take($0)
                    }
                    return transcript
                }
            }
            server.readNotices.report(server.searcher.sink.readNotice, logger: server.logger)
            AuditRecord.showed(transcript.sources.map(\.documentKey))
            var object = transcript.jsonObject
            if let shown = SkippedRecords.shown(skipped.records, restricted: restricted) {
                object["skipped"] = shown.map(SkippedRecords.jsonObject)
            }
            return try JSONResponse.make(object: object)
        }
        router.get("/v1/documents") { request, _ in
            // A restricted identity is listed what it may read, the store asked with its access filter.
            let readable = RequestIdentity.current.access.filter(access)
            return try await bounded { try await documents.list(request, readable: readable) }
        }
        router.get("/v1/documents/{key}") { request, context in
            let raw = try context.parameters.require("key")
            guard let key = raw.removingPercentEncoding, !key.isEmpty else {
                throw APIError.badRequest("key: a percent-encoded document key")
            }
            let (cursor, limit) = (request.uri.queryParameters["cursor"], request.uri.queryParameters["limit"])
            let readable = RequestIdentity.current.access.filter(access)
            return try await bounded {
                try await documents.detail(
                    key: key,
                    cursor: cursor.map(String.init),
                    limit: limit.map(String.init),
                    readable: readable
                )
            }
        }
        router.get("/v1/export") { request, _ in
            // The records a restricted identity may read, the store asked with its access filter.
            let readable = RequestIdentity.current.access.filter(access)
            return try await bounded { try await export.page(request, readable: readable) }
        }
        router.post("/v1/runs") { request, _ in
            // The body is optional and, for now, has no fields (RequestBodyPolicyMiddleware checked it).
            _ = try await request.body.collect(upTo: serve.maxBodyBytes)
            return try JSONResponse.make(try server.runs.start(), status: .accepted)
        }
        router.get("/v1/runs/{id}") { _, context in
            let id = try context.parameters.require("id")
            guard let report = server.runs.report(id) else { throw APIError.notFound("no run \(id) in this server") }
            return try JSONResponse.make(report)
        }
        router.get("/metrics") { _, _ in
            let (documents, vectors) = await storeSize()
            var text = server.metrics.exposition(
                documents: documents,
                vectors: vectors,
                generations: generationRoles()
            )
            // The last finished run's figures, with the names `sluice run --metrics-file` writes. A scrape answers
            // whatever the state's condition (failing it would hide every other figure): with no state, or
            // one that cannot be read, these lines are left out, and `/ready` reports the state as damaged.
            if let checkpoint = try? server.checkpoint.open(),
                let runs = try? checkpoint.recentRuns(limit: 20),
                let last = runs.first(where: { $0.exitCode != nil }), let code = last.exitCode
            {
                let success = runs.first { $0.exitCode == 0 }?.endedAt.map { Date(timeIntervalSince1970: $0) }
                text += RunMetrics.text(
                    pipeline: server.pipelineName,
                    exitCode: RunExitCode(rawValue: code),
                    stats: last.stats,
                    endedAt: Date(timeIntervalSince1970: last.endedAt ?? last.startedAt),
                    lastSuccess: success
                )
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: text))
            )
        }
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.json))
            )
        }
    }

    /// `POST /v1/search`'s answer.
    struct SearchAnswer: Encodable {
        var results: [SearchResult]
        var mode: SearchMode
        /// Present when the pipeline has a reranker (`search.rerank`).
        var rerank: RerankStatus?
        /// The records the search skipped because the store could not read them (``SkippedRecords``); absent
        /// for a restricted caller.
        var skipped: [UnreadableRecord]?
    }

    /// The generations the manifest names, by role; none when generations were never used, or when the
    /// manifest cannot be read (`sluice check` and every command say why; the metrics answer regardless).
    private func generationRoles() -> [(role: String, generation: String)] {
        guard let manifest = try? GenerationManifest.load(stateDirectory: server.checkpoint.directory) else {
            return []
        }
        return [("active", manifest.active), ("candidate", manifest.candidate), ("previous", manifest.previous)]
            .compactMap { role, generation in generation.map { (role, $0.id) } }
    }

    /// Runs a request's work under `serve.request_timeout_seconds` (then 503 `timeout`).
    private func bounded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withDeadline(timeout, what: "the request", setting: "serve.request_timeout_seconds", body)
    }

    private func storeSize() async -> (Int?, Int?) {
        // As the run figures above: a gauge left out when the state cannot be read (`/ready` says why). The
        // records and the store of one generation, the served one.
        let served = server.served.snapshot
        let documents = try? server.checkpoint.open(generation: .some(served.generation)).documentCount()
        let sink = served.searcher.sink
        let vectors = try? await bounded { try await sink.count() }  // a hung store leaves the gauge out
        return (documents, vectors)
    }
}
