// FuzzPredicate: libFuzzer entry point; the logic is DocStoreQueryTestSupport.FuzzTargets.predicate
// (parse, print and parse back, then fetch through the planner against evaluation in memory), on
// one small store made once and reused across inputs.
import DocStoreCore
import DocStoreQueryTestSupport
import DocStoreTestSupport

var fixture: (Store, Context)?

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    if fixture == nil { fixture = try? FuzzTargets.predicateFixture() }
    if let finding = FuzzTargets.predicate(bytes, fixture: fixture) { fatalError("FuzzPredicate finding: \(finding)") }
    return 0
}
