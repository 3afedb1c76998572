// DocStore: the public face of the object-graph store. Its folders: Schema/ (entity, attribute
// and relationship descriptions and their checks), Model/ (ManagedObject, ObjectID, stored values,
// the runtime of the @Model macro), Store/ (the catalog, records, entity info, the row cache) and
// Context/ (insert, faulting, relationships, delete rules, save, fetch, undo, background
// contexts). This file names the engine the layer stands on, so that the layer order
// docstore → DocStore → DocStoreEngine is fixed.

public import DocStoreEngine

/// The storage engine DocStore is built on.
public typealias StorageEngine = Engine
