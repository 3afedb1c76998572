// TemporaryDirectory: a fresh directory under the system's temp folder for one test, removed when
// the value is released.

import Foundation

/// A directory that exists for the lifetime of this object.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(_ name: String = "docstore") {
        path = NSTemporaryDirectory() + "/\(name)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
