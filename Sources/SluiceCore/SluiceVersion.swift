/// The version `sluice --version` prints. A known failure (docs/DESIGN.md §11) is retried under another
/// version, which may read what this one could not.
package enum SluiceVersion {
    package static let current = "0.1.0"
}
