// TreeInfo: what the catalog tree records for each named tree (Format/page-file.md § Catalog).
// The catalog is itself a B+tree whose root is in the meta page: key = tree name (UTF-8), value =
// root page u64 | entry count u64. Names starting with "$" are the engine's own (e.g. "$blobs").

struct TreeInfo: Equatable, Sendable {
    var root: PageNumber
    var count: UInt64

    static let encodedSize = 16

    func encode() -> [UInt8] {
        var b = [UInt8]()
        b.reserveCapacity(16)
        b.appendU64(root.rawValue)
        b.appendU64(count)
        return b
    }

    static func decode(_ bytes: [UInt8], name: String, file: String) throws(EngineError) -> TreeInfo {
        guard bytes.count == encodedSize else {
            throw .corrupt("catalog entry for tree '\(name)' has \(bytes.count) bytes, expected 16", file: file)
        }
        return bytes.withUnsafeBytes { TreeInfo(root: PageNumber($0.u64(0)), count: $0.u64(8)) }
    }

    /// The tree in which the engine counts blob references: key = blob ID (u64 big-endian),
    /// value = value length (u64 little-endian).
    static let blobTreeName = "$blobs"

    /// Checks a user-supplied tree name.
    static func validateUserName(_ name: String) throws(EngineError) {
        let n = name.utf8.count
        guard n > 0, n <= 255, !name.hasPrefix("$") else {
            throw EngineError(.invalidArgument, "tree name '\(name)' must be 1-255 UTF-8 bytes and not start with '$'")
        }
    }
}

extension BlobID {
    /// The big-endian key of this blob in the "$blobs" tree (big-endian so keys sort by ID).
    var treeKey: [UInt8] { withUnsafeBytes(of: rawValue.bigEndian) { Array($0) } }
}
