import Glibc

/// Starts a POSIX thread running `body`. The service's threads are plain
/// threads of its own: libfcgi, libcurl and MariaDB calls block.
@discardableResult
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { context in
        let box = Unmanaged<AnyObject>.fromOpaque(context!).takeRetainedValue() as! Box
        box.body()
        return nil
    }, box)
    precondition(result == 0, "pthread_create failed: \(result)")
    return thread
}

func joinThread(_ thread: pthread_t) {
    pthread_join(thread, nil)
}
