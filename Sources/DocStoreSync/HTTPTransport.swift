// HTTPTransport: the device side's HTTP client — Foundation's URLSession (FoundationNetworking
// on Linux), so an app that syncs pulls in no server framework. A 4xx/5xx answer is decoded
// into the server's typed error. A request is never cancelled midway (see post).

import DocStoreSyncWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct HTTPTransport: Sendable {
    let server: URL
    let timeout: TimeInterval

    /// POSTs `message` to `path` and decodes the answer as `Response`.
    func post<Request: Encodable, Response: Decodable>(_ path: String, _ message: Request, as: Response.Type) async throws(SyncError) -> Response {
        var request = URLRequest(url: server.appendingPathComponent(String(path.dropFirst())))
        request.httpMethod = "POST"
        request.timeoutInterval = timeout
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = WireCoding.encode(message)
        let data: Data
        let response: URLResponse
        // The request runs in a task of its own, which the caller's cancellation (stop()) does
        // not reach: FoundationNetworking can deadlock cancelling a request that is completing
        // (URLSessionTask.cancel waits for the session's queue while the completion waits for
        // the cancelled task's status lock — seen in SyncEngine.stop()). A request ends by its
        // answer or its timeout.
        let exchange = Task { try await URLSession.shared.data(for: request) }
        do { (data, response) = try await exchange.value } catch {
            throw SyncError(.transport, "\(server.absoluteString)\(path): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            if let wire = try? WireCoding.decode(SyncWireError.self, from: data) {
                throw SyncError(.server, "the server answered \(status): \(wire)", server: wire)
            }
            throw SyncError(status >= 500 ? .transport : .badResponse, "the server answered \(status) without a sync error body")
        }
        do { return try WireCoding.decode(Response.self, from: data) } catch {
            throw SyncError(.badResponse, "the server's answer to \(path) is not a \(Response.self): \(error.message)")
        }
    }
}
