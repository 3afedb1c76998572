// DocStoreCore: the object-graph store, which `import DocStore` re-exports along with the
// @Model macros (the DocStore module holds only their declarations, so this layer and what is
// fuzzed builds without the macro plugin). Its folders: Schema/ (entity, attribute
// and relationship descriptions and their checks), Model/ (ManagedObject, ObjectID, stored values,
// the runtime of the @Model macro), Store/ (the catalog, records, entity info, the row cache) and
// Context/ (insert, faulting, relationships, delete rules, save, fetch, undo, background
// contexts), Query/ (predicates, planning, fetching). This file names the engine the layer stands
// on, so that the layer order docstore → DocStore → DocStoreCore → DocStoreEngine is fixed.

public import DocStoreEngine

/// The storage engine DocStore is built on.
public typealias StorageEngine = Engine
