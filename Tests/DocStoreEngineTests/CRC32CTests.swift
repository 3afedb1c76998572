// CRC32C: the hardware instruction path and the table-driven path give the same checksum for every
// length, alignment and continuation, and both give the standard check value.

import DocStoreTestSupport
import Testing

@testable import DocStoreEngine

@Suite struct CRC32CTests {
    @Test func checkValueOnBothPaths() {
        let bytes = Array("123456789".utf8)
        #expect(CRC32C.checksum(bytes) == 0xE306_9283)
        #expect(bytes.withUnsafeBytes { CRC32C.softwareChecksum($0) } == 0xE306_9283)
    }

    @Test func hardwareAndSoftwareAgreeOnEveryLengthAndOffset() {
        var rng = SplitMix64(seed: 32)
        let data = rng.bytes(5000)
        data.withUnsafeBytes { all in
            for length in [0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 383, 384, 385, 391, 392, 767, 768, 1000,
                           4079, 4080, 4081, 4092, 4096, 4463, 4464, 4471, 4991] {
                for offset in 0..<9 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    let seed = UInt32(truncatingIfNeeded: rng.next())
                    #expect(CRC32C.checksum(slice) == CRC32C.softwareChecksum(slice), "length \(length) offset \(offset)")
                    #expect(CRC32C.checksum(slice, continuing: seed) == CRC32C.softwareChecksum(slice, continuing: seed), "length \(length) offset \(offset) seed \(seed)")
                }
            }
            // Continuing over two parts equals one pass over the whole.
            let whole = UnsafeRawBufferPointer(rebasing: all[0..<4096])
            let first = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[0..<1001]))
            #expect(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[1001..<4096]), continuing: first) == CRC32C.checksum(whole))
        }
    }

    /// Long inputs go through the interleaved hardware path in blocks of 1360 and 128 bytes
    /// (three at a time) before the serial one: lengths drawn up to 70 000 (a 64 KiB page, a
    /// large WAL record) at every alignment agree with the table-driven path.
    @Test func longInputsAgreeAtRandomLengths() {
        var rng = SplitMix64(seed: 3232)
        let data = rng.bytes(70_016)
        data.withUnsafeBytes { all in
            for draw in 0..<300 {
                let length = Int(rng.next() % 70_000)
                let offset = Int(rng.next() % 16)
                let seed = UInt32(truncatingIfNeeded: rng.next())
                let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                #expect(CRC32C.checksum(slice, continuing: seed) == CRC32C.softwareChecksum(slice, continuing: seed),
                        "draw \(draw): length \(length) offset \(offset) seed \(seed) (rng seed 3232)")
            }
        }
    }
}
