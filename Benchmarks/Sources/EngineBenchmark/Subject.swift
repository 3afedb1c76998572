// Subject: what every engine under test implements. Each adapter runs whole loops (not one
// operation per call) so that no protocol dispatch sits inside one engine's timed loop but not
// another's, and every read copies the value out into a new [UInt8] — what DocStore's API returns —
// so that no engine is timed doing less work than the others.

import BenchmarkSupport
import Foundation

/// How a store is opened.
enum Mode {
    /// Bulk work: commits are not synced one by one; `settle()` makes everything durable at the
    /// end (DocStore `.normal`, LMDB `MDB_NOSYNC`, SQLite `synchronous=NORMAL`).
    case bulk
    /// Every commit is durable when it returns (DocStore `.full`, LMDB's default, SQLite
    /// `synchronous=FULL`).
    case durable
}

protocol Subject: AnyObject {
    static var name: String { get }

    /// Opens the store in `directory`; with `create`, creates it (and its table or tree) first.
    init(directory: String, mode: Mode, create: Bool) throws

    /// Inserts keys[i] → values[i] for every i in one transaction.
    func bulkLoad(_ w: Workload) throws
    /// Makes everything committed durable and folds the log into the main file (a checkpoint),
    /// leaving the store as it would sit at rest.
    func settle() throws
    /// Reads keys[readOrder[j]] for every j in one read transaction; returns the bytes read.
    func pointReads(_ w: Workload) throws -> Int
    /// Reads every entry in key order in one read transaction; returns rows and bytes read.
    func scan() throws -> (rows: Int, bytes: Int)
    /// Deletes keys[deleteOrder[j]] for every j in one transaction; returns how many were there.
    func deletes(_ w: Workload) throws -> Int
    /// Commits one transaction that puts one key; returns once it is committed (and, in
    /// `.durable` mode, durable).
    func commitOne(key: [UInt8], value: [UInt8]) throws
    /// `keys.count` threads at once, thread t committing keys[t] one transaction per key;
    /// returns the seconds from the threads' release to the last commit (see `onThreads`).
    func concurrentCommits(_ keys: [[[UInt8]]], value: [UInt8]) throws -> Double
    /// Bytes the store's files take (after `settle()`).
    func fileBytes() -> UInt64
    /// Reads one key (in a new read transaction); returns the value's length, or nil.
    func readOne(_ key: [UInt8]) throws -> Int?
    func close() throws
}

/// Collects errors from worker threads.
final class ErrorLog: @unchecked Sendable {
    // @unchecked: `items` is only touched while holding `lock`.
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}

/// Runs `body(t)` for t in 0..<count on `count` threads of their own, all released at once, and
/// waits for all of them; returns the seconds from the release to the end of the last one (thread
/// creation is not counted). Throws if any of them threw.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws -> Double {
    let errors = ErrorLog()
    let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    for t in 0..<count {
        group.enter()
        let thread = Thread {
            ready.signal()
            go.wait()
            do { try body(t) } catch { errors.add("thread \(t): \(error)") }
            group.leave()
        }
        thread.start()
    }
    for _ in 0..<count { ready.wait() }
    let start = nowNanos()
    for _ in 0..<count { go.signal() }
    group.wait()
    let seconds = Double(nowNanos() - start) / 1e9
    if let first = errors.all.first {
        throw BenchError("\(errors.all.count) thread(s) failed; first: \(first)")
    }
    return seconds
}
