// DocStoreKillTarget: the child process of the real-process crash tests (not a user tool).
//
//   DocStoreKillTarget commit PATH      commits numbered transactions forever, printing
//                                       "ack N" (unbuffered) after each commit returns
//   DocStoreKillTarget probe-lock PATH  tries to open the store for writing and prints
//                                       "locked" (storeLocked), "opened", or "error: …"
//   DocStoreKillTarget graph PATH       saves numbered notes forever through a background
//                                       context of an object store, printing "ack N" after each
//                                       save returns (GraphWorkload.swift)
//
// Transaction N puts key N (8 bytes, big-endian) into tree "kill" with a value derived from N
// (every 7th value is 20 KB, so overflow pages are in play), so the parent can check that the
// keys present are exactly 0..<n with every acknowledged one among them.

import DocStoreCore
import DocStoreEngine
import Foundation

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func value(for n: UInt64) -> [UInt8] {
    let size = n % 7 == 0 ? 20_000 : 40
    return (0..<size).map { UInt8(truncatingIfNeeded: n &+ UInt64($0 / 16)) }
}

func commitForever(_ path: String) throws {
    var options = EngineOptions()
    options.checkpointWALBytes = 256 << 10
    let engine = try Engine.open(at: path, options: options)
    var next = try engine.write { txn -> UInt64 in
        try txn.createTreeIfMissing("kill")
        return UInt64(try txn.count(in: "kill"))
    }
    while true {
        let n = next
        try engine.write { txn in
            try txn.put(value(for: n), for: withUnsafeBytes(of: n.bigEndian, Array.init), in: "kill")
        }
        say("ack \(n)")
        next += 1
    }
}

func probeLock(_ path: String) throws {
    do {
        // A second writer need not wait the default half second to hear it is one.
        var options = EngineOptions()
        options.lockTimeout = .milliseconds(100)
        let engine = try Engine.open(at: path, options: options)
        say("opened")
        try engine.close()
    } catch {
        if error.code == .storeLocked { say("locked") } else { throw error }
    }
}

func run() -> Int32 {
    let args = CommandLine.arguments
    guard args.count == 3 else {
        say("usage: DocStoreKillTarget commit|probe-lock|graph PATH")
        return 2
    }
    do {
        switch args[1] {
        case "commit": try commitForever(args[2])
        case "probe-lock": try probeLock(args[2])
        case "graph": try GraphWorkload.run(args[2])
        default:
            say("unknown command \(args[1])")
            return 2
        }
    } catch {
        say("error: \(error)")
        return 1
    }
    return 0
}

exit(run())
