import SluiceCore
import SluiceState

/// A document's checkpoint record as the walks of a run and of a dry run read it: the one path, so that
/// every reader agrees on what an unreadable record means. The reads are LMDB read transactions, which
/// never wait for the writer (LMDB's readers take no lock), so they run where the walk runs.
enum RecordRead {
    /// The record, or nil when the checkpoint has none.
    case found(DocumentRecord?)
    /// The record cannot be read: ``SluiceError/Code/stateCorrupt`` with how to recover, as
    /// ``CheckpointStore`` documents. The walk stops with it: the document is neither new nor unfailed.
    case damaged(SluiceError)
    /// The read failed otherwise: the document fails with it (`state`) and the walk goes on.
    case failed(any Error)

    init(_ key: String, in checkpoint: CheckpointStore) {
        do {
            self = .found(try checkpoint.document(key))
        } catch let error as SluiceError where error.code == .stateCorrupt {
            self = .damaged(error)
        } catch {
            self = .failed(error)
        }
    }
}
