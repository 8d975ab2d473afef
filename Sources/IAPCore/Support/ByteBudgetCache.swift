/// A map bounded by the bytes its values cost, not by their number: when an
/// insertion takes it over `budgetBytes`, the least recently used entries go
/// first. Lookups and insertions are O(1) (a dictionary of slots, and a list
/// through the slots from the least to the most recently used).
///
/// Not thread-safe: the owner holds it under its own lock.
public struct ByteBudgetCache<Key: Hashable, Value> {
    fileprivate struct Entry {
        let key: Key
        var value: Value
        var bytes: Int
        /// Neighbours in recency order (slots); nil at the ends.
        var older: Int?
        var newer: Int?
    }

    public let budgetBytes: Int
    /// The bytes of every entry kept.
    public private(set) var usedBytes = 0
    private var slots: [Entry?] = []
    private var freeSlots: [Int] = []
    private var slotOf: [Key: Int] = [:]
    private var oldest: Int?
    private var newest: Int?

    public init(budgetBytes: Int) {
        self.budgetBytes = budgetBytes
    }

    /// The entries kept.
    public var count: Int { slotOf.count }

    /// The value for `key`, which becomes the most recently used; nil when not kept.
    public mutating func value(for key: Key) -> Value? {
        guard let slot = slotOf[key] else { return nil }
        unlink(slot)
        linkAsNewest(slot)
        return slots[slot]?.value
    }

    /// Keeps `value` for `key` (replacing what was kept for it) as the most
    /// recently used, then drops the least recently used entries until the
    /// cache is within its budget. A value costing more than the whole budget
    /// is not kept.
    public mutating func insert(_ value: Value, for key: Key, bytes: Int) {
        remove(key)
        guard bytes <= budgetBytes else { return }
        let entry = Entry(key: key, value: value, bytes: bytes, older: nil, newer: nil)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = entry
        } else {
            slot = slots.count
            slots.append(entry)
        }
        slotOf[key] = slot
        usedBytes += bytes
        linkAsNewest(slot)
        while usedBytes > budgetBytes, let victim = oldest, let victimKey = slots[victim]?.key {
            remove(victimKey)
        }
    }

    /// Forgets `key`.
    public mutating func remove(_ key: Key) {
        guard let slot = slotOf.removeValue(forKey: key) else { return }
        unlink(slot)
        usedBytes -= slots[slot]?.bytes ?? 0
        slots[slot] = nil
        freeSlots.append(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let older = slots[slot]?.older
        let newer = slots[slot]?.newer
        if let older { slots[older]?.newer = newer } else { oldest = newer }
        if let newer { slots[newer]?.older = older } else { newest = older }
        slots[slot]?.older = nil
        slots[slot]?.newer = nil
    }

    private mutating func linkAsNewest(_ slot: Int) {
        slots[slot]?.older = newest
        slots[slot]?.newer = nil
        if let newest { slots[newest]?.newer = slot } else { oldest = slot }
        newest = slot
    }
}

extension ByteBudgetCache: Sendable where Key: Sendable, Value: Sendable {}
extension ByteBudgetCache.Entry: Sendable where Key: Sendable, Value: Sendable {}
