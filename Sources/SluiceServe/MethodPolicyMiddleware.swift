import Foundation
import Hummingbird

/// A known path asked with a method it does not take answers 405 with `Allow` (not 404: the path exists).
/// The paths and their methods are the contract's (docs/openapi.json), so the two cannot drift apart.
struct MethodPolicyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        let allowed = ContractRoutes.methods(for: request.uri.path)
        // OPTIONS is the CORS preflight's (OriginPolicyMiddleware answers allowed origins before this).
        guard allowed.isEmpty || allowed.contains(request.method.rawValue) || request.method == .options else {
            let list = allowed.joined(separator: ", ")
            var response = JSONResponse.error(
                APIError(.methodNotAllowed, "method-not-allowed", "\(request.uri.path) takes \(list)")
            )
            response.headers[.allow] = list
            return response
        }
        return try await next(request, context)
    }
}

/// The contract's paths and their methods (docs/openapi.json, parsed once).
enum ContractRoutes {
    /// Each path as segments (`{key}` matches any one segment) and its methods.
    static let table: [(segments: [Substring], methods: [String])] = {
        let object = try? JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any]
        let paths = object?["paths"] as? [String: [String: Any]] ?? [:]
        return paths.keys.sorted().map { path in
            let methods = paths[path, default: [:]].keys.map { $0.uppercased() }.sorted()
            return (path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 }, methods)
        }
    }()

    /// The methods the contract lists for `path` (empty: an unknown path, 404).
    static func methods(for path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for entry in table where entry.segments.count == segments.count {
            let matches = zip(entry.segments, segments).allSatisfy { pattern, segment in
                pattern.hasPrefix("{") ? !segment.isEmpty : pattern == segment
            }
            if matches { return entry.methods }
        }
        return []
    }
}
