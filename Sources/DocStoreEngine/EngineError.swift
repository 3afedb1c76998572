// EngineError: the one error type of the storage engine.
//
// Shape (after swift-nio's FileSystemError): a `code` that says what kind of failure it is, a
// `message` that says what happened and how to fix it, the context that locates it (file, page,
// LSN, byte offset), the POSIX errno of an underlying I/O failure, and the source location that
// raised it. Codes are documented below, grouped by the operation that raises them; description
// strings are pinned by EngineErrorTests.

/// An error raised by the storage engine.
///
/// Every failure the engine can meet — an I/O error, a corrupt page, a torn WAL record, a locked
/// store, misuse of a closed transaction — arrives as an `EngineError` whose ``code`` says what
/// kind it is and whose ``description`` names where it happened.
///
/// ```swift
/// do {
///     let engine = try Engine.open(at: url)
/// } catch let error as EngineError where error.code == .storeLocked {
///     print("another process is writing:", error)
/// }
/// ```
public struct EngineError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure an ``EngineError`` is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, as printed in descriptions.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        // MARK: Opening a store
        /// Another process holds the store's write lock. Opened by: ``Engine/open(at:options:)``.
        public static let storeLocked = Code("storeLocked")
        /// The file is not a DocStore page file (wrong magic, no valid meta page).
        public static let notADocStore = Code("notADocStore")
        /// The file was written by a newer major format version than this reader understands.
        public static let versionTooNew = Code("versionTooNew")
        /// The file was written in an older major format version that this reader does not read
        /// (format 1.0, written only by development builds before the 2.0 leaf cells).
        public static let versionTooOld = Code("versionTooOld")
        /// The store does not exist and the options did not allow creating it.
        public static let notFound = Code("notFound")

        // MARK: Reading and recovery
        /// Bytes on disk failed validation: a checksum, page number, length, offset or count.
        public static let corrupt = Code("corrupt")

        // MARK: Writing
        /// A read or write system call failed (EIO and others); `errno` holds the cause.
        public static let io = Code("io")
        /// The disk is full (ENOSPC).
        public static let noSpace = Code("noSpace")
        /// An earlier write or sync failed; the open store refuses writes until reopened (I8).
        public static let failed = Code("failed")
        /// The store was opened read-only.
        public static let readOnly = Code("readOnly")
        /// A key is longer than the engine's limit for the page size.
        public static let keyTooLarge = Code("keyTooLarge")
        /// A value is longer than the engine can store (4 GiB - 1).
        public static let valueTooLarge = Code("valueTooLarge")

        // MARK: API misuse
        /// The named tree does not exist.
        public static let treeNotFound = Code("treeNotFound")
        /// A tree with that name already exists.
        public static let treeExists = Code("treeExists")
        /// The transaction has already committed or been rolled back.
        public static let transactionClosed = Code("transactionClosed")
        /// The engine has been closed.
        public static let closed = Code("closed")
        /// An argument is out of range (page size, tree name, option).
        public static let invalidArgument = Code("invalidArgument")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened and, where it helps, how to fix it.
    public var message: String
    /// The file the failure concerns, if any.
    public var file: String?
    /// The page the failure concerns, if any.
    public var page: PageNumber?
    /// The WAL record (log sequence number) the failure concerns, if any.
    public var lsn: LSN?
    /// The byte offset within the file (or record) the failure concerns, if any.
    public var offset: UInt64?
    /// The POSIX errno of an underlying system-call failure, if any.
    public var errno: Int32?
    /// Where in the engine's source the error was raised (`#fileID:#line`).
    public var location: String

    /// Creates an error. Engine code uses the static helpers below.
    public init(
        _ code: Code, _ message: String, file: String? = nil, page: PageNumber? = nil,
        lsn: LSN? = nil, offset: UInt64? = nil, errno: Int32? = nil,
        fileID: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.file = file
        self.page = page
        self.lsn = lsn
        self.offset = offset
        self.errno = errno
        self.location = "\(fileID):\(line)"
    }

    /// `code: message (file …, page …, lsn …, offset …, errno …)` — the location is left out so that
    /// descriptions stay stable across edits.
    public var description: String {
        var context: [String] = []
        if let file { context.append("file \(file)") }
        if let page { context.append("page \(page.rawValue)") }
        if let lsn { context.append("lsn \(lsn.rawValue)") }
        if let offset { context.append("offset \(offset)") }
        if let errno { context.append("errno \(errno)") }
        return context.isEmpty ? "\(code): \(message)" : "\(code): \(message) (\(context.joined(separator: ", ")))"
    }

    /// Equal when code, message and context are equal; the source location does not count.
    public static func == (a: EngineError, b: EngineError) -> Bool {
        a.code == b.code && a.message == b.message && a.file == b.file && a.page == b.page
            && a.lsn == b.lsn && a.offset == b.offset && a.errno == b.errno
    }

    /// A corruption found while decoding bytes from disk (I10).
    static func corrupt(
        _ message: String, file: String? = nil, page: PageNumber? = nil, lsn: LSN? = nil,
        offset: UInt64? = nil, fileID: String = #fileID, line: Int = #line
    ) -> EngineError {
        EngineError(.corrupt, message, file: file, page: page, lsn: lsn, offset: offset, fileID: fileID, line: line)
    }
}
