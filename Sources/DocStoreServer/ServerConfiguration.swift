// ServerConfiguration: where docstore-server listens and which PostgreSQL it uses, parsed from
// the command line's `--listen HOST:PORT` and `--postgres postgres://USER[:PASSWORD]@HOST[:PORT]/DB`.
// Parsing never traps: a bad value is a `ConfigurationError` saying which and why.

import Foundation

/// A configuration value that does not parse.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// How docstore-server runs.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0: any free port (the server prints the one it got).
    public var port: Int
    public var postgresHost: String
    public var postgresPort: Int
    public var postgresUser: String
    public var postgresPassword: String?
    public var postgresDatabase: String
    /// Connections each server process keeps to PostgreSQL.
    public var maximumConnections = 8

    /// Parses `listen` (`HOST:PORT`) and `postgres` (a `postgres://` URL).
    public init(listen: String, postgres: String) throws(ConfigurationError) {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else {
            throw ConfigurationError("--listen \(listen): expected HOST:PORT, as 127.0.0.1:8080")
        }
        host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        self.port = port
        guard let url = URLComponents(string: postgres), url.scheme == "postgres" || url.scheme == "postgresql",
              let pgHost = url.host, !pgHost.isEmpty else {
            throw ConfigurationError("--postgres \(postgres): expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        }
        postgresHost = pgHost
        postgresPort = url.port ?? 5432
        postgresUser = url.user ?? "postgres"
        postgresPassword = url.password
        let path = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        postgresDatabase = path.isEmpty ? postgresUser : path
    }
}
