// SyncTestEnvironment: a real PostgreSQL and real docstore-server processes for the sync
// tests. The cluster is DOCSTORE_TEST_POSTGRES when set (scripts/test.sh starts one), otherwise
// one this test process starts with scripts/test-postgres.sh and stops when it exits. Each
// test gets a database of its own, so tests do not see each other's feeds.

import DocStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

enum TestPostgres {
    /// The cluster's URL (of its `postgres` database).
    static func clusterURL() throws -> String {
        try cluster.get()
    }

    private static let cluster: Result<String, any Error> = Result {
        if let url = ProcessInfo.processInfo.environment["DOCSTORE_TEST_POSTGRES"], !url.isEmpty { return url }
        let dir = NSTemporaryDirectory() + "docstore-pg-\(getpid())"
        let port = 20_000 + Int(getpid() % 20_000)
        try? FileManager.default.removeItem(atPath: dir)     // a killed run's, with the same process ID
        let out = try run(["bash", packageRoot + "/scripts/test-postgres.sh", "start", dir, "\(port)"])
        ownedClusterDirectory = dir
        atexit {
            if let dir = TestPostgres.ownedClusterDirectory {
                _ = try? TestPostgres.run(["bash", TestPostgres.packageRoot + "/scripts/test-postgres.sh", "stop", dir])
                try? FileManager.default.removeItem(atPath: dir)
            }
        }
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    nonisolated(unsafe) static var ownedClusterDirectory: String?

    /// A new, empty database; its URL.
    static func newDatabase() throws -> String {
        let base = try clusterURL()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        _ = try run(["psql", base, "-v", "ON_ERROR_STOP=1", "-q", "-c", "CREATE DATABASE \(name)"])
        guard let slash = base.lastIndex(of: "/") else { throw TestEnvironmentError("bad cluster URL \(base)") }
        return base[..<slash] + "/" + name
    }

    /// The package's root folder (this file is Tests/DocStoreSyncTests/SyncTestEnvironment.swift).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Runs a command to its end; its standard output, or an error with its standard error.
    /// (posix_spawn and waitpid: Foundation's Process.waitUntilExit was seen never to return
    /// here for a child that had exited.)
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let dir = TemporaryDirectory("docstore-run")
        defer { withExtendedLifetime(dir) {} }
        let pid = try Spawn.start(arguments, output: dir.file("out"), errors: dir.file("err"))
        let status = Spawn.wait(pid)
        let out = (try? String(contentsOfFile: dir.file("out"), encoding: .utf8)) ?? ""
        guard status == 0 else {
            let err = (try? String(contentsOfFile: dir.file("err"), encoding: .utf8)) ?? ""
            throw TestEnvironmentError("\(arguments.joined(separator: " ")) exited with status \(status): \(err)")
        }
        return out
    }
}

/// Child processes by posix_spawn and waitpid, their output in files. (Foundation's
/// Process.waitUntilExit was seen never to return here for a child that had exited.)
enum Spawn {
    /// Starts `arguments` (found on PATH when not a path) with standard output and error
    /// written to the files `output` and `errors` (/dev/null when nil); its process ID.
    static func start(_ arguments: [String], output: String, errors: String? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errors ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
        guard rc == 0 else { throw TestEnvironmentError("\(arguments[0]) could not start: errno \(rc)") }
        return pid
    }

    /// Waits for `pid` to end; its wait status.
    @discardableResult
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return status
    }

    /// SIGKILL, then reap.
    static func kill(_ pid: pid_t) {
        Glibc.kill(pid, SIGKILL)
        wait(pid)
    }
}

struct TestEnvironmentError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A docstore-server process (the real executable) on a free loopback port.
final class ServerProcess {
    let process = Process()
    let url: URL
    let port: Int

    init(postgres: String, port requested: Int = 0) throws {
        process.executableURL = Bundle.main.bundleURL.appendingPathComponent("docstore-server")
        process.arguments = ["--postgres", postgres, "--listen", "127.0.0.1:\(requested)"]
        let out = Pipe()
        process.standardOutput = out
        // Its log goes to DOCSTORE_TEST_SERVER_LOGS/server-<random>.log when that is set (for a failure's
        // post-mortem), else nowhere.
        if let dir = ProcessInfo.processInfo.environment["DOCSTORE_TEST_SERVER_LOGS"] {
            let path = dir + "/server-\(UUID().uuidString.prefix(8)).log"
            FileManager.default.createFile(atPath: path, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: path)
            process.arguments? += ["--log-level", ProcessInfo.processInfo.environment["DOCSTORE_TEST_SERVER_LOG_LEVEL"] ?? "info"]
        } else {
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        }
        try process.run()
        // Wait for "docstore-server listening on 127.0.0.1:PORT".
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("\n"), Date() < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.contains("listening on"),
              let portText = line.split(separator: ":").last, let port = Int(portText) else {
            process.terminate()
            throw TestEnvironmentError("docstore-server did not start: \(text)")
        }
        self.port = port
        url = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// SIGKILL, as a crash.
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then SIGKILL if it has not exited within 20 s (its own limit is 15, SyncServer).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill() }
    }

    deinit { stop() }
}
