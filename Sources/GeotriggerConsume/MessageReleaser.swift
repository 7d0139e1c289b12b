import GeotriggerKafka
import GeotriggerRuntime

/// Hands the consumed messages back to librdkafka on a thread of its own. Destroying a message
/// (its share of the fetched buffer and its op, freed under librdkafka's locks) costs the
/// consuming thread, which applies every record and so bounds a member's rate, about half as much
/// as decoding it; here it overlaps with the next batch's records.
///
/// librdkafka's handle waits for its messages before it can be destroyed, so every message
/// handed over is destroyed by the time `finish` returns.
package final class MessageReleaser {
    /// Lists to empty, in order; nil ends the thread (after those before it).
    private let pending = JobQueue<KafkaMessageList?>(capacity: 2)
    /// Lists emptied, for the batch to go on with.
    private let emptied = JobQueue<KafkaMessageList>()
    private var thread: JobThread?

    package init() {
        let (pending, emptied) = (pending, emptied)
        thread = JobThread {
            while let list = pending.pop() {
                list.destroyAll()
                emptied.push(list)
            }
        }
    }

    deinit { finish() }

    /// Hands `batch`'s messages over; the batch goes on with a list emptied earlier, if one is
    /// back. Waits while two lists are still waiting for the thread.
    package func release(_ batch: KafkaMessageBatch) {
        guard batch.count > 0 else { return }
        pending.push(batch.handOff(reusing: emptied.popIfAny()))
    }

    /// Destroys what was handed over and ends the thread.
    package func finish() {
        guard let thread else { return }
        pending.push(nil)
        thread.join()
        self.thread = nil
    }
}
