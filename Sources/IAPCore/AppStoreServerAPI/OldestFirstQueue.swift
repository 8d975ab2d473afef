/// The entries of a memory that forgets its oldest first (`UnknownTransactionIDs`,
/// `LookupShares`), in the order they came: appended at the end, taken from the front in constant
/// time; the storage of the entries taken is dropped once they are half of what is held.
struct OldestFirstQueue<Element> {
    private var elements: [Element] = []
    /// The first entry not taken yet.
    private var head = 0

    var first: Element? { head < elements.count ? elements[head] : nil }

    mutating func append(_ element: Element) {
        elements.append(element)
    }

    /// Takes the first entry; the queue must not be empty.
    mutating func removeFirst() -> Element {
        let element = elements[head]
        head += 1
        if head == elements.count {
            elements.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > elements.count {
            elements.removeFirst(head)
            head = 0
        }
        return element
    }
}

extension OldestFirstQueue: Sendable where Element: Sendable {}
