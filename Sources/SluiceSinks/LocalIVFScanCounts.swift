/// What the IVF searches of one process scanned, summed over its searches: the benchmark reads it before
/// and after each query to report the codes a query scans, a count that does not depend on the machine's load.
package struct LocalIVFScanCounts: Sendable, Hashable {
    /// Searches answered by the IVF index (not those that scanned the store).
    package var searches = 0
    /// Lists probed.
    package var lists = 0
    /// Codes scored.
    package var codes = 0

    package init() {}
}
