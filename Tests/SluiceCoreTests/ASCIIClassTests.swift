import SluiceCore
import Testing

/// The ASCII tables stand in for Unicode's properties in hot loops (the tokenizers' cuts, the chunker), so
/// they must answer as the properties do for every ASCII byte.
@Suite struct ASCIIClassTests {
    @Test func whitespaceIsUnicodeWhiteSpaceForEveryASCIIByte() {
        for byte in UInt8(0)..<0x80 {
            let scalar = Unicode.Scalar(byte)
            #expect(ASCII.isWhitespace(byte) == scalar.properties.isWhitespace, "byte \(byte)")
        }
    }

    @Test func wordIsAnASCIILetterOrDigit() {
        for byte in UInt8(0)..<0x80 {
            let scalar = Unicode.Scalar(byte)
            let expected = scalar.properties.numericType != nil || scalar.properties.isAlphabetic
            #expect(ASCII.isWord(byte) == expected, "byte \(byte)")
        }
        for byte in UInt8(0x80)...0xFF { #expect(!ASCII.isWord(byte)) }
    }
}
