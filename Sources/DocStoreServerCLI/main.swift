// docstore-server: the sync server (README § Sync). Stateless: all it keeps is in PostgreSQL,
// so several processes can serve one database.
//
//   docstore-server --postgres postgres://docstore@127.0.0.1:5432/postgres --listen 127.0.0.1:8080
//
// Prints `docstore-server listening on HOST:PORT` once it serves (with port 0, the port it got).

import ArgumentParser
import DocStoreServer
import Foundation

@main
struct DocStoreServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docstore-server",
        abstract: "Serves DocStore sync over HTTP, with its state in PostgreSQL.")

    @Option(help: "The PostgreSQL database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
    var postgres: String

    @Option(help: "Where to listen: HOST:PORT (port 0 picks a free one).")
    var listen = "127.0.0.1:8080"

    func run() async throws {
        let configuration: ServerConfiguration
        do { configuration = try ServerConfiguration(listen: listen, postgres: postgres) } catch {
            throw ValidationError(error.description)
        }
        let host = configuration.host
        try await SyncServer(configuration: configuration).run { port in
            FileHandle.standardOutput.write(Data("docstore-server listening on \(host):\(port)\n".utf8))
        }
    }
}
