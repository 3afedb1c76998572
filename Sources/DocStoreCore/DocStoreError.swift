// DocStoreError: the one error type of the object layer (DocStore), shaped like EngineError: a
// `code` saying what kind of failure it is, a `message` saying what happened and how to fix it,
// the context that locates it (entity, property), an underlying engine error when there is one,
// and the source location that raised it. Schema checks collect every problem they find into the
// `problems` of one error, so a developer fixes a model in one pass.

public import DocStoreEngine

/// An error raised by DocStore's object layer.
///
/// ```swift
/// do {
///     try Schema(entities: [note, folder]).validate()
/// } catch let error as DocStoreError where error.code == .invalidSchema {
///     for problem in error.problems { print(problem) }
/// }
/// ```
public struct DocStoreError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure a ``DocStoreError`` is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, as printed in descriptions.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The schema is inconsistent: ``DocStoreError/problems`` lists every problem found.
        /// Raised by ``Schema/validate()``.
        public static let invalidSchema = Code("invalidSchema")
        /// The storage engine failed; ``DocStoreError/underlying`` holds its error.
        public static let storage = Code("storage")
        /// The store holds another schema than the one it was opened with, and no migration was
        /// given; ``DocStoreError/problems`` lists each difference. Raised by ``Store`` at open.
        public static let schemaMismatch = Code("schemaMismatch")
        /// Stored data is damaged (a record, the catalog); the message names the key and offset.
        public static let corrupt = Code("corrupt")
        /// Save found objects that break their entity's rules; ``DocStoreError/problems`` lists
        /// every one (required values, ranges, lengths, patterns, counts, custom checks).
        public static let validation = Code("validation")
        /// Save would delete an object whose relationship has the deny rule while it still
        /// reaches other objects.
        public static let deleteDenied = Code("deleteDenied")
        /// Save would give two objects the same value of a unique attribute.
        public static let uniqueConstraint = Code("uniqueConstraint")
        /// Save met objects changed or deleted in the store since this context read them, and
        /// the merge policy is ``MergePolicy/error`` (or a custom one said `.fail`);
        /// ``DocStoreError/conflicts`` lists each with both versions.
        public static let mergeConflict = Code("mergeConflict")
        /// No object with this ID exists in the store (``Context/existingObject(with:)``).
        public static let objectNotFound = Code("objectNotFound")
        /// The object was deleted, or its row is gone from the store.
        public static let objectDeleted = Code("objectDeleted")
        /// An object from another context, or not inserted into any, was used where this
        /// context's own object is needed.
        public static let wrongContext = Code("wrongContext")
        /// A property name the entity does not have.
        public static let unknownProperty = Code("unknownProperty")
        /// A value that does not fit the attribute's type, or an object of the wrong entity for
        /// a relationship.
        public static let typeMismatch = Code("typeMismatch")
        /// An object ID or URI that is not valid for this store.
        public static let invalidObjectID = Code("invalidObjectID")
        /// A predicate format string that does not parse (``DocStoreError/position`` says at
        /// which character), or arguments that do not fit it.
        public static let invalidPredicate = Code("invalidPredicate")
        /// A predicate or sort that parses but cannot run against this schema: an unknown key
        /// path, an operator applied to a value it does not take, an unbound variable. Raised
        /// when the fetch is planned, before anything is read.
        public static let invalidQuery = Code("invalidQuery")
        /// A Foundation `#Predicate` uses an expression DocStore cannot run in the store (a
        /// cast, a subscript, integer division, …); the message names it. Raised when the fetch
        /// is planned, never by falling back to loading every object.
        public static let unsupportedPredicate = Code("unsupportedPredicate")
        /// A dump that does not load (``Store/load(from:to:)``): a line that is not JSON of a
        /// dump's shape, a value that does not fit its attribute, relationships whose sides
        /// disagree, a dump cut off before its last line. The message (or each of
        /// ``DocStoreError/problems``) names the line.
        public static let invalidDump = Code("invalidDump")
    }

    /// One problem found in a schema: where it is and what is wrong.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The entity the problem is in.
        public var entity: String
        /// The attribute or relationship, when the problem is in one.
        public var property: String?
        /// What is wrong, and how to fix it.
        public var message: String

        public init(entity: String, property: String? = nil, _ message: String) {
            self.entity = entity
            self.property = property
            self.message = message
        }

        /// `Entity.property: message`.
        public var description: String {
            property.map { "\(entity).\($0): \(message)" } ?? "\(entity): \(message)"
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened and, where it helps, how to fix it.
    public var message: String
    /// The entity the failure concerns, if any.
    public var entity: String?
    /// The attribute or relationship the failure concerns, if any.
    public var property: String?
    /// Every problem found, for ``Code/invalidSchema``, ``Code/schemaMismatch`` and
    /// ``Code/validation``.
    public var problems: [Problem]
    /// The engine's error, for ``Code/storage``.
    public var underlying: EngineError?
    /// For ``Code/mergeConflict`` and ``Code/uniqueConstraint`` raised by save: each conflict,
    /// with both versions of the object.
    public var conflicts: [MergeConflict] = []
    /// Where in DocStore's source the error was raised (`#fileID:#line`).
    public var location: String
    /// For ``Code/invalidPredicate``: the offset, in characters from 0, of the place in the
    /// format string where parsing failed.
    public var position: Int?

    public init(
        _ code: Code, _ message: String, entity: String? = nil, property: String? = nil,
        problems: [Problem] = [], underlying: EngineError? = nil, position: Int? = nil,
        fileID: String = #fileID, line: Int = #line
    ) {
        self.position = position
        self.code = code
        self.message = message
        self.entity = entity
        self.property = property
        self.problems = problems
        self.underlying = underlying
        self.location = "\(fileID):\(line)"
    }

    /// `code: message (entity …, property …)`, then one line per problem.
    public var description: String {
        var context: [String] = []
        if let entity { context.append("entity \(entity)") }
        if let property { context.append("property \(property)") }
        var text = context.isEmpty ? "\(code): \(message)" : "\(code): \(message) (\(context.joined(separator: ", ")))"
        for problem in problems { text += "\n  - \(problem)" }
        for conflict in conflicts { text += "\n  - \(conflict)" }
        if let underlying { text += "\n  caused by \(underlying)" }
        return text
    }

    /// Equal when everything but the source location is equal.
    public static func == (a: DocStoreError, b: DocStoreError) -> Bool {
        a.code == b.code && a.message == b.message && a.entity == b.entity && a.property == b.property
            && a.problems == b.problems && a.underlying == b.underlying && a.position == b.position
            && a.conflicts == b.conflicts
    }
}
