// EngineWorkload: a fixed-seed random sequence of engine transactions and checkpoints, with the
// state an ordered-map model says the store holds after each transaction. The crash campaign, the
// kill test and the differential fuzzer drive the engine with it and compare against the model.

import DocStoreEngine

/// The oracle: every tree as a plain dictionary.
public struct EngineModel: Equatable, Sendable {
    public var trees: [String: [[UInt8]: [UInt8]]] = [:]
    public init() {}

    /// Reads a whole store into model form.
    public static func read(_ engine: Engine) throws -> EngineModel {
        var model = EngineModel()
        try engine.read { txn in
            for name in try txn.treeNames() {
                var entries: [[UInt8]: [UInt8]] = [:]
                for (k, v) in try txn.entries(in: name) { entries[k] = v }
                model.trees[name] = entries
            }
        }
        return model
    }
}

/// One step of a workload.
public enum WorkloadStep: Sendable {
    case transaction([WorkloadOperation])
    case checkpoint
}

/// One operation inside a workload transaction.
public enum WorkloadOperation: Sendable {
    case createTree(String)
    case dropTree(String)
    case put(tree: String, key: [UInt8], value: [UInt8])
    case delete(tree: String, key: [UInt8])
}

/// A generated workload and the model state after each transaction.
public struct EngineWorkload: Sendable {
    public let seed: UInt64
    public let steps: [WorkloadStep]
    /// `models[i]` is the state after the first i transactions (checkpoints do not count).
    public let models: [EngineModel]

    /// Generates `transactions` transactions with a checkpoint every so often.
    /// Value sizes mix small (inline), medium (overflow pages) and large (blob files, given a
    /// blob threshold below `largeValue`).
    public init(seed: UInt64, transactions: Int, largeValue: Int = 9000, checkpointEvery: Int = 9) {
        self.seed = seed
        var rng = SplitMix64(seed: seed)
        var steps: [WorkloadStep] = []
        var model = EngineModel()
        var models = [model]
        let treeNames = ["alpha", "beta", "gamma"]
        for t in 0..<transactions {
            var ops: [WorkloadOperation] = []
            if t == 0 {
                for name in treeNames { ops.append(.createTree(name)); model.trees[name] = [:] }
            }
            let n = Int(rng.next() % 12) + 1
            for _ in 0..<n {
                let tree = treeNames[Int(rng.next() % UInt64(treeNames.count))]
                let roll = rng.next() % 100
                if roll < 3 && t > 0 {
                    ops.append(.dropTree(tree))
                    ops.append(.createTree(tree))
                    model.trees[tree] = [:]
                } else if roll < 25, let victim = model.trees[tree]?.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }).first(where: { _ in rng.next() % 3 == 0 }) {
                    ops.append(.delete(tree: tree, key: victim))
                    model.trees[tree]?[victim] = nil
                } else {
                    let key = Array("k\(rng.next() % 400)".utf8)
                    let sizeRoll = rng.next() % 100
                    let size: Int
                    if sizeRoll < 80 { size = Int(rng.next() % 120) }
                    else if sizeRoll < 95 { size = 1500 + Int(rng.next() % 4000) }
                    else { size = largeValue + Int(rng.next() % 3000) }
                    var value = rng.bytes(min(size, 64))
                    while value.count < size { value.append(UInt8(value.count % 7)) }
                    ops.append(.put(tree: tree, key: key, value: value))
                    model.trees[tree]?[key] = value
                }
            }
            steps.append(.transaction(ops))
            models.append(model)
            if (t + 1) % checkpointEvery == 0 { steps.append(.checkpoint) }
        }
        self.steps = steps
        self.models = models
    }

    /// Runs the workload until it ends or a call throws. Returns how many transactions were
    /// acknowledged (their `write` returned) and how many were attempted.
    public func run(on engine: Engine) -> (acknowledged: Int, attempted: Int, error: (any Error)?) {
        var acknowledged = 0
        var attempted = 0
        for step in steps {
            do {
                switch step {
                case .checkpoint:
                    try engine.checkpoint()
                case .transaction(let ops):
                    attempted += 1
                    try engine.write { txn in
                        for op in ops {
                            switch op {
                            case .createTree(let name): try txn.createTree(named: name)
                            case .dropTree(let name): try txn.dropTree(named: name)
                            case let .put(tree, key, value): try txn.put(value, for: key, in: tree)
                            case let .delete(tree, key): try txn.delete(key, in: tree)
                            }
                        }
                    }
                    acknowledged += 1
                }
            } catch {
                return (acknowledged, attempted, error)
            }
        }
        return (acknowledged, attempted, nil)
    }

    /// The index i such that `models[i] == state`, if any (the latest, should two be equal).
    public func index(of state: EngineModel) -> Int? {
        models.lastIndex(of: state)
    }
}
