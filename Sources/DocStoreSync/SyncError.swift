// SyncError: what can go wrong on the device side of sync, as one typed error an app can show
// (Format/sync.md § Errors): the network, the server's refusal (with its own typed reason), or
// the store.

import DocStoreCore
import DocStoreSyncWire
import Foundation

/// An error of the sync engine.
public struct SyncError: Error, Sendable, CustomStringConvertible {
    /// Where it came from.
    public enum Code: Sendable, Hashable {
        /// The server could not be reached, or the connection broke; sync retries.
        case transport
        /// The server refused the request; ``SyncError/serverError`` says why.
        case server
        /// The server's answer is not a message of the protocol.
        case badResponse
        /// The store refused a read or a write.
        case store
    }

    public var code: Code
    public var message: String
    /// The server's typed error, for ``Code/server``.
    public var serverError: SyncWireError?
    /// The store's error, for ``Code/store``.
    public var storeError: DocStoreError?

    init(_ code: Code, _ message: String, server: SyncWireError? = nil, store: DocStoreError? = nil) {
        self.code = code
        self.message = message
        self.serverError = server
        self.storeError = store
    }

    static func store(_ error: DocStoreError, _ doing: String) -> SyncError {
        SyncError(.store, "\(doing): \(error)", store: error)
    }

    public var description: String { "sync \(code): \(message)" }
}
