import SluiceCore

/// A document with the shapes real extracted text has: prose paragraphs, lists and code, one long
/// line of many sentences, CJK text without spaces, decomposed accents, emoji, CRLF line ends, a
/// blank section and a long unbroken token. Every section has its own heading path, so that the
/// checks can tell which chunks came from which section.
enum SampleDocument {
    static let prose = """
        Sluice turns a folder of documents into a searchable index of vectors. It reads each file, \
        pulls out its text, cuts the text into pieces small enough for an embedding model, and sends \
        those pieces to a vector store. Nothing about this is new; what matters is doing it reliably \
        on a corpus that does not fit in memory, on a schedule, without paying twice for the same work.

        The chunker sits in the middle of that flow. Its job sounds simple: make pieces that are no \
        longer than the model can read. But a good chunk is also a coherent one. A paragraph that \
        fits should stay a paragraph; a sentence should not be cut in half when a nearby full stop \
        would do. Only when a single word is longer than the whole budget (a base64 blob, a minified \
        script, a line of a spreadsheet exported without separators) should the cut fall between \
        characters.

        Overlap exists for retrieval. When a question is answered by the last sentence of one chunk \
        and the first sentence of the next, neither chunk alone looks like the answer. Repeating a \
        little of the end of each chunk at the start of the next gives the search a second chance. \
        Too much overlap, though, wastes tokens and money: every repeated token is embedded again.
        """

    static let lists = """
        Install the system libraries first:
        - libpoppler-glib-dev for PDF text
        - libtesseract-dev for scanned pages
        - liblmdb-dev for the checkpoint store
        - libxxhash-dev for content hashes

        Then build and run:
            swift build -c release
            .build/release/sluice run Pipelines/local.yaml --prune
            echo "exit code: $?"

        1. Edit the pipeline file.
        2. Run it once by hand.
        3. Install the timer; later runs only touch what changed.
        """

    static let longLine =
        "The run ends with a table of statistics. For each phase it shows items in and out, bytes, "
        + "busy time, and the time spent starved or blocked! Why both? Because a stage that waits on "
        + "its upstream is not the bottleneck, while one that waits on its downstream might be. "
        + "Throughput is given per second, e.g. 3.14 MB/s or 2,718 chunks/s, and latencies as "
        + "percentiles (p50, p90, p99). \"Cache hits\" counts chunks whose embedding was already paid "
        + "for. The JSON form carries the same numbers… It is meant for dashboards! Nobody should have "
        + "to parse the table. A 429 honours Retry-After; other failures back off with full jitter. "
        + "Retries are bounded, and a chunk that exhausts them fails its document, with the reason."

    static let multilingual = """
        東京は日本の首都です。人口は約千四百万人で、世界でも有数の大都市です。電車の路線網は非常に複雑ですが、とても正確に運行されています！本当ですか？はい。
        北京是中国的首都。它有三千多年的历史。故宫位于城市的中心，是世界上现存规模最大的木质结构古建筑群之一。

        Les cafe\u{301}s de Paris sont ce\u{301}le\u{300}bres. Ou\u{300} est la gare ? Die Straße \
        führt über die Brücke. «Ça va?» — «Oui!» Привет, как дела? Всё хорошо. Γειά σου κόσμε. \
        مرحبا بالعالم؟ नमस्ते दुनिया। यह एक वाक्य है।
        """

    static let symbols = """
        Family: 👨‍👩‍👧‍👦 flags: 🇯🇵🇫🇷 thumbs: 👍🏽👍🏿 math: ∑(x²) ≤ ∞ → done.
        token=\(String(repeating: "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", count: 20))==
        https://example.com/a/very/long/path/with-many-segments/and_underscores/and%20escapes?query=1&other=2#fragment
        accents: \(String(repeating: "e\u{301}a\u{308}o\u{302}", count: 60))
        """

    static let crlf =
        "First line of a Windows file.\r\nSecond line.\r\n\r\nA new paragraph after a CRLF blank line.\r\n"

    static let document = ExtractedText(
        sections: [
            TextSection(text: prose, page: 1, headingPath: ["Sluice"]),
            TextSection(text: lists, page: 1, headingPath: ["Sluice", "Install"]),
            TextSection(text: "  \n\n \t ", page: 2, headingPath: ["Blank"]),
            TextSection(text: longLine, page: 2, headingPath: ["Sluice", "Statistics"]),
            TextSection(text: multilingual, page: 3, headingPath: ["Languages"]),
            TextSection(text: symbols, page: nil, headingPath: ["Symbols"]),
            TextSection(text: crlf, page: 4, headingPath: []),
        ],
        metadata: ["format": "text"]
    )
}
