import Foundation
import Testing

@testable import SluicePipeline

/// What `sluice check` and a run call readable among the files `source.include` left out (issue 35): RTF
/// and OpenDocument packages are told by their first bytes, as text, PDF and images are; Office Open XML
/// and compressed files are not.
@Suite struct ReadableContentTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples")

    @Test(arguments: [
        ("rtf/xz-lists.rtf", true), ("odt/xz-lists.odt", true), ("pdf/xz-utils-faq.pdf", true),
        ("text/bc-README.txt", true), ("docx/xz-lists.docx", false), ("bad/binary.txt", false),
    ])
    func readableByTheirFirstBytes(_ sample: String, readable: Bool) {
        #expect(ReadableContent.looksReadable(Self.samples.appendingPathComponent(sample)) == readable, "\(sample)")
    }
}
