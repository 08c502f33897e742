/* state/prefault.c — see state/prefault.h. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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
    /* The system call itself, not the C library's madvise: UCX (MPICH's
     * ch4:ucx, Open MPI's ucx PML) interposes madvise to learn of memory
     * given back to the kernel, and its handler took 3.9 ms of MPI_Init's
     * CPU for 1 MiB here (perf, MPICH 4.0.2, 4 ranks), more than faulting
     * the pages in.  Populating gives nothing back, so UCX has nothing to
     * learn from it. */
    return syscall(SYS_madvise, (void *)a, (size_t)(b - a), MADV_POPULATE_WRITE) == 0 ? 0 : -1;
}

void wp_ready(void *p, size_t bytes)
{
    if (p != NULL && bytes >= WP_PREFAULT_MIN)
        wp_prefault(p, bytes);
}

void *wp_malloc_ready(size_t bytes)
{
    void *p = malloc(bytes);
    wp_ready(p, bytes);
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
