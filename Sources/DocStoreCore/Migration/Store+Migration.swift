// Store+Migration: opening a store through a migration plan — finding the version the file
// holds, walking every stage to the plan's last version in order, and reporting progress; and
// the dry run that says what it would do.
//
//   SM1 the source version is known from the file alone: the catalog holds the schema it was
//       written with (and every earlier one, Format/schema.md § Versions). It is matched to the
//       plan's versions by number and schema; a schema the plan does not list is migrated
//       lightweight from what the file holds to the next version the plan has.
//   SM2 a stage either changes only the catalog and whole trees, in one engine transaction
//       (instant, MigrationPlanner MP3), or rewrites the objects into a copy that replaces the
//       store atomically (MigrationCopier, StoreFileSwap). Either way a crash leaves the store
//       at the stage's start or its end, never between.
//   SM3 a plan is checked before anything is read: versions ascend, each once; stages go from a
//       listed version to a later one.

import Foundation
public import DocStoreEngine

/// How far a migration is (delivered to the `progress` callback of ``Store/init(url:migrationPlan:durability:progress:)``).
public struct MigrationProgress: Sendable, Hashable {
    /// The stage being run (1-based) and how many the migration has.
    public var stage: Int
    public var stageCount: Int
    public var fromVersion: SchemaVersion?
    public var toVersion: SchemaVersion?
    /// Objects rewritten so far in this stage, of `totalUnitCount` (both 0 for an instant stage).
    public var completedUnitCount: Int
    public var totalUnitCount: Int
}

/// What a migration would do (``Store/migrationReport(url:migrationPlan:)``): each stage's
/// versions, changes and costs, and how many objects a rewriting stage would rewrite.
public struct MigrationReport: Sendable, CustomStringConvertible {
    public struct Stage: Sendable {
        public var fromVersion: SchemaVersion?
        public var toVersion: SchemaVersion?
        public var isCustom: Bool
        public var changes: [MigrationChange]
        /// Whether the objects are rewritten (into a copy that replaces the store).
        public var rewritesObjects: Bool
        /// Objects in the store at the start of the stage.
        public var objectCount: Int
    }

    /// The version the store holds (nil: a store made without a versioned schema whose schema
    /// the plan does not list).
    public var storeVersion: SchemaVersion?
    /// The stages, in the order they would run; empty when the store is current.
    public var stages: [Stage]
    /// Whether the migration was rehearsed on a scratch copy of the store (when a stage
    /// rewrites objects), so that ``problems`` holds what the data would make it refuse.
    public var rehearsed = false
    /// What the rehearsal met — objects a new version refuses, values that do not convert,
    /// constraints the data breaks — each naming the object; empty when it would succeed.
    public var problems: [DocStoreError.Problem] = []

    public var description: String {
        guard !stages.isEmpty else { return "the store is at version \(storeVersion.map { "\($0)" } ?? "?"): nothing to migrate" }
        var lines = ["store at version \(storeVersion.map { "\($0)" } ?? "unknown (its own schema)"):"]
        for (i, s) in stages.enumerated() {
            lines.append("stage \(i + 1): \(s.fromVersion.map { "\($0)" } ?? "stored schema") → \(s.toVersion.map { "\($0)" } ?? "?")\(s.isCustom ? " (custom)" : ""), \(s.rewritesObjects ? "rewrites \(s.objectCount) objects" : "instant")")
            for c in s.changes { lines.append("  \(c)") }
        }
        if rehearsed {
            lines.append(problems.isEmpty ? "rehearsed on a copy: it succeeds" : "rehearsed on a copy: it fails with \(problems.count) problem\(problems.count == 1 ? "" : "s"):")
            for p in problems { lines.append("  \(p)") }
        }
        return lines.joined(separator: "\n")
    }
}

extension Store {
    /// Opens the store at `url` at the last version of `migrationPlan`, migrating it first
    /// through every stage from the version it holds (SwiftData's
    /// `ModelContainer(for:migrationPlan:)`). A new store is created at the last version.
    ///
    /// - Parameter progress: called as each stage starts and as a rewriting stage advances.
    /// - Throws: ``DocStoreError/Code/invalidSchema`` for a plan whose versions or stages are out
    ///   of order, or a version whose schema is invalid; ``DocStoreError/Code/validation``
    ///   naming the objects the new version would refuse (a new required value without a
    ///   default, a value that does not convert, a to-many that becomes to-one with several
    ///   objects); ``DocStoreError/Code/uniqueConstraint`` for a new uniqueness constraint the
    ///   data breaks (naming both objects); ``DocStoreError/Code/storage``. After an error the
    ///   store is as it was before the failing stage (earlier stages stay done).
    public convenience init(url: URL, migrationPlan: any SchemaMigrationPlan.Type, durability: Durability = .full,
                            progress: ((MigrationProgress) -> Void)? = nil) throws(DocStoreError) {
        var options = EngineOptions()
        options.durability = durability
        try self.init(path: url.filePath, url: url, migrationPlan: migrationPlan, options: options, progress: progress)
    }

    convenience init(path: String, url: URL?, migrationPlan: any SchemaMigrationPlan.Type, options: EngineOptions,
                     progress: ((MigrationProgress) -> Void)?) throws(DocStoreError) {
        guard let target = migrationPlan.schemas.last else {
            throw DocStoreError(.invalidSchema, "the migration plan lists no schema versions")
        }
        try Self.migrate(path: path, plan: migrationPlan, options: options, dryRun: false, progress: progress)
        try self.init(path: path, url: url, schema: target.schema, classes: Store.classes(target.models), options: options,
                      versionIdentifier: target.versionIdentifier)
    }

    /// What opening the store at `url` with `migrationPlan` would do, without changing it (a
    /// dry run; the store is opened read-only). When a stage rewrites objects and `rehearse` is
    /// true, the migration is also run on a scratch copy of the store (in the temporary
    /// directory, deleted after), so the report names every object the data would make it
    /// refuse (``MigrationReport/problems``) — it takes as long as the migration.
    public static func migrationReport(url: URL, migrationPlan: any SchemaMigrationPlan.Type,
                                       rehearse: Bool = true) throws(DocStoreError) -> MigrationReport {
        var options = EngineOptions()
        options.readOnly = true
        var report = try migrate(path: url.filePath, plan: migrationPlan, options: options, dryRun: true, progress: nil)
        guard rehearse, report.stages.contains(where: \.rewritesObjects) else { return report }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rehearsal-\(UUID().uuidString).docstore").path
        defer {
            for file in [scratch, scratch + "-wal"] { try? FileManager.default.removeItem(atPath: file) }
            try? FileManager.default.removeItem(atPath: scratch + "-blobs")
        }
        do {
            let source = try Engine.open(at: url.filePath, options: options)
            defer { try? source.close() }
            let snapshot = try source.beginRead()
            defer { snapshot.close() }
            var copyOptions = EngineOptions()
            copyOptions.durability = .off
            copyOptions.continuing = (source.storeID, snapshot.lsn)
            let copy = try Engine.open(at: scratch, options: copyOptions)
            _ = try copyTrees(from: snapshot, into: copy)
            try copy.close()
        } catch {
            throw storageError(error)
        }
        report.rehearsed = true
        var rehearsal = EngineOptions()
        rehearsal.durability = .off
        do {
            try migrate(path: scratch, plan: migrationPlan, options: rehearsal, dryRun: false, progress: nil)
        } catch {
            report.problems = error.problems.isEmpty ? [DocStoreError.Problem(entity: error.entity ?? "store", property: error.property, error.message)] : error.problems
        }
        return report
    }

    /// SM3.
    private static func check(_ plan: any SchemaMigrationPlan.Type) throws(DocStoreError) {
        let versions = plan.schemas.map { $0.versionIdentifier }
        var problem: String?
        for i in versions.indices.dropFirst() where problem == nil && !(versions[i - 1] < versions[i]) {
            problem = "the migration plan's versions must ascend, each once: \(versions[i - 1]) comes before \(versions[i])"
        }
        for stage in plan.stages where problem == nil {
            let from = stage.from.versionIdentifier, to = stage.to.versionIdentifier
            if !versions.contains(from) || !versions.contains(to) || !(from < to) {
                problem = "a stage goes from \(from) to \(to); stages go from a version the plan lists to a later one"
            }
        }
        if let problem { throw DocStoreError(.invalidSchema, problem) }
        for version in plan.schemas { try version.schema.validate() }
    }

    @discardableResult
    static func migrate(path: String, plan: any SchemaMigrationPlan.Type, options: EngineOptions, dryRun: Bool,
                        progress: ((MigrationProgress) -> Void)?) throws(DocStoreError) -> MigrationReport {
        try check(plan)
        let fs = options.fileSystem
        if !dryRun {
            do { try StoreFileSwap.recover(path, fs) } catch { throw storageError(error) }
        }
        guard fs.fileExists(path) else { return MigrationReport(storeVersion: nil, stages: []) }
        var engine: Engine
        do { engine = try Engine.open(at: path, options: options) } catch {
            throw DocStoreError(.storage, "the store at \(path) could not be opened: \(error.message)", underlying: error)
        }
        var report = MigrationReport(storeVersion: nil, stages: [])
        do {
            guard var catalog = try readCatalog(engine) else {
                try engine.close()
                return report
            }
            let schemas = plan.schemas
            // SM1: where the file stands in the plan.
            var position: Int?
            for (i, version) in schemas.enumerated().reversed() where version.schema.differences(from: catalog.schema).isEmpty {
                if catalog.versionIdentifier == nil || catalog.versionIdentifier == version.versionIdentifier { position = i; break }
            }
            report.storeVersion = position.map { schemas[$0].versionIdentifier } ?? catalog.versionIdentifier
            var steps: [(to: Int, stage: MigrationStage?)] = []
            var at: Int
            if let position {
                at = position
            } else {
                let next = catalog.versionIdentifier.flatMap { v in schemas.firstIndex { $0.versionIdentifier > v } } ?? schemas.count - 1
                steps.append((next, nil))
                at = next
            }
            while at < schemas.count - 1 {
                if let stage = plan.stages.first(where: { $0.from.versionIdentifier == schemas[at].versionIdentifier }),
                   let to = schemas.firstIndex(where: { $0.versionIdentifier == stage.to.versionIdentifier }) {
                    steps.append((to, stage))
                    at = to
                } else {
                    steps.append((at + 1, nil))
                    at += 1
                }
            }
            for (n, (to, stage)) in steps.enumerated() {
                let version = schemas[to]
                var step = MigrationPlanner.plan(from: catalog, to: version.schema, version: version.versionIdentifier)
                var custom: CustomMigration?
                // Handlers usually capture the migration they were registered on (to call
                // insertObject): a cycle, broken once the stage is done.
                defer { custom?.handlers.removeAll() }
                if case .custom(_, _, let migrate)? = stage {
                    step.isCustom = true
                    let registered = CustomMigration()
                    migrate(registered)
                    custom = registered
                }
                let objects = try objectCount(engine, catalog)
                report.stages.append(MigrationReport.Stage(
                    fromVersion: catalog.versionIdentifier ?? (n == 0 ? report.storeVersion : nil), toVersion: version.versionIdentifier,
                    isCustom: step.isCustom, changes: step.changes, rewritesObjects: step.rewrites, objectCount: objects))
                if dryRun {
                    catalog = step.to
                    continue
                }
                var current = MigrationProgress(stage: n + 1, stageCount: steps.count, fromVersion: catalog.versionIdentifier,
                                                toVersion: version.versionIdentifier, completedUnitCount: 0,
                                                totalUnitCount: step.rewrites ? objects : 0)
                progress?(current)
                if step.rewrites {
                    engine = try rewrite(engine, path: path, step: step, classes: Store.classes(version.models), custom: custom,
                                         options: options) { done in
                        current.completedUnitCount = min(done, max(objects, done))
                        current.totalUnitCount = max(objects, done)
                        progress?(current)
                    }
                } else {
                    try applyInPlace(engine, step)
                }
                catalog = step.to
            }
            // A store already at the last version, but not yet numbered, is numbered now.
            if !dryRun, steps.isEmpty, catalog.versionIdentifier != schemas[schemas.count - 1].versionIdentifier {
                catalog.versionIdentifier = schemas[schemas.count - 1].versionIdentifier
                let bytes = try catalog.encoded()
                try write(engine) { txn in try txn.put(bytes, for: Catalog.catalogKey, in: Catalog.tree) }
            }
            try engine.close()
        } catch {
            try? engine.close()
            throw storageError(error)
        }
        return report
    }

    private static func readCatalog(_ engine: Engine) throws -> Catalog? {
        let bytes: [UInt8]? = try engine.read { txn in
            guard try txn.treeExists(Catalog.tree) else { return nil }
            return try txn.get(Catalog.catalogKey, in: Catalog.tree)
        }
        return try bytes.map { (b) throws(DocStoreError) in try Catalog.decode(b) }
    }

    private static func objectCount(_ engine: Engine, _ catalog: Catalog) throws -> Int {
        let model = StoreModel(catalog: catalog, classes: [:])
        return try engine.read { txn in
            var n = 0
            for tree in Set(model.entities.map(\.recordsTree)) where try txn.treeExists(tree) { n += try txn.count(in: tree) }
            return n
        }
    }

    /// SM2, instant: the new catalog, the trees the new version adds, and the trees no version
    /// uses any more dropped — one transaction.
    private static func applyInPlace(_ engine: Engine, _ step: MigrationStep) throws {
        let oldTrees = Set(StoreModel(catalog: step.from, classes: [:]).treeNames)
        let newTrees = StoreModel(catalog: step.to, classes: [:]).treeNames
        let bytes = try step.to.encoded()
        try write(engine) { txn in
            try txn.put(bytes, for: Catalog.catalogKey, in: Catalog.tree)
            for tree in newTrees { try txn.createTreeIfMissing(tree) }
            for tree in oldTrees.subtracting(newTrees).sorted() where try txn.treeExists(tree) { try txn.dropTree(named: tree) }
        }
    }

    /// SM2, rewriting: the copy is built beside the store, then swapped in; returns the engine
    /// open on the new store.
    private static func rewrite(_ engine: Engine, path: String, step: MigrationStep, classes: [String: ManagedObject.Type],
                                custom: CustomMigration?, options: EngineOptions, progress: @escaping (Int) -> Void) throws -> Engine {
        let fs = options.fileSystem
        try StoreFileSwap.removeStaging(path, fs)
        var copyOptions = options
        copyOptions.continuing = (engine.storeID, engine.lastCommittedLSN)
        let copy = try Engine.open(at: StoreFileSwap.staging(path), options: copyOptions)
        do {
            let copier = MigrationCopier(
                old: engine, oldCatalog: step.from, oldModel: StoreModel(catalog: step.from, classes: [:]),
                new: copy, newCatalog: step.to, newModel: StoreModel(catalog: step.to, classes: classes),
                storeID: engine.storeID, custom: custom, progress: progress)
            try copier.run()
            try copy.close()
        } catch {
            try? copy.close()
            try? StoreFileSwap.removeStaging(path, fs)
            throw error
        }
        try engine.close()
        try StoreFileSwap.commit(path, fs)
        return try Engine.open(at: path, options: options)
    }
}
