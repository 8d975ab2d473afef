// libcurl. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are
// variadic and do not import into Swift: one typed wrapper per argument type.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>

typedef size_t (*CCurl_write_callback)(char *data, size_t size, size_t count, void *context);
typedef size_t (*CCurl_read_callback)(char *buffer, size_t size, size_t count, void *context);

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

static inline CURLcode CCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CCurl_easy_setopt_read_function(CURL *handle, CCurl_read_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

/// libcurl sends a request again, by itself, when the kept-alive connection it
/// reused closes before any byte of the answer (up to 5 times per transfer,
/// each on the next connection of its pool): calls to Apple that the retry
/// policy never counted. It must rewind the request body to do so (lib/
/// transfer.c Curl_retry_request sets rewindbeforesend once body bytes were
/// written; lib/multi.c readrewind calls the seek callback). Refusing every
/// rewind makes the transfer fail with CURLE_SEND_FAIL_REWIND instead, and the
/// retry policy decides. A body that was never written is not rewound: a
/// request that did not leave cannot have reached Apple, and may go again.
static inline int CCurl_refuse_rewind(void *context, curl_off_t offset, int origin) {
    (void)context;
    (void)offset;
    (void)origin;
    return CURL_SEEKFUNC_FAIL;
}

static inline CURLcode CCurl_easy_setopt_refuse_rewind(CURL *handle) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, CCurl_refuse_rewind);
}

static inline CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode CCurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
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
