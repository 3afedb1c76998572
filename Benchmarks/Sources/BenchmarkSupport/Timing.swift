// Timing: the clock, timed blocks, file sizes, progress lines and the errors of a benchmark run.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

public struct BenchError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Monotonic nanoseconds.
@inline(__always) public func nowNanos() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Seconds `body` took.
public func timed(_ body: () throws -> Void) rethrows -> Double {
    let start = nowNanos()
    try body()
    return Double(nowNanos() - start) / 1e9
}

/// The size of a regular file, 0 if it does not exist.
public func fileSize(_ path: String) -> UInt64 {
    var st = stat()
    guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return 0 }
    return UInt64(st.st_size)
}


public func progress(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}
