// WireCoding: JSON in and out for every message, with the limits and typed errors of the
// protocol (Format/sync.md § HTTP). Both sides and the fuzz targets call these, never
// JSONDecoder directly, so a malformed body always becomes `SyncWireError.malformed` naming
// where it went wrong.

import Foundation

/// Encodes and decodes the sync messages.
public enum WireCoding {
    /// The JSON bytes of a message (keys sorted, so equal messages have equal bytes).
    public static func encode<T: Encodable>(_ message: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dataEncodingStrategy = .base64
        // Encoding these types cannot fail: every value has a JSON form (doubles go as bits).
        return (try? encoder.encode(message)) ?? Data("{}".utf8)
    }

    /// Decodes a message, or throws `.tooLarge` / `.malformed` / `.unsupportedVersion` (P1, P2).
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(SyncWireError) -> T {
        guard data.count <= SyncProtocol.maximumBodyBytes else {
            throw SyncWireError(.tooLarge, "the body has \(data.count) bytes; at most \(SyncProtocol.maximumBodyBytes) are read")
        }
        let decoder = JSONDecoder()
        decoder.dataDecodingStrategy = .base64
        let message: T
        do { message = try decoder.decode(type, from: data) } catch {
            throw SyncWireError(.malformed, "not a \(T.self): \(describe(error))")
        }
        if let versioned = message as? any VersionedMessage, versioned.protocolVersion != SyncProtocol.version {
            throw SyncWireError(.unsupportedVersion, "protocol version \(versioned.protocolVersion) is not \(SyncProtocol.version)")
        }
        return message
    }

    /// A decoding error as one line: what was wrong and at which key path.
    static func describe(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "the top level" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case DecodingError.dataCorrupted(let c): return "\(c.debugDescription) at \(path(c.codingPath))"
        case DecodingError.keyNotFound(let key, let c): return "missing \(key.stringValue) at \(path(c.codingPath))"
        case DecodingError.typeMismatch(let type, let c): return "expected \(type) at \(path(c.codingPath))"
        case DecodingError.valueNotFound(let type, let c): return "expected \(type), found null, at \(path(c.codingPath))"
        default: return "\(error)"
        }
    }
}

/// A request that names its protocol version (P1).
protocol VersionedMessage {
    var protocolVersion: Int { get }
}

extension PushRequest: VersionedMessage {}
extension PullRequest: VersionedMessage {}
