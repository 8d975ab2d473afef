import Glibc

/// Starts a POSIX thread running `body`. The service's threads are plain
/// threads of its own: libfcgi, libcurl and MariaDB calls block. `name` (at
/// most 15 bytes, the kernel's limit) is what `top -H`, `ps -L` and `perf`
/// show for it, so that an operator can tell where the CPU goes.
@discardableResult
func startThread(named name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) {
            precondition(name.utf8.count <= 15, "a thread name has at most 15 bytes")
            self.name = name
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { context in
        let box = Unmanaged<AnyObject>.fromOpaque(context!).takeRetainedValue() as! Box
        nameCurrentThread(box.name)
        box.body()
        return nil
    }, box)
    precondition(result == 0, "pthread_create failed: \(result)")
    return thread
}

func joinThread(_ thread: pthread_t) {
    pthread_join(thread, nil)
}

/// Names the calling thread through /proc (glibc's `pthread_setname_np` does
/// not import into Swift). Best effort: a thread without its name runs all the same.
private func nameCurrentThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    _ = name.withCString { write(descriptor, $0, strlen($0)) }
    close(descriptor)
}
