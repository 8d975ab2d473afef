/// The jobs of a bounded queue in order, with what each holds (`QueueUsage`
/// under a `QueueLimit`). Storage only: no lock, no waiting; `WorkQueue` adds
/// those.
///
/// A job taken is let go at once, whether or not the queue ever empties: its
/// slot is cleared, and the cleared prefix is dropped once it is half the
/// storage (amortised O(1) a job). Under a lasting backlog the queue never
/// empties, and a queue that kept what it handed out until then held every
/// receipt ever queued while its byte count said it had room.
///
/// A take copies the jobs it hands out into one array of their size, and the
/// storage keeps its capacity. (Handing the storage itself to a consumer that
/// takes everything saved that copy, but the next pushes then grew a new
/// storage from nothing, several allocations instead of one.)
public struct BoundedFIFO<Job> {
    private struct Slot {
        let job: Job
        let bytes: Int
    }

    /// Waiting jobs from `head` on; before it, the cleared slots of jobs taken.
    private var slots: [Slot?] = []
    private var head = 0
    public let limit: QueueLimit
    public private(set) var usage = QueueUsage()

    public init(limit: QueueLimit) {
        self.limit = limit
    }

    /// Jobs waiting.
    public var count: Int { slots.count - head }

    /// Slots the storage holds: the waiting jobs and the cleared ones not yet
    /// dropped. At most twice what waited at once, plus what one take hands out.
    public var slotsHeld: Int { slots.count }

    /// Queues `job`, which holds `bytes`; false (and nothing queued) when the limit leaves no room.
    public mutating func push(_ job: Job, bytes: Int) -> Bool {
        guard usage.admit(bytes, under: limit) else { return false }
        slots.append(Slot(job: job, bytes: bytes))
        return true
    }

    /// Removes and returns the first jobs, at most `maximum` (none when the queue is empty).
    public mutating func take(upTo maximum: Int) -> [Job] {
        let end = min(slots.count, head + maximum)
        var taken: [Job] = []
        taken.reserveCapacity(end - head)
        for index in head..<end {
            let slot = slots[index].take()!  // from `head` on, every slot holds a job
            usage.release(slot.bytes)
            taken.append(slot.job)
        }
        head = end
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= slots.count - head {
            // Moves the waiting jobs, no more of them than cleared slots are dropped: O(1) a job taken.
            slots.removeSubrange(0..<head)
            head = 0
        }
        return taken
    }
}
