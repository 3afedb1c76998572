// `docstore inspect FILE`: an overview of a store at a glance, and deeper views — the schema,
// an entity's objects, one object, the WAL, the page map, single pages and one tree's shape,
// and an HTML report (HTMLReport.swift). `--json` gives any
// view as JSON for scripts. Opens the store read-only; never changes it.

import ArgumentParser
import DocStore
import DocStoreEngine
import Foundation

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's format, sizes, checkpoint, trees, entities and free space, or a deeper view.")

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    @Flag(help: "Show the schema: entities, attributes with types and options, relationships, indexes.")
    var schema = false

    @Option(help: "Show the objects of an entity as a table (see --limit).")
    var entity: String?

    @Option(help: "With --entity: at most N objects (0: all).")
    var limit: Int = 20

    @Option(help: "Show one object, by its URI (docstore://…/Note/42) or Entity/number, with its relationships.")
    var object: String?

    @Flag(help: "List the WAL's records and where a torn tail begins.")
    var wal = false

    @Option(help: "Decode page N field by field, with a hex dump.")
    var page: UInt64?

    @Flag(help: "Show which tree owns each page.")
    var pages = false

    @Option(help: "Show the shape of one B+tree (as the overview lists them): depth, pages and fan-out per level, fill.")
    var tree: String?

    @Option(help: "Write a self-contained HTML report to this path: the page map as a colored grid, each tree's depth and fill, each entity's size.")
    var html: String?

    @Flag(help: "Print the view as JSON.")
    var json = false

    func validate() throws {
        let views = [schema, entity != nil, object != nil, wal, page != nil, pages, tree != nil, html != nil].filter { $0 }.count
        guard views <= 1 else { throw ValidationError("choose one view: --schema, --entity, --object, --wal, --page, --pages, --tree or --html") }
        guard limit >= 0 else { throw ValidationError("--limit takes 0 or more") }
    }

    func run() throws {
        if schema || entity != nil || object != nil {
            let store = openObjectStore(file)
            do {
                if schema {
                    try printSchema(store)
                } else if let entity {
                    try printEntity(store, entity)
                } else if let object {
                    try printObject(store, object)
                }
            } catch {
                CLIExit.fail(error)
            }
            return
        }
        let engine = openEngine(file)
        do {
            if let page {
                try printPage(engine, PageNumber(page))
            } else if wal {
                try printWAL(engine)
            } else if pages {
                try printPageMap(engine)
            } else if let tree {
                try printTree(engine, tree)
            } else if let html {
                let text = try HTMLReport(file: file, engine: engine).render()
                do { try Data(text.utf8).write(to: URL(fileURLWithPath: html)) } catch {
                    CLIExit.fail("the report could not be written to \(html): \(error.localizedDescription)", code: 8)
                }
                print("wrote \(html) (\(humanBytes(UInt64(text.utf8.count))))")
            } else {
                try printOverview(engine)
            }
        } catch {
            CLIExit.fail(error)
        }
    }

    /// Prints `value` as pretty JSON with sorted keys.
    func printJSON(_ value: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }

    func printSchema(_ store: Store) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(store.schema), as: UTF8.self))
            return
        }
        print(SchemaText.render(store.schema, versionLine: "schema of \(file)"))
    }

    func printEntity(_ store: Store, _ name: String) throws {
        guard store.schema.entity(named: name) != nil else {
            CLIExit.fail("the store has no entity \"\(name)\"; it has \(store.schema.entities.map(\.name).joined(separator: ", "))", code: CLIExit.badQuery)
        }
        let context = Context(store: store)
        let request = FetchRequest<ManagedObject>(entityName: name, fetchLimit: limit)
        let total = try context.count(for: FetchRequest<ManagedObject>(entityName: name))
        let rows = try ObjectRows(entity: name, schema: store.schema, objects: try context.fetch(request))
        if json {
            print(try rows.jsonText())
            return
        }
        print(rows.table())
        print(rows.rows.count < total ? "\(rows.rows.count) of \(total) objects (--limit 0 shows all)" : "\(total) object\(total == 1 ? "" : "s")")
    }

    func printObject(_ store: Store, _ reference: String) throws {
        let context = Context(store: store)
        let object: ManagedObject
        if reference.hasPrefix("docstore://"), let url = URL(string: reference) {
            // object(withURI:) gives a fault even for a deleted object; existingObject reads it.
            let fault = try context.object(withURI: url)
            guard let id = fault.objectID else { CLIExit.fail("\(reference) names no object", code: CLIExit.badQuery) }
            object = try context.existingObject(with: id)
        } else {
            let parts = reference.split(separator: "/")
            guard parts.count == 2, let number = UInt64(parts[1]) else {
                CLIExit.fail("\"\(reference)\" is neither an object URI (docstore://…/Note/42) nor Entity/number", code: CLIExit.badQuery)
            }
            object = try context.existingObject(with: try store.objectID(forEntityName: String(parts[0]), number: number))
        }
        let entity = object.entityName ?? "?"
        let rows = try ObjectRows(entity: entity, schema: store.schema, objects: [object])
        guard let row = rows.rows.first else { return }
        if json {
            try printJSON(row.merging(["entity": entity]) { a, _ in a })
            return
        }
        print("\(entity)/\(object.objectID?.number ?? 0)   \(row["id"] ?? "")")
        let width = rows.columns.map(\.count).max() ?? 0
        for column in rows.columns.dropFirst() {
            let text: String
            switch row[column] {
            case let members as [Any]:
                let shown = members.prefix(20).map { ObjectRows.shortID("\($0)") }.joined(separator: ", ")
                text = "[\(members.count)] " + shown + (members.count > 20 ? ", …" : "")
            case let uri as String where uri.hasPrefix("docstore://"): text = "→ " + ObjectRows.shortID(uri)
            case is NSNull, nil: text = "-"
            case let v?: text = "\(v)"
            }
            print("  \(column.padding(toLength: width, withPad: " ", startingAt: 0))  \(text)")
        }
    }

    func printOverview(_ engine: Engine) throws {
        let meta = engine.durableMeta
        let stats = engine.statistics()
        let walReport = try engine.walReport()
        let blobDir = engine.paths.blobDirectory
        let blobFiles = (try? FileManager.default.contentsOfDirectory(atPath: blobDir)) ?? []
        let blobBytes = blobFiles.reduce(UInt64(0)) { $0 + fileSize(blobDir + "/" + $1) }
        let trees = try engine.read { txn in try txn.treeNames().map { ($0, try txn.count(in: $0)) } }
        let summary = try StoreSummary.read(from: engine)
        let history = trees.first { $0.0 == "docstore.history" }?.1 ?? 0
        let fragmentation = stats.pageCount > 0 ? Double(stats.freePages) / Double(stats.pageCount) : 0
        if json {
            var out: [String: Any] = [
                "store": file, "format": "\(meta.formatMajor).\(meta.formatMinor)", "storeID": meta.storeID.uuidString,
                "pageSize": meta.pageSize, "pageFileBytes": fileSize(engine.paths.pageFile), "pages": stats.pageCount,
                "freePages": stats.freePages, "freeFraction": fragmentation,
                "walBytes": fileSize(engine.paths.wal), "walRecordsPending": walReport.records.count, "walTornTailBytes": walReport.tailBytes,
                "blobFiles": blobFiles.count, "blobBytes": blobBytes,
                "checkpointGeneration": meta.generation.rawValue, "checkpointLSN": meta.checkpointLSN.rawValue, "lastLSN": stats.lastLSN.rawValue,
                "trees": Dictionary(uniqueKeysWithValues: trees.map { ($0.0, $0.1) }),
            ]
            if let summary {
                out["schemaVersion"] = summary.schemaVersion
                out["entities"] = Dictionary(uniqueKeysWithValues: summary.entities.map { ($0.name, $0.objects) })
                out["historyEntries"] = history
                out["treeContents"] = summary.trees.filter { name, _ in trees.contains { $0.0 == name } }
            }
            try printJSON(out)
            return
        }
        print("store         \(file)")
        print("format        \(meta.formatMajor).\(meta.formatMinor)   store id \(meta.storeID.uuidString)")
        print("page size     \(meta.pageSize) bytes")
        print("page file     \(humanBytes(fileSize(engine.paths.pageFile)))  (\(stats.pageCount) pages, \(stats.freePages) free: \(String(format: "%.1f", fragmentation * 100)) % of the file)")
        print("wal           \(humanBytes(fileSize(engine.paths.wal)))  (\(walReport.records.count) records after the checkpoint\(walReport.tailBytes > 0 ? ", torn tail of \(walReport.tailBytes) bytes" : ""))")
        print("blobs         \(blobFiles.count) files, \(humanBytes(blobBytes))")
        print("checkpoint    generation \(meta.generation.rawValue), lsn \(meta.checkpointLSN.rawValue)")
        print("last commit   lsn \(stats.lastLSN.rawValue)")
        print("trees         \(trees.count)")
        for (name, count) in trees {
            let entries = "\(count) entr\(count == 1 ? "y" : "ies")"
            let holds = summary?.trees[name].map { entries.padding(toLength: 16, withPad: " ", startingAt: 0) + $0 } ?? entries
            print("  \(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(holds)")
        }
        // An object store: its entities, read from the catalog (no model classes needed).
        if let summary {
            print("entities      \(summary.entities.count)   schema version \(summary.schemaVersion)")
            for (name, objects) in summary.entities {
                print("  \(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(objects) objects")
            }
            print("history       \(history) entries (persistent history; purge with Store.deleteHistory)")
        }
    }

    func printWAL(_ engine: Engine) throws {
        let report = try engine.walReport()
        if json {
            try printJSON([
                "wal": engine.paths.wal, "generation": report.generation.map { $0 as Any } ?? NSNull(),
                "startLSN": report.startLSN?.rawValue ?? 0, "validEnd": report.validEnd, "tornTailBytes": report.tailBytes,
                "stopReason": report.stopReason ?? NSNull(),
                "records": report.records.map { r in
                    ["lsn": r.lsn.rawValue, "offset": r.offset, "size": r.size, "compressed": r.compressed, "rawLength": r.rawLength,
                     "operations": r.operations.count] as [String: Any]
                },
            ] as [String: Any])
            return
        }
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
        if json {
            var out: [String: Any] = [
                "page": n.rawValue, "offset": n.rawValue * UInt64(engine.pageSize), "isMeta": p.isMeta,
                "storedChecksum": p.storedChecksum, "computedChecksum": p.computedChecksum, "problem": p.problem ?? NSNull(),
                "hex": p.bytes.map { String(format: "%02x", $0) }.joined(),
            ]
            if let m = p.meta {
                out["meta"] = ["generation": m.generation.rawValue, "checkpointLSN": m.checkpointLSN.rawValue, "walGeneration": m.walGeneration,
                               "pageCount": m.pageCount, "catalogRoot": m.catalogRoot.rawValue, "freeListHead": m.freeListHead.rawValue,
                               "freeListCount": m.freeListCount] as [String: Any]
            } else {
                out["type"] = p.type.map { "\($0)" } ?? NSNull()
                out["count"] = p.count
                out["lower"] = p.lower
                out["upper"] = p.upper
                out["link"] = p.link.rawValue
                out["keys"] = p.keys.map { display($0) }
            }
            try printJSON(out)
            return
        }
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
        if json {
            try printJSON((0..<count).map { ["page": $0, "owner": map[$0] ?? NSNull()] as [String: Any] })
            return
        }
        for p in 0..<count {
            print("  \(p)  \(map[p] ?? "unowned")")
        }
    }

    func printTree(_ engine: Engine, _ name: String) throws {
        guard let shape = try engine.treeShape(name) else {
            let names = try engine.read { try $0.treeNames() }
            CLIExit.fail("the store has no tree \"\(name)\"; it has \(names.joined(separator: ", "))", code: 3)
        }
        let levels = shape.levels.enumerated().map { i, level -> [String: Any] in
            ["level": i, "kind": level.isLeaf ? "leaf" : "branch", "pages": level.pages, "cells": level.cells,
             "minCells": level.minCells, "maxCells": level.maxCells, "fanOut": level.fanOut, "fill": level.fill(pageSize: shape.pageSize)]
        }
        if json {
            try printJSON([
                "tree": shape.name, "root": shape.root.rawValue, "entries": shape.entries, "depth": shape.depth, "pages": shape.pages,
                "levels": levels, "overflowValues": shape.overflowValues, "overflowPages": shape.overflowPages,
                "blobValues": shape.blobValues, "keyBytes": shape.keyBytes, "inlineValueBytes": shape.inlineValueBytes,
            ] as [String: Any])
            return
        }
        print("tree          \(shape.name)")
        print("root          page \(shape.root.rawValue)   \(shape.entries) entries   depth \(shape.depth)   \(shape.pages) pages")
        for (i, level) in shape.levels.enumerated() {
            let fill = String(format: "%.1f", level.fill(pageSize: shape.pageSize) * 100)
            if level.isLeaf {
                print("  level \(i) leaf     \(level.pages) page\(level.pages == 1 ? "" : "s")   \(level.cells) entries (\(level.minCells)–\(level.maxCells) a page)   fill \(fill) %")
            } else {
                print("  level \(i) branch   \(level.pages) page\(level.pages == 1 ? "" : "s")   fan-out \(String(format: "%.1f", level.fanOut)) (\(level.minCells + 1)–\(level.maxCells + 1) children)   fill \(fill) %")
            }
        }
        print("keys          \(humanBytes(UInt64(shape.keyBytes)))   inline values \(humanBytes(UInt64(shape.inlineValueBytes)))")
        print("large values  \(shape.overflowValues) in overflow chains (\(shape.overflowPages) pages), \(shape.blobValues) in blob files")
    }
}
