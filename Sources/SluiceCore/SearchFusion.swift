/// How a ``SearchMode/hybrid`` search merges the vector ranking and the keyword ranking into one.
///
/// An open set of rules (static members), chosen per pipeline (`search.fusion`), per query
/// (`sluice search --fusion`, the API's `fusion`) or in code (`Searcher.fusion`):
/// - ``score(vectorWeight:questionWeight:)``, the default: a convex combination of the two rankings' scores, normalized
///   per query, with the vector ranking's weight set per query by how flat the keyword ranking is. It keeps
///   a keyword match far ahead of the rest first and lets the vector ranking reorder flat keyword rankings.
/// - ``rrf(k:)``: reciprocal rank fusion, which uses the ranks only.
///
/// Both were measured on the repository's judged sets (Benchmarks/retrieval/README.md, "Today").
public struct SearchFusion: Sendable, Hashable, CustomStringConvertible {
    package enum Rule: Sendable, Hashable {
        case reciprocalRank(k: Double)
        case score(vectorWeight: Double, questionWeight: Double)
    }

    package let rule: Rule

    init(_ rule: Rule) { self.rule = rule }

    /// Reciprocal rank fusion (Cormack et al., 2009): a record scores Σ 1 / (k + rank) over the rankings
    /// that hold it.
    /// - Parameter k: The damping constant (≥ 0); 10 was measured better than the paper's 60 with two
    ///   rankings of 50 candidates.
    public static func rrf(k: Double = defaultRRFK) -> SearchFusion { SearchFusion(.reciprocalRank(k: k)) }

    /// Score fusion: `w × vector + (1 − w) × keyword`, the vector scores min-max normalized within the
    /// query's ranking and the keyword scores divided by the first one, with `w` up to `vectorWeight` (up to
    /// `questionWeight` for a question in words: nine or more words, every one of them plain letters or a
    /// plural acronym; 0 for a look-up of codes, a query with no plain word such as `path.sep`), scaled down
    /// as the keyword ranking falls more steeply after its first hit (a rare code or name).
    /// - Parameters:
    ///   - vectorWeight: The vector ranking's largest weight, 0…1 (0: keyword order, vector-only records
    ///     after it).
    ///   - questionWeight: The vector ranking's largest weight for a question in words, 0…1.
    public static func score(
        vectorWeight: Double = defaultVectorWeight,
        questionWeight: Double = defaultQuestionWeight
    ) -> SearchFusion {
        SearchFusion(.score(vectorWeight: vectorWeight, questionWeight: questionWeight))
    }

    /// The fusion a pipeline that names none uses: ``score(vectorWeight:questionWeight:)`` with its defaults.
    public static let `default` = score()

    /// `search.rrf_k`'s default.
    public static let defaultRRFK = 10.0
    /// `search.vector_weight`'s default, measured on Benchmarks/retrieval.
    public static let defaultVectorWeight = 0.15
    /// `search.question_weight`'s default, measured on Benchmarks/retrieval (0.7 until 2026-11-29; 0.75 to 0.85
    /// met the bar on both stores' tuning sets, 0.8 is the middle: README there, "The last misses").
    public static let defaultQuestionWeight = 0.8

    /// The names `search.fusion`, `--fusion` and the API accept.
    public static let names = ["score", "rrf"]

    /// The rule a name stands for, with its default parameters; nil for an unknown name.
    public init?(name: String) {
        switch name {
        case "score": self = .score()
        case "rrf": self = .rrf()
        default: return nil
        }
    }

    /// `score` or `rrf`.
    public var name: String {
        switch rule {
        case .reciprocalRank: "rrf"
        case .score: "score"
        }
    }

    public var description: String {
        switch rule {
        case .reciprocalRank(let k): "rrf (k = \(k.formatted))"
        case .score(let weight, let question):
            "score (vector weight up to \(weight.formatted), \(question.formatted) for a question in words)"
        }
    }

    /// Why a parameter is out of range, or nil.
    public var problem: String? {
        switch rule {
        case .reciprocalRank(let k): k.isFinite && k >= 0 ? nil : "the RRF constant must be a number ≥ 0"
        case .score(let weight, let question):
            [weight, question].allSatisfy { $0.isFinite && (0...1).contains($0) }
                ? nil : "the vector weights must be between 0 and 1"
        }
    }
}

extension Double {
    fileprivate var formatted: String { self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self) }
}
