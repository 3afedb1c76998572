// What opening a store does without the standard library's conveniences (session 20, issue #22:
// each first use of a dictionary key type or `Result` costs a new process a scan of every
// conformance record): the page-size check, the typed-throwing byte access and the file-existence
// test must answer exactly as the conveniences they replace.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct OpenPathTests {
    @Test func pageSizeCheckMatchesTheListOfPageSizes() {
        var sizes = Array(-2...70_000)
        sizes += [131_072, 1 << 20, Int.max, Int.min]
        for size in sizes {
            #expect(EngineOptions.isValidPageSize(size) == EngineOptions.validPageSizes.contains(size), "page size \(size)")
        }
    }

    @Test func byteAccessReturnsTheBodysValueOrItsError() throws {
        var bytes: [UInt8] = [1, 2, 3]
        #expect(try withRawBytes(bytes) { (raw) throws(EngineError) in raw.count } == 3)
        // A body that returns nil through an optional result is not mistaken for a failure.
        let none: Int? = try withRawBytes(bytes) { (_) throws(EngineError) -> Int? in nil }
        #expect(none == nil)
        try withMutableRawBytes(&bytes) { (raw) throws(EngineError) in raw[0] = 9 }
        #expect(bytes == [9, 2, 3])
        do {
            _ = try withRawBytes(bytes) { (_) throws(EngineError) -> Int in throw EngineError(.corrupt, "body failed", file: "f") }
            Issue.record("the body's error was not thrown")
        } catch {
            #expect(error.code == .corrupt && error.message == "body failed")
        }
        do {
            try withMutableRawBytes(&bytes) { (raw) throws(EngineError) in
                raw[1] = 7
                throw EngineError(.io, "after a write")
            }
            Issue.record("the body's error was not thrown")
        } catch {
            #expect(error.code == .io)
            #expect(bytes == [9, 7, 3])   // what the body wrote before it threw stays
        }
    }

    @Test func fileExistsAnswersAsFileManager() throws {
        let dir = TemporaryDirectory("openpath")
        defer { withExtendedLifetime(dir) {} }
        let file = dir.file("a file")
        let link = dir.file("link")
        let dangling = dir.file("dangling")
        FileManager.default.createFile(atPath: file, contents: Data([1]))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: dir.file("gone"))
        let fs = FoundationFileSystem()
        for path in [file, link, dangling, dir.path, dir.file("missing"), ""] {
            #expect(fs.fileExists(path) == FileManager.default.fileExists(atPath: path), "\(path)")
        }
    }

    /// Files are opened with open(2) directly (close-on-exec from the start): a missing file is
    /// `.notFound` when it may not be created, a missing directory is an I/O error when it may
    /// (not "no store here"), a new file is made, and the descriptor is close-on-exec.
    @Test func openingAnswersAsBeforeAndDescriptorsAreCloseOnExec() throws {
        let dir = TemporaryDirectory("openfile")
        defer { withExtendedLifetime(dir) {} }
        let fs = FoundationFileSystem()
        let missing = dir.file("missing")
        for readOnly in [false, true] {
            do {
                _ = try fs.openFile(missing, create: false, readOnly: readOnly)
                Issue.record("a missing file opened (readOnly \(readOnly))")
            } catch {
                #expect(error.code == .notFound, "readOnly \(readOnly): \(error)")
            }
        }
        do {
            _ = try fs.openFile(dir.file("no such directory/store"), create: true, readOnly: false)
            Issue.record("a file was created in a missing directory")
        } catch {
            #expect(error.code == .io, "\(error)")
            #expect(error.message.contains("check the directory exists"), "\(error.message)")
        }
        do {
            _ = try Engine.open(at: dir.file("no such directory/Notes.docstore"))
            Issue.record("a store was created in a missing directory")
        } catch {
            #expect(error.code != .notFound, "\(error)")
        }
        let made = try fs.openFile(dir.file("new"), create: true, readOnly: false)
        defer { made.close() }
        let bytes: [UInt8] = [7, 7, 7]
        try bytes.withUnsafeBytes { raw in try made.write(raw, at: 0) }
        #expect(try made.size() == 3)
        let file = try #require(made as? FoundationFile)
        let flags = fcntl(file.fd, F_GETFD)
        #expect(flags >= 0 && flags & FD_CLOEXEC != 0, "flags \(flags)")
    }
}
