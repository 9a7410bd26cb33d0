// The `Sluice` library product: one import for the whole pipeline.
@_exported import SluiceChunk
@_exported import SluiceCore
@_exported import SluiceEmbed
@_exported import SluiceExtract
@_exported import SluiceHTTP
@_exported import SluicePipeline
@_exported import SluiceSinks
@_exported import SluiceState
