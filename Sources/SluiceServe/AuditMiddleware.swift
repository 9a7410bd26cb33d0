import Foundation
import Hummingbird
import SluiceCore
import Synchronization

/// Writes the audit log's line (``AuditLog``) of each request to a route that reads documents, whatever
/// its answer (refusals too). Sits outside ``BearerAuthMiddleware``, which tells it who the caller is
/// through ``AuditRecord``; the routes tell it how many documents the answer showed, and a search or an ask
/// its query text and the filter its query ran with.
struct AuditMiddleware<Context: RequestContext>: RouterMiddleware {
    let log: AuditLog
    /// The pipeline's access rules: an identity's access filter, for a route that names none of its own.
    let access: PipelineConfiguration.Access
    /// Whether lines hold the query text (`serve.audit_query_text`).
    let writesQueryText: Bool

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard let scope = RequestIdentity.scope(of: request.uri.path), scope != .metrics,
            request.method != .options
        else { return try await next(request, context) }
        let record = AuditRecord()
        let time = Date()
        let status: Int
        do {
            let response = try await AuditRecord.$current.withValue(record) { try await next(request, context) }
            status = response.status.code
            await write(record, time: time, request: request, context: context, status: status)
            return response
        } catch {
            await write(record, time: time, request: request, context: context, status: APIError(error).status.code)
            throw error
        }
    }

    private func write(_ record: AuditRecord, time: Date, request: Request, context: Context, status: Int) async {
        let state = record.state.withLock { $0 }
        let (identity, documents) = (state.identity, state.documents)
        var counted = documents
        // A document read shows one document, or none.
        if counted == nil, request.method == .get, context.endpointPath == "/v1/documents/{key}" {
            counted = status == 200 ? 1 : 0
        }
        await log.append(
            AuditLog.Entry(
                time: time,
                identity: identity?.kind ?? .unidentified,
                principal: identity?.access.principal,
                keyID: identity?.keyID,
                method: request.method.rawValue,
                route: context.endpointPath ?? "unmatched",
                status: status,
                documents: counted,
                filter: (state.filter ?? identity?.access.filter(access)).map { "\($0)" },
                query: writesQueryText ? state.query : nil
            )
        )
    }
}

/// What the audit log learns while a request is handled: who the caller is (``BearerAuthMiddleware``) and
/// how many distinct documents the answer showed (the routes). A task-local reference.
final class AuditRecord: Sendable {
    struct State: Sendable {
        var identity: RequestIdentity?
        var documents: Int?
        /// The filter a search or an ask ran with (the access filter ANDed with the caller's).
        var filter: SearchFilter?
        /// The query text of a search or an ask (written with `serve.audit_query_text` only).
        var query: String?
    }

    let state = Mutex(State())

    @TaskLocal static var current: AuditRecord?

    /// The caller, once authenticated.
    static func identified(_ identity: RequestIdentity) { current?.state.withLock { $0.identity = identity } }

    /// What a search or an ask asked the store: its text and the filter its query ran with.
    static func asked(_ text: String, filter: SearchFilter?) {
        current?.state.withLock {
            $0.query = text
            $0.filter = filter
        }
    }

    /// The documents the answer shows (their keys, counted once each).
    static func showed(_ documentKeys: some Sequence<String>) {
        current?.state.withLock { $0.documents = Set(documentKeys).count }
    }
}
