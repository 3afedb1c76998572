// JSONLinesReader: the lines of a file handle (a file, a pipe, standard input), read in pieces
// so that memory holds one piece and one line, not the whole input. Lines end with "\n" (a
// "\r" before it is dropped); the last line may lack it. Line numbers count from 1, blank
// lines included, so an error names the line an editor shows.

import Foundation

struct JSONLinesReader {
    let input: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// The number of the line `next()` returned last.
    private(set) var lineNumber = 0

    init(input: FileHandle) {
        self.input = input
    }

    /// The next line's bytes, or nil at the end of the input.
    mutating func next() throws(DocStoreError) -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                var line = buffer[start..<newline]
                start = newline + 1
                if line.last == 0x0D { line = line.dropLast() }
                lineNumber += 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                lineNumber += 1
                return line
            }
            // Keep the unfinished line, then read the next piece after it.
            buffer.removeFirst(start)
            start = 0
            let piece: Data?
            do { piece = try input.read(upToCount: Self.pieceBytes) } catch {
                throw DocStoreError(.storage, "reading the dump failed after line \(lineNumber): \(error.localizedDescription)")
            }
            if let piece, !piece.isEmpty { buffer.append(contentsOf: piece) } else { atEnd = true }
        }
    }

    static let pieceBytes = 1 << 20
}
