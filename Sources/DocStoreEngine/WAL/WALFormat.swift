// WALFormat: the byte layout of the write-ahead log, shared by reader and writer
// (Format/wal.md, as leveldb's log_format.h is to doc/log_format.md).
//
// File header (32 bytes): crc u32 | magic "DSWALOG1" | major u16 | minor u16 | generation u64 |
//                         startLSN u64                    crc = CRC32C of bytes 4..<32
// Record header (32 bytes): crc u32 | storedLength u32 | lsn u64 | generation u64 |
//                           rawLength u32 | flags u8 | 3 zero bytes, then storedLength bytes
//                           crc = CRC32C of bytes 4..<32 + storedLength; flags bit 0 = LZ4

package enum WALFormat {
    static let magic: [UInt8] = Array("DSWALOG1".utf8)
    package static let headerSize = 32
    package static let recordHeaderSize = 32
    static let flagLZ4: UInt8 = 0x01
    /// Payloads at least this long are offered to LZ4 (small ones never shrink; DESIGN.md).
    static let compressThreshold = 1024
    /// The longest payload a record may carry (u32 length).
    static let maxPayload = Int(UInt32.max) - recordHeaderSize

    package struct Header: Equatable {
        var generation: UInt64
        var startLSN: LSN

        package init(generation: UInt64, startLSN: LSN) {
            self.generation = generation
            self.startLSN = startLSN
        }

        package func encode() -> [UInt8] {
            var b = [UInt8](repeating: 0, count: 4)
            b += WALFormat.magic
            b.appendU16(MetaPage.formatMajor)
            b.appendU16(MetaPage.formatMinor)
            b.appendU64(generation)
            b.appendU64(startLSN.rawValue)
            let crc = b.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...])) }
            b.withUnsafeMutableBytes { $0.setU32(0, crc) }
            return b
        }

        /// The major version of a header that is whole (magic and checksum hold) but not this
        /// reader's: such a log must be refused, not treated as torn (W3).
        static func otherMajor(_ raw: UnsafeRawBufferPointer) -> UInt16? {
            guard raw.count >= headerSize, Array(raw[4..<12]) == magic,
                  CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4..<headerSize])) == raw.u32(0),
                  raw.u16(12) != MetaPage.formatMajor else { return nil }
            return raw.u16(12)
        }

        /// Decodes a header; nil when it is not a valid header (torn, foreign or empty file).
        static func decode(_ raw: UnsafeRawBufferPointer) -> Header? {
            guard raw.count >= headerSize, Array(raw[4..<12]) == magic,
                  CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4..<headerSize])) == raw.u32(0),
                  raw.u16(12) == MetaPage.formatMajor else { return nil }
            return Header(generation: raw.u64(16), startLSN: LSN(raw.u64(24)))
        }
    }

    /// A record ready to be written: its header, and its payload as stored (LZ4-compressed when
    /// that helps). They are kept apart so that a large payload is not copied once more to sit
    /// behind its header; `bytes` joins them for a small record (one write).
    struct FramedRecord {
        var header: [UInt8]
        var stored: [UInt8]

        var count: Int { header.count + stored.count }
        /// The record as one array (a copy of the payload).
        var bytes: [UInt8] { header + stored }
    }

    /// Frames a payload as one record: header, then the payload, LZ4-compressed when that helps.
    static func frame(payload: [UInt8], lsn: LSN, generation: UInt64) -> FramedRecord {
        var flags: UInt8 = 0
        var stored = payload
        if payload.count >= compressThreshold, let c = LZ4.compress(payload) {
            stored = c
            flags |= flagLZ4
        }
        var b = [UInt8]()
        b.reserveCapacity(recordHeaderSize)
        b.appendU32(0)
        b.appendU32(UInt32(stored.count))
        b.appendU64(lsn.rawValue)
        b.appendU64(generation)
        b.appendU32(UInt32(payload.count))
        b.append(flags)
        b += [0, 0, 0]
        var crc = b.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        crc = CRC32C.checksum(stored, continuing: crc)
        b.withUnsafeMutableBytes { $0.setU32(0, crc) }
        return FramedRecord(header: b, stored: stored)
    }
}
