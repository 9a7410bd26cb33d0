import Foundation
import Hummingbird
import SluiceCore
import SluicePipeline

/// `POST /v1/ask` as server-sent events (docs/openapi.json): `event: text` (`{"text": "…"}`, as the model
/// writes; none when the answer cites no passage: it is "not in the sources"), `event: check` (the
/// ``AnswerCheck`` object), `event: sources` (`{"sources": [AnswerSource]}`), then `event: done` with the whole answer
/// object (``AnswerTranscript``, as the JSON answer and `sluice ask --json`, with its `skipped` field: the
/// records the searches could not read, ``SkippedRecords``); or `event: error` with the API's error object
/// when the answer fails. Closing the connection cancels the model's request. Events that arrive faster than
/// the connection takes them are written together (``FrameQueue``).
enum AnswerStream {
    /// - Parameters:
    ///   - events: The answer's events, produced with `skipped` as the task's ``UnreadableRecordLog``.
    ///   - skipped: What the answer's searches skipped, for the `done` event; nil: the field is absent (a
    ///     caller restricted by access control).
    ///   - ended: Called once the answer has ended, however it ended.
    static func response(
        _ events: AsyncThrowingStream<AnswerEvent, any Error>,
        skipped: UnreadableRecordLog?,
        ended: @escaping @Sendable () -> Void
    ) -> Response {
        let queue = FrameQueue()
        let task = Task {
            var transcript = AnswerTranscript()
            do {
                for try await event in events {
                    transcript.take(event)
                    switch event {
                    case .text(let text): queue.append(frame("text", ["text": text]))
                    case .checked(let check): queue.append(frame("check", AnswerTranscript.jsonObject(check)))
                    case .sources(let sources):
                        queue.append(frame("sources", ["sources": sources.map(AnswerTranscript.jsonObject)]))
                    case .finished, .nothingRelevant: break
                    }
                }
                var done = transcript.jsonObject
                if let skipped { done["skipped"] = skipped.records.map(SkippedRecords.jsonObject) }
                queue.append(frame("done", done))
            } catch {
                let failure = APIError(error)
                let body: [String: Any] = ["error": ["code": failure.code, "message": failure.message]]
                queue.append(frame("error", body))
            }
            ended()
            queue.finish()
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                // A client that goes away (a failed write, the response's task cancelled) stops the answer.
                defer { task.cancel() }
                try await queue.batches { try await writer.write($0) }
                try await writer.finish(nil)
            }
        )
    }

    /// `event: NAME` and one `data:` line of JSON (JSON holds no raw line break), then a blank line.
    static func frame(_ name: String, _ object: [String: Any]) -> ByteBuffer {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return ByteBuffer(string: "event: \(name)\ndata: " + String(decoding: data, as: UTF8.self) + "\n\n")
    }
}
