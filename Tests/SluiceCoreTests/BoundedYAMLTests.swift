import Foundation
import SluiceCore
import Testing
import Yams

/// YAML loaded without Yams' traps (session 46's campaign: a front matter with a list as a key stopped every
/// run with a fatal error; a few hundred bytes of nested aliases took seconds and hundreds of MB).
@Suite struct BoundedYAMLTests {
    @Test func readsWhatYamsReads() throws {
        let text = """
            source: {path: ./docs, include: ["**/*.md", "**/*.txt"]}
            defaults: &d {batch: 64, rpm: 3000}
            embed:
              <<: *d
              provider: hash
            when: 2026-12-02
            ratio: 0.5
            flag: yes
            nothing: ~
            """
        let bounded = try #require(try BoundedYAML.load(text) as? [String: Any])
        let yams = try #require(try Yams.load(yaml: text) as? [String: Any])
        #expect(Self.canonical(bounded) == Self.canonical(yams))
        #expect((bounded["embed"] as? [String: Any])?["batch"] as? Int == 64)
        #expect(try BoundedYAML.load("") == nil)
    }

    /// A value's text with mappings' keys in order (Yams' nested mappings are `[AnyHashable: Any]`).
    static func canonical(_ value: Any) -> String {
        if let mapping = value as? [AnyHashable: Any] {
            let pairs = mapping.map { ("\($0.key.base)", canonical($0.value)) }.sorted { $0.0 < $1.0 }
            return "{" + pairs.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + "}"
        }
        if let list = value as? [Any] { return "[" + list.map(canonical).joined(separator: ", ") + "]" }
        return "\(type(of: value)) \(value)"
    }

    @Test(arguments: ["? [a, b]\n: c\n", "{[a, b]: c}\n", "? {x: 1}\n: c\n", "title: ok\n? [a]\n: b\n"])
    func aKeyThatIsAListOrAMappingIsAnErrorNotACrash(text: String) throws {
        let error = try #require(throws: SluiceError.self) { try BoundedYAML.load(text) }
        #expect(error.code == .configuration)
        #expect(error.message.contains("mapping key"), "\(error)")
    }

    @Test func aliasesThatMultiplyAreRefusedBeforeTheyAreExpanded() throws {
        // 9 aliases a level, 10 levels: 9^10 (3.5 billion) nodes from under 500 bytes.
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n"
        for level in 1...10 {
            let previous = "*a\(level - 1)"
            text += "a\(level): &a\(level) [\(Array(repeating: previous, count: 9).joined(separator: ", "))]\n"
        }
        let error = try #require(throws: SluiceError.self) { try BoundedYAML.load(text) }
        #expect(error.message.contains("nodes"), "\(error)")
        // Aliases used within the budget are read.
        let small = try #require(try BoundedYAML.load("a: &a [1, 2]\nb: *a\nc: *a\n") as? [String: Any])
        #expect(small["c"] as? [Int] == [1, 2])
    }

    @Test func aPipelineFileWithAComplexKeyIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bounded-yaml-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("p.yaml")
        try "source: {path: ./docs}\n? [a, b]\n: c\n".write(to: file, atomically: true, encoding: .utf8)
        let error = try #require(throws: SluiceError.self) { try PipelineConfiguration.load(file: file) }
        #expect(error.code == .configuration)
    }

    /// Yams rolls an impossible timestamp over (`2026-02-30` became March 2nd; session 46's campaign, seen
    /// before the fix): such a value stays its text; a real date is still a date.
    @Test func aTimestampNoCalendarHoldsStaysText() throws {
        let text = """
            bad_day: 2026-02-30T00:00:00Z
            bad_month: 2026-13-01
            bad_hour: 2026-01-01T25:00:00Z
            not_leap: 2025-02-29
            leap: 2024-02-29
            good: 2026-12-02T10:30:00Z
            """
        let values = try #require(try BoundedYAML.load(text) as? [String: Any])
        #expect(values["bad_day"] as? String == "2026-02-30T00:00:00Z")
        #expect(values["bad_month"] as? String == "2026-13-01")
        #expect(values["bad_hour"] as? String == "2026-01-01T25:00:00Z")
        #expect(values["not_leap"] as? String == "2025-02-29")
        #expect(values["leap"] is Date)
        let good = try #require(values["good"] as? Date)
        #expect(good.timeIntervalSince1970 == 1_796_207_400)
    }
}
