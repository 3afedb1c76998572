// Format: how figures are printed in the tables (rates, seconds, milliseconds, bytes) and the
// load average read with them.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a figure is printed.
public enum BenchUnit: Sendable { case rate, seconds, millis, bytes }

public func format(_ v: Double, _ unit: BenchUnit) -> String {
    switch unit {
    case .rate:
        if v >= 1e6 { return String(format: "%.2f M/s", v / 1e6) }
        if v >= 1e4 { return String(format: "%.0f k/s", v / 1e3) }
        return String(format: "%.0f /s", v)
    case .seconds:
        return String(format: "%.2f s", v)
    case .millis:
        return v < 0.01 ? String(format: "%.3f ms", v * 1e3) : String(format: "%.1f ms", v * 1e3)
    case .bytes:
        // Digits in groups of three, separated by thin spaces.
        let digits = Array(String(Int(v)))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "\u{2009}" }
            out.append(d)
        }
        return out
    }
}

/// The 1-minute load average (from /proc/loadavg), as printed there; "?" if unreadable.
public func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
          let first = text.split(separator: " ").first else { return "?" }
    return String(first)
}
