import SluiceCore
import Testing

/// SHA-256 against the test vectors of FIPS 180-4 (and NIST's long message): the API keys file holds
/// these digests (docs/ACCESS.md).
struct SHA256Tests {
    @Test(
        "FIPS 180-4 vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            // 55 and 56 bytes: the padding's length field fits in the block, or needs another one.
            (String(repeating: "a", count: 55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            (String(repeating: "a", count: 56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        ]
    )
    func vectors(_ message: String, _ digest: String) {
        #expect(SHA256.hex(Array(message.utf8)) == digest)
    }

    @Test("a million a's")
    func longMessage() {
        #expect(
            SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    @Test("constant-time equality: equal only for the same bytes and length")
    func equality() {
        let a = Array("s3cret".utf8)
        #expect(SHA256.constantTimeEqual(a, a))
        #expect(!SHA256.constantTimeEqual(a, Array("s3cres".utf8)))
        #expect(!SHA256.constantTimeEqual(a, Array("s3cret-".utf8)))
        #expect(!SHA256.constantTimeEqual([], a))
    }
}
