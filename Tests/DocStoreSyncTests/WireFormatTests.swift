// The sync protocol's values and rules without a server: wire values round-trip every stored
// type, the hybrid clock never runs backwards, the merge rules of Format/sync.md § Conflicts,
// and the fuzz corpus decodes (so the fuzzers start from valid messages).

import DocStore
import DocStoreSyncWire
import DocStoreTestSupport
import Foundation
import Testing
@testable import DocStoreServer
@testable import DocStoreSync

@Suite struct WireFormatTests {
    @Test func everyStoredValueSurvivesTheWire() throws {
        let values: [StoredValue] = [
            .null, .bool(true), .int(Int64.min), .double(-0.0), .double(.nan), .double(.infinity), .float(1.5),
            .decimal(Decimal(string: "123456789.000000001")!), .string("ünïcødé ✓"), .date(Date(timeIntervalSince1970: 1.000_001)),
            .uuid(UUID()), .url(URL(string: "https://example.com/a?b=c")!), .data(Data([0, 1, 255])), .document(Data(#"{"a":1}"#.utf8)),
        ]
        for value in values {
            let wire = try #require(WireValue(value))
            let decoded = try WireCoding.decode(WireValue.self, from: WireCoding.encode(wire))
            let back = try #require(decoded.storedValue)
            if case .double(let d) = value, d.isNaN {
                guard case .double(let e) = back else { Issue.record("NaN came back as \(back)"); continue }
                #expect(e.isNaN)
            } else {
                #expect(back == value)
            }
        }
        #expect(WireValue(.reference(7)) == nil)     // references are mapped to global IDs, not sent as keys
    }

    @Test func anOrderTravelsAsAnArrayOfGlobalIDs() throws {
        let ids = [UUID(), UUID(), UUID()]
        let json = String(decoding: try WireCoding.encode(WireValue.order(ids)), as: UTF8.self)
        #expect(json == #"{"t":"order","v":["\#(ids[0].uuidString)","\#(ids[1].uuidString)","\#(ids[2].uuidString)"]}"#)
        #expect(try WireCoding.decode(WireValue.self, from: Data(json.utf8)) == .order(ids))
        #expect(WireValue.order(ids).storedValue == nil)       // not an attribute's value
        #expect(throws: SyncWireError.self) { _ = try WireCoding.decode(WireValue.self, from: Data(#"{"t":"order","v":["not an ID"]}"#.utf8)) }
    }

    @Test func theHybridClockNeverRunsBackwards() {
        var clock = HybridClock()
        let a = clock.tick(milliseconds: 1_000)
        let b = clock.tick(milliseconds: 900)          // the wall clock stepped back
        #expect(b > a)
        clock.receive(HybridTimestamp(milliseconds: 5_000, counter: 3))
        let c = clock.tick(milliseconds: 1_001)
        #expect(c > HybridTimestamp(milliseconds: 5_000, counter: 3))
        #expect(HybridTimestamp(milliseconds: 5, counter: 0).wins(over: HybridTimestamp(milliseconds: 5, counter: 0), device: "b", otherDevice: "a"))
    }

    @Test func mergeRulesMatchTheSpec() {
        let id = UUID()
        let t1 = HybridTimestamp(milliseconds: 100, counter: 0), t2 = HybridTimestamp(milliseconds: 200, counter: 0)
        let insert = ObjectChange(entity: "Note", id: id, kind: .insert, fields: ["title": .string("a")])
        let created = ObjectMerge.merge(insert, into: nil, clock: t1, device: "a", transaction: 1)
        // M1: a later edit wins, an earlier one is set aside, either order gives the same state.
        let late = ObjectChange(entity: "Note", id: id, kind: .update, fields: ["title": .string("late")])
        let early = ObjectChange(entity: "Note", id: id, kind: .update, fields: ["title": .string("early")])
        let x = ObjectMerge.merge(early, into: ObjectMerge.merge(late, into: created.state, clock: t2, device: "b", transaction: 1).state,
                                  clock: t1, device: "c", transaction: 1)
        let y = ObjectMerge.merge(late, into: ObjectMerge.merge(early, into: created.state, clock: t1, device: "c", transaction: 1).state,
                                  clock: t2, device: "b", transaction: 1)
        #expect(x.state == y.state)
        #expect(x.state.fields["title"]?.value == .string("late"))
        #expect(x.conflicts.map(\.kind) == [.olderEdit])
        // M2: a delete wins over a later update; only a later insert revives the ID.
        let deleted = ObjectMerge.merge(ObjectChange(entity: "Note", id: id, kind: .delete), into: created.state, clock: t1, device: "a", transaction: 2)
        let update = ObjectMerge.merge(late, into: deleted.state, clock: t2, device: "b", transaction: 3)
        #expect(update.state == deleted.state && update.changed && update.conflicts.map(\.kind) == [.updateOfDeletedObject])   // M4: re-sent
        let revived = ObjectMerge.merge(insert, into: deleted.state, clock: t2, device: "b", transaction: 4)
        #expect(!revived.state.deleted && revived.state.fields["title"]?.value == .string("a"))
        let stale = ObjectMerge.merge(insert, into: deleted.state, clock: HybridTimestamp(milliseconds: 50, counter: 0), device: "b", transaction: 5)
        #expect(stale.state.deleted)
        // Applying the same edit twice changes nothing the second time.
        let twice = ObjectMerge.merge(late, into: y.state, clock: t2, device: "b", transaction: 1)
        #expect(!twice.changed && twice.conflicts.isEmpty)
    }

    @Test func theFuzzSeedsAreValidMessages() throws {
        for (target, files) in [("FuzzSyncRequest", ["push", "pull"]), ("FuzzSyncResponse", ["pull", "push", "error"])] {
            for file in files {
                let url = URL(fileURLWithPath: TestPostgres.packageRoot + "/Fuzz/Corpus/\(target)/\(file)")
                let bytes = [UInt8](try Data(contentsOf: url))
                let body = Data(bytes.dropFirst())
                switch (target, file) {
                case ("FuzzSyncRequest", "push"): _ = try WireCoding.decode(PushRequest.self, from: body)
                case ("FuzzSyncRequest", _): _ = try WireCoding.decode(PullRequest.self, from: body)
                case (_, "pull"): _ = try WireCoding.decode(PullResponse.self, from: body)
                case (_, "push"): _ = try WireCoding.decode(PushResponse.self, from: body)
                default: _ = try WireCoding.decode(SyncWireError.self, from: body)
                }
                #expect(target == "FuzzSyncRequest" ? SyncWireFuzzTargets.request(bytes) == nil : SyncWireFuzzTargets.response(bytes) == nil)
            }
        }
    }

    @Test func malformedAndOversizedBodiesAreTypedErrors() {
        #expect(throws: SyncWireError(.malformed, "not a PushRequest: The given data was not valid JSON. at the top level")) {
            try WireCoding.decode(PushRequest.self, from: Data("{".utf8))
        }
        let big = Data(count: SyncProtocol.maximumBodyBytes + 1)
        #expect(throws: SyncWireError.self) { try WireCoding.decode(PullRequest.self, from: big) }
        let future = WireCoding.encode(PullRequest(device: "a", after: 0))
        let bumped = String(decoding: future, as: UTF8.self).replacingOccurrences(of: "\"protocolVersion\":1", with: "\"protocolVersion\":99")
        do {
            _ = try WireCoding.decode(PullRequest.self, from: Data(bumped.utf8))
            Issue.record("a newer protocol version decoded")
        } catch {
            #expect(error.code == .unsupportedVersion)
        }
    }
}
