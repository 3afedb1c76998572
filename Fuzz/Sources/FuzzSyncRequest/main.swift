// FuzzSyncRequest: libFuzzer entry point; the logic is DocStoreTestSupport.SyncWireFuzzTargets.request.
import DocStoreTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    if let finding = SyncWireFuzzTargets.request(bytes) { fatalError("FuzzSyncRequest finding: \(finding)") }
    return 0
}
