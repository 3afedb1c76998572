// FaultMaking: a per-thread flag set while a context makes an object for a stored row. A model
// class's initializers run then too (default values, the fault initializer's placeholders), but
// their values would be thrown away: with the flag set, `_$record` and `ManagedObject.init()`
// skip keeping them, so a fault costs one allocation. The flag is per thread (a pthread key), so
// contexts on other threads are unaffected.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum FaultMaking {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Whether this thread is making a fault now.
    static var isActive: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` (which makes one fault) with the flag set.
    static func run<T>(_ body: () -> T) -> T {
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, outer) }
        return body()
    }
}
