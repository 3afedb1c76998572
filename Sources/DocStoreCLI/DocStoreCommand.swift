// DocStoreCommand: the root of the `docstore` command-line tool — how developers look inside a
// store file. Subcommands live in Commands/, one per file. Errors print one line on stderr and
// exit with a code that says what went wrong (CLIExit).

import ArgumentParser
import DocStore
import DocStoreEngine
import Foundation

@main
struct DocStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docstore",
        abstract: "Look inside, check and maintain DocStore store files.",
        discussion: """
            A store is X.docstore (pages), X.docstore-wal (log) and X.docstore-blobs/ (large values). \
            Read-only subcommands never change the files and work while an app has the store open.

            Exit codes:
              0  ok
              1  verify found problems; recover had to leave something out
              3  not found (file, object or tree)
              4  not a DocStore file
              5  unsupported (newer or older) format version
              6  corrupt
              7  locked by another writer
              8  I/O error
              9  other error
              10 bad query (predicate, sort key or entity)
              11 the file has no object store (an engine-only file)
              12 a dump that does not load
              13 the file to create exists already
              64 usage: an unknown subcommand, argument or option
            """,
        subcommands: [InspectCommand.self, QueryCommand.self, VerifyCommand.self, HistoryCommand.self, DumpCommand.self, LoadCommand.self, RecoverCommand.self, CompactCommand.self, CheckpointCommand.self, DemoCommand.self])
}

/// Exit codes of `docstore`, one per kind of failure.
enum CLIExit {
    static func code(for error: EngineError) -> Int32 {
        switch error.code {
        case .notFound: 3
        case .notADocStore: 4
        case .versionTooNew, .versionTooOld: 5
        case .corrupt: 6
        case .storeLocked: 7
        case .io, .noSpace: 8
        default: 9
        }
    }

    /// Exit code 10: a predicate, sort key or entity name that does not fit the store.
    static let badQuery: Int32 = 10
    /// Exit code 11: the file is a DocStore engine file without an object catalog.
    static let noObjectStore: Int32 = 11
    /// Exit code 12: a dump that does not load (a malformed line, a value that does not fit).
    static let badDump: Int32 = 12
    /// Exit code 13: the file a subcommand would create exists already.
    static let exists: Int32 = 13

    /// Fails with any error: an EngineError keeps its code; a DocStoreError its underlying
    /// engine error's code, or its own kind's; anything else exits 9.
    static func fail(_ error: any Error) -> Never {
        if let e = error as? EngineError { fail(e) }
        if let e = error as? DocStoreError {
            if let underlying = e.underlying { fail(underlying) }
            let code: Int32 = switch e.code {
            case .invalidQuery, .invalidPredicate, .unsupportedPredicate, .unknownProperty, .invalidObjectID: badQuery
            case .invalidDump: badDump
            case .objectNotFound, .objectDeleted: 3
            case .corrupt: 6
            default: 9
            }
            fail(e, code: code)
        }
        FileHandle.standardError.write(Data("docstore: \(error)\n".utf8))
        Foundation.exit(9)
    }

    /// Prints `docstore: <code>: <message>` on stderr — one line that says it all — then up to 20
    /// of the error's other problems, indented, and exits with `code`.
    static func fail(_ e: DocStoreError, code: Int32) -> Never {
        var text = "docstore: \(e.code): \(e.message)\n"
        for problem in e.problems.dropFirst().prefix(20) { text += "  \(problem)\n" }
        if e.problems.count > 21 { text += "  … \(e.problems.count - 21) more\n" }
        FileHandle.standardError.write(Data(text.utf8))
        Foundation.exit(code)
    }

    /// Prints `docstore: <message>` on stderr and exits with `code`.
    static func fail(_ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data("docstore: \(message)\n".utf8))
        Foundation.exit(code)
    }

    /// Prints `docstore: <error>` on stderr and exits with its code.
    static func fail(_ error: EngineError) -> Never {
        FileHandle.standardError.write(Data("docstore: \(error)\n".utf8))
        Foundation.exit(code(for: error))
    }
}

/// Exits with code 3 unless a store's page file is at `path`.
func requireStore(_ path: String) {
    guard FileManager.default.fileExists(atPath: path) else {
        CLIExit.fail(EngineError(.notFound, "no store at this path", file: path))
    }
}

/// Exits with code 13 when something is at `path`, which a subcommand would create.
func requireNew(_ path: String, _ what: String) {
    guard !FileManager.default.fileExists(atPath: path) else {
        CLIExit.fail("\(path) exists already; \(what)", code: CLIExit.exists)
    }
}

/// Opens a store for a subcommand, or exits with a clear error. Read-only (the default) opens
/// without the writer's lock and never changes the files; for writing it takes the lock (exit 7
/// while an app holds it). Never creates a store.
func openEngine(_ path: String, forWriting: Bool = false) -> Engine {
    requireStore(path)
    var options = EngineOptions()
    options.readOnly = !forWriting
    options.createIfMissing = false
    do {
        return try Engine.open(at: path, options: options)
    } catch {
        CLIExit.fail(error)
    }
}

/// Opens the object store in `path` read-only with the schema its catalog holds (no model
/// classes needed), or exits with a clear error: 11 when the file has no object catalog.
func openObjectStore(_ path: String) -> Store {
    requireStore(path)
    let url = URL(fileURLWithPath: path)
    do {
        guard let schema = try Store.schema(at: url) else {
            CLIExit.fail("\(path) is a DocStore engine file without objects (no catalog): use inspect and verify", code: CLIExit.noObjectStore)
        }
        return try Store(url: url, schema: schema, readOnly: true)
    } catch {
        CLIExit.fail(error)
    }
}

/// Formats a byte count for people: 1.5 MiB.
func humanBytes(_ n: UInt64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var v = Double(n)
    var u = 0
    while v >= 1024 && u < units.count - 1 { v /= 1024; u += 1 }
    return u == 0 ? "\(n) B" : String(format: "%.1f %@", v, units[u])
}

/// Shows bytes as text when printable, else as hex.
func display(_ bytes: [UInt8]) -> String {
    if let s = String(validating: bytes, as: UTF8.self), s.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) {
        return "\"\(s)\""
    }
    return "0x" + bytes.map { String(format: "%02x", $0) }.joined()
}

func fileSize(_ path: String) -> UInt64 {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
}
