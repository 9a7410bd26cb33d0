import SluiceCore
import Testing

@testable import SluicePipeline

@Suite struct ScoreFusionTests {
    static func hits(_ scored: [(String, Float)]) -> [SearchHit] {
        scored.map { id, score in
            SearchHit(
                score: score,
                record: VectorRecord(id: VectorID(rawValue: id), documentKey: id, ordinal: 0, text: id, vector: [1])
            )
        }
    }

    /// A vector ranking of 50 cosines falling from 0.8 to ~0.3, `ids` first and then fillers, `late` at `at`.
    static func vector(_ ids: [String], late: String? = nil, at: Int = 0) -> [SearchHit] {
        var all = ids + (ids.count..<50).map { "v\($0)" }
        if let late { all[at] = late }
        return hits(all.enumerated().map { ($1, $0 == 0 ? 0.8 : 0.5 - Float($0) * 0.004) })
    }

    static func ids(_ fused: [(record: VectorRecord, score: Double)]) -> [String] {
        fused.map(\.record.id.rawValue)
    }

    let fusion = ScoreFusion(vectorWeight: SearchFusion.defaultVectorWeight)

    @Test("a keyword match 2.6 times the next (DEVRANDOM_WAIT) stays first although the vector ranking has it fifth")
    func keywordFarAhead() {
        let vector = Self.vector(["a", "b", "c"], late: "code", at: 29)
        let keyword = Self.hits([("code", 13.0), ("a", 5.0)] + (2..<20).map { ("k\($0)", 5.0 - Float($0) * 0.05) })
        let fused = fusion.fuse(query: "", vector: vector, keyword: keyword)
        #expect(Self.ids(fused).first == "code")
        // Reciprocal rank fusion, which drops the scores, does not keep it first.
        let rrf = SearchFusion.rrf().fuse(query: "", vector: vector, keyword: keyword)
        #expect(Self.ids(rrf).first != "code")
    }

    @Test("a flat keyword ranking (common words) lets a confident vector ranking lead")
    func flatKeywordConfidentVector() {
        let vector = Self.vector(["answer", "b", "c"])
        let keyword = Self.hits((0..<30).map { ("k\($0)", 4.0 - Float($0) * 0.02) } + [("answer", 3.3)])
        let fused = fusion.fuse(query: "", vector: vector, keyword: keyword)
        #expect(Self.ids(fused).first == "answer")
        #expect(fusion.keywordDoubt(keyword) == 1)
    }

    @Test("a look-up of codes (`path.sep`) keeps the keyword ranking's order however flat it is")
    func lookupOfCodes() {
        let vector = Self.vector(["answer", "b", "c"])
        let keyword = Self.hits((0..<30).map { ("k\($0)", 4.0 - Float($0) * 0.02) } + [("answer", 3.3)])
        #expect(fusion.keywordDoubt(keyword) == 1)
        for query in ["path.sep", "DEVRANDOM_WAIT", "--track-origins=yes", "FD 37 7A 58 5A 00", "RFC 7159"] {
            let fused = Self.ids(fusion.fuse(query: query, vector: vector, keyword: keyword))
            #expect(Array(fused.prefix(31)) == keyword.map(\.record.id.rawValue), "\(query)")
            // Records the keyword ranking lacks follow, in the vector ranking's order.
            #expect(Array(fused.dropFirst(31).prefix(2)) == ["b", "c"], "\(query)")
        }
        // A query with a word in it is no look-up: the vector ranking's first leads the flat keyword ranking.
        for query in ["path separator", "path.sep separator", "Node.js path"] {
            #expect(Self.ids(fusion.fuse(query: query, vector: vector, keyword: keyword)).first == "answer", "\(query)")
        }
        // No keyword hits: the vector ranking's order.
        #expect(
            Self.ids(fusion.fuse(query: "path.sep", vector: vector, keyword: [])) == vector.map(\.record.id.rawValue)
        )
    }

    @Test("one side empty: the other side's order, scores within 0…1")
    func oneSideEmpty() {
        let vector = Self.hits([("a", 0.9), ("b", 0.7), ("c", 0.2)])
        let keyword = Self.hits([("x", 7), ("y", 3), ("z", 1)])
        let onlyVector = fusion.fuse(query: "", vector: vector, keyword: [])
        #expect(Self.ids(onlyVector) == ["a", "b", "c"])
        let onlyKeyword = fusion.fuse(query: "", vector: [], keyword: keyword)
        #expect(Self.ids(onlyKeyword) == ["x", "y", "z"])
        #expect(onlyKeyword.map(\.score) == [1, 3.0 / 7, 1.0 / 7])
        #expect(fusion.fuse(query: "", vector: [], keyword: []).isEmpty)
        for fused in [onlyVector, onlyKeyword] { #expect(fused.allSatisfy { (0...1).contains($0.score) }) }
    }

    @Test("ties keep the vector ranking's order, then the keyword ranking's")
    func ties() {
        // Weight 0: the keyword scores alone; x and y tie, a and b (vector only) tie at 0.
        let fused = ScoreFusion(vectorWeight: 0).fuse(
            query: "",
            vector: Self.hits([("a", 0.9), ("y", 0.8), ("b", 0.7)]),
            keyword: Self.hits([("x", 2), ("y", 2)])
        )
        #expect(Self.ids(fused) == ["y", "x", "a", "b"])
        let equal = fusion.fuse(query: "", vector: Self.hits([("p", 0.5), ("q", 0.5)]), keyword: [])
        #expect(Self.ids(equal) == ["p", "q"])
    }

    @Test("a filter that leaves fewer hits than k: every hit once, keyword hits first (few hits: a confident ranking)")
    func fewerThanK() {
        let vector = Self.hits([("a", 0.6), ("b", 0.5), ("c", 0.4)])
        let keyword = Self.hits([("c", 2.0), ("d", 1.0)])
        let fused = fusion.fuse(query: "", vector: vector, keyword: keyword)
        #expect(Self.ids(fused) == ["c", "d", "a", "b"])
        #expect(fusion.keywordDoubt(keyword) == 0)
    }

    @Test("negative and zero scores: min-max for the vector side, no division by zero on the keyword side")
    func negativeAndZeroScores() {
        let vector = Self.hits([("a", -0.1), ("b", -0.3), ("c", -0.5)])
        let zeros = Self.hits([("x", 0), ("y", 0)])
        let fused = fusion.fuse(query: "", vector: vector, keyword: zeros)
        #expect(fused.allSatisfy { $0.score.isFinite && (0...1).contains($0.score) })
        #expect(Self.ids(fused).prefix(1) == ["a"] || Self.ids(fused).prefix(2).contains("x"))
        let negativeKeyword = Self.hits([("x", -1), ("y", -2), ("z", -4)])
        #expect(Self.ids(fusion.fuse(query: "", vector: [], keyword: negativeKeyword)) == ["x", "y", "z"])
        let notANumber = Self.hits([("n", .nan), ("m", 0.5), ("o", 0.1)])
        let withNaN = fusion.fuse(query: "", vector: notANumber, keyword: [])
        #expect(withNaN.allSatisfy { $0.score.isFinite })
        #expect(Self.ids(withNaN).first == "m")
    }

    @Test("a single candidate on each side, the same record: one result, score 1")
    func singleCandidate() {
        let fused = fusion.fuse(query: "", vector: Self.hits([("a", 0.4)]), keyword: Self.hits([("a", 1.5)]))
        #expect(Self.ids(fused) == ["a"])
        #expect(fused[0].score == 1)
    }

    @Test("a record in both rankings, or twice in one, appears once at its best place")
    func duplicates() {
        let vector = Self.hits([("a", 0.9), ("b", 0.8), ("a", 0.1), ("c", 0.5)])
        let keyword = Self.hits([("b", 3), ("c", 2), ("b", 1)])
        let fused = fusion.fuse(query: "", vector: vector, keyword: keyword)
        #expect(Self.ids(fused).sorted() == ["a", "b", "c"])
        #expect(Self.ids(fused).first == "b")
    }

    @Test("the vector weight follows the keyword ranking's flatness: the ramp's ends, no hits, a steep drop")
    func keywordDoubt() {
        #expect(ScoreFusion.ramp(0, over: 1...2) == 0)
        #expect(ScoreFusion.ramp(1.5, over: 1...2) == 0.5)
        #expect(ScoreFusion.ramp(9, over: 1...2) == 1)
        #expect(ScoreFusion.ramp(.nan, over: 1...2) == 0)
        #expect(fusion.keywordDoubt([]) == 1)
        let flat = Self.hits((0..<12).map { ("f\($0)", 2.0 - Float($0) * 0.01) })
        #expect(fusion.keywordDoubt(flat) == 1)
        let steep = Self.hits([("s", 10)] + (1..<12).map { ("f\($0)", 1.0) })
        #expect(fusion.keywordDoubt(steep) == 0)
        let between = Self.hits([("s", 2)] + (1..<12).map { ("f\($0)", 1.0) })
        #expect(abs(fusion.keywordDoubt(between) - 0.4) < 1e-9)
    }

    @Test("SearchFusion: names, the pipeline's parameters for a named rule, problems")
    func searchFusion() throws {
        #expect(SearchFusion.default == .score())
        #expect(SearchFusion(name: "rrf") == .rrf(k: 10))
        #expect(SearchFusion(name: "hybrid") == nil)
        let configured = try PipelineConfiguration.load(
            file: nil,
            overrides: ["search.fusion=rrf", "search.rrf_k=60", "search.vector_weight=0.3"]
        ).search
        #expect(configured.fusion == .rrf(k: 60))
        #expect(configured.fusion(named: "score") == .score(vectorWeight: 0.3, questionWeight: 0.8))
        #expect(configured.fusion(named: "bm25") == nil)
        #expect(
            try PipelineConfiguration.load(file: nil, overrides: []).search.fusion
                == .score(vectorWeight: 0.15, questionWeight: 0.8)
        )
        let questions = try PipelineConfiguration.load(file: nil, overrides: ["search.question_weight=0.6"]).search
        #expect(questions.fusion == .score(vectorWeight: 0.15, questionWeight: 0.6))
        #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["search.question_weight=-0.1"])
        }
        #expect(SearchFusion.score(questionWeight: 1.5).problem != nil)
        #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["search.fusion=rank"])
        }
        #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["search.vector_weight=1.5"])
        }
        #expect(SearchFusion.score(vectorWeight: 2).problem != nil)
        #expect(SearchFusion.rrf(k: -1).problem != nil)
        #expect(SearchFusion.rrf(k: 0).problem == nil)
    }

    /// Rankings where the vector ranking's first, `answer`, is fifth of a fairly flat keyword ranking (its
    /// tenth score 0.69 of its first: doubt 0.775) at 0.7 of the first's score: the question weight, 0.8, brings
    /// it first (0.89 against k0's 0.38), the vector weight, 0.15, does not (0.74 against 0.88).
    static let flatKeywordAnswerFifth = (
        vector: vector(["answer", "b", "c"]),
        keyword: hits(
            (0..<4).map { ("k\($0)", 4.0 - Float($0) * 0.02) } + [("answer", 2.8)]
                + (5..<30).map { ("k\($0)", 2.79 - Float($0 - 5) * 0.01) }
        )
    )

    @Test("a question in words gets the question weight: the vector ranking's first leads a flat keyword ranking")
    func questionInWords() {
        let (vector, keyword) = Self.flatKeywordAnswerFifth
        #expect(abs(fusion.keywordDoubt(keyword) - 0.775) < 1e-6)
        let question = "how do I get bigger page margins when printing with enscript"
        #expect(Self.ids(fusion.fuse(query: question, vector: vector, keyword: keyword)).first == "answer")
        // The same rankings for a short query, or one with a code in it: the smaller weight, keyword first.
        for query in ["page margins enscript", "how do I set DEVRANDOM_WAIT when building the xz package today"] {
            #expect(Self.ids(fusion.fuse(query: query, vector: vector, keyword: keyword)).first == "k0")
        }
        // questionWeight 0.2: no different from any other query.
        let flat = ScoreFusion(vectorWeight: 0.2, questionWeight: 0.2)
        #expect(Self.ids(flat.fuse(query: question, vector: vector, keyword: keyword)).first == "k0")
    }

    @Test(
        "what a question in words is",
        arguments: [
            ("how do I recover a corrupted xz file after a crash", true),
            ("How do I recover a corrupted xz file after a crash?", true),
            ("\"why\" does (the) build fail: when the disk is full, today!", true),
            ("où est la documentation des options de compression du paquet", true),
            ("how do I recover a corrupted file", false),  // seven words
            ("how do I recover a corrupted .xz file after a crash", false),  // `.xz`
            ("how do I set the CFLAGS when building the package", false),  // capitals alone: a name or an acronym
            ("is it safe to give users UIDs above two billion", true),  // a plural acronym is a word
            ("which GIDs and UIDs does a container manager hand out?", true),
            ("how many IDs should a container manager give each container", true),
            ("is it safe to give users UIDS above two billion", false),  // capitals alone
            ("is it safe to give users uIDs above two billion", false),  // mixed case: an identifier
            ("is it safe to give users UID2s above two billion", false),  // a digit: a code
            ("is it safe to give users Us above two billion today", true),  // a capital first, as before
            ("is it safe to give users Ds above two billion today", true),
            ("is it safe to give users UIDss above two billion", false),
            ("what does xz --keep do to the input file afterwards", false),  // an option
            ("ISO 639-2 code for Old High German in the table", false),
            ("what is new in version 5 of the library and why", false),
            ("", false),
        ]
    )
    func queryShape(query: String, isQuestion: Bool) {
        #expect(QueryShape(query).isQuestionInWords == isQuestion)
    }

    @Test(
        "what a look-up of codes is: no word of plain letters",
        arguments: [
            ("path.sep", true),
            ("DEVRANDOM_WAIT", true),
            ("XZ_DEFAULTS memlimit-compress", true),
            ("--track-origins=yes", true),
            ("FD 37 7A 58 5A 00", true),
            ("RFC 7159", true),
            ("A4BigMargin", true),
            ("CFLAGS", true),  // capitals alone: a name
            ("(EAR99)", true),  // punctuation around it aside
            ("Node.js path", false),  // `path` is a word
            ("currency code HKD", false),
            ("UIDs", false),  // a plural acronym is a word
            ("enscript", false),
            ("Enscript", false),
            ("", false),
            ("?!", false),
        ]
    )
    func lookupShape(query: String, isLookup: Bool) {
        #expect(QueryShape(query).isLookupOfCodes == isLookup)
    }
}
