// Statistics: medians and percentiles of samples.

import Foundation
#if canImport(Glibc)
import Glibc
#endif


public func median(_ xs: [Double]) -> Double { percentile(xs, 0.5) }

/// Nearest-rank percentile (p in 0...1) of the samples; NaN if there are none. For an even count
/// the median is the mean of the two middle samples.
public func percentile(_ xs: [Double], _ p: Double) -> Double {
    guard !xs.isEmpty else { return .nan }
    let s = xs.sorted()
    if p == 0.5 && s.count % 2 == 0 { return (s[s.count / 2 - 1] + s[s.count / 2]) / 2 }
    let rank = Int((p * Double(s.count)).rounded(.up))
    return s[min(max(rank, 1), s.count) - 1]
}
