// `joinedNames` (what opening a store joins names with instead of `joined(separator:)`, which
// costs a new process a scan of every conformance record) gives the same strings.

import Testing

@testable import DocStoreCore

@Suite struct JoinedNamesTests {
    @Test func joinedNamesIsJoined() {
        let lists: [[String]] = [[], [""], ["a"], ["a", "b"], ["", "", ""], ["title", "créé", "📓 notes"], ["x", "", "y"]]
        for list in lists {
            for separator in ["", ", ", ":", ".", "—"] {
                #expect(list.joinedNames(separator) == list.joined(separator: separator), "\(list) \(separator)")
            }
        }
    }
}
