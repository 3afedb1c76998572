// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every page, WAL record and
// blob file (Format/FORMAT.md § Conventions). The processor's CRC32C instruction where it has one
// (SSE4.2 on x86-64, the CRC extension on 64-bit ARM: the CCRC32C target), about 25 times fewer
// instructions per page; otherwise software slice-by-8: eight 256-entry tables built once, eight
// bytes per step. Both give the same value (CRC32CTests checks them against each other and the
// check value crc32c("123456789") = 0xE3069283).

import CCRC32C

/// CRC32C checksums.
public enum CRC32C {
    /// Whether the processor's CRC32C instruction is used.
    public static let usesHardware = docstore_crc32c_hardware_available() != 0

    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 {
                let prev = t[(k - 1) * 256 + i]
                t[k * 256 + i] = (prev >> 8) ^ t[Int(prev & 0xFF)]
            }
        }
        return t
    }()

    /// The CRC32C of `bytes`, continuing from `crc` (0 to start).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard usesHardware, let base = bytes.baseAddress else { return softwareChecksum(bytes, continuing: crc) }
        return ~docstore_crc32c_hardware(~crc, base, bytes.count)
    }

    /// The table-driven CRC32C, used where the processor has no CRC32C instruction.
    static func softwareChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        var i = 0
        let n = bytes.count
        tables.withUnsafeBufferPointer { t in
            while n - i >= 8 {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ UInt64(c)
                c = t[7 * 256 + Int(word & 0xFF)] ^ t[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((word >> 16) & 0xFF)] ^ t[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ t[3 * 256 + Int((word >> 32) & 0xFF)] ^ t[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ t[1 * 256 + Int((word >> 48) & 0xFF)] ^ t[Int(word >> 56)]
                i += 8
            }
            while i < n {
                c = (c >> 8) ^ t[Int((c ^ UInt32(bytes[i])) & 0xFF)]
                i += 1
            }
        }
        return ~c
    }

    /// The CRC32C of a byte array.
    public static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }
}
