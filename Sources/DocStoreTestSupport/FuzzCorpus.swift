// FuzzCorpus: the files a fuzz target's corpus and fail cases hold (Fuzz/Corpus/<target>/ and
// Fuzz/FailCases/<target>-*), for the unit suites that replay them without libFuzzer.

import Foundation

public enum FuzzCorpus {
    /// The repository's Fuzz/ directory (found from this file's place in the sources).
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// Every corpus file and fail case of `target`, in path order.
    public static func inputs(_ target: String) -> [URL] {
        let fm = FileManager.default
        var files = (try? fm.contentsOfDirectory(at: directory.appendingPathComponent("Corpus/\(target)"), includingPropertiesForKeys: nil)) ?? []
        files += ((try? fm.contentsOfDirectory(at: directory.appendingPathComponent("FailCases"), includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.lastPathComponent.hasPrefix(target + "-") }
        return files.sorted { $0.path < $1.path }
    }
}
