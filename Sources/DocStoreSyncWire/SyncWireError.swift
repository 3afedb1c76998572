// SyncWireError: the typed errors of the sync protocol (Format/sync.md § Errors). A server
// answers a refused request with an HTTP 4xx/5xx status and this body; a device decodes it back
// into the same value, so an app sees the server's reason, not a bare status code.

import Foundation

/// An error either side of sync reports.
public struct SyncWireError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of error; new codes may be added.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The body is not a message of this protocol (bad JSON, wrong shape, bad UTF-8).
        public static let malformed = Code(rawValue: "malformed")
        /// The body is larger than the server reads (P2).
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// The request's protocol version is not one the server speaks (P1).
        public static let unsupportedVersion = Code(rawValue: "unsupportedVersion")
        /// The device ID is taken by another device (its secret does not match).
        public static let deviceMismatch = Code(rawValue: "deviceMismatch")
        /// A field's kind differs from what the server holds for it.
        public static let schemaIncompatible = Code(rawValue: "schemaIncompatible")
        /// A value is out of range (a cursor from the future, a negative limit).
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// No such path or method.
        public static let notFound = Code(rawValue: "notFound")
        /// The server could not reach its database; retry later.
        public static let unavailable = Code(rawValue: "unavailable")
        /// Anything else on the server.
        public static let serverError = Code(rawValue: "serverError")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    /// The HTTP status a server answers this error with.
    public var httpStatus: Int {
        switch code {
        case .tooLarge: 413
        case .deviceMismatch: 403
        case .schemaIncompatible: 409
        case .notFound: 404
        case .unavailable: 503
        case .serverError: 500
        default: 400
        }
    }
}
