import Testing

@testable import SluiceCore

/// The `answer` section (`sluice ask`): defaults per provider, ranges, and errors naming the key.
@Suite struct PipelineConfigurationAnswerTests {
    @Test func defaultsNeedNoSection() throws {
        let answer = try PipelineConfiguration.load(file: nil, overrides: []).answer
        #expect(answer.provider == .openai)
        #expect(answer.effectiveBaseURL == "https://api.openai.com/v1")
        #expect(answer.effectiveModel == "gpt-4o-mini")
        #expect(answer.k == 8)
        #expect(answer.minScore == nil)
        #expect(answer.apiKeyEnv == nil)
    }

    @Test func ollamaHasItsOwnAddressAndModel() throws {
        let answer = try PipelineConfiguration.load(file: nil, overrides: ["answer.provider=ollama"]).answer
        #expect(answer.effectiveBaseURL == "http://127.0.0.1:11434/v1")
        #expect(answer.effectiveModel == "llama3.2")
    }

    @Test func everyKeyIsRead() throws {
        let answer = try PipelineConfiguration.load(
            file: nil,
            overrides: [
                "answer.provider=azure-openai", "answer.base_url=https://x.openai.azure.com/openai/deployments/d",
                "answer.model=m", "answer.api_key_env=KEY", "answer.api_version=2024-10-21",
                "answer.max_context_tokens=900", "answer.max_answer_tokens=99", "answer.temperature=0",
                "answer.k=3", "answer.min_score=-0.5", "answer.timeout_seconds=7", "answer.max_retries=0",
                "answer.max_retry_after_seconds=2", "answer.system_prompt=Be brief.",
            ]
        ).answer
        #expect(answer.provider == .azureOpenAI)
        #expect(answer.baseURL == "https://x.openai.azure.com/openai/deployments/d")
        #expect(answer.model == "m")
        #expect(answer.apiKeyEnv == "KEY")
        #expect(answer.apiVersion == "2024-10-21")
        #expect(answer.maxContextTokens == 900)
        #expect(answer.maxAnswerTokens == 99)
        #expect(answer.temperature == 0)
        #expect(answer.k == 3)
        #expect(answer.minScore == -0.5)
        #expect(answer.timeoutSeconds == 7)
        #expect(answer.maxRetries == 0)
        #expect(answer.maxRetryAfterSeconds == 2)
        #expect(answer.systemPrompt == "Be brief.")
    }

    /// The built-in providers declare their facts where they are declared; the fingerprint names the
    /// provider by its name, as the pipeline file does.
    @Test func theBuiltInProvidersDeclareTheirDialect() throws {
        typealias Provider = PipelineConfiguration.Answer.Provider
        #expect(Provider.known.prefix(3).map(\.rawValue) == ["openai", "azure-openai", "ollama"])
        #expect(Provider.named("azure-openai") == .azureOpenAI)
        #expect(Provider.azureOpenAI.sendsKeyInAPIKeyHeader && Provider.azureOpenAI.sendsAPIVersion)
        #expect(Provider.azureOpenAI.defaultBaseURL == nil)
        #expect(Provider.openai.asksForStreamUsage && !Provider.ollama.asksForStreamUsage)
        #expect(!Provider.openai.sendsKeyInAPIKeyHeader && !Provider.ollama.sendsAPIVersion)
        let configuration = try PipelineConfiguration.load(file: nil, overrides: ["answer.provider=ollama"])
        #expect(configuration.fingerprintText.contains("\nanswer.provider=\"ollama\"\n"))
    }

    @Test(arguments: [
        ("answer.provider=anthropic", "answer.provider"),
        ("answer.k=0", "answer.k"),
        ("answer.temperature=3", "answer.temperature"),
        ("answer.max_context_tokens=8", "answer.max_context_tokens"),
        ("answer.timeout_seconds=1e30", "answer.timeout_seconds"),
        ("answer.min_score=.nan", "answer.min_score"),
        ("answer.base_url=ftp://host", "answer.base_url"),
        ("answer.model=''", "answer.model"),
        ("answer.colour=blue", "answer.colour"),
    ])
    func badValuesNameTheirKey(override: String, key: String) {
        #expect {
            _ = try PipelineConfiguration.load(file: nil, overrides: [override])
        } throws: { error in
            let error = error as? SluiceError
            return error?.code == .configuration && error?.message.contains(key) == true
        }
    }
}
