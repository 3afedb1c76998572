// TestStores: the store most engine tests start from — a fresh in-memory file system with the
// directory /db and an engine opened on it — so each test states only the options it changes.

import DocStoreEngine

/// Fresh stores for tests.
public enum TestStores {
    /// Opens a new store at `/db/<name>.docstore` on a new MemoryFileSystem. `configure` adjusts
    /// the options (the file system is already set). Returns the engine, the file system (to
    /// inspect or snapshot its files) and the options (to reopen with).
    public static func memory(
        _ name: String = "Test", configure: (inout EngineOptions) -> Void = { _ in }
    ) throws -> (engine: Engine, fileSystem: MemoryFileSystem, options: EngineOptions, path: String) {
        let fs = MemoryFileSystem()
        try fs.createDirectory("/db")
        var options = EngineOptions()
        options.fileSystem = fs
        configure(&options)
        let path = "/db/\(name).docstore"
        return (try Engine.open(at: path, options: options), fs, options, path)
    }

    /// A store `memory(_:configure:)` made, opened again from a copy of its files as they are
    /// now, as after a crash: nothing was closed, so recovery replays the WAL.
    public static func reopenedAfterCrash(
        _ store: (engine: Engine, fileSystem: MemoryFileSystem, options: EngineOptions, path: String)
    ) throws -> Engine {
        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        return try Engine.open(at: store.path, options: options)
    }
}
