// CatalogCache: the catalog entries read transactions looked up, shared between them. A read
// transaction starts knowing no tree, so a query that opens one read transaction per fetch looked
// up its index and records trees in the catalog B-tree every time (8 % of a find-or-create run).
//
// Invariant: entries belong to one committed state, named by its LSN and catalog root. Within one
// Engine a commit is the only thing that changes the catalog, and it publishes a new, larger LSN
// (Engine.write), so an entry cached for (lsn, root) is what the catalog B-tree of that snapshot
// holds. A lookup for another state misses; a lookup that remembers a newer state drops the older
// entries. Write transactions do not use it (their catalog changes as they write).

final class CatalogCache: Sendable {
    private struct State {
        var lsn = LSN(rawValue: 0)
        var root = PageNumber.none
        var entries: [String: TreeInfo?] = [:]
    }

    private let state = Locked(State())

    /// The entry of `name` in the snapshot (lsn, root), if known: `.some(nil)` for "no such tree".
    func entry(_ name: String, lsn: LSN, root: PageNumber) -> TreeInfo?? {
        state.withLock { s in s.lsn == lsn && s.root == root ? s.entries[name] : nil }
    }

    /// Remembers `info` as the entry of `name` in the snapshot (lsn, root).
    func remember(_ name: String, _ info: TreeInfo?, lsn: LSN, root: PageNumber) {
        state.withLock { s in
            if s.lsn != lsn || s.root != root {
                guard lsn >= s.lsn else { return }   // an older snapshot's reader: keep the newer
                s = State(lsn: lsn, root: root, entries: [:])
            }
            s.entries[name] = .some(info)
        }
    }
}
