/// A dictionary that keeps at most `capacity` entries, forgetting the oldest
/// insertion first: the memory of an in-memory cache stays bounded whatever
/// clients send. Not thread-safe: its owner locks around it.
public struct BoundedDictionary<Key: Hashable, Value> {
    public let capacity: Int
    private var entries: [Key: Value] = [:]
    private var insertionOrder: [Key] = []

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    public subscript(key: Key) -> Value? {
        entries[key]
    }

    public var count: Int {
        entries.count
    }

    /// Adds `value` for `key` unless the key is already there (the first value
    /// stays), then drops the oldest entry if there are too many.
    public mutating func insert(_ value: Value, for key: Key) {
        guard entries[key] == nil else { return }
        entries[key] = value
        insertionOrder.append(key)
        if insertionOrder.count > capacity {
            entries.removeValue(forKey: insertionOrder.removeFirst())
        }
    }
}

extension BoundedDictionary: Sendable where Key: Sendable, Value: Sendable {}
