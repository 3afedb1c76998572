// FuzzPredicate: libFuzzer entry point; the logic is DocStoreTestSupport.FuzzTargets.predicate.
import DocStoreTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    if let finding = FuzzTargets.predicate(bytes) { fatalError("FuzzPredicate finding: \(finding)") }
    return 0
}
