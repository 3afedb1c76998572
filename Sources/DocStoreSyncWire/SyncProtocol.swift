// SyncProtocol: the constants both sides of sync agree on — the protocol version, the HTTP
// paths and headers, and the limits a server enforces (Format/sync.md § HTTP). Nothing here
// depends on DocStore or on a server framework, so the device side, the server and the fuzz
// targets all decode with the same code.
//
//   P1  every request carries `protocolVersion`; a server refuses a version it does not speak
//       with `unsupportedVersion` and writes nothing.
//   P2  a body larger than `maximumBodyBytes` is refused before it is decoded.

import Foundation

/// The sync protocol's version, paths and limits.
public enum SyncProtocol {
    /// The version of the messages in this module (P1).
    public static let version = 1
    /// `POST`: a ``PushRequest``, answered by a ``PushResponse``.
    public static let pushPath = "/v1/push"
    /// `POST`: a ``PullRequest``, answered by a ``PullResponse``.
    public static let pullPath = "/v1/pull"
    /// `GET`: liveness, answered by `ok`.
    public static let healthPath = "/v1/health"
    /// The largest request body a server reads (P2): 8 MiB.
    public static let maximumBodyBytes = 8 << 20
    /// The most feed entries one pull returns.
    public static let maximumPullLimit = 1_000
    /// How far (milliseconds) a pushed clock may run ahead of the server's own clock before the
    /// server holds it back to that bound (Format/sync.md § Clocks).
    public static let maximumClockDriftMilliseconds: Int64 = 60_000
}
