// libfcgi's reentrant API (fcgiapp.h) only: never fcgi_stdio.h, which redefines
// printf, FILE and stdin for the whole program.
#ifndef CFASTCGI_SHIM_H
#define CFASTCGI_SHIM_H
#include <fcgiapp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
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

/// Writes the IP address in `address` to `bytes`: returns 4 (IPv4, an IPv4-mapped
/// IPv6 address included), 16 (IPv6) or 0 (not an IP socket: a unix socket).
static inline int CFastCGI_ip_bytes(const struct sockaddr_storage *address, unsigned char bytes[16]) {
    if (address->ss_family == AF_INET) {
        memcpy(bytes, &((const struct sockaddr_in *)address)->sin_addr, 4);
        return 4;
    }
    if (address->ss_family == AF_INET6) {
        const struct in6_addr *ipv6 = &((const struct sockaddr_in6 *)address)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(ipv6)) {
            memcpy(bytes, &ipv6->s6_addr[12], 4);
            return 4;
        }
        memcpy(bytes, ipv6->s6_addr, 16);
        return 16;
    }
    return 0;
}

/// Takes one pending connection from a non-blocking listening socket, as a
/// blocking, close-on-exec descriptor, and its peer's IP address (see
/// CFastCGI_ip_bytes; its length goes to *peerLength). Returns the descriptor,
/// or -errno (-EAGAIN when none is pending). Over TCP, Nagle's algorithm is
/// off: libfcgi writes an answer's last records apart. A read that waits longer
/// than `receiveTimeoutSeconds` fails, so a peer that stops in the middle of a
/// request cannot hold the reading thread.
static inline int CFastCGI_accept(int listening, unsigned char peer[16], int *peerLength, int receiveTimeoutSeconds) {
    struct sockaddr_storage address;
    socklen_t addressLength = sizeof(address);
    int connection = accept4(listening, (struct sockaddr *)&address, &addressLength, SOCK_CLOEXEC);
    if (connection < 0) return -errno;
    *peerLength = CFastCGI_ip_bytes(&address, peer);
    int on = 1;
    (void)setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));  // fails on unix sockets: fine
    struct timeval receiveTimeout = {.tv_sec = receiveTimeoutSeconds, .tv_usec = 0};
    (void)setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &receiveTimeout, sizeof(receiveTimeout));
    return connection;
}

/// The IP address a socket is bound to, as CFastCGI_ip_bytes gives it; -errno
/// when the descriptor is not a socket.
static inline int CFastCGI_local_address(int socket, unsigned char bytes[16]) {
    struct sockaddr_storage address;
    socklen_t addressLength = sizeof(address);
    if (getsockname(socket, (struct sockaddr *)&address, &addressLength) != 0) return -errno;
    return CFastCGI_ip_bytes(&address, bytes);
}

/// Takes `descriptor` out of the epoll set.
static inline int CFastCGI_epoll_remove(int epoll, int descriptor) {
    return epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, NULL);
}
#endif
