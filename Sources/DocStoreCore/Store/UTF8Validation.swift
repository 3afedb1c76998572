// UTF8Validation: whether bytes are well-formed UTF-8 (The Unicode Standard, table 3-7), checked
// in place without making a String — a record is checked whole when it is fetched, and its
// strings are made only when a property is read.
//
// Invariant: accepts exactly what `String(validating:as: UTF8.self)` accepts (no overlong forms,
// no surrogates, nothing above U+10FFFF); FetchedRecordTests.utf8ValidationAgreesWithTheStandardLibrary
// compares the two on random bytes.

enum UTF8Validation {
    /// Whether `bytes` are well-formed UTF-8.
    static func isValid(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        isValid(UnsafeRawBufferPointer(rebasing: bytes))
    }

    /// Whether `bytes` are well-formed UTF-8.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let n = bytes.count
        var i = 0
        while i < n {
            // ASCII eight bytes at a time.
            if n - i >= 8 {
                let word = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                    continue
                }
            }
            let b0 = bytes[i]
            if b0 < 0x80 {
                i += 1
                continue
            }
            // The second byte's range depends on the first (overlong forms, surrogates, > U+10FFFF).
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard n - i >= length else { return false }
            let b1 = bytes[i + 1]
            guard b1 >= low, b1 <= high else { return false }
            for j in 2..<length where bytes[i + j] & 0xC0 != 0x80 { return false }
            i += length
        }
        return true
    }
}
