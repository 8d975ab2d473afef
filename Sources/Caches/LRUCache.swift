/// A map that holds at most `capacity` entries and, when full, makes room by
/// dropping the entry used least recently. Dropped values are handed back so
/// that the owner can release what they hold (a prepared statement on the
/// server, say). Lookups and insertions are O(1): a dictionary into a doubly
/// linked list kept in arrays, most recent first.
public struct LRUCache<Key: Hashable, Value> {
    public let capacity: Int
    private var slots: [Key: Int] = [:]
    private var entries: [Entry] = []
    private var freeSlots: [Int] = []
    private var mostRecent: Int?
    private var leastRecent: Int?

    private struct Entry {
        var key: Key
        var value: Value?
        var newer: Int?
        var older: Int?
    }

    public init(capacity: Int) {
        precondition(capacity > 0, "an LRU cache holds at least one entry")
        self.capacity = capacity
    }

    public var count: Int { slots.count }

    /// The value for `key`, now the most recently used; nil when absent.
    public mutating func value(for key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        moveToFront(slot)
        return entries[slot].value
    }

    /// Adds `value` for `key` (replacing any value it had) as the most recently
    /// used; returns what it pushed out: the replaced value, or the least
    /// recently used value when the cache was full.
    @discardableResult
    public mutating func insert(_ value: Value, for key: Key) -> Value? {
        if let slot = slots[key] {
            let replaced = entries[slot].value
            entries[slot].value = value
            moveToFront(slot)
            return replaced
        }
        var evicted: Value?
        if slots.count == capacity, let oldest = leastRecent {
            evicted = removeSlot(oldest)
        }
        let entry = Entry(key: key, value: value, newer: nil, older: nil)
        let slot: Int
        if let reused = freeSlots.popLast() {
            entries[reused] = entry
            slot = reused
        } else {
            entries.append(entry)
            slot = entries.count - 1
        }
        slots[key] = slot
        linkAtFront(slot)
        return evicted
    }

    /// Empties the cache; returns every value it held, most recent first.
    public mutating func removeAll() -> [Value] {
        var values: [Value] = []
        var cursor = mostRecent
        while let slot = cursor {
            if let value = entries[slot].value { values.append(value) }
            cursor = entries[slot].older
        }
        slots.removeAll()
        entries.removeAll()
        freeSlots.removeAll()
        mostRecent = nil
        leastRecent = nil
        return values
    }

    /// Keys from the most to the least recently used.
    public var keysByRecency: [Key] {
        var keys: [Key] = []
        var cursor = mostRecent
        while let slot = cursor {
            keys.append(entries[slot].key)
            cursor = entries[slot].older
        }
        return keys
    }

    private mutating func removeSlot(_ slot: Int) -> Value? {
        unlink(slot)
        slots[entries[slot].key] = nil
        let value = entries[slot].value
        entries[slot].value = nil
        freeSlots.append(slot)
        return value
    }

    private mutating func moveToFront(_ slot: Int) {
        guard mostRecent != slot else { return }
        unlink(slot)
        linkAtFront(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (entries[slot].newer, entries[slot].older)
        if let newer { entries[newer].older = older } else { mostRecent = older }
        if let older { entries[older].newer = newer } else { leastRecent = newer }
        entries[slot].newer = nil
        entries[slot].older = nil
    }

    private mutating func linkAtFront(_ slot: Int) {
        entries[slot].older = mostRecent
        entries[slot].newer = nil
        if let front = mostRecent { entries[front].newer = slot }
        mostRecent = slot
        if leastRecent == nil { leastRecent = slot }
    }
}
