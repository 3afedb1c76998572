// WALReader: reads the log back at open and for `docstore inspect --wal`.
//
// I5: a record is replayed only if all of these hold, checked in this order (Format/wal.md § Rules):
//   R1 its 32-byte header lies inside the file;
//   R2 its stored length fits in the rest of the file;
//   R3 its CRC32C matches;
//   R4 its generation equals the header's (and the meta page's) WAL generation;
//   R5 its LSN is exactly one more than the previous record's (the first: the header's start LSN);
//   R6 its flags and reserved bytes are known values;
//   R7 its payload decodes (LZ4 to exactly rawLength bytes; every operation well-formed).
// The first record that fails ends the log; the report says where and why, and how many bytes
// follow (the torn tail that recovery cuts).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One record as read from the log.
public struct WALRecordInfo: Sendable, Equatable {
    public var lsn: LSN
    /// Byte offset of the record header in the WAL file.
    public var offset: UInt64
    /// Bytes on disk, header included.
    public var size: Int
    /// Payload bytes before compression.
    public var rawLength: Int
    public var compressed: Bool
    public var operations: [WALOperation]
}

/// What reading a WAL found.
public struct WALReadReport: Sendable {
    /// The file header, if it was valid.
    public var generation: UInt64?
    public var startLSN: LSN?
    /// The records that hold, in order.
    public var records: [WALRecordInfo]
    /// Where the valid log ends (bytes).
    public var validEnd: UInt64
    /// The file's size.
    public var fileSize: UInt64
    /// Zero bytes after the last record: space the writer preallocated (not a torn tail).
    public var preallocatedBytes: UInt64 = 0
    /// Why reading stopped before the end of the file, naming the rule (nil if it did not, or if
    /// only preallocated zeros follow).
    public var stopReason: String?

    /// Bytes after the last valid record that are not preallocated zeros: the torn tail.
    public var tailBytes: UInt64 { fileSize - validEnd - preallocatedBytes }
}

/// Whether every byte is zero (memcmp against a zero block: fast even in debug builds).
func isAllZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    return zeroBlock.withUnsafeBytes { zero -> Bool in
        guard let z = zero.baseAddress else { return false }
        var offset = 0
        while offset < bytes.count {
            let n = min(zero.count, bytes.count - offset)
            if memcmp(base + offset, z, n) != 0 { return false }
            offset += n
        }
        return true
    }
}

private let zeroBlock = [UInt8](repeating: 0, count: 65536)

package enum WALReader {
    /// Reads every valid record. `expectedGeneration` and `expectedStart` come from the meta page;
    /// a header that does not match them means the log belongs to an older checkpoint: no records.
    static func read(
        file: any StorageFile, expectedGeneration: UInt64?, expectedStart: LSN?
    ) throws(EngineError) -> WALReadReport {
        let size = try file.size()
        guard size >= UInt64(WALFormat.headerSize) else {
            return try read(bytes: [], fileSize: size, expectedGeneration: expectedGeneration, expectedStart: expectedStart, file: file.path)
        }
        guard size <= UInt64(Int.max / 2) else { throw .corrupt("WAL file size \(size) is impossible", file: file.path) }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        try withMutableRawBytes(&bytes) { (raw) throws(EngineError) in try file.readExactly(into: raw, at: 0) }
        return try read(bytes: bytes, fileSize: size, expectedGeneration: expectedGeneration, expectedStart: expectedStart, file: file.path)
    }

    /// Decodes a log held in memory: the decoder itself, for `read(file:)` and the wal-record
    /// fuzz target. `fileSize` is the file's size (`bytes` is empty when that is shorter than a
    /// header); nil expectations accept the header's generation and start.
    package static func read(
        bytes: [UInt8], fileSize: UInt64? = nil, expectedGeneration: UInt64?, expectedStart: LSN?, file: String
    ) throws(EngineError) -> WALReadReport {
        let size = fileSize ?? UInt64(bytes.count)
        var report = WALReadReport(generation: nil, startLSN: nil, records: [], validEnd: 0, fileSize: size, stopReason: nil)
        guard size >= UInt64(WALFormat.headerSize), bytes.count >= WALFormat.headerSize else {
            report.stopReason = size == 0 ? nil : "W1: the WAL header is torn (\(size) bytes)"
            return report
        }
        if let major = bytes.withUnsafeBytes({ WALFormat.Header.otherMajor($0) }) {
            if major > MetaPage.formatMajor {
                throw EngineError(.versionTooNew, "the WAL has format version \(major); this DocStore reads up to \(MetaPage.formatMajor).x — update DocStore", file: file, offset: 12)
            }
            throw EngineError(.versionTooOld, "the WAL has format version \(major), which only development builds wrote; this DocStore reads \(MetaPage.formatMajor).x", file: file, offset: 12)
        }
        bytes.withUnsafeBytes { raw in
            guard let header = WALFormat.Header.decode(raw) else {
                report.stopReason = "W2: the WAL header is not valid (torn or not a DocStore WAL)"
                return
            }
            report.generation = header.generation
            report.startLSN = header.startLSN
            report.validEnd = UInt64(WALFormat.headerSize)
            if let g = expectedGeneration, g != header.generation {
                report.stopReason = "W4: the WAL is generation \(header.generation), the checkpoint expects \(g)"
                return
            }
            if let s = expectedStart, s != header.startLSN {
                report.stopReason = "W5: the WAL starts at lsn \(header.startLSN.rawValue), the checkpoint expects \(s.rawValue)"
                return
            }
            var offset = WALFormat.headerSize
            var expected = header.startLSN
            while offset < raw.count {
                // Only zeros left: preallocated space, the log ends here cleanly. (A record never
                // starts with a zero checksum and a zero length: its payload is at least 2 bytes.)
                if raw.count - offset >= 8, raw.u64(offset) == 0, isAllZero(UnsafeRawBufferPointer(rebasing: raw[offset...])) {
                    report.preallocatedBytes = UInt64(raw.count - offset)
                    return
                }
                let remaining = raw.count - offset
                guard remaining >= WALFormat.recordHeaderSize else {
                    report.stopReason = "R1: a record header at offset \(offset) is cut short (\(remaining) bytes)"
                    return
                }
                let h = UnsafeRawBufferPointer(rebasing: raw[offset...])
                let stored = Int(h.u32(4))
                guard stored <= remaining - WALFormat.recordHeaderSize else {
                    report.stopReason = "R2: the record at offset \(offset) claims \(stored) bytes, \(remaining - WALFormat.recordHeaderSize) remain"
                    return
                }
                let end = WALFormat.recordHeaderSize + stored
                let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: h[4..<end]))
                guard crc == h.u32(0) else {
                    report.stopReason = "R3: the record at offset \(offset) fails its checksum"
                    return
                }
                guard h.u64(16) == header.generation else {
                    report.stopReason = "R4: the record at offset \(offset) is of generation \(h.u64(16)), not \(header.generation)"
                    return
                }
                let lsn = LSN(h.u64(8))
                guard lsn == expected else {
                    report.stopReason = "R5: the record at offset \(offset) has lsn \(lsn.rawValue), expected \(expected.rawValue)"
                    return
                }
                let flags = h.u8(28)
                guard flags & ~WALFormat.flagLZ4 == 0, h.u8(29) == 0, h.u8(30) == 0, h.u8(31) == 0 else {
                    report.stopReason = "R6: the record at offset \(offset) has unknown flags"
                    return
                }
                let rawLength = Int(h.u32(24))
                let payload = UnsafeRawBufferPointer(rebasing: h[WALFormat.recordHeaderSize..<end])
                let ops: [WALOperation]
                do throws(EngineError) {
                    if flags & WALFormat.flagLZ4 != 0 {
                        let plain = try LZ4.decompress(payload, rawLength: rawLength)
                        ops = try withRawBytes(plain) { (p) throws(EngineError) in try WALPayload.decode(p, lsn: lsn) }
                    } else {
                        guard rawLength == stored else { throw EngineError.corrupt("raw length \(rawLength) differs from stored \(stored)") }
                        ops = try WALPayload.decode(payload, lsn: lsn)
                    }
                } catch {
                    report.stopReason = "R7: the record at offset \(offset) does not decode: \(error.message)"
                    return
                }
                report.records.append(WALRecordInfo(
                    lsn: lsn, offset: UInt64(offset), size: end, rawLength: rawLength,
                    compressed: flags & WALFormat.flagLZ4 != 0, operations: ops))
                offset += end
                report.validEnd = UInt64(offset)
                expected = lsn.next
            }
        }
        return report
    }
}
