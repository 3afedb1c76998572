// FaultyProxy: a faulty network between devices and docstore-server, for the sync tests. An
// HTTP/1.1 proxy on loopback (POSIX sockets, a thread per connection, one request per
// connection) that, chosen at random from a fixed seed, passes a request through or:
//   drops it (the client's connection closes, nothing reaches the server),
//   cuts it mid-body (the server gets half the body, then the connection closes),
//   forwards it and drops the response (the lost answer a retried push must survive),
//   cuts the response mid-body,
//   delays it (before forwarding and again before answering),
//   duplicates it (the server gets it twice in a row; the client the second answer),
//   replays it later (a stale copy reaches the server after newer requests: reordering).
// `faults = false` makes it a plain pass-through (for healing). Counts what it did.

import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class FaultyProxy: Sendable {
    enum Fault: String, CaseIterable, Sendable {
        case pass, dropRequest, cutRequest, dropResponse, cutResponse, delay, duplicate, replayLater
    }

    private struct State {
        var rng: UInt64
        var faults = true
        var counts: [Fault: Int] = [:]
        var stopped = false
    }

    let url: URL
    private let listener: Int32
    private let upstreamPort: UInt16
    private let state: Mutex<State>

    init(upstream: URL, seed: UInt64) throws {
        guard let port = upstream.port else { throw TestEnvironmentError("the upstream URL \(upstream) has no port") }
        upstreamPort = UInt16(port)
        state = Mutex(State(rng: seed))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestEnvironmentError("proxy: socket failed, errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else { close(fd); throw TestEnvironmentError("proxy: bind/listen failed, errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    /// Whether faults happen (false: a plain pass-through).
    var faults: Bool {
        get { state.withLock { $0.faults } }
        set { state.withLock { $0.faults = newValue } }
    }

    /// What the proxy did so far, by fault.
    var counts: [Fault: Int] { state.withLock { $0.counts } }

    /// Closes the listening socket, once (a second close could close a descriptor another
    /// thread has opened since under the same number).
    func stop() {
        guard state.withLock({ s in defer { s.stopped = true }; return !s.stopped }) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    // MARK: - Connections

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return          // stopped
            }
            Thread { [self] in handle(client) }.start()
        }
    }

    private func choose() -> (Fault, UInt64) {
        state.withLock { s in
            s.rng &+= 0x9E37_79B9_7F4A_7C15
            var z = s.rng
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            let fault: Fault
            if !s.faults { fault = .pass } else {
                switch z % 100 {
                case 0..<8: fault = .dropRequest
                case 8..<13: fault = .cutRequest
                case 13..<21: fault = .dropResponse
                case 21..<26: fault = .cutResponse
                case 26..<38: fault = .delay
                case 38..<46: fault = .duplicate
                case 46..<54: fault = .replayLater
                default: fault = .pass
                }
            }
            s.counts[fault, default: 0] += 1
            return (fault, z >> 8)
        }
    }

    private func handle(_ client: Int32) {
        defer { close(client) }
        guard let request = Self.readRequest(client) else { return }
        let (fault, random) = choose()
        let pause: @Sendable () -> Void = { _ = usleep(useconds_t(20_000 + random % 200_000)) }
        switch fault {
        case .dropRequest:
            return
        case .cutRequest:
            guard let upstream = connectUpstream() else { return }
            Self.send(upstream, Array(request.prefix(request.count - max(1, request.count / 4))))
            close(upstream)
        case .pass, .delay, .duplicate, .dropResponse, .cutResponse, .replayLater:
            if fault == .delay { pause() }
            if fault == .duplicate { _ = exchange(request) }
            guard let response = exchange(request) else { return }
            if fault == .dropResponse { return }
            if fault == .delay { pause() }
            if fault == .cutResponse {
                Self.send(client, Array(response.prefix(response.count / 2)))
                return
            }
            Self.send(client, response)
            if fault == .replayLater {
                Thread { [self] in
                    pause()
                    _ = exchange(request)
                }.start()
            }
        }
    }

    /// Sends `request` to the server on a new connection; its whole response, or nil.
    private func exchange(_ request: [UInt8]) -> [UInt8]? {
        guard let upstream = connectUpstream() else { return nil }
        defer { close(upstream) }
        Self.send(upstream, request)
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(upstream, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        return response.isEmpty ? nil : response
    }

    private func connectUpstream() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); return nil }
        return fd
    }

    // MARK: - Bytes

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// One HTTP/1.1 request: its head (with `Connection: close`, so the server ends the
    /// response by closing) and its Content-Length body; nil when the client went away.
    static func readRequest(_ fd: Int32) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        var expected = 0
        while headEnd == nil || bytes.count < (headEnd ?? 0) + expected {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            bytes += buffer[0..<n]
            if headEnd == nil, let range = bytes.firstRange(of: separator) {
                headEnd = range.upperBound
                let head = String(decoding: bytes[..<range.lowerBound], as: UTF8.self)
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    expected = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
        }
        guard let end = headEnd else { return nil }
        let head = String(decoding: bytes[..<(end - 4)], as: UTF8.self)
        let kept = head.split(separator: "\r\n").filter { !$0.lowercased().hasPrefix("connection:") }
        return Array((kept.joined(separator: "\r\n") + "\r\nConnection: close\r\n\r\n").utf8) + bytes[end...]
    }
}
