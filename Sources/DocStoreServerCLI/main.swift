// docstore-server: the sync server (README § Sync). Stateless: all it keeps is in PostgreSQL,
// so several processes can serve one database.
//
//   docstore-server --postgres postgres://docstore@127.0.0.1:5432/postgres --listen 127.0.0.1:8080
//
// Prints `docstore-server listening on HOST:PORT` once it serves (with port 0, the port it got);
// logs to standard error at --log-level (info by default).

import ArgumentParser
import DocStoreServer
import Foundation
import Logging

@main
struct DocStoreServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docstore-server",
        abstract: "Serves DocStore sync over HTTP, with its state in PostgreSQL.")

    @Option(help: "The PostgreSQL database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
    var postgres: String

    @Option(help: "Where to listen: HOST:PORT (port 0 picks a free one).")
    var listen = "127.0.0.1:8080"

    @Option(help: "What to log on standard error: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func run() async throws {
        let configuration: ServerConfiguration
        do { configuration = try ServerConfiguration(listen: listen, postgres: postgres) } catch {
            throw ValidationError(error.description)
        }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(logLevel)\"")
        }
        var logger = Logger(label: "docstore-server")
        logger.logLevel = level
        let host = configuration.host
        try await SyncServer(configuration: configuration, logger: logger).run { port in
            FileHandle.standardOutput.write(Data("docstore-server listening on \(host):\(port)\n".utf8))
        }
    }
}
