// Branch pages: separator keys and child page numbers (Format/page-file.md § Branch page).
//
// The header's link field is the leftmost child (position 0). Cell i (position i + 1) holds a
// separator key and the child whose keys are >= that separator and < the next one.
// Branch cell:  keyLength u16 | child u64 | key bytes

enum BranchCell {
    static let headerSize = 10
    static let childOffset = 2
}

extension Page {
    /// The separator key of branch cell `i`.
    @inline(__always) func branchKey(_ i: Int) -> UnsafeRawBufferPointer {
        let o = slot(i)
        let n = Int(bytes.u16(o))
        return UnsafeRawBufferPointer(rebasing: raw[(o + BranchCell.headerSize)..<(o + BranchCell.headerSize + n)])
    }

    func branchCellSize(_ i: Int) -> Int { BranchCell.headerSize + Int(bytes.u16(slot(i))) }

    /// The child at `position` (0 = leftmost, i + 1 = cell i's child).
    @inline(__always) func child(at position: Int) -> PageNumber {
        position == 0 ? link : PageNumber(bytes.u64(slot(position - 1) + BranchCell.childOffset))
    }

    func setChild(at position: Int, _ child: PageNumber) {
        if position == 0 { link = child } else { bytes.setU64(slot(position - 1) + BranchCell.childOffset, child.rawValue) }
    }

    /// The number of children: cells + 1.
    var childCount: Int { count + 1 }

    /// The position of the child whose range holds `key`: the number of separators <= key.
    @inline(__always) func childPosition(for key: UnsafeRawBufferPointer) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            if compareKeys(branchKey(mid), key) <= 0 { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Checks every cell of a branch read from disk lies inside the page (I10).
    func validateBranchCells(file: String) throws(EngineError) {
        for i in 0..<count {
            let o = slot(i)
            guard o >= upper, o + BranchCell.headerSize <= size, o + branchCellSize(i) <= size else {
                throw .corrupt("branch cell \(i) at offset \(o) is outside the cell area", file: file, page: number)
            }
        }
    }
}

/// memcmp order, shorter first on a common prefix: the one order of all keys.
@inline(__always) func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n >= 8, let pa = a.baseAddress, let pb = b.baseAddress {
        // Most keys differ in their first eight bytes: compare those as one big-endian word.
        let x = UInt64(bigEndian: pa.loadUnaligned(as: UInt64.self))
        let y = UInt64(bigEndian: pb.loadUnaligned(as: UInt64.self))
        if x != y { return x < y ? -1 : 1 }
        if n > 8 {   // no call for eight-byte keys (primary keys) that are equal
            let c = memcmp(pa + 8, pb + 8, n - 8)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }
    if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
        let c = memcmp(pa, pb, n)
        if c != 0 { return Int(c) }
    }
    return a.count - b.count
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
