extension Duration {
    /// The duration in seconds, fractions included: for rate arithmetic, stats and `Date` deadlines.
    ///
    /// The one conversion of a ``Duration`` to seconds (its two components summed as a `Double`).
    package var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
