import SluiceCore
import Testing

/// The bound on one document's text (`extract.max_text_mb`).
@Suite struct TextBudgetTests {
    @Test func chargesUntilPastTheLimitThenFailsWithTheSetting() throws {
        var budget = TextBudget(limit: 10)
        try budget.charge("12345")
        try budget.charge(5)
        #expect(budget.spent == 10)
        let error = #expect(throws: SluiceError.self) { try budget.charge("x") }
        #expect(error?.code == .textTooLarge)
        #expect(error?.message.contains("extract.max_text_mb") == true)
        #expect(SluiceError.Code.textTooLarge.isPermanent)
    }

    @Test func aSectionCountsItsTextHeadingPathAndMetadata() throws {
        // Every chunk of a section carries its heading path and metadata: a huge heading above many
        // sections multiplies as a huge header does.
        let section = TextSection(text: "body", headingPath: ["Title", "Sub"], metadata: ["sheet": "S1"])
        var budget = TextBudget(limit: 100)
        try budget.charge(section)
        #expect(budget.spent == 4 + 5 + 3 + 5 + 2)
        let text = ExtractedText(sections: Array(repeating: section, count: 6))
        #expect(throws: SluiceError.self) { try TextBudget(limit: 100).check(text) }
        try TextBudget(limit: 200).check(text)
    }

    @Test func aFileMayAlwaysMakeFourTimesItsSize() throws {
        #expect(TextBudget(setting: 1_000, fileSize: 100).limit == 1_000)
        #expect(TextBudget(setting: 1_000, fileSize: 400).limit == 1_600)
        #expect(TextBudget(setting: 1_000, fileSize: .max / 2).limit == .max)
        #expect(TextBudget(setting: .max, fileSize: 10).limit == .max)
        var budget = TextBudget(setting: 1_000, fileSize: 400)
        let error = #expect(throws: SluiceError.self) { try budget.charge(1_601) }
        #expect(
            error?.message.contains("its bound of 1 KB (extract.max_text_mb, or 4 times the file's size") == true,
            "\(String(describing: error))"
        )
    }

    @Test func theSettingIsReadAndDefaultsTo32MB() throws {
        #expect(PipelineConfiguration.Extract().maxTextMB == 32)
        #expect(PipelineConfiguration.Extract().maxTextBytes == 32 << 20)
        let configuration = try PipelineConfiguration.load(file: nil, overrides: ["extract.max_text_mb=0.5"])
        #expect(configuration.extract.maxTextBytes == 512 << 10)
        #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["extract.max_text_mb=0"])
        }
    }
}
