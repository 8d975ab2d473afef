import CCurl

/// libcurl's multi interface: many transfers driven by one thread, each waiting
/// on the network without a thread of its own. Only `wakeUp()` may be called
/// from other threads; everything else belongs to the driving thread.
public final class CurlMulti {
    private let handle: UnsafeMutableRawPointer
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    public init() throws(CurlError) {
        guard curlInitialised, let handle = curl_multi_init() else {
            throw CurlError(function: "curl_multi_init", code: -1, message: "libcurl could not be initialised")
        }
        self.handle = handle
        try CurlError.check(
            CCurl_multi_setopt_long(handle, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)), "CURLMOPT_PIPELINING")
    }

    deinit {
        for transfer in running.values {
            curl_multi_remove_handle(handle, transfer.handle)
        }
        curl_multi_cleanup(handle)
    }

    /// The number of transfers under way.
    public var count: Int { running.count }

    /// Starts a prepared transfer.
    public func add(_ transfer: CurlTransfer) throws(CurlError) {
        try CurlError.check(curl_multi_add_handle(handle, transfer.handle), "curl_multi_add_handle")
        running[transfer.handle] = transfer
    }

    /// Moves every transfer forward as far as it can go without waiting, and
    /// returns those that finished, with how they ended.
    public func perform() throws(CurlError) -> [(CurlTransfer, CurlTransfer.Outcome)] {
        var stillRunning: Int32 = 0
        try CurlError.check(curl_multi_perform(handle, &stillRunning), "curl_multi_perform")
        var finished: [(CurlTransfer, CurlTransfer.Outcome)] = []
        var queued: Int32 = 0
        while let message = curl_multi_info_read(handle, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = running.removeValue(forKey: easy)
            else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(handle, easy)
            finished.append((transfer, transfer.outcome(of: code)))
        }
        return finished
    }

    /// Waits until a transfer can move, `wakeUp()` is called, or `timeoutMs` pass.
    public func wait(timeoutMs: Int32) throws(CurlError) {
        try CurlError.check(curl_multi_poll(handle, nil, 0, timeoutMs, nil), "curl_multi_poll")
    }

    /// Ends a `wait` early. Safe from any thread.
    public func wakeUp() {
        curl_multi_wakeup(handle)
    }
}
