// EngineOptions: every knob of the engine, with the defaults a store gets when none is given
// (leveldb's options.h). The page size matters only at creation; an existing store keeps its own.

import Foundation

/// When a commit is durable.
public enum Durability: String, Sendable, CaseIterable {
    /// Every commit returns only after its WAL record is synced (I4). Concurrent committers share
    /// one sync (group commit).
    case full
    /// Commits are synced at checkpoints only: a crash may lose the latest commits, never
    /// corrupt the store or keep part of a transaction.
    case normal
    /// Nothing is ever synced. For scratch data: a power loss can damage the store.
    case off
}

/// Options for opening a store.
public struct EngineOptions: Sendable {
    /// The page sizes a store can have: powers of two from 4 KiB to 64 KiB.
    public static let validPageSizes: Set<Int> = [4096, 8192, 16384, 32768, 65536]

    /// Whether `size` is one of ``validPageSizes`` — answered without making the set, whose
    /// `Set<Int>` costs a new process a scan of every conformance record the first time.
    public static func isValidPageSize(_ size: Int) -> Bool {
        size >= 4096 && size <= 65536 && size & (size - 1) == 0
    }

    /// Page size for a new store (4 KiB by default). Ignored when opening an existing store.
    public var pageSize: Int = 4096
    /// When commits become durable (`.full` by default).
    public var durability: Durability = .full
    /// Create the store if it does not exist (true by default).
    public var createIfMissing: Bool = true
    /// Open without writing anything: no lock, no recovery writes, writes refused.
    public var readOnly: Bool = false
    /// How long opening for writing waits for the writer's lock before it throws `.storeLocked`
    /// (500 ms by default), as Core Data's `NSPersistentStoreTimeoutOption`. The wait also
    /// covers the moment a program this process is starting holds copies of its descriptors.
    public var lockTimeout: Duration = .milliseconds(500)
    /// A checkpoint runs automatically after a commit once the WAL is this long (16 MiB default).
    public var checkpointWALBytes: Int = 16 << 20
    /// The WAL is extended with zero bytes in steps of this size (1 MiB default), so that a
    /// commit overwrites already-allocated space and its sync need not update the file's size
    /// (measured here: an overwrite + fdatasync ~100 µs, an append ~160 µs). 0 turns it off.
    public var walPreallocationBytes: Int = 1 << 20
    /// Values of at least this many bytes are stored as external blob files (1 MiB default).
    public var blobThreshold: Int = 1 << 20
    /// How many bytes of clean pages the cache keeps (256 MiB default).
    public var cacheBytes: Int = 256 << 20
    /// How many bytes of new pages one write transaction keeps in memory (8 MiB default). Past
    /// it, the transaction writes its leaf pages to their places in the file before it commits
    /// (pages no committed state uses, so a crash or rollback leaves the store as it was) and
    /// reads them back if it touches them again. A large import then holds about this much of
    /// its new pages, not all of them. At least two pages are kept.
    public var writeSpillBytes: Int = 8 << 20
    /// How many bytes of puts (or deletes) made one by one into a tree a write transaction
    /// buffers before it applies them in key order (256 MiB default, counting about 80 bytes per
    /// entry beside its key and value). Sorted, they fill pages by appending and each page is
    /// written once; a bulk load larger than this is applied in several runs, each reading back
    /// and rewriting pages the one before wrote, and leaving them less full. Lower it to hold
    /// less: the buffer keeps the keys and values it was given until it is applied.
    public var putBufferBytes: Int = 256 << 20
    /// The file system to use; the machine's by default. Tests pass a memory or faulty one.
    public var fileSystem: any FileSystem = FoundationFileSystem()
    /// Test hook: the store UUID `Recovery.create` writes into a new store's meta page instead of
    /// a random one, so that golden files come out byte-identical (Format/golden/). Internal on
    /// purpose: a store's identity is not something an app chooses.
    var storeIDForTesting: UUID?
    /// When the store does not exist yet: the identity it takes — the store ID and the last
    /// LSN of the store it continues — so that a copy made by a migration or compaction keeps
    /// the object IDs and history tokens of the original (its first commit is `lastLSN` + 1).
    /// Ignored when the store exists.
    public var continuing: (storeID: UUID, lastLSN: LSN)?
    /// Set by `Engine.reopenAfterFailure` (I11): recovery cuts WAL records after the last
    /// acknowledged commit instead of replaying them, and undoes a newer meta page than the last
    /// one synced.
    var reopening: Reopening?

    struct Reopening {
        var acknowledged: LSN
        var durableMeta: Generation
    }

    public init() {}

    /// Options with a few fields set.
    public init(pageSize: Int = 4096, durability: Durability = .full, readOnly: Bool = false, fileSystem: any FileSystem = FoundationFileSystem()) {
        self.pageSize = pageSize
        self.durability = durability
        self.readOnly = readOnly
        self.fileSystem = fileSystem
    }
}
