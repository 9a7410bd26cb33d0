/// The token counts of one answer, as the server reported them.
public struct AnswerUsage: Sendable, Hashable, Codable {
    public var promptTokens: Int
    public var completionTokens: Int
    public var totalTokens: Int

    public init(promptTokens: Int, completionTokens: Int, totalTokens: Int) {
        self.promptTokens = promptTokens
        self.completionTokens = completionTokens
        self.totalTokens = totalTokens
    }

    enum CodingKeys: String, CodingKey {
        case promptTokens = "prompt_tokens"
        case completionTokens = "completion_tokens"
        case totalTokens = "total_tokens"
    }

    /// From an OpenAI `usage` object; nil when it has no counts.
    init?(_ object: [String: Any]) {
        let prompt = object["prompt_tokens"] as? Int
        let completion = object["completion_tokens"] as? Int
        guard prompt != nil || completion != nil else { return nil }
        promptTokens = prompt ?? 0
        completionTokens = completion ?? 0
        totalTokens = (object["total_tokens"] as? Int) ?? (promptTokens + completionTokens)
    }
}
