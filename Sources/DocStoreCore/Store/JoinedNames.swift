// JoinedNames: strings joined with a separator, written out by hand for the code a store runs
// when it opens. The standard `joined(separator:)` asks the runtime for `[String]: Collection`'s
// witness the first time a process calls it, and the runtime answers by scanning every
// protocol conformance record of every loaded library (about a tenth of opening a store in a
// new process). The result is the same string.

extension Array where Element == String {
    /// The elements with `separator` between each two, as `joined(separator:)` gives.
    func joinedNames(_ separator: String) -> String {
        var out = ""
        for (i, part) in enumerated() {
            if i > 0 { out += separator }
            out += part
        }
        return out
    }
}
