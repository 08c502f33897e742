/* state/prefault.c — see state/prefault.h. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "state/prefault.h"

/* Linux's value, for C libraries older than the kernel feature. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int wp_prefault(void *p, size_t bytes)
{
    if (p == NULL || bytes == 0)
        return 0;
    /* madvise wants a page-aligned start: the page that holds p belongs to
     * the same mapping as p, so rounding down only adds memory the caller's
     * object shares a page with. */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(page - 1), b = (uintptr_t)p + bytes;
    return madvise((void *)a, b - a, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
}

void *wp_malloc_ready(size_t bytes)
{
    void *p = malloc(bytes);
    if (p != NULL && bytes >= WP_PREFAULT_MIN)
        wp_prefault(p, bytes);
    return p;
}

void *wp_calloc_ready(size_t n, size_t size)
{
    void *p = calloc(n, size);
    /* calloc has not written a block it mapped fresh (it is zero already):
     * its pages are made present here, still zero. */
    if (p != NULL && size != 0 && n >= WP_PREFAULT_MIN / size)
        wp_prefault(p, n * size);
    return p;
}
