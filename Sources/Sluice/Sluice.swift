// The `Sluice` library product: one import for what a program that runs, searches or extends a pipeline
// needs (docs/ARCHITECTURE.md, "The public API"). The state (LMDB) and the HTTP client are the package's
// own (`package`), not part of it.
@_exported import SluiceChunk
@_exported import SluiceCore
@_exported import SluiceEmbed
@_exported import SluiceExtract
@_exported import SluicePipeline
@_exported import SluiceSinks
