// URL.filePath (the path a store opens) is what `URL.path` gives, for the file URLs apps pass:
// plain, with spaces, percent signs, non-ASCII names, a trailing slash, relative to a base.

import Foundation
import Testing

@testable import DocStoreCore

@Suite struct URLFilePathTests {
    @Test func filePathIsWhatPathGives() {
        let base = URL(fileURLWithPath: "/tmp/base dir/", isDirectory: true)
        let urls = [
            URL(fileURLWithPath: "/tmp/notes.docstore"),
            URL(fileURLWithPath: "/tmp/my notes/notes.docstore"),
            URL(fileURLWithPath: "/tmp/100%/n%20x.docstore"),
            URL(fileURLWithPath: "/tmp/caf\u{e9}/\u{1F4D3}.docstore"),
            URL(fileURLWithPath: "/tmp/dir/", isDirectory: true),
            URL(fileURLWithPath: "notes.docstore", relativeTo: base),
            URL(fileURLWithPath: "/"),
        ]
        for url in urls {
            #expect(url.filePath == url.path, "\(url.absoluteString)")
        }
    }
}
