// EngineBenchmark: the same workloads against DocStoreEngine, LMDB and SQLite in one process and
// one run, plus this machine's own limits; prints a Markdown table with ratios DocStore ÷ other.
//
//   EngineBenchmark [--scale S] [--repeat K] [--only ENGINE,…]
//
// Hidden subcommands (the child processes of workload 8; the binary starts itself):
//   __noop                        exits at once: the cost of an empty process start
//   __open-read ENGINE DIR HEX    opens a store, reads one key, prints the times
// See Benchmarks/README.md for what each workload measures.

import BenchmarkSupport
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "__noop" { exit(0) }
if arguments.first == "__open-read" { exit(childOpenRead(Array(arguments.dropFirst()))) }

do {
    let options = try Options(arguments)
    exit(try runBenchmark(options))
} catch {
    FileHandle.standardError.write(Data("EngineBenchmark: \(error)\n".utf8))
    exit(2)
}
