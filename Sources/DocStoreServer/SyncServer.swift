// SyncServer: docstore-server's HTTP side (Hummingbird 2) over SyncDatabase. Every request is
// decoded with the wire module's limits; every refusal is a 4xx/5xx with a SyncWireError body,
// and the server goes on serving (Format/sync.md § HTTP).
//
//   SV1 a request body is read up to SyncProtocol.maximumBodyBytes; past that, 413 and nothing
//       decoded or written.
//   SV2 an error that is not the request's fault (PostgreSQL down or restarting) is 503
//       `unavailable`: the device retries; nothing half-applied stays (F3).
//   SV3 a request the database does not finish within `requestDeadline` (10 s) is answered 503
//       `unavailable` then, rather than hold the device until its own timeout while PostgreSQL
//       is down or restarting; the work is cancelled, and its transaction rolls back — or, if
//       it had committed, the device's retry finds it applied (F2).

import DocStoreSyncWire
import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The sync server: PostgreSQL client, tables and routes.
public struct SyncServer: Sendable {
    public let configuration: ServerConfiguration
    let logger: Logger

    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "docstore-server")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs until the process is told to stop (SIGTERM, SIGINT); `onListening` gets the port.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let pg = PostgresClient.Configuration(
            host: configuration.postgresHost, port: configuration.postgresPort, username: configuration.postgresUser,
            password: configuration.postgresPassword, database: configuration.postgresDatabase, tls: .disable)
        var options = pg
        options.options.maximumConnections = configuration.maximumConnections
        let client = PostgresClient(configuration: options, backgroundLogger: logger)
        let database = SyncDatabase(client: client, logger: logger)
        let router = Router()
        Self.addRoutes(to: router, database: database, logger: logger)
        var app = Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "docstore-server"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        app.addServices(client)
        app.beforeServerStarts {
            // PostgreSQL may still be starting: try for a while before giving up.
            var attempt = 0
            while true {
                do { try await database.prepare(); return } catch {
                    attempt += 1
                    if attempt >= 50 { throw error }
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
        }
        // SIGTERM or SIGINT: stop accepting, let requests in flight finish for up to 10 s, then
        // cancel them (one waiting for a PostgreSQL that is down would hold the exit for ever).
        var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(10)
        group.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: group).run()
    }

    static func addRoutes(to router: Router<BasicRequestContext>, database: SyncDatabase, logger: Logger) {
        router.get(RouterPath(SyncProtocol.healthPath)) { _, _ in "ok" }
        router.post(RouterPath(SyncProtocol.pushPath)) { request, _ -> Response in
            await answer(logger) {
                let push = try WireCoding.decode(PushRequest.self, from: try await body(of: request))
                guard !push.device.isEmpty, push.device.utf8.count <= 200 else {
                    throw SyncWireError(.invalidArgument, "a device ID has 1 to 200 bytes")
                }
                return try await withDeadline { WireCoding.encode(try await database.push(push, now: now())) }
            }
        }
        router.post(RouterPath(SyncProtocol.pullPath)) { request, _ -> Response in
            await answer(logger) {
                let pull = try WireCoding.decode(PullRequest.self, from: try await body(of: request))
                return try await withDeadline { WireCoding.encode(try await database.pull(pull, now: now())) }
            }
        }
    }

    /// How long a request may wait for the database (SV3).
    static let requestDeadline: Duration = .seconds(10)

    /// `work`, or SV3's `unavailable` once `requestDeadline` has passed — then at once: the
    /// work goes on in its own task (a query in flight cannot be interrupted; cancelling it
    /// cuts what waits for a connection), and whichever ends first answers.
    static func withDeadline(_ work: @escaping @Sendable () async throws -> Data) async throws -> Data {
        let race = DeadlineRace()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            let running = Task {
                let result: Result<Data, any Error>
                do { result = .success(try await work()) } catch { result = .failure(error) }
                if race.finish(continuation, with: result) { race.timer.withLock { $0?.cancel() } }
            }
            race.timer.withLock { $0 = Task {
                guard (try? await Task.sleep(for: requestDeadline)) != nil else { return }
                let late = SyncWireError(.unavailable, "the database did not answer within \(requestDeadline); try again")
                if race.finish(continuation, with: .failure(late)) { running.cancel() }
            } }
        }
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// The body, at most SyncProtocol.maximumBodyBytes of it (SV1).
    static func body(of request: Request) async throws -> Data {
        var request = request
        do {
            let buffer = try await request.collectBody(upTo: SyncProtocol.maximumBodyBytes)
            return Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw SyncWireError(.tooLarge, "the body is larger than \(SyncProtocol.maximumBodyBytes) bytes")
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw SyncWireError(.tooLarge, "the body is larger than \(SyncProtocol.maximumBodyBytes) bytes")
        }
    }

    /// Runs a handler and turns what it throws into a typed error response (SV2).
    static func answer(_ logger: Logger, _ handler: () async throws -> Data) async -> Response {
        do {
            do { return response(status: .ok, try await handler()) } catch let error as PostgresTransactionError {
                // A refusal thrown inside a push's transaction comes back wrapped (F3: rolled back).
                throw error.closureError ?? error
            }
        } catch let error as SyncWireError {
            return response(status: HTTPResponse.Status(code: error.httpStatus), WireCoding.encode(error))
        } catch let error as PSQLError {
            logger.warning("database error: \(String(reflecting: error))")
            let wire = SyncWireError(.unavailable, "the database could not complete the request; try again")
            return response(status: .serviceUnavailable, WireCoding.encode(wire))
        } catch {
            logger.error("request failed: \(error)")
            let wire = SyncWireError(.unavailable, "the server could not complete the request (\(type(of: error))); try again")
            return response(status: .serviceUnavailable, WireCoding.encode(wire))
        }
    }

    static func response(status: HTTPResponse.Status, _ body: Data) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// The work and the timer of one request under SV3's deadline: the first to finish answers.
private final class DeadlineRace: Sendable {
    let answered = Mutex(false)
    let timer = Mutex<Task<Void, Never>?>(nil)

    /// Resumes `continuation` with `result` unless the other side did; whether this one did.
    func finish(_ continuation: CheckedContinuation<Data, any Error>, with result: Result<Data, any Error>) -> Bool {
        guard answered.withLock({ done in
            defer { done = true }
            return !done
        }) else { return false }
        continuation.resume(with: result)
        return true
    }
}
