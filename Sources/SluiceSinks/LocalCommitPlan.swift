/// How the local store cuts one upsert into write transactions of a bounded size.
///
/// LMDB 0.9 keeps every single page a write transaction dirtied on a free list for the environment's life
/// (`mdb_page_free`, `me_dpages`) and never returns it, so the largest transaction of a run sets heap the
/// store holds until it is closed — and a larger store spreads the same puts over more leaves: measured
/// ~1,100–1,400 single dirty pages in a 512-record commit on the 1× benchmark corpus, ~2,100–2,600 on the
/// 10× one (docs/BENCHMARKS.md, "Flat memory with the default index"). A plan keeps each commit to about
/// `budget` pages, by an estimate from the records' encoded sizes.
///
/// A reader sees what each commit left: a document's records go in one commit whenever they fit in the
/// budget together, so a search between two commits of one upsert never sees part of such a document.
/// A document larger than the budget alone is split at the budget, in order (as the pipeline's
/// `sink.batch` splits a document larger than a write).
struct LocalCommitPlan {
    /// The largest node LMDB keeps on a 4 KB leaf page; a larger record goes to overflow pages of its own.
    static let largestInlineValue = 2_000
    static let pageSize = 4_096

    /// The pages putting one record dirties, estimated: its value's overflow pages (a value too large for a
    /// leaf) and one leaf (random keys land on different leaves; the keyword index's and the graph's puts
    /// ride on the same leaves or on few pages of their own).
    static func pages(valueBytes: Int) -> Int {
        guard valueBytes > largestInlineValue else { return 1 }
        // A page header of 16 bytes precedes an overflow value.
        return 1 + (valueBytes + 16 + pageSize - 1) / pageSize
    }

    /// The commits for records with these document keys and encoded sizes, as consecutive ranges of their
    /// positions, in order, covering all of them.
    /// - Parameters:
    ///   - documentKeys: each record's document; a document's records are the consecutive ones with its key.
    ///   - valueBytes: each record's encoded size.
    ///   - budget: the most estimated pages per commit (at least one record goes in each).
    static func commits(documentKeys: [String], valueBytes: [Int], budget: Int) -> [Range<Int>] {
        precondition(documentKeys.count == valueBytes.count)
        var commits: [Range<Int>] = []
        var start = 0  // the open commit's first record
        var pagesInCommit = 0
        var position = 0
        while position < documentKeys.count {
            // The next document: consecutive records with one key.
            var end = position
            var pagesInDocument = 0
            while end < documentKeys.count && documentKeys[end] == documentKeys[position] {
                pagesInDocument += pages(valueBytes: valueBytes[end])
                end += 1
            }
            if pagesInCommit + pagesInDocument <= budget {
                pagesInCommit += pagesInDocument
                position = end
                continue
            }
            if position > start { commits.append(start..<position) }
            start = position
            pagesInCommit = 0
            guard pagesInDocument > budget else {
                pagesInCommit = pagesInDocument
                position = end
                continue
            }
            // Larger than a commit alone: cut at the budget; its last part stays open for what follows.
            for record in position..<end {
                let recordPages = pages(valueBytes: valueBytes[record])
                if pagesInCommit + recordPages > budget && record > start {
                    commits.append(start..<record)
                    start = record
                    pagesInCommit = 0
                }
                pagesInCommit += recordPages
            }
            position = end
        }
        if position > start { commits.append(start..<position) }
        return commits
    }
}
