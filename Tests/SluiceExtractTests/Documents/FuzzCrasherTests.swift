import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// Every input the fuzzer (`scripts/fuzz.sh`) found crashing an extractor, kept in `Fuzz/Crashers/<target>/`,
/// runs through that extractor again: it must extract or fail with a ``SluiceError``, never trap.
@Suite struct FuzzCrasherTests {
    static let crashers = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Crashers")

    static let extractors: [String: any Extractor] = [
        "docx": DOCXExtractor(), "json": JSONExtractor(), "csv": CSVExtractor(), "html": HTMLExtractor(),
        "text": TextExtractor(), "odt": ODTExtractor(), "ods": ODSExtractor(), "odp": ODPExtractor(),
        "rtf": RTFExtractor(),
    ]

    static var cases: [String] {
        extractors.keys.sorted().flatMap { target in
            ((try? FileManager.default.contentsOfDirectory(atPath: crashers.appendingPathComponent(target).path)) ?? [])
                .sorted().map { "\(target)/\($0)" }
        }
    }

    @Test func thereAreCrashersToReplay() {
        #expect(!Self.cases.isEmpty)
    }

    @Test(arguments: cases)
    func replayedWithoutACrash(_ crasher: String) throws {
        let target = String(crasher.split(separator: "/")[0])
        let extractor = try #require(Self.extractors[target])
        let url = Self.crashers.appendingPathComponent(crasher)
        let input = ExtractionInput(key: "fuzz.\(target)", fileURL: url, bytes: Array(try Data(contentsOf: url)))
        _ = extractor.accepts(input)
        do {
            _ = try extractor.extract(input)
        } catch is SluiceError {
            // A clear per-document failure is what bad input gets.
        }
    }
}
