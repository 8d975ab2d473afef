// libcurl. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are
// variadic and do not import into Swift: one typed wrapper per argument type.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>
#include <openssl/ssl.h>
#include <string.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/epoll.h>

typedef size_t (*CCurl_write_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*CCurl_prereq_callback)(void *context, char *remoteIP, char *localIP, int remotePort, int localPort);

static inline CURLcode CCurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_write_function(CURL *handle, CCurl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode CCurl_easy_setopt_prereq_function(CURL *handle, CCurl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

static inline CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode CCurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

/// The value of the last response's header `name` (the final answer's, not
/// an interim one's), or NULL when it has none. Valid until the next transfer.
static inline const char *CCurl_easy_header_value(CURL *handle, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(handle, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) {
        return NULL;
    }
    return header->value;
}

/// Lets OpenSSL free a connection's read and write buffers (about 34 KiB) while
/// it is idle. A call to Apple idles for most of its life, waiting for the
/// answer, and thousands of them are under way at once.
static inline CURLcode CCurl_release_idle_tls_buffers(CURL *handle, void *ssl_ctx, void *context) {
    (void)handle;
    (void)context;
    SSL_CTX_set_mode((SSL_CTX *)ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
    return CURLE_OK;
}

static inline CURLcode CCurl_easy_setopt_release_idle_tls_buffers(CURL *handle) {
    return curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, CCurl_release_idle_tls_buffers);
}

/// Whether the connection of the transfer under way speaks HTTP/2: its TLS
/// handshake chose "h2" by ALPN. Known once the connection is made (from the
/// pre-request callback on); 0 when it is not, or not yet.
static inline int CCurl_easy_negotiated_http2(CURL *handle) {
    struct curl_tlssessioninfo *session = NULL;
    if (curl_easy_getinfo(handle, CURLINFO_TLS_SSL_PTR, &session) != CURLE_OK || session == NULL
        || session->backend != CURLSSLBACKEND_OPENSSL || session->internals == NULL) {
        return 0;
    }
    const unsigned char *protocol = NULL;
    unsigned int length = 0;
    SSL_get0_alpn_selected((SSL *)session->internals, &protocol, &length);
    return length == 2 && memcmp(protocol, "h2", 2) == 0;
}

typedef int (*CCurl_close_socket_callback)(void *context, curl_socket_t socket);

static inline CURLcode CCurl_easy_setopt_close_socket_function(CURL *handle, CCurl_close_socket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

/// Names a connected socket as the pre-request callback's arguments name its
/// connection: "remote-address:remote-port local-port". Returns 0 when it has no peer.
static inline int CCurl_socket_connection_key(int socket, char *buffer, size_t capacity) {
    struct sockaddr_storage peer, local;
    socklen_t peerLength = sizeof(peer), localLength = sizeof(local);
    if (getpeername(socket, (struct sockaddr *)&peer, &peerLength) != 0
        || getsockname(socket, (struct sockaddr *)&local, &localLength) != 0) {
        return 0;
    }
    char address[INET6_ADDRSTRLEN] = "";
    int remotePort, localPort;
    if (peer.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&peer)->sin6_addr, address, sizeof(address));
        remotePort = ntohs(((struct sockaddr_in6 *)&peer)->sin6_port);
        localPort = ntohs(((struct sockaddr_in6 *)&local)->sin6_port);
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&peer)->sin_addr, address, sizeof(address));
        remotePort = ntohs(((struct sockaddr_in *)&peer)->sin_port);
        localPort = ntohs(((struct sockaddr_in *)&local)->sin_port);
    }
    snprintf(buffer, capacity, "%s:%d %d", address, remotePort, localPort);
    return 1;
}

static inline CURLMcode CCurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode CCurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode CCurl_multi_setopt_socket_function(CURLM *multi, curl_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}

static inline CURLMcode CCurl_multi_setopt_timer_function(CURLM *multi, curl_multi_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

// epoll, for driving curl's sockets with curl_multi_socket_action (Swift's
// Glibc module has no sys/epoll.h, and epoll_event is a packed struct).

static inline int CCurl_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

/// Adds `descriptor` to the set (`add` true) or changes what it waits for.
static inline int CCurl_epoll_watch(int epoll, int descriptor, int wantsRead, int wantsWrite, int add) {
    struct epoll_event event;
    event.events = (wantsRead ? EPOLLIN : 0) | (wantsWrite ? EPOLLOUT : 0);
    event.data.fd = descriptor;
    return epoll_ctl(epoll, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, descriptor, &event);
}

static inline int CCurl_epoll_unwatch(int epoll, int descriptor) {
    return epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, NULL);
}

/// Waits for ready descriptors; fills `descriptors` and their curl flags
/// (CURL_CSELECT_IN/OUT/ERR), at most `capacity` (512 at most). Returns how many.
static inline int CCurl_epoll_wait(int epoll, int *descriptors, int *flags, int capacity, int timeoutMs) {
    struct epoll_event events[512];
    int ready = epoll_wait(epoll, events, capacity < 512 ? capacity : 512, timeoutMs);
    for (int index = 0; index < ready; index++) {
        descriptors[index] = events[index].data.fd;
        flags[index] = ((events[index].events & EPOLLIN) ? CURL_CSELECT_IN : 0)
            | ((events[index].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
            | ((events[index].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
    }
    return ready;
}
#endif
