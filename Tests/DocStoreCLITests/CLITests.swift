// Runs the real `docstore` executable on real store files and checks its output and exit codes:
// the demo store inspects and verifies clean; read-only subcommands leave the files byte-identical
// and work while another process holds the write lock; bad input gives one line on stderr and a
// distinct exit code, never a crash.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

func docstore(_ arguments: String...) throws -> CLIResult { try docstore(arguments) }

func docstore(_ arguments: [String]) throws -> CLIResult {
    let process = Process()
    process.executableURL = Bundle.main.bundleURL.appendingPathComponent("docstore")
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CLIResult(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
}

func storeBytes(_ path: String) -> [Data?] {
    [path, path + "-wal"].map { FileManager.default.contents(atPath: $0) }
}

@Suite struct CLITests {
    @Test func demoStoreInspectsAndVerifiesClean() throws {
        let dir = TemporaryDirectory("cli")
        let path = dir.file("Notes.docstore")
        let demo = try docstore("demo", path)
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("999 notes"))
        let inspect = try docstore("inspect", path)
        #expect(inspect.status == 0)
        #expect(inspect.stdout.contains("format        2.0"))
        #expect(inspect.stdout.contains("entities      4   schema version 1"))
        #expect(inspect.stdout.contains("  Note                     999 objects"))
        #expect(inspect.stdout.contains("  Folder                   3 objects"))
        #expect(inspect.stdout.contains("blobs         1 files"))
        let verify = try docstore("verify", path)
        #expect(verify.status == 0)
        #expect(verify.stdout.hasPrefix("ok: "))
    }

    @Test func readOnlySubcommandsNeverChangeTheFiles() throws {
        let dir = TemporaryDirectory("cli")
        let path = dir.file("Ro.docstore")
        // Leave transactions in the WAL: a read-only open must not replay them into the file or
        // cut anything.
        var options = EngineOptions()
        options.checkpointWALBytes = 1 << 30
        let engine = try Engine.open(at: path, options: options)
        try engine.write { txn in
            try txn.createTree(named: "t")
            for i in 0..<500 { try txn.put(Array("value \(i)".utf8), for: Array("k\(i)".utf8), in: "t") }
        }
        // The writer keeps the store open (and locked) while the tool reads it.
        let before = storeBytes(path)
        for args in [["inspect", path], ["inspect", path, "--wal"], ["inspect", path, "--page", "1"], ["inspect", path, "--pages"], ["verify", path]] {
            let r = try docstore(args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let wal = try docstore("inspect", path, "--wal")
        #expect(wal.stdout.contains("records       1"))
        #expect(wal.stdout.contains("torn tail     0 bytes"))
        #expect(storeBytes(path) == before, "a read-only subcommand changed the store")
        // Checkpoint needs the write lock: refused with the locked exit code while held.
        let checkpoint = try docstore("checkpoint", path)
        #expect(checkpoint.status == 7)
        #expect(checkpoint.stderr.contains("storeLocked"))
        try engine.close()
    }

    @Test func badInputGivesOneLineAndADistinctExitCode() throws {
        let dir = TemporaryDirectory("cli")
        let missing = try docstore("inspect", dir.file("missing.docstore"))
        #expect(missing.status == 3)
        #expect(missing.stderr.split(separator: "\n").count == 1)

        let junk = dir.file("junk.docstore")
        try Data(repeating: 0x41, count: 10_000).write(to: URL(fileURLWithPath: junk))
        let notStore = try docstore("inspect", junk)
        #expect(notStore.status == 4, "\(notStore.stderr)")
        #expect(notStore.stderr.hasPrefix("docstore: notADocStore"))

        // A newer major version.
        let newer = dir.file("newer.docstore")
        let engine = try Engine.open(at: newer)
        try engine.close()
        var bytes = try #require(FileManager.default.contents(atPath: newer)).map { $0 }
        for slot in [0, 4096] where bytes[slot + 4] == 0x44 {  // "D" of DOCSTORE
            bytes[slot + 12] = 9  // major version 9
            let crc = CRC32C.checksum(Array(bytes[(slot + 4)..<(slot + 128)]))
            withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { bytes[slot + i] = $0[i] } }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: newer))
        let tooNew = try docstore("verify", newer)
        #expect(tooNew.status == 5, "\(tooNew.stderr)")
        #expect(tooNew.stderr.contains("update DocStore"))

        // A corrupt page: verify lists it and exits 1.
        let damaged = dir.file("damaged.docstore")
        let e2 = try Engine.open(at: damaged)
        try e2.write { txn in
            try txn.createTree(named: "t")
            for i in 0..<400 { try txn.put(Array(repeating: 3, count: 50), for: Array("k\(i)".utf8), in: "t") }
        }
        try e2.close()
        var d = try #require(FileManager.default.contents(atPath: damaged)).map { $0 }
        d[d.count - 100] ^= 0xFF
        try Data(d).write(to: URL(fileURLWithPath: damaged))
        let v = try docstore("verify", damaged)
        #expect(v.status == 1 || v.status == 6, "\(v.stdout) \(v.stderr)")
        #expect(v.stdout.contains("checksum mismatch") || v.stderr.contains("checksum mismatch"))

        let usage = try docstore("inspect")
        #expect(usage.status == 64 || usage.status == 2, "usage error exit \(usage.status)")
    }
}
