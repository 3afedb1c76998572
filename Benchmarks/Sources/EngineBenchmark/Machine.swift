// Machine: what this machine itself costs — a durable 4 KiB append, an empty process start — and
// the child-process side of the new-process workload.

import BenchmarkSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// p50 and p99 of `count` appends of 4 KiB to a new file in `directory`, each followed by
/// fdatasync (a write that changes the file's size, so the sync also commits metadata — what a
/// log append costs when the log is not preallocated).
func fdatasyncLatency(directory: String, count: Int = 500) throws -> (p50: Double, p99: Double) {
    let path = directory + "/fdatasync-probe"
    let fd = open(path, O_CREAT | O_WRONLY | O_APPEND | O_TRUNC, 0o644)
    guard fd >= 0 else { throw BenchError("cannot create \(path): errno \(errno)") }
    defer { close(fd); unlink(path) }
    let block = [UInt8](repeating: 0xA5, count: 4096)
    var samples: [Double] = []
    samples.reserveCapacity(count)
    for i in 0..<(count + 20) {
        let start = nowNanos()
        let written = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let rc = fdatasync(fd)
        let elapsed = Double(nowNanos() - start) / 1e9
        guard written == 4096, rc == 0 else { throw BenchError("probe write/fdatasync failed: errno \(errno)") }
        if i >= 20 { samples.append(elapsed) }  // the first few settle the file's allocation
    }
    return (percentile(samples, 0.50), percentile(samples, 0.99))
}

/// The child side of workload 8: `__open-read ENGINE DIR HEXKEY`. Opens the store as an app would
/// (read-write, durable settings), reads the key, closes it; prints "OPEN_READ_NS CLOSE_NS LENGTH".
func childOpenRead(_ args: [String]) -> Int32 {
    guard args.count == 3, let key = bytes(fromHex: args[2]) else {
        FileHandle.standardError.write(Data("usage: __open-read ENGINE DIR HEXKEY\n".utf8))
        return 2
    }
    do {
        let start = nowNanos()
        let store: any Subject
        switch args[0] {
        case DocStoreSubject.name: store = try DocStoreSubject(directory: args[1], mode: .durable, create: false)
        case LMDBSubject.name: store = try LMDBSubject(directory: args[1], mode: .durable, create: false)
        case SQLiteSubject.name: store = try SQLiteSubject(directory: args[1], mode: .durable, create: false)
        default: throw BenchError("unknown engine \(args[0])")
        }
        let length = try store.readOne(key)
        let opened = nowNanos()
        try store.close()
        let closed = nowNanos()
        print("\(opened - start) \(closed - opened) \(length ?? -1)")
        return 0
    } catch {
        FileHandle.standardError.write(Data("__open-read \(args[0]) failed: \(error)\n".utf8))
        return 1
    }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
}

func bytes(fromHex s: String) -> [UInt8]? {
    let chars = Array(s.utf8)
    guard chars.count % 2 == 0 else { return nil }
    var out = [UInt8]()
    var i = 0
    while i < chars.count {
        guard let b = UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
        out.append(b)
        i += 2
    }
    return out
}

