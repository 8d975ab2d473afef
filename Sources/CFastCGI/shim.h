// libfcgi's reentrant API (fcgiapp.h) only: never fcgi_stdio.h, which redefines
// printf, FILE and stdin for the whole program.
#ifndef CFASTCGI_SHIM_H
#define CFASTCGI_SHIM_H
#include <fcgiapp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <stddef.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

// epoll for the connections nginx keeps open between requests (Swift's Glibc
// module has no sys/epoll.h, and epoll_event is a packed struct). Each
// descriptor is armed for one wake-up (EPOLLONESHOT), so exactly one accept
// thread takes a ready connection, and re-armed when it is idle again.

static inline int CFastCGI_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

/// Arms `descriptor` for one readiness event (read, or the peer hanging up):
/// changes its registration, or adds it when it has none.
static inline int CFastCGI_epoll_arm_once(int epoll, int descriptor) {
    struct epoll_event event;
    event.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    event.data.fd = descriptor;
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, descriptor, &event) == 0) return 0;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event);
}

/// Adds `descriptor` for every wake-up while it is readable (the stop signal:
/// it wakes every thread).
static inline int CFastCGI_epoll_watch_always(int epoll, int descriptor) {
    struct epoll_event event;
    event.events = EPOLLIN;
    event.data.fd = descriptor;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event);
}

/// Waits up to `timeoutMs` for one ready descriptor. Returns it, or -1.
static inline int CFastCGI_epoll_wait_one(int epoll, int timeoutMs) {
    struct epoll_event event;
    return epoll_wait(epoll, &event, 1, timeoutMs) == 1 ? event.data.fd : -1;
}

/// Takes one pending connection from a non-blocking listening socket, as a
/// blocking, close-on-exec descriptor; -1 when none is pending. Over TCP,
/// Nagle's algorithm is off: libfcgi writes an answer's last records apart.
static inline int CFastCGI_accept(int listening) {
    int connection = accept4(listening, NULL, NULL, SOCK_CLOEXEC);
    if (connection >= 0) {
        int on = 1;
        (void)setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));  // fails on unix sockets: fine
    }
    return connection;
}
#endif
