// Golden: builds the golden files of Format/golden/ and the hex examples quoted in Format/*.md
// from the engine itself, and renders the annotated dumps (`Format/golden/<name>.md`).
// GoldenFileTests compares what this produces with the committed files, or rewrites them when
// DOCSTORE_REGENERATE_GOLDEN=1 (Format/FORMAT.md § Golden files).
//
// Everything here is deterministic, so regenerating twice gives byte-identical files: a fixed store
// UUID (EngineOptions.storeIDForTesting), a MemoryFileSystem (no timestamps, no inode order), fixed
// keys and values, and a fixed-seed generator for the incompressible bytes of the examples.

import Foundation

@testable import DocStoreEngine

enum Golden {
    // MARK: - The golden store

    static func utf8(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// The store UUID of every golden file and example ("D0C5704E-601D" reads "DocStore gold").
    static let storeID = UUID(uuidString: "D0C5704E-601D-4000-8000-000000000001")!
    static let pageSize = 4096
    static let directory = "/golden"
    static let pageFile = "/golden/tiny.docstore"
    static var walPath: String { pageFile + "-wal" }

    /// LSN 1, checkpointed into tiny.docstore.
    static let checkpointed: [(key: String, value: String)] = [("k1", "one"), ("k2", "two"), ("k3", "three")]
    /// LSN 2, only in tiny.docstore-wal: put k4 = four, delete k2.
    static let walOnly: [WALOperation] = [
        .put(tree: "notes", key: utf8("k4"), value: utf8("four")), .delete(tree: "notes", key: utf8("k2")),
    ]
    /// LSN 3, the record torn-tail.docstore-wal cuts in the middle.
    static let tornOperation = WALOperation.put(tree: "notes", key: utf8("k5"), value: utf8("five"))
    /// bad-crc-page.docstore flips bit 0 of this byte: the first byte of k1's value "one" on page 2.
    static let flippedOffset = 2 * 4096 + 4093
    static let flipMask: UInt8 = 0x01

    struct Files {
        var tiny: [UInt8]
        var tinyWAL: [UInt8]
        var tornTailWAL: [UInt8]
        var badCRCPage: [UInt8]

        /// The golden files by file name, in the order they are documented.
        var byName: [(name: String, bytes: [UInt8])] {
            [("tiny.docstore", tiny), ("tiny.docstore-wal", tinyWAL),
             ("torn-tail.docstore-wal", tornTailWAL), ("bad-crc-page.docstore", badCRCPage)]
        }
    }

    static func options(_ fs: MemoryFileSystem, blobThreshold: Int? = nil) -> EngineOptions {
        var o = EngineOptions(pageSize: pageSize, durability: .full, fileSystem: fs)
        o.walPreallocationBytes = 0  // golden WALs stay small; preallocation is tested elsewhere
        o.storeIDForTesting = storeID
        if let blobThreshold { o.blobThreshold = blobThreshold }
        return o
    }

    struct MissingFile: Error, CustomStringConvertible {
        var path: String
        var description: String { "the generator expected \(path) to exist" }
    }

    static func contents(_ fs: MemoryFileSystem, _ path: String) throws -> [UInt8] {
        guard let bytes = fs.contents(of: path) else { throw MissingFile(path: path) }
        return bytes
    }

    static func apply(_ op: WALOperation, _ txn: WriteTransaction) throws {
        switch op {
        case let .put(tree, key, value): try txn.put(value, for: key, in: tree)
        case let .delete(tree, key): try txn.delete(key, in: tree)
        default: fatalError("the golden transactions use only put and delete")
        }
    }

    /// Builds the four golden files the way Format/golden/*.md describes.
    static func makeFiles() throws -> Files {
        let fs = MemoryFileSystem()
        try fs.createDirectory(directory)
        let engine = try Engine.open(at: pageFile, options: options(fs))
        try engine.write { txn in
            try txn.createTree(named: "notes")
            for (k, v) in checkpointed { try txn.put(utf8(v), for: utf8(k), in: "notes") }
        }
        try engine.checkpoint()
        try engine.write { txn in for op in walOnly { try apply(op, txn) } }
        // The state on disk now: checkpoint at LSN 1 in the page file, LSN 2 in the WAL.
        let tiny = try contents(fs, pageFile)
        let tinyWAL = try contents(fs, walPath)
        try engine.write { txn in try apply(tornOperation, txn) }
        let longer = try contents(fs, walPath)
        try engine.close()
        // Keep the second record's header and half its payload: a write torn by a power cut.
        let payload = longer.count - tinyWAL.count - WALFormat.recordHeaderSize
        let torn = Array(longer[..<(tinyWAL.count + WALFormat.recordHeaderSize + payload / 2)])
        var bad = tiny
        bad[flippedOffset] ^= flipMask
        return Files(tiny: tiny, tinyWAL: tinyWAL, tornTailWAL: torn, badCRCPage: bad)
    }

    // MARK: - Examples quoted in Format/*.md

    /// A block of text in a spec document, between `<!-- golden-example: name -->` and the end
    /// of the fenced block that follows it.
    struct SpecExample {
        var document: String
        var name: String
        var text: String
    }

    /// Deterministic incompressible bytes.
    static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var x = seed
        return (0..<count).map { _ in
            x = x &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: x >> 56)
        }
    }

    static func repeated(_ s: String, _ count: Int) -> [UInt8] {
        let unit = utf8(s)
        return (0..<count).map { unit[$0 % unit.count] }
    }

    /// A fresh in-memory store at /ex/X.docstore, for the examples.
    static func exampleStore(blobThreshold: Int? = nil) throws -> (Engine, MemoryFileSystem) {
        let fs = MemoryFileSystem()
        try fs.createDirectory("/ex")
        return (try Engine.open(at: "/ex/X.docstore", options: options(fs, blobThreshold: blobThreshold)), fs)
    }

    static func pageRange(_ n: Int, _ r: Range<Int>) -> Range<Int> { (n * pageSize + r.lowerBound)..<(n * pageSize + r.upperBound) }

    static func specExamples(_ files: Files) throws -> [SpecExample] {
        var out: [SpecExample] = []
        func dump(_ doc: String, _ name: String, _ bytes: [UInt8], _ ranges: [Range<Int>]) {
            out.append(SpecExample(document: doc, name: name, text: HexDump.render(bytes, ranges: ranges)))
        }

        // FORMAT.md: varints and checksums.
        let vectors: [UInt64] = [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 32, UInt64.max]
        out.append(SpecExample(document: "FORMAT.md", name: "varint-vectors", text: vectors.map { v in
            var b: [UInt8] = []
            b.appendVarint(v)
            return String(v).padding(toLength: 22, withPad: " ", startingAt: 0) + HexDump.hex(b)
        }.joined(separator: "\n")))
        let crcInputs: [(String, [UInt8])] = [
            ("\"123456789\" (ASCII)", utf8("123456789")), ("32 zero bytes", [UInt8](repeating: 0, count: 32)),
            ("\"DOCSTORE\" (ASCII)", utf8("DOCSTORE")),
            // A 4 KiB page's checked length: long enough for the interleaved hardware path.
            ("4092 bytes i % 251", (0..<4092).map { UInt8($0 % 251) }),
        ]
        out.append(SpecExample(document: "FORMAT.md", name: "crc32c-vectors", text: crcInputs.map { name, b in
            name.padding(toLength: 22, withPad: " ", startingAt: 0) + "0x" + HexDump.hex32(CRC32C.checksum(b))
        }.joined(separator: "\n")))

        // page-file.md: from tiny.docstore.
        dump("page-file.md", "meta-pages", files.tiny, [0..<128, pageRange(1, 0..<128)])
        dump("page-file.md", "leaf-page", files.tiny, [pageRange(2, 0..<48), pageRange(2, 4048..<4096)])
        dump("page-file.md", "catalog-page", files.tiny, [pageRange(3, 0..<48), pageRange(3, 4064..<4096)])

        // page-file.md: a branch page. 19 cells of ~200 bytes fill a 4 KiB leaf; the 20th key
        // ("zebra") splits it, and the separator is the one byte "z".
        do {
            let (engine, fs) = try exampleStore()
            try engine.write { txn in
                try txn.createTree(named: "notes")
                for i in 0..<19 { try txn.put(repeated("v", 190), for: utf8("note-\(String(format: "%03d", i))"), in: "notes") }
                try txn.put(repeated("v", 190), for: utf8("zebra"), in: "notes")
            }
            try engine.checkpoint()
            let bytes = try contents(fs, "/ex/X.docstore")
            let root = try engine.readInternal { (txn) throws(EngineError) -> UInt64 in try txn.info("notes")?.root.rawValue ?? 0 }
            dump("page-file.md", "branch-page", bytes, [pageRange(Int(root), 0..<48), pageRange(Int(root), 4080..<4096)])
            try engine.close()
        }

        // page-file.md: overflow values, one plain (a two-page chain), one LZ4-compressed.
        do {
            let (engine, fs) = try exampleStore()
            try engine.write { txn in
                try txn.createTree(named: "files")
                try txn.put(noise(5000, seed: 7), for: utf8("big"), in: "files")
                try txn.put(repeated("DocStore ", 3000), for: utf8("rep"), in: "files")
            }
            try engine.checkpoint()
            let bytes = try contents(fs, "/ex/X.docstore")
            // Pages: 2 leaf, 3-4 the chain of "big", 5 the compressed "rep", 6 the catalog.
            dump("page-file.md", "overflow-leaf", bytes, [pageRange(2, 0..<48), pageRange(2, 4048..<4096)])
            dump("page-file.md", "overflow-chain", bytes, [
                pageRange(3, 0..<48), pageRange(3, 4080..<4096), pageRange(4, 0..<48), pageRange(4, 960..<992),
            ])
            dump("page-file.md", "overflow-compressed", bytes, [pageRange(5, 0..<96)])
            try engine.close()
        }

        // page-file.md: a free list. The second transaction copies pages 2 and 3 (copy-on-write),
        // so the next checkpoint lists them as free, on a new free-list page 6.
        do {
            let (engine, fs) = try exampleStore()
            try engine.write { txn in
                try txn.createTree(named: "notes")
                for (k, v) in checkpointed { try txn.put(utf8(v), for: utf8(k), in: "notes") }
            }
            try engine.checkpoint()
            try engine.write { txn in try txn.put(utf8("four"), for: utf8("k4"), in: "notes") }
            try engine.checkpoint()
            let bytes = try contents(fs, "/ex/X.docstore")
            dump("page-file.md", "free-list", bytes, [pageRange(1, 0..<128), pageRange(6, 0..<48)])
            try engine.close()
        }

        // wal.md: the whole of tiny.docstore-wal, and an LZ4-compressed record.
        dump("wal.md", "tiny-wal", files.tinyWAL, [0..<files.tinyWAL.count])
        do {
            let (engine, fs) = try exampleStore()
            try engine.write { txn in
                try txn.createTree(named: "logs")
                try txn.put(repeated("DocStore ", 2000), for: utf8("entry"), in: "logs")
            }
            let wal = try contents(fs, "/ex/X.docstore-wal")
            dump("wal.md", "lz4-record", wal, [32..<80])
            try engine.close()
        }

        // blobs.md: a 1100-byte value with a 1 KiB blob threshold.
        do {
            let (engine, fs) = try exampleStore(blobThreshold: 1024)
            try engine.write { txn in
                try txn.createTree(named: "files")
                try txn.put(repeated("0123456789abcdef", 1100), for: utf8("photo"), in: "files")
            }
            try engine.checkpoint()
            let blob = try contents(fs, "/ex/X.docstore-blobs/" + BlobID((1 << 20) | 1).fileName)
            dump("blobs.md", "blob-file", blob, [0..<64, (blob.count - 16)..<blob.count])
            let bytes = try contents(fs, "/ex/X.docstore")
            // Pages: 2 the "files" leaf, 3 the "$blobs" leaf, 4 the catalog.
            dump("blobs.md", "blob-cell", bytes, [pageRange(2, 0..<48), pageRange(2, 4064..<4096)])
            dump("blobs.md", "blobs-tree", bytes, [pageRange(3, 0..<48), pageRange(3, 4064..<4096)])
            try engine.close()
        }
        return out
    }
}


// MARK: - Hex dumps

enum HexDump {
    static func hex8(_ v: UInt8) -> String { v < 16 ? "0" + String(v, radix: 16) : String(v, radix: 16) }
    static func hex32(_ v: UInt32) -> String { let s = String(v, radix: 16); return String(repeating: "0", count: 8 - s.count) + s }

    static func hex(_ bytes: some Collection<UInt8>) -> String { bytes.map(hex8).joined(separator: " ") }

    /// xxd-style rows of 16 bytes with 8-digit file offsets, for the 16-byte-aligned rows that
    /// cover `ranges`; a run of all-zero rows prints its first row and then `*`, and `...` separates
    /// ranges that are not adjacent.
    static func render(_ bytes: [UInt8], ranges: [Range<Int>]) -> String {
        var lines: [String] = []
        var lastEnd: Int?
        for r in ranges {
            let start = r.lowerBound / 16 * 16
            let end = min(bytes.count, (r.upperBound + 15) / 16 * 16)
            if let lastEnd, lastEnd != start { lines.append("...") }
            var previousZero = false, starred = false
            var row = start
            while row < end {
                let chunk = bytes[row..<min(row + 16, end)]
                let zero = chunk.allSatisfy { $0 == 0 }
                if zero && previousZero {
                    if !starred { lines.append("*"); starred = true }
                } else {
                    lines.append(line(chunk, at: row))
                    starred = false
                }
                previousZero = zero
                row += 16
            }
            if starred { lines.append(offset(end)) }
            lastEnd = end
        }
        return lines.joined(separator: "\n")
    }

    static func offset(_ o: Int) -> String {
        let s = String(o, radix: 16)
        return String(repeating: "0", count: max(0, 8 - s.count)) + s
    }

    static func line(_ chunk: ArraySlice<UInt8>, at o: Int) -> String {
        var h = ""
        for (i, b) in chunk.enumerated() {
            h += (i == 8 ? "  " : (i == 0 ? "" : " ")) + hex8(b)
        }
        h = h.padding(toLength: 16 * 3, withPad: " ", startingAt: 0)
        let ascii = String(chunk.map { (0x20...0x7E).contains($0) ? Character(UnicodeScalar($0)) : "." })
        return "\(offset(o))  \(h)  |\(ascii)|"
    }
}
