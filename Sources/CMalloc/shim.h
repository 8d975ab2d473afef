// jemalloc, the allocator iap-fcgi links in place of glibc's malloc (module.modulemap links it; the
// docs/design/threads.md, "jemalloc", says why), and the one control the service uses: how soon freed pages go
// back to the system.
#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H
#include <jemalloc/jemalloc.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/// Pages freed and unused for `milliseconds` go back to the system, in every arena (the defaults for
/// arenas to come, and the arenas made already: at start, before the service's threads, that is
/// arena 0), returned by jemalloc's own background thread even while the service is idle.
/// Returns 0, or the first mallctl error (the allocator then keeps its defaults where unset).
static inline int CMalloc_return_freed_pages_after(ssize_t milliseconds) {
    ssize_t immediately = 0;
    bool on = true;
    unsigned arenas = 0;
    size_t size = sizeof arenas;
    int failed = mallctl("arenas.dirty_decay_ms", NULL, NULL, &milliseconds, sizeof milliseconds);
    if (!failed) failed = mallctl("arenas.muzzy_decay_ms", NULL, NULL, &immediately, sizeof immediately);
    if (!failed) failed = mallctl("arenas.narenas", &arenas, &size, NULL, 0);
    for (unsigned arena = 0; !failed && arena < arenas; arena++) {
        char dirty[48], muzzy[48];
        snprintf(dirty, sizeof dirty, "arena.%u.dirty_decay_ms", arena);
        snprintf(muzzy, sizeof muzzy, "arena.%u.muzzy_decay_ms", arena);
        // EFAULT: an arena not made yet, which takes the defaults above when it is.
        int set = mallctl(dirty, NULL, NULL, &milliseconds, sizeof milliseconds);
        if (!set) set = mallctl(muzzy, NULL, NULL, &immediately, sizeof immediately);
        if (set && set != EFAULT) failed = set;
    }
    if (!failed) failed = mallctl("background_thread", NULL, NULL, &on, sizeof on);
    return failed;
}

/// Whether this thread's allocations go through jemalloc (true unless something linked or preloaded
/// another malloc ahead of it): its per-thread byte count must grow with a malloc.
static inline bool CMalloc_jemalloc_serves_malloc(void) {
    unsigned long long before = 0, after = 0;
    size_t size = sizeof before;
    if (mallctl("thread.allocated", &before, &size, NULL, 0) != 0) return false;
    void *volatile block = malloc(4096);
    size = sizeof after;
    int failed = mallctl("thread.allocated", &after, &size, NULL, 0);
    free(block);
    return !failed && after >= before + 4096;
}
#endif
