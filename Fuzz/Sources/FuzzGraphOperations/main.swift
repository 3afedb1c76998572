// FuzzGraphOperations: libFuzzer entry point; the logic is DocStoreQueryTestSupport's
// FuzzTargets.graphOperations (the object-graph differential target).
import DocStoreQueryTestSupport
import DocStoreTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    if let finding = FuzzTargets.graphOperations(bytes) { fatalError("FuzzGraphOperations finding: \(finding)") }
    return 0
}
