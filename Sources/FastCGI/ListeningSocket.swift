import CFastCGI
import Glibc
import Synchronization

/// The socket nginx connects to, armed in the poller for one wake-up at a time:
/// the accept thread that wakes takes one connection, then re-arms it.
///
/// A socket inherited on fd 0 belongs to whoever started the process (systemd's
/// iap-fcgi.socket, spawn-fcgi) and outlives it: connections that arrive while
/// no iap-fcgi runs wait in its queue for the next one. Stopping therefore only
/// takes it out of the poller and closes this process's descriptor; a shutdown
/// would make every later connect fail, for the next process too.
final class ListeningSocket: @unchecked Sendable {
    enum Origin {
        case inherited
        /// Opened by this process; a unix socket's path is removed on stop.
        case opened(unixPath: String?)
    }

    let descriptor: Int32
    private let origin: Origin
    private let poller: Int32
    private let policy: ConnectionPolicy
    private let state = Mutex(AcceptState())

    /// What the accepting threads share.
    private struct AcceptState {
        var isStopped = false
        /// Accepts failed in the current burst (failures less than `burstGapSeconds`
        /// apart): a burst is logged when it starts and when an accept works after it.
        var failedAccepts = 0
        var lastFailureSeconds = 0.0
        var refusedPeers = 0
    }

    /// How long the socket stays out of the poller after an accept failed for
    /// want of descriptors or memory: what a connection closing needs to free one,
    /// and rare enough that the retries cost no CPU.
    static let pauseAfterFailureMicroseconds: UInt32 = 100_000
    /// How long a read on a connection may wait. nginx sends a whole request at
    /// once (it buffers the body first), and a connection is read only once it is
    /// readable, so a read that waits this long is a peer that stopped mid-request.
    static let receiveTimeoutSeconds: Int32 = 10
    /// A burst of failed accepts ends at the first accept that works this long after the last failure.
    static let burstGapSeconds = 1.0
    /// Failures that concern one connection only; the next accept may work at once.
    private static let passingErrors: Set<Int32> = [EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO, EPERM]

    init(descriptor: Int32, origin: Origin, poller: Int32, policy: ConnectionPolicy) throws(FastCGIError) {
        self.descriptor = descriptor
        self.origin = origin
        self.poller = poller
        self.policy = policy
        // Accept threads take connections only when epoll says one is pending.
        guard fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0,
            CFastCGI_epoll_arm_once(poller, descriptor) == 0
        else { throw FastCGIError(function: "epoll_ctl", code: errno) }
    }

    /// The IP address the socket is bound to (4 or 16 bytes); nil for a unix socket.
    var localAddress: [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let length = CFastCGI_local_address(descriptor, &bytes)
        return length > 0 ? Array(bytes.prefix(Int(length))) : nil
    }

    /// Takes the pending connection the poller reported and re-arms the socket.
    /// Nil when there was none after all, when its peer is not allowed (it is
    /// closed), or when accept failed. A failure that outlasts one connection
    /// (EMFILE, ENFILE, ENOBUFS, ENOMEM...) would wake a thread again at once, for
    /// ever: the socket stays out of the poller for a pause instead, the calling
    /// thread sleeping it, while the other threads serve the kept connections.
    func acceptConnection() -> Int32? {
        var peer = [UInt8](repeating: 0, count: 16)
        var peerLength: Int32 = 0
        let accepted = state.withLock { state -> (result: Int32, lastingFailure: Bool)? in
            guard !state.isStopped else { return nil }
            let result = CFastCGI_accept(descriptor, &peer, &peerLength, Self.receiveTimeoutSeconds)
            let lastingFailure = result < 0 && !Self.passingErrors.contains(-result)
            if lastingFailure {
                noteFailure(-result, &state)
            } else {
                if result >= 0 { noteSuccess(&state) }
                _ = CFastCGI_epoll_arm_once(poller, descriptor)  // the next pending one goes to another thread
            }
            return (result, lastingFailure)
        }
        guard let (result, lastingFailure) = accepted else { return nil }
        if lastingFailure {
            usleep(Self.pauseAfterFailureMicroseconds)
            state.withLock { state in
                if !state.isStopped { _ = CFastCGI_epoll_arm_once(poller, descriptor) }
            }
            return nil
        }
        guard result >= 0 else { return nil }
        let peerAddress = Array(peer.prefix(Int(peerLength)))
        if !policy.allowedPeers.isEmpty && !peerAddress.isEmpty && !policy.allowedPeers.contains(peerAddress) {
            close(result)
            noteRefused(peerAddress)
            return nil
        }
        return result
    }

    /// Takes the socket out of the poller and closes it; a socket this process
    /// opened is removed from the file system first. Waits for an accept under way.
    func stop() {
        state.withLock { state in
            guard !state.isStopped else { return }
            state.isStopped = true
            _ = CFastCGI_epoll_remove(poller, descriptor)
            if case .opened(let unixPath?) = origin { unlink(unixPath) }
            close(descriptor)
        }
    }

    private func noteFailure(_ error: Int32, _ state: inout AcceptState) {
        state.lastFailureSeconds = Self.monotonicSeconds()
        if state.failedAccepts == 0 {
            policy.log(
                "accept failed: \(String(cString: strerror(error))) (errno \(error)); retrying every "
                    + "\(Self.pauseAfterFailureMicroseconds / 1000) ms until it works, serving the open connections meanwhile")
        }
        state.failedAccepts += 1
    }

    private func noteSuccess(_ state: inout AcceptState) {
        guard state.failedAccepts > 0, Self.monotonicSeconds() - state.lastFailureSeconds >= Self.burstGapSeconds
        else { return }
        policy.log("accepting again after \(state.failedAccepts) failed attempts")
        state.failedAccepts = 0
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Logs the 1st, 10th, 100th... refused connection: enough to see a client
    /// missing from the allowed addresses, too few to fill the log.
    private func noteRefused(_ peer: [UInt8]) {
        let count = state.withLock { state in
            state.refusedPeers += 1
            return state.refusedPeers
        }
        var power = 1
        while power < count { power *= 10 }
        guard power == count else { return }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = inet_ntop(peer.count == 4 ? AF_INET : AF_INET6, peer, &text, socklen_t(text.count))
        let address = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        policy.log("closed a connection from \(address), not an allowed client address (\(count) so far)")
    }
}
