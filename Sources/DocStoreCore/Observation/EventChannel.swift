// EventChannel: hands each event to every live AsyncStream made from it — the delivery end of
// the context events and the store-wide change stream.
//
//   E1  streams buffer without bound: an event is never dropped for a slow consumer (delivery
//       is guaranteed; a consumer that never reads holds its events in memory until it ends).
//   E2  a subscriber's filter sees each event first and may narrow it or skip it (nil).
//   E3  a stream whose consumer ended (cancelled or deinitialized) is removed at once.
//   E4  events from one sender arrive in the order they were sent.

import Synchronization
internal import DocStoreEngine

final class EventChannel<Event: Sendable>: Sendable {
    private struct Subscriber {
        let filter: @Sendable (Event) -> Event?
        let continuation: AsyncStream<Event>.Continuation
    }

    /// By a number of their own (UInt64, a key type the store hashes anyway: the first
    /// dictionary of a new key type costs a new process a scan of every conformance record).
    private let subscribers = Locked<[UInt64: Subscriber]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let count = Atomic<Int>(0)

    /// Whether any stream is listening (a relaxed read: cheap enough for hot paths).
    var hasSubscribers: Bool { count.load(ordering: .relaxed) > 0 }

    /// A new stream of the events `filter` lets through (E2).
    func stream(_ filter: @escaping @Sendable (Event) -> Event? = { $0 }) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let id = nextID.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[id] = Subscriber(filter: filter, continuation: continuation) }
        count.add(1, ordering: .relaxed)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let removed = self.subscribers.withLock { $0.removeValue(forKey: id) }
            if removed != nil { self.count.subtract(1, ordering: .relaxed) }
        }
        return stream
    }

    /// Hands `event` to every subscriber whose filter lets it through.
    func send(_ event: Event) {
        let all = subscribers.withLock { Array($0.values) }
        for s in all {
            if let e = s.filter(event) { s.continuation.yield(e) }
        }
    }

    deinit {
        for s in subscribers.withLock({ Array($0.values) }) { s.continuation.finish() }
    }
}
