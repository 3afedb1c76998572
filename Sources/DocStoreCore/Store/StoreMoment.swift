// StoreMoment: one commit of a store, told apart from the same LSN after a reopen — what a
// context's reads are known to be current at (Context+Conflicts K6).
//
// Invariant: two moments are equal only if they name the same commit of the same opening of
// the store's files; `reopenings` grows with every `Store.reopen()`, after which LSNs may
// repeat (the reopened store may have lost a commit that was not yet durable).

/// A commit of a store, told apart from the same LSN after a ``Store/reopen()``.
struct StoreMoment: Equatable {
    var reopenings: UInt64
    var lsn: UInt64
}
