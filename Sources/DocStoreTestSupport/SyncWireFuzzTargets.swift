// SyncWireFuzzTargets: the fuzz logic for the sync protocol's decoders (Format/sync.md § HTTP),
// shared by the libFuzzer targets FuzzSyncRequest and FuzzSyncResponse and the unit suite's
// corpus replay. Any bytes must give a message or a typed SyncWireError — never a trap — and a
// decoded message must encode and decode back to itself.

import DocStoreSyncWire
import Foundation

public enum SyncWireFuzzTargets {
    /// What the server decodes: push and pull requests. The first byte picks which.
    public static func request(_ bytes: [UInt8]) -> String? {
        guard let first = bytes.first else { return nil }
        let body = Data(bytes.dropFirst())
        return first & 1 == 0 ? roundTrip(PushRequest.self, body) : roundTrip(PullRequest.self, body)
    }

    /// What a device decodes: pull and push responses and the server's errors.
    public static func response(_ bytes: [UInt8]) -> String? {
        guard let first = bytes.first else { return nil }
        let body = Data(bytes.dropFirst())
        switch first % 3 {
        case 0: return roundTrip(PullResponse.self, body)
        case 1: return roundTrip(PushResponse.self, body)
        default: return roundTrip(SyncWireError.self, body)
        }
    }

    /// nil when `body` decodes to a message that round-trips, or is refused with a typed error.
    static func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ body: Data) -> String? {
        let message: T
        do { message = try WireCoding.decode(type, from: body) } catch {
            let known: [SyncWireError.Code] = [.malformed, .tooLarge, .unsupportedVersion]
            return known.contains(error.code) ? nil : "\(T.self): unexpected error code \(error.code)"
        }
        let again: T
        do { again = try WireCoding.decode(type, from: WireCoding.encode(message)) } catch {
            return "\(T.self) decoded, but its own encoding does not decode: \(error)"
        }
        return again == message ? nil : "\(T.self) changed in a round trip: \(message) → \(again)"
    }
}
