import SluiceLMDB

/// How this process's reads fault in the store's LMDB map (docs/LOCAL_INDEX.md, "Fault-around off for point
/// reads, scans keeping it"): what `sluice status` and `serve`'s `/ready` report as `store_map`, so an operator
/// sees whether a search here maps one page a read or the kernel's fault-around, and why.
extension LocalSink {
    /// `lmdb_fault_around`: `off` (point reads fault one page at a time; scans keep fault-around) or `on` (the
    /// kernel's behaviour), and with `on`, `lmdb_fault_around_reason`.
    func mapDetails() -> [String: String] {
        guard let kept = environment.faultAroundKept else { return ["lmdb_fault_around": "off"] }
        return ["lmdb_fault_around": "on", "lmdb_fault_around_reason": kept]
    }
}
