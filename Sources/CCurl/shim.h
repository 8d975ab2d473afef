// libcurl. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are
// variadic and do not import into Swift: one typed wrapper per argument type.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>
#include <openssl/ssl.h>

typedef size_t (*CCurl_write_callback)(char *data, size_t size, size_t count, void *context);

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
#endif
