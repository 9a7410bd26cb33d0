import Foundation
import Hummingbird
import Logging
import SluiceCore

/// The outer layer of every route: errors turned into the structured error body
/// (never a stack trace, never a secret), and the request counters and latency of `/metrics`.
struct APIMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServeMetrics
    /// Error messages name no folder of this machine (the log keeps them whole).
    var redaction = MessageRedaction([])

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        let clock = ContinuousClock()
        let start = clock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            var apiError = APIError(error)
            apiError.message = redaction(apiError.message)
            if apiError.status.code >= 500 {
                context.logger.error(
                    "request failed",
                    metadata: ["sluice-route": "\(context.endpointPath ?? "none")", "sluice-error": "\(error)"]
                )
            }
            response = JSONResponse.error(apiError)
        }
        metrics.recordRequest(
            route: context.endpointPath ?? "unmatched",
            status: response.status.code,
            seconds: start.duration(to: clock.now).seconds
        )
        return response
    }
}
