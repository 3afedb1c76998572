// IndexPath+Rows: `section` and `item` of a two-element IndexPath, and the initializer from them,
// as UIKit and AppKit give them — on platforms without either (Linux), so results-controller code
// reads the same everywhere.

import Foundation

#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// A path to row `item` of section `section`.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The section (the first index).
    public var section: Int { count > 0 ? self[0] : 0 }
    /// The row in the section (the second index).
    public var item: Int { count > 1 ? self[1] : 0 }
}
#endif
