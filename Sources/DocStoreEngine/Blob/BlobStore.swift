// BlobStore: values above the blob threshold, each in its own file in `X.docstore-blobs/`
// (Format/blobs.md). A blob file is written and made durable (file sync, then directory sync)
// before the WAL record that refers to it is written (I7); it is removed only once the delete that
// unreferenced it is in a durable checkpoint and no snapshot can read it (I7, I9); files that no
// tree references are swept at open.
//
// File layout:  magic "DSBLOB01" | crc u32 | flags u32 | blob ID u64 | raw length u64 |
//               stored length u64 | stored bytes        (crc = CRC32C of bytes 12..<end)

/// The identity of one blob file. Allocated as (transaction LSN << 20) | sequence, so IDs never
/// repeat within a store's life.
public struct BlobID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ value: UInt64) { self.rawValue = value }
    public static func < (a: BlobID, b: BlobID) -> Bool { a.rawValue < b.rawValue }
    /// The file name: 16 lowercase hex digits and `.blob`.
    public var fileName: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + ".blob"
    }
    public var description: String { "blob \(fileName)" }

    /// Parses a file name made by `fileName`; nil for anything else.
    public init?(fileName: String) {
        guard fileName.hasSuffix(".blob"), fileName.count == 21,
              let v = UInt64(fileName.dropLast(5), radix: 16) else { return nil }
        rawValue = v
    }
}

final class BlobStore: Sendable {
    static let magic: [UInt8] = Array("DSBLOB01".utf8)
    static let headerSize = 40
    let fileSystem: any FileSystem
    let directory: String

    init(fileSystem: any FileSystem, directory: String) {
        self.fileSystem = fileSystem
        self.directory = directory
    }

    func path(_ id: BlobID) -> String { directory + "/" + id.fileName }

    /// Writes a blob file and makes it durable, file and directory entry both (I7).
    func write(_ id: BlobID, _ value: [UInt8], sync: Bool) throws(EngineError) {
        var flags: UInt32 = 0
        var stored = value
        if value.count >= 4096, let c = LZ4.compress(value) { stored = c; flags |= 1 }
        var bytes = BlobStore.magic
        bytes.appendU32(0)
        bytes.appendU32(flags)
        bytes.appendU64(id.rawValue)
        bytes.appendU64(UInt64(value.count))
        bytes.appendU64(UInt64(stored.count))
        bytes += stored
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[12...])) }
        bytes.withUnsafeMutableBytes { $0.setU32(8, crc) }
        if !fileSystem.fileExists(directory) {
            try fileSystem.createDirectory(directory)
            try fileSystem.syncDirectory(MemoryFileSystem.parent(of: directory))
        }
        let file = try fileSystem.openFile(path(id), create: true, readOnly: false)
        defer { file.close() }
        try file.truncate(to: 0)
        try file.write(bytes, at: 0)
        if sync {
            try file.sync()
            try fileSystem.syncDirectory(directory)
        }
    }

    /// Reads and validates a blob file (I10).
    func read(_ id: BlobID, expectedLength: Int) throws(EngineError) -> [UInt8] {
        let p = path(id)
        let file: any StorageFile
        do { file = try fileSystem.openFile(p, create: false, readOnly: true) } catch {
            throw .corrupt("\(id) is missing", file: p)
        }
        defer { file.close() }
        let size = try file.size()
        guard size >= UInt64(BlobStore.headerSize), size <= UInt64(Int32.max) * 2 else {
            throw .corrupt("blob file has an impossible size \(size)", file: p)
        }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        try withMutableRawBytes(&bytes) { (raw) throws(EngineError) in try file.readExactly(into: raw, at: 0) }
        return try withRawBytes(bytes) { (raw) throws(EngineError) -> [UInt8] in
            guard Array(raw[0..<8]) == BlobStore.magic else { throw .corrupt("blob file has a bad magic", file: p, offset: 0) }
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[12...]))
            guard crc == raw.u32(8) else { throw .corrupt("blob file checksum mismatch", file: p, offset: 8) }
            let flags = raw.u32(12)
            guard flags & ~1 == 0 else { throw .corrupt("blob file has unknown flags 0x\(String(flags, radix: 16))", file: p, offset: 12) }
            guard raw.u64(16) == id.rawValue else { throw .corrupt("blob file holds \(BlobID(raw.u64(16)))", file: p, offset: 16) }
            let rawLength = raw.u64(24), storedLength = raw.u64(32)
            guard storedLength == size - UInt64(BlobStore.headerSize), rawLength == UInt64(expectedLength) else {
                throw .corrupt("blob file lengths do not match (raw \(rawLength), stored \(storedLength), expected \(expectedLength))", file: p, offset: 24)
            }
            let payload = UnsafeRawBufferPointer(rebasing: raw[BlobStore.headerSize...])
            if flags & 1 != 0 { return try LZ4.decompress(payload, rawLength: expectedLength) }
            guard storedLength == rawLength else { throw .corrupt("uncompressed blob with mismatched lengths", file: p, offset: 24) }
            return Array(payload)
        }
    }

    func remove(_ id: BlobID) throws(EngineError) { try fileSystem.removeFile(path(id)) }

    /// Every blob file present (names that do not parse are left alone).
    func list() throws(EngineError) -> [BlobID] {
        guard fileSystem.fileExists(directory) else { return [] }
        return try fileSystem.listDirectory(directory).compactMap(BlobID.init(fileName:))
    }
}
