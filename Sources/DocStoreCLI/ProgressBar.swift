// ProgressBar: a one-line bar on standard error while a long subcommand works — shown on a
// terminal only (or when asked), so pipes and scripts see nothing of it.
//
//   PB1 in `auto` mode it appears only on a terminal, and only once the work has taken half a
//       second: a small file is checked before it would flicker.
//   PB2 it is redrawn at most ten times a second, on one line ("\r"), and erased when done, so
//       what the subcommand prints afterwards starts on a clean line.

import ArgumentParser
import Foundation

final class ProgressBar {
    /// When to show the bar.
    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    private let enabled: Bool
    private let quiet: TimeInterval
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(_ mode: Mode) {
        enabled = mode == .always || (mode == .auto && isatty(STDERR_FILENO) != 0)
        quiet = mode == .always ? 0 : 0.5
    }

    /// Shows `done` of `total` for `phase` ("pages", "objects").
    func update(_ phase: String, _ done: Int, _ total: Int) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(started) >= quiet, now.timeIntervalSince(lastDraw) >= 0.1 || done >= total else { return }
        lastDraw = now
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let text = "\r\u{1B}[Kverify  \(phase.padding(toLength: 8, withPad: " ", startingAt: 0)) [\(bar)] \(String(format: "%3d", Int(fraction * 100))) %  \(done) of \(total)"
        FileHandle.standardError.write(Data(text.utf8))
        drawn = true
    }

    /// Erases the bar (PB2).
    func finish() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
