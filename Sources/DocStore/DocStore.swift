// DocStore: the public face of the object-graph store. The object layer (schema, managed objects,
// contexts) is issue #3; for now this module re-exports nothing and only names the engine it stands
// on, so that the layer order docstore → DocStore → DocStoreEngine is fixed from the start.

public import DocStoreEngine

/// The storage engine DocStore is built on.
public typealias StorageEngine = Engine
