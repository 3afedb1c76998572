// ContextLink: how a context's objects (and its undo manager) reach it without keeping it alive.
// One per context, made with it; each of its objects holds the link strongly, and the link holds
// the context unretained.
//
//   L1 `context` is the context from the end of its initializer to the first line of its deinit,
//      and nil from then on: an object that outlives its context reads nil, as a weak reference
//      would give it.
//   L2 Nothing else reads `context` while the deinit runs: a context and its objects live in one
//      isolation domain (neither is Sendable), and the deinit clears it before anything else —
//      before the context's own fields (its changed objects among them) are released.
//
// Why not `weak var context` in each object, as before: a weakly referenced object gets a side
// table, and every retain and release of it then takes the runtime's slow path. Objects retain
// their context on every read of an unloaded property and at every fault made, fired and freed,
// so that was about a seventh of fetching 100 000 notes and reading them; the link is retained
// by the fast path, and a context no longer has a side table.

final class ContextLink {
    /// The context (L1); unretained, cleared by the context's deinit.
    @exclusivity(unchecked) unowned(unsafe) var context: Context?

    init() {}
}
