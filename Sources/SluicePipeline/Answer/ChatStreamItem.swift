import Foundation

/// What one server-sent event of a streamed chat completion says.
enum ChatStreamItem: Equatable, Sendable {
    /// Text the model wrote (possibly empty), the model's name when the event carried it, and why the
    /// model stopped when this is its last event (`stop`; `length`: `max_tokens` reached).
    case delta(String, model: String?, finishReason: String? = nil)
    /// The token counts the server reported (OpenAI with `stream_options.include_usage`, vLLM, Ollama).
    case usage(AnswerUsage)
    /// `data: [DONE]`: the answer is complete.
    case done
    /// An error object in the stream (`{"error": {...}}` or an `event: error`).
    case error(String)
    /// An event that carries nothing we read (a role-only delta, a finish reason, an unknown shape).
    case ignored

    /// Reads one event. An event that is not JSON is an error: the stream cannot be trusted after it.
    init(_ event: ServerSentEvent) {
        let data = event.data.trimmingCharacters(in: .whitespaces)
        if data == "[DONE]" {
            self = .done
            return
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
            self = .error("the stream sent an event that is not a JSON object: \(data.prefix(120))")
            return
        }
        if let message = Self.errorMessage(object) ?? (event.event == "error" ? data : nil) {
            self = .error(String(message.prefix(300)))
            return
        }
        let model = object["model"] as? String
        if let choices = object["choices"] as? [[String: Any]], let first = choices.first {
            let content = (first["delta"] as? [String: Any])?["content"] as? String
            let finishReason = first["finish_reason"] as? String
            if content != nil || finishReason != nil {
                self = .delta(content ?? "", model: model, finishReason: finishReason)
                return
            }
        }
        if let usage = object["usage"] as? [String: Any], let counts = AnswerUsage(usage) {
            self = .usage(counts)
            return
        }
        self = model.map { .delta("", model: $0) } ?? .ignored
    }

    private static func errorMessage(_ object: [String: Any]) -> String? {
        if let error = object["error"] as? [String: Any] {
            return (error["message"] as? String) ?? "\(error)"
        }
        return object["error"] as? String
    }
}
