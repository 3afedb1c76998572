// `docstore inspect FILE`: an overview of a store at a glance, and deeper views of the WAL and of
// single pages. Opens the store read-only; never changes it.

import ArgumentParser
import DocStore
import DocStoreEngine
import Foundation

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's format, sizes, checkpoint, trees and free space.")

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    @Flag(help: "List the WAL's records and where a torn tail begins.")
    var wal = false

    @Option(help: "Decode page N field by field, with a hex dump.")
    var page: UInt64?

    @Flag(help: "Show which tree owns each page.")
    var pages = false

    func run() throws {
        let engine = openReadOnly(file)
        do {
            if let page {
                try printPage(engine, PageNumber(page))
            } else if wal {
                try printWAL(engine)
            } else if pages {
                try printPageMap(engine)
            } else {
                try printOverview(engine)
            }
        } catch let error as EngineError {
            CLIExit.fail(error)
        }
    }

    func printOverview(_ engine: Engine) throws {
        let meta = engine.durableMeta
        let stats = engine.statistics()
        let walReport = try engine.walReport()
        let blobDir = engine.paths.blobDirectory
        let blobFiles = (try? FileManager.default.contentsOfDirectory(atPath: blobDir)) ?? []
        let blobBytes = blobFiles.reduce(UInt64(0)) { $0 + fileSize(blobDir + "/" + $1) }
        print("store         \(file)")
        print("format        \(meta.formatMajor).\(meta.formatMinor)   store id \(meta.storeID.uuidString)")
        print("page size     \(meta.pageSize) bytes")
        print("page file     \(humanBytes(fileSize(engine.paths.pageFile)))  (\(stats.pageCount) pages, \(stats.freePages) free)")
        print("wal           \(humanBytes(fileSize(engine.paths.wal)))  (\(walReport.records.count) records after the checkpoint\(walReport.tailBytes > 0 ? ", torn tail of \(walReport.tailBytes) bytes" : ""))")
        print("blobs         \(blobFiles.count) files, \(humanBytes(blobBytes))")
        print("checkpoint    generation \(meta.generation.rawValue), lsn \(meta.checkpointLSN.rawValue)")
        print("last commit   lsn \(stats.lastLSN.rawValue)")
        let trees = try engine.read { txn in try txn.treeNames().map { ($0, try txn.count(in: $0)) } }
        print("trees         \(trees.count)")
        for (name, count) in trees {
            print("  \(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(count) entries")
        }
        // An object store: its entities, read from the catalog (no model classes needed).
        if let summary = try StoreSummary.read(from: engine) {
            print("entities      \(summary.entities.count)   schema version \(summary.schemaVersion)")
            for (name, objects) in summary.entities {
                print("  \(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(objects) objects")
            }
        }
    }

    func printWAL(_ engine: Engine) throws {
        let report = try engine.walReport()
        print("wal           \(engine.paths.wal)")
        print("generation    \(report.generation.map(String.init) ?? "none (no valid header)")   starts at lsn \(report.startLSN?.rawValue ?? 0)")
        print("records       \(report.records.count)")
        for r in report.records {
            let ops = r.operations.map { op -> String in
                switch op {
                case let .put(tree, key, value): "put \(tree) \(display(key)) (\(value.count) B)"
                case let .putBlob(tree, key, blob, length): "put \(tree) \(display(key)) (\(blob), \(length) B)"
                case let .delete(tree, key): "delete \(tree) \(display(key))"
                case let .createTree(tree): "create tree \(tree)"
                case let .dropTree(tree): "drop tree \(tree)"
                }
            }
            let shown = ops.prefix(3).joined(separator: "; ") + (ops.count > 3 ? "; … \(ops.count - 3) more" : "")
            print("  lsn \(r.lsn.rawValue)  @\(r.offset)  \(r.size) B\(r.compressed ? " (lz4 from \(r.rawLength) B)" : "")  \(shown)")
        }
        if let reason = report.stopReason {
            print("stopped       at offset \(report.validEnd): \(reason)")
        }
        print("torn tail     \(report.tailBytes) bytes after offset \(report.validEnd)")
    }

    func printPage(_ engine: Engine, _ n: PageNumber) throws {
        let p = try engine.inspectPage(n)
        print("page          \(n.rawValue) at offset \(n.rawValue * UInt64(engine.pageSize))")
        if p.isMeta {
            print("type          meta (slot \(n.rawValue))")
            print("checksum      stored 0x\(String(p.storedChecksum, radix: 16)), computed 0x\(String(p.computedChecksum, radix: 16))")
            if let m = p.meta {
                print("generation    \(m.generation.rawValue)")
                print("checkpoint    lsn \(m.checkpointLSN.rawValue)   wal generation \(m.walGeneration)")
                print("pages         \(m.pageCount)   catalog root \(m.catalogRoot.rawValue)")
                print("free list     head \(m.freeListHead.rawValue), \(m.freeListCount) pages")
            }
        } else {
            print("type          \(p.type.map { "\($0)" } ?? "unknown")")
            print("checksum      stored 0x\(String(p.storedChecksum, radix: 16)), computed 0x\(String(p.computedChecksum, radix: 16))")
            print("count         \(p.count)   lower \(p.lower)   upper \(p.upper)   link \(p.link.rawValue)")
            for (i, key) in p.keys.enumerated().prefix(20) { print("  key \(i)  \(display(key))") }
            if p.keys.count > 20 { print("  … \(p.keys.count - 20) more keys") }
        }
        if let problem = p.problem { print("problem       \(problem)") }
        print("hex (first 256 bytes):")
        for row in stride(from: 0, to: min(256, p.bytes.count), by: 16) {
            let hex = p.bytes[row..<row + 16].map { String(format: "%02x", $0) }.joined(separator: " ")
            print(String(format: "  %04x  ", row) + hex)
        }
    }

    func printPageMap(_ engine: Engine) throws {
        let map = try engine.pageMap()
        let count = engine.statistics().pageCount
        for p in 0..<count {
            print("  \(p)  \(map[p] ?? "unowned")")
        }
    }
}
