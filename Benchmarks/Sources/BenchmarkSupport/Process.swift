// Process: starting this same executable as a child (the benchmarks measure new-process costs
// and run workloads in children of their own).

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The path of this executable (the child processes are this same binary).
public func selfExecutable() throws -> URL {
    URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
}

/// Starts this executable with `arguments` through Foundation's `Process` and waits for its exit
/// (through `terminationHandler`, not `waitUntilExit()`, whose run-loop polling on Linux rounds
/// waits up to ~50 ms). Returns the wall time from just before `run()` to the exit notice, and
/// what the child printed.
public func spawnSelf(_ arguments: [String]) throws -> (seconds: Double, output: String) {
    let process = Process()
    process.executableURL = try selfExecutable()
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardInput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    let start = nowNanos()
    try process.run()
    exited.wait()
    let seconds = Double(nowNanos() - start) / 1e9
    let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
        throw BenchError("child \(arguments.joined(separator: " ")) ended with status \(process.terminationStatus): \(output)")
    }
    return (seconds, output)
}
