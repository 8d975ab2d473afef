/// The most a queue of verifications may hold: jobs, and bytes of the receipts
/// (and Apple's answers) they carry. A job the queue cannot take is refused at
/// once, and its request answered `retry_later`, instead of waiting in memory
/// for longer than anyone waits for its answer.
///
/// Why the defaults: 4,096 jobs is one wave of calls to Apple at the default
/// `IAP_APPLE_MAX_CALLS`, and 4 to 5 seconds of work at the ~900
/// verifications a second the benchmark measures, so a request at the back of
/// a full queue still answers well within its deadline. Receipts are a few KiB
/// (3 to 10 KiB of base64 usually) but may be 1.4 MB: 64 MiB holds 4,096
/// receipts of 16 KiB, or 45 of the largest, and the three queues of a
/// verification (the recorder's, the calls waiting for Apple, Apple's answers
/// waiting for delivery) hold at most 192 MiB of receipts in all.
public struct QueueLimit: Equatable, Sendable {
    /// Jobs waiting, at most (`IAP_VERIFY_QUEUE_LIMIT`).
    public var jobs: Int
    /// Bytes of the waiting jobs, at most (`IAP_VERIFY_QUEUE_MIB`); one job
    /// larger than this is still taken when the queue is empty.
    public var bytes: Int

    public static let defaultJobs = 4096
    public static let jobsRange = 1...1_000_000
    public static let defaultMiB = 64
    public static let mibRange = 1...65536

    public init(jobs: Int = defaultJobs, bytes: Int = defaultMiB << 20) {
        self.jobs = jobs
        self.bytes = bytes
    }
}

/// What a bounded queue holds now, and the one rule of admission.
public struct QueueUsage: Equatable, Sendable {
    public private(set) var jobs = 0
    public private(set) var bytes = 0

    public init() {}

    /// Counts a job of `jobBytes` in and returns true when `limit` leaves room
    /// for it; false (and nothing counted) when the queue is full.
    public mutating func admit(_ jobBytes: Int, under limit: QueueLimit) -> Bool {
        guard jobs < limit.jobs, jobs == 0 || bytes + jobBytes <= limit.bytes else { return false }
        jobs += 1
        bytes += jobBytes
        return true
    }

    /// Counts out a job admitted before.
    public mutating func release(_ jobBytes: Int) {
        jobs -= 1
        bytes -= jobBytes
    }
}
