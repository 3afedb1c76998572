// ObjectBenchmark: the notes model (issue #3) through DocStore's object layer, raw SQLite (C API,
// prepared statements) and GRDB (Codable records), in one run; prints a Markdown table with the
// ratios DocStore ÷ SQLite and DocStore ÷ GRDB, and each workload's peak memory.
//
//   ObjectBenchmark [--scale S] [--repeat K] [--only DocStore,SQLite,GRDB]
//   ObjectBenchmark importWhileReading [--notes N] [--batch B] [--repeat K]   (ImportWhileReading.swift)
//   ObjectBenchmark controllerMemory [--notes N]                             (ControllerMemory.swift)
//   ObjectBenchmark batch [--notes N] [--repeat K] [--only …]                 (BatchOperations.swift)
//
// Hidden subcommands (the binary starts itself for each workload): __noop, __workload, __open, __batch;
// __parse measures the predicate parser alone (for a profiler).

import BenchmarkSupport
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "__noop" { exit(0) }
if arguments.first == "__workload" { exit(childWorkload(Array(arguments.dropFirst()))) }
if arguments.first == "__open" { exit(childOpen(Array(arguments.dropFirst()))) }
if arguments.first == "__batch" { exit(childBatch(Array(arguments.dropFirst()))) }
/// Runs a mode that is not the main table, and exits with its status.
func runMode(_ body: ([String]) throws -> Int32) -> Never {
    do { exit(try body(Array(arguments.dropFirst()))) } catch {
        FileHandle.standardError.write(Data("ObjectBenchmark: \(error)\n".utf8))
        exit(2)
    }
}
if arguments.first == "importWhileReading" { runMode(runImportWhileReading) }
if arguments.first == "controllerMemory" { runMode(runControllerMemory) }
if arguments.first == "batch" { runMode(runBatchOperations) }
if arguments.first == "__parse" {
    let (cached, cold) = try DocStoreNotes.parseCost()
    print(String(format: "cached %.2f µs, first time %.2f µs", cached * 1e6, cold * 1e6))
    exit(0)
}

do {
    exit(try runObjectBenchmark(arguments))
} catch {
    FileHandle.standardError.write(Data("ObjectBenchmark: \(error)\n".utf8))
    exit(2)
}
