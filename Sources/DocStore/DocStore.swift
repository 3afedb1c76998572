// DocStore: the public face of the object-graph store (issue #3). So far: the schema — entity,
// attribute and relationship descriptions and their checks (Schema/) — and DocStoreError. Managed
// objects, contexts and the store come next; this file names the engine the layer stands on, so
// that the layer order docstore → DocStore → DocStoreEngine is fixed.

public import DocStoreEngine

/// The storage engine DocStore is built on.
public typealias StorageEngine = Engine
