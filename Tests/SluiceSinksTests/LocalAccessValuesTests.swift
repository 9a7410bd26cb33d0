import Foundation
import SluiceCore
import Testing

@testable import SluiceSinks

/// The distinct values of access control's field, as a restricted search tests them.
@Suite struct LocalAccessValuesTests {}

extension LocalAccessValuesTests {
    @Test("texts that differ in their bytes are different values, though Swift calls them equal (NFC and NFD)")
    func byBytes() {
        var values = LocalAccessValues()
        let composed = values.number(of: .string("jos\u{e9}"))
        let decomposed = values.number(of: .string("jose\u{301}"))
        #expect(composed != decomposed)
        #expect(values.number(of: .strings(["jos\u{e9}"])) != values.number(of: .strings(["jose\u{301}"])))
        #expect(values.number(of: .string("jos\u{e9}")) == composed)
        let caller: [SearchFilter] = [.oneOf("readers", [.string("jos\u{e9}")])]
        let allowed = values.allowed(by: caller, field: "readers")
        #expect(allowed[Int(composed)] == 1)
        #expect(allowed[Int(decomposed)] == 0)
    }
}
